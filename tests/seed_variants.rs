//! The other seeds' HyDE variants: the vector-only presets (`hyde-dense`,
//! `multi-hyde-dense`, `hyde-mean-dense`) rank a hand-made concept dataset exactly as
//! cosines computed here, independently of the pipeline, say they should; ctx-sys's skip
//! rules (`min_query_chars`, `intent_gate`) are counted per reason; Gimli's recency factor
//! (`recency_decay_days`) scores facts of known ages as worked out by hand.

mod common;

use std::path::Path;

use hyde_eval::dataset::Dataset;
use hyde_eval::pipeline::run::{execute, Execution, RankingOutputs};
use hyde_eval::settings::{resolve, ConfigFile, RunOptions};

/// Three concept axes, one word each: a text's vector counts its words per axis.
const LEXICON: &str = "[[axis]]\nname = \"alpha\"\nwords = [\"alpha\"]\n\
[[axis]]\nname = \"beta\"\nwords = [\"beta\"]\n\
[[axis]]\nname = \"gamma\"\nwords = [\"gamma\"]\n";

/// The facts and their concept vectors (alpha, beta, gamma).
const FACTS: [(&str, &str, [f64; 3]); 4] = [
    ("a", "alpha", [1.0, 0.0, 0.0]),
    ("ab", "alpha beta", [1.0, 1.0, 0.0]),
    ("b", "beta", [0.0, 1.0, 0.0]),
    ("c", "gamma", [0.0, 0.0, 1.0]),
];

/// q1's hypotheses and their vectors.
const HYPOTHESES: [(&str, [f64; 3]); 3] = [
    ("alpha alpha beta", [2.0, 1.0, 0.0]),
    ("beta beta beta beta alpha", [1.0, 4.0, 0.0]),
    ("gamma", [0.0, 0.0, 1.0]),
];

/// q1 "gamma question" is (0, 0, 1); q2 "alpha" (1, 0, 0) has no hypothesis.
fn write_dataset(root: &Path) {
    std::fs::write(
        root.join("dataset.toml"),
        "name = \"vector-presets\"\nnow = \"2026-03-01T00:00:00Z\"\nk = [1, 4]\n\
         embedder = \"concept\"\nconcept_lexicon = \"concepts.toml\"\n",
    )
    .unwrap();
    std::fs::write(root.join("concepts.toml"), LEXICON).unwrap();
    let facts: String = FACTS
        .iter()
        .map(|(id, content, _)| format!("{{\"id\": \"{id}\", \"content\": \"{content}\"}}\n"))
        .collect();
    std::fs::write(root.join("facts.jsonl"), facts).unwrap();
    std::fs::write(
        root.join("queries.jsonl"),
        "{\"id\": \"q1\", \"text\": \"gamma question\"}\n{\"id\": \"q2\", \"text\": \"alpha\"}\n",
    )
    .unwrap();
    let texts: Vec<String> = HYPOTHESES
        .iter()
        .map(|(text, _)| format!("\"{text}\""))
        .collect();
    std::fs::write(
        root.join("hypotheses.jsonl"),
        format!(
            "{{\"query_id\": \"q1\", \"hypotheses\": [{}]}}\n",
            texts.join(", ")
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("qrels.tsv"),
        "query_id\tfact_id\tgrade\nq1\tab\t1\nq2\ta\t1\n",
    )
    .unwrap();
}

fn norm(vector: [f64; 3]) -> f64 {
    vector.iter().map(|v| v * v).sum::<f64>().sqrt()
}

fn cosine(x: [f64; 3], y: [f64; 3]) -> f64 {
    (0..3).map(|i| x[i] * y[i]).sum::<f64>() / (norm(x) * norm(y))
}

/// Every fact scored by `score`, best first, ties by id.
fn expected(score: impl Fn([f64; 3]) -> f64) -> Vec<(String, f64)> {
    let mut ranking: Vec<(String, f64)> = FACTS
        .iter()
        .map(|(id, _, vector)| (id.to_string(), score(*vector)))
        .collect();
    ranking.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    ranking
}

fn run(root: &Path, args: RunOptions) -> Execution {
    let mut dataset = Dataset::load(root).unwrap();
    let settings = resolve(
        &RunOptions {
            quiet: true,
            ..args
        },
        &ConfigFile::default(),
        &dataset.manifest,
    )
    .unwrap();
    execute(&mut dataset, &settings.run, RankingOutputs::kept()).unwrap()
}

fn assert_ranking(
    execution: &Execution,
    configuration: &str,
    query: usize,
    want: &[(String, f64)],
) {
    let position = execution
        .results
        .configurations
        .iter()
        .position(|c| c.name == configuration)
        .unwrap();
    let got = &execution.rankings[position][query].results;
    let ids: Vec<&str> = got.iter().map(|(fact, _)| fact.as_str()).collect();
    let want_ids: Vec<&str> = want.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, want_ids, "{configuration} query {query}");
    for ((_, score), (id, want_score)) in got.iter().zip(want) {
        // Vectors are f32: cosines agree to about 1e-7.
        assert!(
            (score - want_score).abs() < 1e-6,
            "{configuration} {id}: {score} vs {want_score}"
        );
    }
}

#[test]
fn vector_only_hyde_presets_rank_by_independent_cosines() {
    let work = tempfile::tempdir().unwrap();
    write_dataset(work.path());
    let names = ["dense", "hyde-dense", "multi-hyde-dense", "hyde-mean-dense"];
    let execution = run(
        work.path(),
        RunOptions {
            configurations: names.iter().map(|name| name.to_string()).collect(),
            ..RunOptions::default()
        },
    );
    let [h1, h2, h3] = HYPOTHESES.map(|(_, vector)| vector);
    // dense: the query (0, 0, 1) finds only c.
    assert_ranking(
        &execution,
        "dense",
        0,
        &expected(|f| cosine([0.0, 0.0, 1.0], f)),
    );
    // hyde-dense: h1 alone: ab 3/sqrt(10), a 2/sqrt(5), b 1/sqrt(5), c 0.
    let first = expected(|f| cosine(h1, f));
    assert_eq!(
        first.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["ab", "a", "b", "c"]
    );
    assert_ranking(&execution, "hyde-dense", 0, &first);
    // multi-hyde-dense (N = 3): each fact's best cosine over h1, h2, h3:
    // c 1 (h3), b 4/sqrt(17) (h2), ab 3/sqrt(10) (h1), a 2/sqrt(5) (h1).
    let union3 = expected(|f| cosine(h1, f).max(cosine(h2, f)).max(cosine(h3, f)));
    assert_eq!(
        union3.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["c", "b", "ab", "a"]
    );
    assert_ranking(&execution, "multi-hyde-dense", 0, &union3);
    // hyde-mean-dense (N = 2): the mean of h1 and h2, each L2-normalized first.
    let mean = [0, 1, 2].map(|i| (h1[i] / norm(h1) + h2[i] / norm(h2)) / 2.0);
    let averaged = expected(|f| cosine(mean, f));
    assert_eq!(
        averaged.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["ab", "b", "a", "c"]
    );
    assert_ranking(&execution, "hyde-mean-dense", 0, &averaged);
    // q2 has no hypothesis: every preset falls back to the query (1, 0, 0).
    let fallback = expected(|f| cosine([1.0, 0.0, 0.0], f));
    for name in names {
        assert_ranking(&execution, name, 1, &fallback);
    }
    for name in &names[1..] {
        let result = execution
            .results
            .configurations
            .iter()
            .find(|c| c.name == *name)
            .unwrap();
        let hyde = result.hyde.clone().unwrap();
        assert_eq!(
            (hyde.hypotheses_used, hyde.fallback_no_hypothesis),
            (1, 1),
            "{name}"
        );
    }

    // multi-hyde-dense with N = 2 no longer sees h3: b, ab, a, then c at 0.
    let execution = run(
        work.path(),
        RunOptions {
            configurations: vec!["multi-hyde-dense".into()],
            set: vec!["num_hypotheses=2".into()],
            ..RunOptions::default()
        },
    );
    let union2 = expected(|f| cosine(h1, f).max(cosine(h2, f)));
    assert_eq!(
        union2.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["b", "ab", "a", "c"]
    );
    assert_ranking(&execution, "multi-hyde-dense", 0, &union2);
}

/// The vector-only presets run only when named: a run that names no configurations
/// evaluates the ten presets it always has.
#[test]
fn vector_only_presets_stay_out_of_the_default_run() {
    let work = tempfile::tempdir().unwrap();
    write_dataset(work.path());
    let dataset = Dataset::load(work.path()).unwrap();
    let settings = resolve(
        &RunOptions {
            quiet: true,
            ..RunOptions::default()
        },
        &ConfigFile::default(),
        &dataset.manifest,
    )
    .unwrap();
    let names: Vec<&str> = settings
        .run
        .configurations
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "keyword",
            "bm25",
            "dense",
            "blend",
            "hyde-3a",
            "hyde-3b",
            "hyde-3b-hyp",
            "hyde-mean",
            "multi-hyde",
            "hybrid"
        ]
    );
}

/// ctx-sys's gates on the tiny fixture. q1 "how does redis evict keys" (25 characters, a
/// "how" question) has a hypothesis; q2 "where are user rows stored" (26 characters, a
/// lookup) has none.
#[test]
fn ctx_sys_skip_rules_are_counted_per_reason() {
    let root = common::repo_path("fixtures/datasets/tiny");
    let accounting = |set: &str| {
        let execution = run(
            &root,
            RunOptions {
                configurations: vec!["hyde-3a".into()],
                set: vec![set.into()],
                ..RunOptions::default()
            },
        );
        let hyde = execution.results.configurations[0].hyde.clone().unwrap();
        (
            hyde.hypotheses_used,
            hyde.fallback_no_hypothesis,
            hyde.skipped_few_characters,
            hyde.skipped_lookup_intent,
        )
    };
    // The lookup q2 is skipped rather than falling back; q1 uses its hypothesis.
    assert_eq!(accounting("intent_gate=true"), (1, 0, 0, 1));
    // 26 characters: q1 is one short and skipped, q2 is not and falls back.
    assert_eq!(accounting("min_query_chars=26"), (0, 1, 1, 0));
    assert_eq!(accounting("min_query_chars=25"), (1, 1, 0, 0));
}

/// Five facts, each one concept word ("alpha") plus a filler, last used 0, 45, 89, 90 and
/// 200 days before `now`: Gimli's factors at 180 days are 1, 0.75, 1 - 89/180, and 0.5
/// twice (the clamp from 90 days on).
fn write_aged_dataset(root: &Path) {
    std::fs::write(
        root.join("dataset.toml"),
        "name = \"aged\"\nnow = \"2026-03-01T00:00:00Z\"\nk = [5]\n\
         embedder = \"concept\"\nconcept_lexicon = \"concepts.toml\"\n",
    )
    .unwrap();
    // "alef" shares alpha's axis but no fact's text: its BM25 finds nothing.
    std::fs::write(
        root.join("concepts.toml"),
        "[[axis]]\nname = \"alpha\"\nwords = [\"alpha\", \"alef\"]\n\
         [[axis]]\nname = \"beta\"\nwords = [\"beta\"]\n",
    )
    .unwrap();
    let facts: String = AGES
        .iter()
        .map(|(id, used, _)| {
            format!("{{\"id\": \"{id}\", \"content\": \"alpha note\", \"last_accessed\": \"{used}\"}}\n")
        })
        .collect();
    std::fs::write(root.join("facts.jsonl"), facts).unwrap();
    std::fs::write(
        root.join("queries.jsonl"),
        "{\"id\": \"q1\", \"text\": \"alef\"}\n{\"id\": \"q2\", \"text\": \"alpha\"}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("qrels.tsv"),
        "query_id\tfact_id\tgrade\nq1\td000\t1\nq2\td000\t1\n",
    )
    .unwrap();
}

/// Fact id, last use, Gimli's factor at 180 days (2026-03-01 less 0, 45, 89, 90, 200 days).
const AGES: [(&str, &str, f64); 5] = [
    ("d000", "2026-03-01T00:00:00Z", 1.0),
    ("d045", "2026-01-15T00:00:00Z", 0.75),
    ("d089", "2025-12-02T00:00:00Z", 1.0 - 89.0 / 180.0),
    ("d090", "2025-12-01T00:00:00Z", 0.5),
    ("d200", "2025-08-13T00:00:00Z", 0.5),
];

#[test]
fn gimli_recency_scales_the_hybrid_and_replaces_the_temporal_signal() {
    let work = tempfile::tempdir().unwrap();
    write_aged_dataset(work.path());
    let configurations = vec!["hybrid".to_string(), "keyword".to_string()];
    let by_factor = |scale: f64| -> Vec<(String, f64)> {
        AGES.iter()
            .map(|(id, _, factor)| (id.to_string(), scale * factor))
            .collect()
    };
    let execution = run(
        work.path(),
        RunOptions {
            configurations: configurations.clone(),
            set: vec!["recency_decay_days=180".into()],
            ..RunOptions::default()
        },
    );
    // q1 "alef": cosine 1 with every fact, no BM25 match: 0.7 x factor, and 0.7 x 0.5 =
    // 0.35 still passes the 0.35 minimum; the two clamped facts tie, by id.
    assert_ranking(&execution, "hybrid", 0, &by_factor(0.7));
    // q2 "alpha": keyword relevance 1 for every fact, times the factor as temporal signal.
    assert_ranking(&execution, "keyword", 1, &by_factor(1.0));

    // Off (the default), the hybrid ignores age: 0.7 for every fact, by id.
    let execution = run(
        work.path(),
        RunOptions {
            configurations,
            ..RunOptions::default()
        },
    );
    let flat: Vec<(String, f64)> = AGES
        .iter()
        .map(|(id, _, _)| (id.to_string(), 0.7))
        .collect();
    assert_ranking(&execution, "hybrid", 0, &flat);
}
