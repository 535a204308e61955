//! TREC run and qrels files, the one home for them: `parse` reads them as trec_eval
//! does (fast, borrowing), and this module writes hyde-eval's rankings and judgments as
//! TREC files and reads them back into its own types. The evaluator (`trec_eval`) and
//! the TREC collection importer (`dataset::trec`) read through `parse`.
//!
//! Run lines are `qid Q0 docno rank score tag`. The score is the configuration's fused
//! score, so other tools can fuse the runs. trec_eval keeps scores as 32-bit floats and
//! re-sorts each query's lines by score descending, then docno descending, ignoring the
//! rank column, while hyde-eval ranks ties by fact id ascending. So a line whose score
//! would not be below the line above's as a 32-bit float (a tie, or a difference finer
//! than a float's 7 digits) is written one float step below it instead ([`run_scores`]):
//! trec_eval then sees exactly hyde-eval's order, and scoring the file reproduces
//! hyde-eval's numbers. Every other score is the fused score, exactly.
//!
//! Qrels lines are `qid iteration docno grade`, whitespace-separated. Both readers use
//! the line parsers of [`crate::trec::parse`], so every TREC file is read by one set
//! of rules.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use crate::dataset::{FactId, Judgment, Qrels, QueryId};
use crate::error::{Error, Problem, Problems};
use crate::ranking::QueryRanking;
pub mod formats;
pub mod parse;
mod score;

/// Refuses a name that hyde-eval writes as a field of TREC run lines, or that names
/// such files (a run name, a configuration name, `fuse --tag`): a run file must read
/// back, in hyde-eval and in trec_eval, as it was written.
pub fn check_token(kind: &str, name: &str) -> Result<(), Error> {
    match crate::dataset::trec_token_problem(name) {
        Some(problem) => Err(Error::Usage(format!(
            "{kind} {name:?} must be a TREC token (no whitespace or control characters): {problem}"
        ))),
        None => Ok(()),
    }
}

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
    // Each query's lines are assembled in a buffer of their own, a block of queries
    // in parallel, and the buffers written in order: formatting through `write!` cost
    // more than scoring the queries, and a one-configuration run would format alone.
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for block in rankings.chunks(RUN_FORMAT_BLOCK) {
        buffers.resize_with(block.len(), Vec::new);
        block
            .par_iter()
            .zip(buffers.par_iter_mut())
            .for_each(|(ranking, lines)| {
                lines.clear();
                append_run_lines(lines, ranking, tag, depth);
            });
        // `buffers` holds exactly the block's queries (resized above).
        for lines in &buffers {
            out.write_all(lines)?;
        }
    }
    Ok(())
}

/// Rankings whose run lines are formatted together (in parallel) before they are written.
const RUN_FORMAT_BLOCK: usize = 64;

/// Appends the run lines of `ranking` (at most `depth`) to `lines`.
fn append_run_lines(lines: &mut Vec<u8>, ranking: &QueryRanking, tag: &str, depth: Option<usize>) {
    let kept = depth.map_or(ranking.results.len(), |depth| {
        depth.min(ranking.results.len())
    });
    let results = &ranking.results[..kept];
    // What every line of the query starts and ends with.
    let prefix = format!("{} Q0 ", ranking.query.0);
    let suffix = format!(" {tag}\n");
    lines.reserve(results.len() * (prefix.len() + suffix.len() + 32));
    let mut rank_digits = itoa::Buffer::new();
    for (position, ((fact, _), score)) in results
        .iter()
        .zip(run_scores(results.iter().map(|(_, fused)| *fused)))
        .enumerate()
    {
        lines.extend_from_slice(prefix.as_bytes());
        lines.extend_from_slice(fact.0.as_bytes());
        lines.push(b' ');
        lines.extend_from_slice(rank_digits.format(position + 1).as_bytes());
        lines.push(b' ');
        score.append_to(lines);
        lines.extend_from_slice(suffix.as_bytes());
    }
}

/// The scores a run file gives a ranking's fused scores (best first): each fused score,
/// unless as a 32-bit float (trec_eval's score type) it is not below the score written
/// above it; then that score's float one step down.
pub fn run_scores(fused: impl Iterator<Item = f64>) -> impl Iterator<Item = RunScore> {
    let mut above: Option<f32> = None;
    fused.map(move |fused| {
        let score = match above {
            Some(above) if fused as f32 >= above => RunScore::Float(above.next_down()),
            _ => RunScore::Double(fused),
        };
        above = Some(match score {
            RunScore::Double(value) => value as f32,
            RunScore::Float(value) => value,
        });
        score
    })
}

/// A run file's score: the fused score, or the float one step below the score above it.
/// Written as the shortest decimal that reads back as the same number, in exponent
/// notation when plain notation would be very long or very small.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunScore {
    Double(f64),
    Float(f32),
}

impl RunScore {
    /// Appends the score as [`Display`](std::fmt::Display) writes it. A double in the
    /// plain range is written from `zmij`'s shortest digits without the `.0` it gives
    /// whole numbers: the same digits as Rust's `{}` (the shortest decimal that reads
    /// back, the closest one), except where two are equally close, which zmij settles
    /// to even and Rust upwards. That needs a double whose exact decimal is at most one
    /// digit longer than its shortest, so at most 18 significant digits, so (at 1e-4 or
    /// more) at most 21 binary fraction digits: doubles with up to 22, 32-bit floats
    /// and exponent notation go through Rust's own formatting.
    pub fn append_to(self, out: &mut Vec<u8>) {
        use std::io::Write as _;
        let plain = |magnitude: f64| magnitude == 0.0 || (1e-4..1e15).contains(&magnitude);
        let written = match self {
            RunScore::Double(value) if plain(value.abs()) => {
                if !is_whole(value * SHORT_FRACTION_SCALE) {
                    let mut digits = zmij::Buffer::new();
                    let shortest = digits.format_finite(value);
                    let shortest = shortest.strip_suffix(".0").unwrap_or(shortest);
                    out.extend_from_slice(shortest.as_bytes());
                    return;
                }
                write!(out, "{value}")
            }
            RunScore::Double(value) => write!(out, "{value:e}"),
            RunScore::Float(value) if plain(f64::from(value).abs()) => write!(out, "{value}"),
            RunScore::Float(value) => write!(out, "{value:e}"),
        };
        written.expect("writing to a Vec cannot fail");
    }
}

/// 2^22: a double times this is whole when it has at most 22 binary fraction digits.
const SHORT_FRACTION_SCALE: f64 = 4_194_304.0;

/// Whether finite `value` is a whole number, as `value.fract() == 0.0` says, without
/// `fract`'s call to `trunc`: from 2^52 up every double is whole, and below that a
/// conversion to `i64` drops exactly the fraction.
fn is_whole(value: f64) -> bool {
    value.abs() >= 4_503_599_627_370_496.0 || value as i64 as f64 == value
}

impl std::fmt::Display for RunScore {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = Vec::with_capacity(32);
        self.append_to(&mut text);
        formatter.write_str(std::str::from_utf8(&text).expect("scores are ASCII"))
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
    fn whole_numbers_are_found_as_fract_finds_them() {
        let mut values = vec![0.0, -0.0, 0.5, -0.5, 1.0, -3.0, 2.5e-300, 1e15, 1e21, -1e21];
        values.extend([
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9.3e18,
            -9.3e18,
        ]);
        values.extend((0..2000).map(|step| f64::from(step) * 0.37 - 300.0));
        values.extend((0..200).map(|power| 2f64.powi(power) + 0.5));
        for value in values {
            assert_eq!(is_whole(value), value.fract() == 0.0, "{value}");
        }
    }

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
        // b ties with a: one float step below 0.5 (0.5 - 2^-25), so trec_eval keeps a
        // first.
        assert_eq!(
            text,
            "q1 Q0 a 1 0.5 keyword\nq1 Q0 b 2 0.49999997 keyword\nq1 Q0 c 3 0.1 keyword\n"
        );
        assert_eq!(0.49999997f32, 0.5 - 2f32.powi(-25));
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
        // The tie at 0 goes one float step below it: -2^-149, shortest "-1e-45".
        assert!(text.contains("q1 Q0 c 3 1e-9 t\nq1 Q0 d 4 0 t\nq1 Q0 e 5 -1e-45 t\n"));
        assert_eq!("-1e-45".parse::<f32>().unwrap(), -(2f32.powi(-149)));
        let back = read_trec_run(Path::new("r"), &text).unwrap();
        let scores: Vec<f64> = back[0].results.iter().map(|(_, score)| *score).collect();
        assert_eq!(scores, vec![12.75, 1.0 / 3.0, 1e-9, 0.0, -1e-45]);
    }

    #[test]
    fn queries_formatted_in_parallel_blocks_are_written_in_order() {
        // More rankings than a block, of varied lengths, some empty.
        let rankings: Vec<QueryRanking> = (0..3 * RUN_FORMAT_BLOCK + 5)
            .map(|query| QueryRanking {
                query: QueryId(format!("q{query}")),
                results: (0..query % 7)
                    .map(|rank| {
                        let score = 1.0 / (1.0 + rank as f64 + query as f64 / 1000.0);
                        (
                            FactId(format!("d{}", (query * 31 + rank) % 50).into()),
                            score,
                        )
                    })
                    .collect(),
            })
            .collect();
        let mut expected = String::new();
        for ranking in &rankings {
            let scores = run_scores(ranking.results.iter().map(|(_, score)| *score));
            for (rank, ((fact, _), score)) in ranking.results.iter().zip(scores).enumerate() {
                let line = format!(
                    "{} Q0 {} {} {score} tag\n",
                    ranking.query.0,
                    fact.0,
                    rank + 1
                );
                expected.push_str(&line);
            }
        }
        let mut out = Vec::new();
        write_trec_run(&mut out, &rankings, "tag").unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    /// Doubles a float cannot tell apart are set a float step apart, as a tie is; the
    /// next score a float can tell from the one written above is exact again.
    #[test]
    fn scores_closer_than_a_float_are_set_a_float_step_apart() {
        let scores: Vec<RunScore> =
            run_scores([2.0, 2.0 - 1e-12, 2.0 - 2e-12, 1.5].into_iter()).collect();
        // The float below 2 is 2 - 2^-23; the one below that 2 - 2^-22.
        assert_eq!(
            scores,
            vec![
                RunScore::Double(2.0),
                RunScore::Float(2.0 - 2f32.powi(-23)),
                RunScore::Float(2.0 - 2f32.powi(-22)),
                RunScore::Double(1.5),
            ]
        );
        let text: Vec<String> = scores.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["2", "1.9999999", "1.9999998", "1.5"]);
    }

    /// The run-file writer's digits are Rust's own `{}` / `{:e}` formatting, checked on
    /// the edges of the plain range and on a million seeded random bit patterns per
    /// width (whatever their magnitude, so both notations are covered).
    #[test]
    fn scores_are_written_as_rust_formats_them() {
        use rand::Rng;
        use rand_chacha::rand_core::SeedableRng;
        let reference = |score: RunScore| {
            let plain = |magnitude: f64| magnitude == 0.0 || (1e-4..1e15).contains(&magnitude);
            match score {
                RunScore::Double(value) if plain(value.abs()) => format!("{value}"),
                RunScore::Double(value) => format!("{value:e}"),
                RunScore::Float(value) if plain(f64::from(value).abs()) => format!("{value}"),
                RunScore::Float(value) => format!("{value:e}"),
            }
        };
        // 3 + 2^-17 and 2.91015625 are exactly halfway between their two closest
        // shortest decimals (3.0000076293945312|5, 2.9101562|5): Rust rounds them up.
        assert_eq!(
            RunScore::Float(2.0 + 233.0 / 256.0).to_string(),
            "2.9101563"
        );
        assert_eq!(
            RunScore::Double(3.0 + 2f64.powi(-17)).to_string(),
            format!("{}", 3.0 + 2f64.powi(-17))
        );
        let mut doubles = vec![
            0.0,
            -0.0,
            1.0,
            7.0,
            1e-4,
            1e15,
            1e14,
            1e13,
            999999999999999.9,
            0.1,
            1.5,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
            f64::MAX,
            2.910_156_25,
        ];
        // Doubles with few binary fraction digits, where such ties happen.
        doubles.extend((0..100_000).map(|n| f64::from(n) * 2f64.powi(-17) + 3.0));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(22);
        doubles.extend((0..1_000_000).map(|_| f64::from_bits(rng.next_u64())));
        // Magnitudes a BM25 score takes, where most written digits fall.
        doubles.extend((0..1_000_000).map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 49) as f64));
        for value in doubles {
            let score = RunScore::Double(value);
            assert_eq!(score.to_string(), reference(score), "{value:?}");
            let score = RunScore::Float(value as f32);
            assert_eq!(score.to_string(), reference(score), "{value:?} as f32");
        }
        for _ in 0..1_000_000 {
            let score = RunScore::Float(f32::from_bits(rng.next_u32()));
            assert_eq!(score.to_string(), reference(score), "{score:?}");
        }
    }
}
