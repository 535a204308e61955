//! TREC run and qrels files, the one home for them: `parse` reads them as trec_eval
//! does (fast, borrowing), and this module writes hyde-eval's rankings and judgments as
//! TREC files and reads them back into its own types. The evaluator (`trec_eval`) and
//! the TREC collection importer (`dataset::trec`) read through `parse`.
//!
//! Run lines are `qid Q0 docno rank score tag`. trec_eval re-sorts each query's lines by
//! score descending, then docno descending, ignoring the rank column. hyde-eval ranks
//! ties by fact id ascending, so the run files it writes carry a strictly decreasing
//! rank-derived score (`n - rank + 1`): trec_eval then sees exactly hyde-eval's order,
//! and scoring the file reproduces hyde-eval's numbers.
//!
//! Qrels lines are `qid iteration docno grade`, whitespace-separated. Both readers use
//! the line parsers of [`crate::trec::parse`], so every TREC file is read by one set
//! of rules.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use crate::dataset::{FactId, Judgment, Qrels, QueryId};
use crate::error::{Error, Problem, Problems};
use crate::ranking::QueryRanking;
pub mod formats;
pub mod parse;

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

/// Reads a TREC run with trec_eval's rules (see [`crate::trec::parse`]) and orders
/// each query's documents as trec_eval does: score descending, then docno descending.
/// Queries keep their first-seen order. Duplicate documents within a query are errors,
/// as in trec_eval.
pub fn read_trec_run(path: &Path, text: &str) -> Result<Vec<QueryRanking>, Error> {
    let run = parse::parse_run(path, text.as_bytes())?;
    let mut rankings = Vec::with_capacity(run.queries.len());
    for query in run.queries {
        let mut seen: HashSet<&str> = HashSet::with_capacity(query.results.len());
        for (document, _) in &query.results {
            if !seen.insert(document) {
                let lines = parse::lines_naming(text, query.query, document);
                return Err(Error::problem(Problem::new(
                    path,
                    lines.get(1).copied(),
                    format!(
                        "document {document} appears twice for query {}",
                        query.query
                    ),
                )));
            }
        }
        let mut results: Vec<(FactId, f64)> = query
            .results
            .iter()
            .map(|&(document, score)| (FactId::from(document.to_owned()), score))
            .collect();
        results.sort_by(|(doc_a, score_a), (doc_b, score_b)| {
            score_b.total_cmp(score_a).then(doc_b.cmp(doc_a))
        });
        rankings.push(QueryRanking {
            query: QueryId(query.query.to_owned()),
            results,
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
    let mut qrels = Qrels::new();
    let mut order = Vec::new();
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    let mut problems = Problems::default();
    parse::for_each_judgment(path, text, &mut problems, |_, query, document, grade| {
        if !seen.insert((query, document)) {
            return Err(parse::judged_twice(text, query, document));
        }
        let query = QueryId(query.to_owned());
        if !qrels.contains_key(&query) {
            order.push(query.clone());
        }
        qrels.entry(query).or_default().push(Judgment {
            fact: FactId::from(document.to_owned()),
            grade,
        });
        Ok(())
    });
    problems.into_result()?;
    Ok((qrels, order))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranking::QueryRanking;

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
            .map(|(fact, _)| fact.as_str())
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
            .map(|(fact, _)| fact.as_str())
            .collect();
        assert_eq!(order, vec!["c", "b", "a"]);
        let error = read_trec_run(Path::new("r"), "1 Q0 a 1 0.5 t\n1 Q0 a 2 0.4 t\n").unwrap_err();
        assert!(error
            .to_string()
            .contains("r:2: document a appears twice for query 1"));
    }
}
