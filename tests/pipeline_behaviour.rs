//! End-to-end behaviour of the shared pipeline against numbers worked out independently:
//! chatcli's published A/B result, hand-computed chatcli scores, and trec_eval's reading
//! of the run files `run` writes.

mod common;

use std::path::Path;

use hyde_eval::dataset::Dataset;
use hyde_eval::metrics::evaluate;
use hyde_eval::pipeline::run::{execute, Execution, RankingOutputs};
use hyde_eval::report::files::{write_report, ReportParts, RunSpool};
use hyde_eval::settings::RunOptions;
use hyde_eval::settings::{resolve, ConfigFile, RunSettings};
use hyde_eval::trec::{read_trec_qrels, read_trec_run};
use hyde_eval::write_policy::Policy;

fn run(dataset: &str, args: RunOptions) -> (Dataset, RunSettings, Execution) {
    let mut dataset = Dataset::load(&common::repo_path(dataset)).unwrap();
    let settings = resolve(
        &RunOptions {
            quiet: true,
            ..args
        },
        &ConfigFile::default(),
        &dataset.manifest,
    )
    .unwrap();
    let execution = execute(&mut dataset, &settings.run, RankingOutputs::kept()).unwrap();
    (dataset, settings, execution)
}

fn macro_value(execution: &Execution, configuration: &str, metric: &str) -> f64 {
    let result = execution
        .results
        .configurations
        .iter()
        .find(|c| c.name == configuration)
        .unwrap();
    result.macro_metrics[metric].as_f64().unwrap()
}

/// chatcli ranking_test.go (reference section 7): at k = 1 with the concept provider,
/// keyword-only scores 2/7 on recall, precision, MRR and nDCG; the blended ranker with
/// top-K 10 and floor 0.25 scores 1.0 on all four.
#[test]
fn chatcli_ab_keyword_two_sevenths_blend_perfect() {
    let args = RunOptions {
        top_k: Some(10),
        min_cosine: Some(0.25),
        ..RunOptions::default()
    };
    let (_, settings, execution) = run("datasets/chatcli-ab", args);
    assert_eq!(settings.run.metrics.cutoffs, vec![1]);
    assert_eq!(execution.results.embedder.as_ref().unwrap().kind, "concept");
    for metric in ["recall@1", "precision@1", "mrr@1", "ndcg@1", "mrr"] {
        assert!(
            (macro_value(&execution, "keyword", metric) - 2.0 / 7.0).abs() < 1e-12,
            "keyword {metric}"
        );
        assert_eq!(
            macro_value(&execution, "blend", metric),
            1.0,
            "blend {metric}"
        );
        // No hypotheses are recorded: chatcli's 3b falls back to exactly its blend.
        assert_eq!(
            macro_value(&execution, "hyde-3b", metric),
            1.0,
            "hyde-3b {metric}"
        );
    }
    let hyde = execution
        .results
        .configurations
        .iter()
        .find(|c| c.name == "hyde-3b")
        .unwrap()
        .hyde
        .clone()
        .unwrap();
    assert_eq!((hyde.hypotheses_used, hyde.fallback_no_hypothesis), (0, 7));
}

/// The tiny fixture worked by hand. Query q1 "how does redis evict keys" has keywords
/// [evict, keys, redis]; its hypothesis "Redis evicts keys by TTL and LRU policies." adds
/// its first five keywords (evicts, keys, lru, policies, redis), merged to
/// [evict, keys, redis, evicts, lru, policies]. Fact f1 "Redis eviction relies on ttl"
/// (tag redis) matches "evict" (prefix of eviction, +1) and "redis" (content +1, tag
/// +0.5): relevance 2.5/3 for keyword, 2.5/6 for hyde-3a. Its temporal score is
/// (1 + ln 4) x 2^(-28/30) x (0.5 + 0.9): 28 days before now, 3 accesses, confidence 0.9.
#[test]
fn keyword_and_hyde_3a_scores_worked_by_hand() {
    let args = RunOptions {
        configurations: vec!["keyword".into(), "hyde-3a".into()],
        ..RunOptions::default()
    };
    let (_, _, execution) = run("fixtures/datasets/tiny", args);
    let temporal = (1.0 + 4f64.ln()) * (-28.0 * std::f64::consts::LN_2 / 30.0).exp() * 1.4;
    let score = |configuration: usize| {
        let ranking = &execution.rankings[configuration][0];
        assert_eq!(ranking.query.0, "q1");
        assert_eq!(ranking.results.len(), 1, "only f1 has keyword relevance");
        assert_eq!(ranking.results[0].0.as_str(), "f1");
        ranking.results[0].1
    };
    assert!(
        (score(0) - temporal * 2.5 / 3.0).abs() < 1e-12,
        "{}",
        score(0)
    );
    assert!(
        (score(1) - temporal * 2.5 / 6.0).abs() < 1e-12,
        "{}",
        score(1)
    );
    // q2 has no recorded hypothesis: hyde-3a falls back to the original keywords.
    let hyde = execution.results.configurations[1].hyde.clone().unwrap();
    assert_eq!((hyde.hypotheses_used, hyde.fallback_no_hypothesis), (1, 1));
}

/// Scoring the written run files the way trec_eval reads them (score descending, then
/// docno descending; `-c` semantics) reproduces every per-query value `run` computed.
#[test]
fn run_files_rescore_to_the_printed_numbers() {
    let mut dataset = Dataset::load(&common::repo_path("datasets/devmem")).unwrap();
    let settings = common::quiet_settings(&dataset);
    let output = tempfile::tempdir().unwrap();
    let spool = RunSpool::create(output.path(), &settings.run_name, Policy::default()).unwrap();
    let execution = execute(
        &mut dataset,
        &settings,
        RankingOutputs {
            keep: false,
            run_files: Some(spool.directory()),
            run_depth: None,
        },
    )
    .unwrap();
    let parts = ReportParts::of_run(
        &dataset,
        execution.results.evaluation.settings.relevance_level,
        &execution.output.configurations,
        &execution.output.timings,
        &spool,
    );
    let directory = write_report(output.path(), &execution.results, parts).unwrap();
    drop(spool);
    let entries: Vec<_> = std::fs::read_dir(output.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(entries, [settings.run_name.as_str()], "the spool is gone");
    let read = |path: &Path| std::fs::read_to_string(path).unwrap();
    let (qrels, queries) = read_trec_qrels(
        Path::new("qrels.trec"),
        &read(&directory.join("qrels.trec")),
    )
    .unwrap();
    assert_eq!(
        queries.len(),
        execution.results.evaluation.evaluated_queries
    );
    for configuration in &execution.results.configurations {
        let path = directory
            .join("runs")
            .join(format!("{}.run", configuration.name));
        let run = read_trec_run(&path, &read(&path)).unwrap();
        let rescored = evaluate(&queries, &run, &qrels, &settings.metrics);
        for (index, name) in rescored.names.iter().enumerate() {
            let printed = configuration.macro_metrics[name].as_f64().unwrap();
            assert!(
                (rescored.means[index] - printed).abs() < 1e-12,
                "{} {name}",
                configuration.name
            );
        }
    }
    // The comparison is not vacuous: configurations differ.
    assert_ne!(
        macro_value(&execution, "keyword", "ndcg@10"),
        macro_value(&execution, "hyde-3b-hyp", "ndcg@10")
    );
}

/// Parameters reach the pipeline: putting all weight on the temporal signal makes the
/// blend rank every candidate by recency and frequency, which hurts on devmem.
#[test]
fn weights_change_the_blend() {
    let (_, _, default) = run(
        "datasets/devmem",
        RunOptions {
            configurations: vec!["blend".into()],
            ..RunOptions::default()
        },
    );
    let temporal_only = RunOptions {
        configurations: vec!["blend".into()],
        weights: vec![0.0, 0.0, 1.0],
        ..RunOptions::default()
    };
    let (_, _, skewed) = run("datasets/devmem", temporal_only);
    assert!(
        macro_value(&skewed, "blend", "ndcg@10") < macro_value(&default, "blend", "ndcg@10") - 0.1
    );
}

/// Rankings stream out of the pipeline in chunks of queries and are reduced on the way
/// (see `results::digest`). Over several chunks, the reductions equal what the whole
/// rankings give: every metric, top list and relevant rank, and the spooled run files.
#[test]
fn streamed_reductions_equal_the_whole_rankings() {
    let work = tempfile::tempdir().unwrap();
    let directory = work.path().join("synthetic");
    // 700 queries: three chunks of the pipeline's 256.
    common::write_synthetic_dataset(&directory, 3_000, 700);
    let mut dataset = Dataset::load(&directory).unwrap();
    let settings = common::quiet_settings(&dataset);
    let spool = RunSpool::create(
        &work.path().join("reports"),
        &settings.run_name,
        Policy::default(),
    )
    .unwrap();
    let execution = execute(
        &mut dataset,
        &settings,
        RankingOutputs {
            keep: true,
            run_files: Some(spool.directory()),
            run_depth: None,
        },
    )
    .unwrap();
    let query_ids: Vec<_> = dataset
        .queries
        .iter()
        .map(|query| query.id.clone())
        .collect();
    let depth = *settings.metrics.cutoffs.last().unwrap();
    for (configuration, rankings) in execution
        .results
        .configurations
        .iter()
        .zip(&execution.rankings)
    {
        assert_eq!(rankings.len(), 700);
        let whole = evaluate(&query_ids, rankings, &dataset.qrels, &settings.metrics);
        assert_eq!(configuration.per_query.len(), whole.per_query.len());
        for (name, mean) in whole.names.iter().zip(&whole.means) {
            assert_eq!(configuration.macro_metrics[name].as_f64(), Some(*mean));
        }
        for (streamed, query) in configuration.per_query.iter().zip(&whole.per_query) {
            assert_eq!(streamed.query, query.query);
            let ranking = rankings.iter().find(|r| r.query == query.query).unwrap();
            let top: Vec<_> = ranking
                .results
                .iter()
                .take(depth)
                .map(|(f, _)| f.clone())
                .collect();
            assert_eq!(
                *streamed.top,
                top[..],
                "{} {}",
                configuration.name,
                query.query
            );
            for (fact, rank) in streamed.relevant_ranks.iter() {
                let position = ranking.results.iter().position(|(f, _)| f == fact);
                assert_eq!(rank, position.map(|p| p + 1));
            }
        }
        let mut expected = Vec::new();
        hyde_eval::trec::write_trec_run(&mut expected, rankings, &configuration.name).unwrap();
        let spooled = std::fs::read(spool.run_file(&configuration.name)).unwrap();
        assert!(spooled == expected, "{} run file", configuration.name);
    }
}

/// A large corpus' facts wait on disk from the lexical index on, and the embedder reads
/// their texts back from there (`pipeline::fact_spill`). That path must rank exactly as facts
/// kept in memory do. The facts are reversed first, so corpus (id) order is not dataset
/// order and a text read back for the wrong fact would show.
#[test]
fn facts_set_aside_on_disk_rank_as_facts_in_memory() {
    use hyde_eval::embed::HashProvider;
    use hyde_eval::generate::RecordedGenerator;
    use hyde_eval::pipeline::fact_spill::SpilledFacts;
    use hyde_eval::pipeline::{self, PipelineInputs};
    use hyde_eval::ranking::QueryRanking;

    let mut dataset = Dataset::load(&common::repo_path("datasets/devmem")).unwrap();
    dataset.facts.reverse();
    let settings = common::quiet_settings(&dataset);
    let embedder = HashProvider::new(384).unwrap();
    let generator = RecordedGenerator::new(&dataset.queries, &dataset.hypotheses);
    let inputs = PipelineInputs {
        embedder: Some(&embedder),
        generator: &generator,
        configurations: &settings.configurations,
        progress: false,
    };
    let sinks = || -> Vec<Vec<QueryRanking>> {
        settings.configurations.iter().map(|_| Vec::new()).collect()
    };
    let mut in_memory = sinks();
    pipeline::run(&dataset, &inputs, &mut in_memory).unwrap();

    let indexed = pipeline::index_corpus(&dataset, &inputs).unwrap();
    let original_facts = dataset.facts.clone();
    let spilled = SpilledFacts::take(&mut dataset.facts, 1)
        .unwrap()
        .expect("any text is enough at a 1-byte threshold");
    assert!(dataset.facts.is_empty());
    let order = indexed.fact_order().to_vec();
    let mut from_disk = sinks();
    indexed
        .embed(&spilled.contents(&order), &dataset.queries)
        .unwrap()
        .retrieve(&mut from_disk)
        .unwrap();
    spilled.restore(&mut dataset.facts).unwrap();

    assert_eq!(dataset.facts, original_facts);
    assert_eq!(from_disk.len(), 10);
    assert!(from_disk.iter().all(|rankings| rankings.len() == 90));
    assert!(
        from_disk == in_memory,
        "rankings differ between the two paths"
    );
}

/// `run` fuses most rankings straight off the lexical accumulators (keyword x temporal,
/// BM25, the blend's two passes), without the candidate tables sweeps re-fuse. For
/// every configuration and query, on devmem and on a synthetic corpus (three chunks of
/// queries; its queries share keywords with thousands of facts), those rankings must
/// be exactly what fusing the table gives, scores to the bit.
#[test]
fn rankings_fused_without_tables_equal_fusing_the_tables() {
    use hyde_eval::dataset::synth::{write, SynthOptions};
    use hyde_eval::dataset::FactId;
    use hyde_eval::fusion::fuse;
    use hyde_eval::pipeline;
    use hyde_eval::ranking::QueryRanking;

    let work = tempfile::tempdir().unwrap();
    write(
        &SynthOptions::new(3000, 300, 11),
        work.path(),
        Policy::default(),
    )
    .unwrap();
    for root in [
        common::repo_path("datasets/devmem"),
        work.path().to_path_buf(),
    ] {
        let dataset = Dataset::load(&root).unwrap();
        let settings = common::quiet_settings(&dataset);
        let mut rankings: Vec<Vec<QueryRanking>> =
            settings.configurations.iter().map(|_| Vec::new()).collect();
        // Per configuration and query: the fused table's fact ids and score bits.
        let fused: Vec<Vec<Vec<(FactId, u64)>>> =
            common::with_hash_pipeline(&dataset, &settings, |inputs| {
                pipeline::prepare(&dataset, inputs)
                    .unwrap()
                    .retrieve(&mut rankings)
                    .unwrap();
                let mut prepared = pipeline::prepare(&dataset, inputs).unwrap();
                let tables = prepared.candidate_tables().unwrap();
                tables
                    .iter()
                    .map(|configuration| {
                        let (plan, params) = (
                            configuration.configuration.plan(),
                            &configuration.configuration.params,
                        );
                        configuration
                            .tables
                            .iter()
                            .map(|table| {
                                fuse(table, plan.fusion, params)
                                    .into_iter()
                                    .map(|(fact, score)| {
                                        (prepared.fact_id(fact).clone(), score.to_bits())
                                    })
                                    .collect()
                            })
                            .collect()
                    })
                    .collect()
            });
        let mut compared = 0;
        for ((configuration, fused), rankings) in
            settings.configurations.iter().zip(&fused).zip(&rankings)
        {
            assert_eq!(fused.len(), dataset.queries.len());
            for (fused, ranking) in fused.iter().zip(rankings) {
                let streamed: Vec<_> = ranking
                    .results
                    .iter()
                    .map(|(fact, score)| (fact.clone(), score.to_bits()))
                    .collect();
                assert_eq!(
                    &streamed,
                    fused,
                    "{} on {} in {}",
                    configuration.name,
                    ranking.query,
                    root.display()
                );
                compared += usize::from(!fused.is_empty());
            }
        }
        assert!(compared >= 9 * dataset.queries.len(), "{compared}");
    }
}

/// Large sets of query and hypothesis vectors wait on disk during retrieval and each
/// chunk of queries reads its own back (`IndexedCorpus::spilling_query_vectors`). Forced at a
/// 1-byte threshold on a synthetic corpus of three chunks, every configuration must
/// rank exactly as with the vectors in memory, and count the same embedded texts.
#[test]
fn query_vectors_set_aside_on_disk_rank_as_vectors_in_memory() {
    use hyde_eval::dataset::synth::{write, SynthOptions};
    use hyde_eval::pipeline;
    use hyde_eval::ranking::QueryRanking;

    let work = tempfile::tempdir().unwrap();
    write(
        &SynthOptions::new(2000, 300, 5),
        work.path(),
        Policy::default(),
    )
    .unwrap();
    let dataset = Dataset::load(work.path()).unwrap();
    let settings = common::quiet_settings(&dataset);
    let retrieve = |spill: bool| {
        common::with_hash_pipeline(&dataset, &settings, |inputs| {
            let mut rankings: Vec<Vec<QueryRanking>> =
                settings.configurations.iter().map(|_| Vec::new()).collect();
            let mut indexed = pipeline::index_corpus(&dataset, inputs).unwrap();
            if spill {
                indexed = indexed.spilling_query_vectors(1);
            }
            let texts = indexed.texts_of(&dataset.facts);
            let prepared = indexed.embed(&texts, &dataset.queries).unwrap();
            let output = prepared.retrieve(&mut rankings).unwrap();
            (rankings, output.embedded_texts)
        })
    };
    let (in_memory, texts_in_memory) = retrieve(false);
    let (from_disk, texts_from_disk) = retrieve(true);
    // 2,000 facts, 300 queries and their recorded hypotheses (three each).
    assert_eq!(texts_in_memory, 2000 + 300 + 900);
    assert_eq!(texts_from_disk, texts_in_memory);
    assert!(in_memory.iter().all(|rankings| rankings.len() == 300));
    assert!(
        from_disk == in_memory,
        "rankings differ between the two paths"
    );
}
