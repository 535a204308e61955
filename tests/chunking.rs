//! `--chunk TOKENS,OVERLAP`: a fact is indexed as windows of words and scores, in vector
//! search, as the cosine of its best window (MaxP), computed here independently with the
//! same provider on each window's text.

mod common;

use hyde_eval::dataset::Dataset;
use hyde_eval::embed::{EmbeddingProvider, HashProvider, TextKind, DEFAULT_HASH_DIMENSION};
use hyde_eval::pipeline::run::{execute, Execution, RankingOutputs};
use hyde_eval::results::Chunking;
use hyde_eval::settings::{resolve, ConfigFile, RunOptions};
use hyde_eval::text::ChunkSpec;

/// Fact `long` holds ten words; with windows of 4 overlapping by 1 they are
/// "sunny beach holiday plans", "plans quantum entanglement photon",
/// "photon pairs violate bell" and "bell inequalities" (starts at words 0, 3, 6, 9).
const LONG: &str =
    "sunny beach holiday plans quantum entanglement photon pairs violate bell inequalities";
const WINDOWS: [&str; 4] = [
    "sunny beach holiday plans",
    "plans quantum entanglement photon",
    "photon pairs violate bell",
    "bell inequalities",
];
const QUERY: &str = "quantum entanglement photon";

fn dataset(work: &std::path::Path) -> Dataset {
    let directory = &work.join("chunked");
    std::fs::create_dir_all(directory).unwrap();
    std::fs::write(
        directory.join("facts.jsonl"),
        format!(
            "{{\"id\":\"long\",\"content\":\"{LONG}\"}}\n\
             {{\"id\":\"short\",\"content\":\"photon detectors\"}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        directory.join("queries.jsonl"),
        format!("{{\"id\":\"q1\",\"text\":\"{QUERY}\"}}\n"),
    )
    .unwrap();
    std::fs::write(
        directory.join("qrels.tsv"),
        "query_id\tfact_id\tgrade\nq1\tlong\t1\n",
    )
    .unwrap();
    Dataset::load(directory).unwrap()
}

fn run(dataset: &mut Dataset, chunk: Option<ChunkSpec>) -> Execution {
    let settings = resolve(
        &RunOptions {
            configurations: vec!["dense".into()],
            embedder: vec!["hash".into()],
            chunk,
            quiet: true,
            ..RunOptions::default()
        },
        &ConfigFile::default(),
        &dataset.manifest,
    )
    .unwrap()
    .run;
    execute(dataset, &settings, RankingOutputs::kept()).unwrap()
}

/// Cosine of `a` and `b`, in f64.
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

fn score_of(execution: &Execution, fact: &str) -> f64 {
    let ranking = &execution.rankings[0][0];
    let hits: Vec<&(hyde_eval::dataset::FactId, f64)> = ranking
        .results
        .iter()
        .filter(|(id, _)| id.as_str() == fact)
        .collect();
    assert_eq!(hits.len(), 1, "{fact} is ranked exactly once");
    hits[0].1
}

#[test]
fn a_chunked_fact_scores_as_its_best_window() {
    let directory = tempfile::tempdir().unwrap();
    let mut dataset = dataset(directory.path());
    let provider = HashProvider::new(DEFAULT_HASH_DIMENSION).unwrap();
    let query = &provider.embed(&[QUERY], TextKind::Query).unwrap()[0];
    let windows = provider.embed(&WINDOWS, TextKind::Document).unwrap();
    let window_cosines: Vec<f64> = windows.iter().map(|vector| cosine(query, vector)).collect();
    let best = window_cosines.iter().copied().fold(f64::MIN, f64::max);
    // The second window alone holds every query word.
    assert_eq!(best, window_cosines[1], "{window_cosines:?}");
    let whole = cosine(
        query,
        &provider.embed(&[LONG], TextKind::Document).unwrap()[0],
    );
    assert!(best > whole + 0.1, "best window {best}, whole fact {whole}");

    let spec = ChunkSpec::new(4, 1).unwrap();
    assert_eq!(spec.windows(LONG), WINDOWS);
    let chunked = run(&mut dataset, Some(spec));
    assert!((score_of(&chunked, "long") - best).abs() < 1e-6);
    let short = cosine(
        query,
        &provider
            .embed(&["photon detectors"], TextKind::Document)
            .unwrap()[0],
    );
    assert!((score_of(&chunked, "short") - short).abs() < 1e-6);
    // Four windows of `long`, one of `short`; embedded: five windows and one query.
    assert_eq!(
        chunked.results.chunking,
        Some(Chunking {
            tokens: 4,
            overlap: 1,
            chunks: 5
        })
    );
    assert_eq!(chunked.output.embedded_texts, 6);
    let document = serde_json::to_value(&chunked.results).unwrap();
    let validator = common::schemas::validator("schemas/results.schema.json");
    let errors: Vec<String> = validator
        .iter_errors(&document)
        .map(|error| error.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");

    let whole_facts = run(&mut dataset, None);
    assert!((score_of(&whole_facts, "long") - whole).abs() < 1e-6);
    assert_eq!(whole_facts.results.chunking, None);
    assert_eq!(whole_facts.output.embedded_texts, 3);
}

#[test]
fn the_config_key_is_read_and_checked_naming_the_file() {
    let directory = tempfile::tempdir().unwrap();
    let dataset = dataset(directory.path());
    let path = directory.path().join("hyde-eval.toml");
    std::fs::write(&path, "chunk = \"400,80\"\n").unwrap();
    let file = ConfigFile::load(&path).unwrap();
    let settings = resolve(&RunOptions::default(), &file, &dataset.manifest).unwrap();
    assert_eq!(settings.run.chunk, Some(ChunkSpec::new(400, 80).unwrap()));
    // The command line wins over the file.
    let options = RunOptions {
        chunk: Some(ChunkSpec::new(50, 10).unwrap()),
        ..RunOptions::default()
    };
    let settings = resolve(&options, &file, &dataset.manifest).unwrap();
    assert_eq!(settings.run.chunk, Some(ChunkSpec::new(50, 10).unwrap()));

    std::fs::write(&path, "chunk = \"80,80\"\n").unwrap();
    let file = ConfigFile::load(&path).unwrap();
    let message = resolve(&RunOptions::default(), &file, &dataset.manifest)
        .err()
        .unwrap()
        .to_string();
    assert!(message.contains("hyde-eval.toml"), "{message}");
    assert!(message.contains("less than the chunk size"), "{message}");
}

#[test]
fn a_chunked_sweep_agrees_with_chunked_runs() {
    use hyde_eval::commands::execute_sweep;
    use hyde_eval::sweep::{grid::ParamRange, SweepKind, SweepSettings};
    let mut dataset = Dataset::load(&common::repo_path("datasets/devmem")).unwrap();
    let spec = ChunkSpec::new(8, 2).unwrap();
    let manifest = dataset.manifest.clone();
    let settings = |chunk: Option<ChunkSpec>, set: Vec<String>| {
        resolve(
            &RunOptions {
                configurations: vec!["hyde-3b".into()],
                chunk,
                set,
                quiet: true,
                ..RunOptions::default()
            },
            &ConfigFile::default(),
            &manifest,
        )
        .unwrap()
    };
    let swept = execute_sweep(
        &dataset,
        &settings(Some(spec), Vec::new()),
        &SweepSettings {
            kind: SweepKind::Param(ParamRange::parse("min_cosine=0.1:0.3:0.2").unwrap()),
            metrics: vec!["ndcg@10".into()],
            folds: 5,
            seed: 42,
        },
    )
    .unwrap();
    let ndcg = |execution: &Execution| {
        execution.results.configurations[0].macro_metrics["ndcg@10"]
            .as_f64()
            .unwrap()
    };
    let sweep = &swept.configurations[0];
    for (point, value) in sweep.points.iter().zip([0.1, 0.3]) {
        let run_settings = settings(Some(spec), vec![format!("min_cosine={value}")]).run;
        let chunked = execute(&mut dataset, &run_settings, RankingOutputs::default()).unwrap();
        assert_eq!(point.value("ndcg@10"), ndcg(&chunked), "min_cosine={value}");
    }
    let chunked = execute(
        &mut dataset,
        &settings(Some(spec), Vec::new()).run,
        RankingOutputs::default(),
    )
    .unwrap();
    let whole = execute(
        &mut dataset,
        &settings(None, Vec::new()).run,
        RankingOutputs::default(),
    )
    .unwrap();
    assert_eq!(sweep.default.value("ndcg@10"), ndcg(&chunked));
    assert_ne!(
        ndcg(&chunked),
        ndcg(&whole),
        "8-word windows change devmem's hyde-3b ranking"
    );
    assert!(chunked.results.chunking.as_ref().unwrap().chunks > dataset.facts.len());
}
