//! TREC run and qrels files, as trec_eval reads them.
//!
//! Run lines are `qid Q0 docno rank score tag`. trec_eval re-sorts each query's lines by
//! score descending, then docno descending, ignoring the rank column. hyde-eval ranks
//! ties by fact id ascending, so the run files it writes carry a strictly decreasing
//! rank-derived score (`n - rank + 1`): trec_eval then sees exactly hyde-eval's order,
//! and scoring the file reproduces hyde-eval's numbers.
//!
//! Qrels lines are `qid iteration docno grade`, whitespace-separated.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use crate::dataset::{FactId, Judgment, Qrels, QueryId};
use crate::error::{Error, Problem, Problems};
use crate::run::QueryRanking;

/// Writes `rankings` as a TREC run with tag `tag` (queries with no results have no lines).
pub fn write_trec_run(
    out: &mut impl Write,
    rankings: &[QueryRanking],
    tag: &str,
) -> std::io::Result<()> {
    for ranking in rankings {
        let count = ranking.results.len();
        for (position, (fact, _)) in ranking.results.iter().enumerate() {
            writeln!(
                out,
                "{} Q0 {} {} {} {}",
                ranking.query,
                fact,
                position + 1,
                count - position,
                tag
            )?;
        }
    }
    Ok(())
}

/// Reads a TREC run and orders each query's documents as trec_eval does: score
/// descending, then docno descending. Queries keep their first-seen order. Duplicate
/// documents within a query are errors, as in trec_eval.
pub fn read_trec_run(path: &Path, text: &str) -> Result<Vec<QueryRanking>, Error> {
    let mut problems = Problems::default();
    let mut rankings: Vec<QueryRanking> = Vec::new();
    let mut position_of: HashMap<String, usize> = HashMap::new();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    for (index, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let report = |message: String| Problem::new(path, Some(index + 1), message);
        if fields.len() != 6 {
            problems.push(report(format!(
                "expected 6 fields (qid Q0 docno rank score tag), found {}",
                fields.len()
            )));
            continue;
        }
        let Ok(score) = fields[4].parse::<f64>() else {
            problems.push(report(format!("score {:?} is not a number", fields[4])));
            continue;
        };
        if !seen.insert((fields[0].to_owned(), fields[2].to_owned())) {
            problems.push(report(format!(
                "document {} appears twice for query {}",
                fields[2], fields[0]
            )));
            continue;
        }
        let slot = *position_of.entry(fields[0].to_owned()).or_insert_with(|| {
            rankings.push(QueryRanking {
                query: QueryId(fields[0].to_owned()),
                results: Vec::new(),
            });
            rankings.len() - 1
        });
        rankings[slot]
            .results
            .push((FactId(fields[2].to_owned()), score));
    }
    problems.into_result()?;
    for ranking in &mut rankings {
        ranking
            .results
            .sort_by(|(doc_a, score_a), (doc_b, score_b)| {
                score_b.total_cmp(score_a).then(doc_b.cmp(doc_a))
            });
    }
    Ok(rankings)
}

/// Writes qrels as `qid 0 docno grade`, queries in the order given.
pub fn write_trec_qrels(
    out: &mut impl Write,
    queries: &[QueryId],
    qrels: &Qrels,
) -> std::io::Result<()> {
    for query in queries {
        for judgment in qrels.get(query).map(Vec::as_slice).unwrap_or(&[]) {
            writeln!(out, "{} 0 {} {}", query, judgment.fact, judgment.grade)?;
        }
    }
    Ok(())
}

/// Reads TREC qrels. Returns the judgments per query and the queries in first-seen order.
/// A (query, document) pair judged twice is an error, as in trec_eval.
pub fn read_trec_qrels(path: &Path, text: &str) -> Result<(Qrels, Vec<QueryId>), Error> {
    let mut problems = Problems::default();
    let mut qrels: Qrels = HashMap::new();
    let mut order = Vec::new();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    for (index, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let report = |message: String| Problem::new(path, Some(index + 1), message);
        if fields.len() != 4 {
            problems.push(report(format!(
                "expected 4 fields (qid iteration docno grade), found {}",
                fields.len()
            )));
            continue;
        }
        let Ok(grade) = fields[3].parse::<i32>() else {
            problems.push(report(format!("grade {:?} is not an integer", fields[3])));
            continue;
        };
        if !seen.insert((fields[0].to_owned(), fields[2].to_owned())) {
            problems.push(report(format!(
                "document {} is judged twice for query {}",
                fields[2], fields[0]
            )));
            continue;
        }
        let query = QueryId(fields[0].to_owned());
        if !qrels.contains_key(&query) {
            order.push(query.clone());
        }
        qrels.entry(query).or_default().push(Judgment {
            fact: FactId(fields[2].to_owned()),
            grade,
        });
    }
    problems.into_result()?;
    Ok((qrels, order))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::QueryRanking;

    #[test]
    fn written_runs_read_back_in_the_same_order_despite_ties() {
        let rankings = vec![QueryRanking {
            query: QueryId("q1".into()),
            results: vec![
                (FactId("a".into()), 0.5),
                (FactId("b".into()), 0.5),
                (FactId("c".into()), 0.1),
            ],
        }];
        let mut out = Vec::new();
        write_trec_run(&mut out, &rankings, "keyword").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "q1 Q0 a 1 3 keyword\nq1 Q0 b 2 2 keyword\nq1 Q0 c 3 1 keyword\n"
        );
        let back = read_trec_run(Path::new("r"), &text).unwrap();
        let order: Vec<&str> = back[0]
            .results
            .iter()
            .map(|(fact, _)| fact.0.as_str())
            .collect();
        assert_eq!(order, vec!["a", "b", "c"]);
    }

    #[test]
    fn trec_eval_order_breaks_score_ties_by_docno_descending() {
        let back = read_trec_run(
            Path::new("r"),
            "1 Q0 a 1 0.5 t\n1 Q0 b 2 0.5 t\n1 Q0 c 3 0.9 t\n",
        )
        .unwrap();
        let order: Vec<&str> = back[0]
            .results
            .iter()
            .map(|(fact, _)| fact.0.as_str())
            .collect();
        assert_eq!(order, vec!["c", "b", "a"]);
        let error = read_trec_run(Path::new("r"), "1 Q0 a 1 0.5 t\n1 Q0 a 2 0.4 t\n").unwrap_err();
        assert!(error
            .to_string()
            .contains("r:2: document a appears twice for query 1"));
    }
}
