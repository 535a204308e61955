//! Exact cosine ties with the `concept` provider (chatcli's test provider, where small
//! integer vectors make ties common): facts whose cosines with the query are equal in
//! exact arithmetic get bit-identical scores and rank by id, as the README says.
//!
//! The query "alpha beta beta gamma gamma gamma" is (1, 2, 3), |q|^2 = 14. Worked out by
//! hand, with the facts' concept vectors (alpha, beta, gamma):
//! - t1 (1, 3, 2) and t2 (2, 1, 3): dot 13, |f|^2 14, cosine 13/14 (a permutation).
//! - u1 (0, 0, 1): dot 3, |f|^2 1; u2 (2, 2, 1): dot 9, |f|^2 9; u3 (3, 0, 4): dot 15,
//!   |f|^2 25; u4 (4, 4, 2) = 2 x u2: dot 18, |f|^2 36. Each cosine^2 is 9/14, so each
//!   cosine is 3/sqrt(14).
//!
//! Rounding splits both groups when the vectors are normalized to f32 before the dot
//! product: t2 comes out above t1 (0.92857144 against 0.92857143), and u3 above u2 and
//! u4 above u1, the reverse of id order.

use std::path::Path;

use hyde_eval::dataset::Dataset;
use hyde_eval::pipeline::run::{execute, RankingOutputs};
use hyde_eval::settings::{resolve, ConfigFile, RunOptions};

const LEXICON: &str = "[[axis]]\nname = \"alpha\"\nwords = [\"alpha\"]\n\
[[axis]]\nname = \"beta\"\nwords = [\"beta\"]\n\
[[axis]]\nname = \"gamma\"\nwords = [\"gamma\"]\n";

const FACTS: [(&str, &str); 6] = [
    ("t1", "alpha beta beta beta gamma gamma"),
    ("t2", "alpha alpha beta gamma gamma gamma"),
    ("u1", "gamma"),
    ("u2", "alpha alpha beta beta gamma"),
    ("u3", "alpha alpha alpha gamma gamma gamma gamma"),
    (
        "u4",
        "alpha alpha alpha alpha beta beta beta beta gamma gamma",
    ),
];

fn write_dataset(root: &Path) {
    std::fs::write(
        root.join("dataset.toml"),
        "name = \"concept-ties\"\nnow = \"2026-03-01T00:00:00Z\"\nk = [6]\n\
         embedder = \"concept\"\nconcept_lexicon = \"concepts.toml\"\n",
    )
    .unwrap();
    std::fs::write(root.join("concepts.toml"), LEXICON).unwrap();
    let facts: String = FACTS
        .iter()
        .map(|(id, content)| format!("{{\"id\": \"{id}\", \"content\": \"{content}\"}}\n"))
        .collect();
    std::fs::write(root.join("facts.jsonl"), facts).unwrap();
    std::fs::write(
        root.join("queries.jsonl"),
        "{\"id\": \"q1\", \"text\": \"alpha beta beta gamma gamma gamma\"}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("qrels.tsv"),
        "query_id\tfact_id\tgrade\nq1\tt1\t1\n",
    )
    .unwrap();
}

#[test]
fn exactly_tied_concept_cosines_rank_by_id() {
    let work = tempfile::tempdir().unwrap();
    write_dataset(work.path());
    let mut dataset = Dataset::load(work.path()).unwrap();
    let settings = resolve(
        &RunOptions {
            configurations: vec!["dense".into()],
            quiet: true,
            ..RunOptions::default()
        },
        &ConfigFile::default(),
        &dataset.manifest,
    )
    .unwrap();
    let execution = execute(&mut dataset, &settings.run, RankingOutputs::kept()).unwrap();
    let ranking = &execution.rankings[0][0].results;
    let ids: Vec<&str> = ranking.iter().map(|(fact, _)| fact.as_str()).collect();
    assert_eq!(ids, ["t1", "t2", "u1", "u2", "u3", "u4"]);
    let scores: Vec<f64> = ranking.iter().map(|&(_, score)| score).collect();
    for (group, cosine) in [
        (&scores[..2], 13.0 / 14.0),
        (&scores[2..], 3.0 / 14f64.sqrt()),
    ] {
        for score in group {
            assert_eq!(score.to_bits(), group[0].to_bits(), "{scores:?}");
            assert!((score - cosine).abs() < 1e-15, "{score} against {cosine}");
        }
    }
}
