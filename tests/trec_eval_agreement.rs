//! hyde-eval's metrics against trec_eval's own regression fixtures: scoring
//! `results.test` against `qrels.test` must give every P_k, recall_k, ndcg_cut_k,
//! recip_rank and map value of `out.test.a` (trec_eval -m all_trec) to 4 decimals, and
//! the per-query values of `out.test.aq`.

mod common;

use std::collections::HashMap;
use std::path::Path;

use hyde_eval::metrics::{evaluate, MetricSettings, Semantics};
use hyde_eval::trec::{read_trec_qrels, read_trec_run};

const TREC_CUTOFFS: [usize; 9] = [5, 10, 15, 20, 30, 100, 200, 500, 1000];

/// trec_eval measure name for one of hyde-eval's metric names, when it prints one.
fn trec_name(name: &str) -> Option<String> {
    let (metric, k) = match name.split_once('@') {
        Some((metric, k)) => (metric, Some(k)),
        None => (name, None),
    };
    match (metric, k) {
        ("precision", Some(k)) => Some(format!("P_{k}")),
        ("recall", Some(k)) => Some(format!("recall_{k}")),
        ("ndcg", Some(k)) => Some(format!("ndcg_cut_{k}")),
        ("mrr", None) => Some("recip_rank".into()),
        ("map", None) => Some("map".into()),
        _ => None,
    }
}

/// `measure -> (query -> value)` from trec_eval output.
fn parse_trec_output(text: &str) -> HashMap<String, HashMap<String, String>> {
    let mut values: HashMap<String, HashMap<String, String>> = HashMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() == 3 {
            values
                .entry(fields[0].to_owned())
                .or_default()
                .insert(fields[1].to_owned(), fields[2].to_owned());
        }
    }
    values
}

fn check(directory: &Path, expected_file: &str, per_query: bool) {
    let read = |name: &str| std::fs::read_to_string(directory.join(name)).unwrap();
    let (qrels, _) = read_trec_qrels(Path::new("qrels.test"), &read("qrels.test")).unwrap();
    let run = read_trec_run(Path::new("results.test"), &read("results.test")).unwrap();
    let expected = parse_trec_output(&read(expected_file));
    let settings = MetricSettings {
        cutoffs: TREC_CUTOFFS.to_vec(),
        relevance_level: 1,
        semantics: Semantics::Trec,
    };
    // trec_eval evaluates the run's queries that have judgments.
    let queries: Vec<_> = run
        .iter()
        .map(|ranking| ranking.query.clone())
        .filter(|query| qrels.contains_key(query))
        .collect();
    let evaluation = evaluate(&queries, &run, &qrels, &settings);
    assert_eq!(evaluation.per_query.len(), 3);
    let mut compared = 0;
    for (index, name) in evaluation.names.iter().enumerate() {
        let Some(measure) = trec_name(name) else {
            continue;
        };
        let by_query = &expected[&measure];
        assert_eq!(
            format!("{:.4}", evaluation.means[index]),
            by_query["all"],
            "{measure} all"
        );
        compared += 1;
        if per_query {
            for query in &evaluation.per_query {
                assert_eq!(
                    format!("{:.4}", query.values[index]),
                    by_query[&query.query.0],
                    "{measure} {}",
                    query.query
                );
                compared += 1;
            }
        }
    }
    let expected_count = (TREC_CUTOFFS.len() * 3 + 2) * if per_query { 4 } else { 1 };
    assert_eq!(compared, expected_count);
}

#[test]
#[ignore = "needs ../shared/datasets; .ci/run runs it by name"]
fn matches_out_test_a() {
    let datasets = common::shared_datasets("matches_out_test_a");
    check(&datasets.join("runs/trec_eval_test"), "out.test.a", false);
}

#[test]
#[ignore = "needs ../shared/datasets; .ci/run runs it by name"]
fn matches_out_test_aq_per_query() {
    let datasets = common::shared_datasets("matches_out_test_aq_per_query");
    check(&datasets.join("runs/trec_eval_test"), "out.test.aq", true);
}
