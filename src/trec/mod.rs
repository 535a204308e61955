//! TREC run and qrels files, the one home for them: `parse` reads them as trec_eval
//! does (fast, borrowing), and this module writes hyde-eval's rankings and judgments as
//! TREC files and reads them back into its own types. The evaluator (`trec_eval`) and
//! the TREC collection importer (`dataset::trec`) read through `parse`.
//!
//! Run lines are `qid Q0 docno rank score tag`. The score is the configuration's fused
//! score, so other tools can fuse the runs. trec_eval re-sorts each query's lines by
//! score descending, then docno descending, ignoring the rank column, while hyde-eval
//! ranks ties by fact id ascending; so within a run of tied scores each later line's
//! score is the previous line's lowered by the smallest step a double allows
//! ([`f64::next_down`]). trec_eval then sees exactly hyde-eval's order, scoring the file
//! reproduces hyde-eval's numbers, and every score is its fused score to within a few
//! units in the last place (exactly, where nothing ties).
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
pub mod parse;

/// Writes `rankings` as a TREC run with tag `tag` (queries with no results have no lines).
pub fn write_trec_run(
    out: &mut impl Write,
    rankings: &[QueryRanking],
    tag: &str,
) -> std::io::Result<()> {
    write_trec_run_to_depth(out, rankings, tag, None)
}

/// Writes `rankings` as [`write_trec_run`] does, at most `depth` lines per query when
/// given.
pub fn write_trec_run_to_depth(
    out: &mut impl Write,
    rankings: &[QueryRanking],
    tag: &str,
    depth: Option<usize>,
) -> std::io::Result<()> {
    for ranking in rankings {
        let kept = depth.map_or(ranking.results.len(), |depth| {
            depth.min(ranking.results.len())
        });
        let mut previous: Option<f64> = None;
        for (position, (fact, fused)) in ranking.results[..kept].iter().enumerate() {
            let score = match previous {
                Some(previous) if *fused >= previous => previous.next_down(),
                _ => *fused,
            };
            previous = Some(score);
            writeln!(
                out,
                "{} Q0 {} {} {} {}",
                ranking.query,
                fact,
                position + 1,
                RunScore(score),
                tag
            )?;
        }
    }
    Ok(())
}

/// A run file's score: the shortest decimal that reads back as the same double, in
/// exponent notation when plain notation would be very long or very small.
struct RunScore(f64);

impl std::fmt::Display for RunScore {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let magnitude = self.0.abs();
        if magnitude == 0.0 || (1e-4..1e15).contains(&magnitude) {
            write!(formatter, "{}", self.0)
        } else {
            write!(formatter, "{:e}", self.0)
        }
    }
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
        // b ties with a: one step below 0.5 (0.5 - 2^-54), so trec_eval keeps a first.
        assert_eq!(
            text,
            "q1 Q0 a 1 0.5 keyword\nq1 Q0 b 2 0.49999999999999994 keyword\nq1 Q0 c 3 0.1 keyword\n"
        );
        assert_eq!(0.49999999999999994f64, 0.5 - 2f64.powi(-54));
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

    #[test]
    fn run_depth_keeps_the_first_lines_and_scores_read_back_exactly() {
        let rankings = vec![
            QueryRanking {
                query: QueryId("q1".into()),
                results: vec![
                    (FactId("a".into()), 12.75),
                    (FactId("b".into()), 1.0 / 3.0),
                    (FactId("c".into()), 1e-9),
                    (FactId("d".into()), 0.0),
                    (FactId("e".into()), 0.0),
                ],
            },
            QueryRanking {
                query: QueryId("q2".into()),
                results: vec![(FactId("x".into()), -2.5)],
            },
        ];
        let mut out = Vec::new();
        write_trec_run_to_depth(&mut out, &rankings, "t", Some(2)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "q1 Q0 a 1 12.75 t\nq1 Q0 b 2 0.3333333333333333 t\nq2 Q0 x 1 -2.5 t\n"
        );
        let mut out = Vec::new();
        write_trec_run(&mut out, &rankings, "t").unwrap();
        let text = String::from_utf8(out).unwrap();
        // The tie at 0 goes one step below it: the smallest negative double, -2^-1074.
        assert!(text.contains("q1 Q0 c 3 1e-9 t\nq1 Q0 d 4 0 t\nq1 Q0 e 5 -5e-324 t\n"));
        let back = read_trec_run(Path::new("r"), &text).unwrap();
        let scores: Vec<f64> = back[0].results.iter().map(|(_, score)| *score).collect();
        assert_eq!(
            scores,
            vec![12.75, 1.0 / 3.0, 1e-9, 0.0, -(2f64.powi(-1074))]
        );
    }
}
