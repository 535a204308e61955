//! What `merge` takes from a shard, checked. Each shard's query slice must be the
//! queries shard I/N of the dataset holds ([`check_slices`]); each run file must be the
//! one the shard wrote (the digest the shard recorded of it); and every per-query
//! record is recomputed ([`recompute`]) from the run files and the dataset's qrels by
//! the digest a run reduces its rankings with ([`RankingDigest`]), fed the whole
//! dataset's rankings in query order, so that the merged records, means, expectation
//! checks and abstentions are computed exactly as the unsharded run computes them.
//! Each shard's own records must agree with the recomputation. What a run file cannot
//! give (whether a hypothesis shaped a ranking, the floor an adaptive floor settled on,
//! HyDE accounting) is taken from the shard once its records check out, and its HyDE
//! accounting must fit its queries. Any disagreement is an input error (exit code 2)
//! naming the shard file, the query and, in a run file, the line.
//!
//! A run file is read in file order: a shard writes each query's lines best first, with
//! scores that fall strictly as 32-bit floats (see [`crate::trec`]), which is also the
//! order trec_eval reads them in. Reads files, writes none.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::digest::{Digest, RankingDigest};
use super::shard::{digest_of, Shard, ShardResults};
use super::{ConfigurationResult, PerQueryResult};
use crate::dataset::{Dataset, FactId, QueryId};
use crate::error::{Error, Problem};
use crate::input::{read_mapped, InputBytes, PageIn};
use crate::ranking::{QueryRanking, RankingSink};
use crate::trec::parse::for_each_result;

/// A shard as `merge` reads it: the path of its shard file, and what that holds.
pub type ShardInput = (PathBuf, ShardResults);

/// The hint of every refusal here.
const REMEDY: &str =
    "merge the shard directories as `hyde-eval run --shard I/N` wrote them; rerun a shard whose files changed";

/// Rankings handed to the digest at a time.
const RANKINGS_PER_BATCH: usize = 256;

/// The shard (0-based) each query of a dataset split `count` ways belongs to.
struct QueryOwners<'d> {
    positions: HashMap<&'d str, usize>,
    count: usize,
}

impl<'d> QueryOwners<'d> {
    fn of(dataset: &'d Dataset, count: usize) -> QueryOwners<'d> {
        let positions = dataset
            .queries
            .iter()
            .enumerate()
            .map(|(position, query)| (query.id.0.as_str(), position))
            .collect();
        QueryOwners { positions, count }
    }

    /// The shard of `query`; `None` when it is not a query of the dataset.
    fn shard_of(&self, query: &str) -> Option<usize> {
        self.positions
            .get(query)
            .map(|position| position % self.count)
    }

    /// `index` (0-based) as the shard it names.
    fn shard(&self, index: usize) -> Shard {
        Shard {
            index: index + 1,
            count: self.count,
        }
    }
}

/// Checks that each of `shards` (the complete set, in index order) lists, as its query
/// slice and as the queries of its results, exactly the queries shard I/N of `dataset`
/// holds, in dataset order. Refused (exit code 2) naming the shard file and the first
/// query listed twice, not the shard's, missing, or out of order.
pub fn check_slices(shards: &[ShardInput], dataset: &Dataset) -> Result<(), Error> {
    let owners = QueryOwners::of(dataset, shards.len());
    for (index, (path, shard)) in shards.iter().enumerate() {
        let expected: Vec<&QueryId> = dataset
            .queries
            .iter()
            .skip(index)
            .step_by(shards.len())
            .map(|query| &query.id)
            .collect();
        let lists = [
            ("query_slice", shard.query_slice.iter().collect::<Vec<_>>()),
            (
                "results.queries",
                shard
                    .results
                    .queries
                    .iter()
                    .map(|query| &query.id)
                    .collect(),
            ),
        ];
        for (list, recorded) in lists {
            if let Some((query, problem)) =
                slice_difference(&recorded, &expected, &owners, owners.shard(index))
            {
                return Err(Error::problem(
                    Problem::new(path, None, format!("{list}: query {query} {problem}"))
                        .with_hint(REMEDY),
                ));
            }
        }
    }
    Ok(())
}

/// Where `recorded` first differs from `expected` (shard `shard`'s query ids, in dataset
/// order): the query and what is wrong with it; `None` when they are equal.
fn slice_difference<'q>(
    recorded: &[&'q QueryId],
    expected: &[&'q QueryId],
    owners: &QueryOwners<'_>,
    shard: Shard,
) -> Option<(&'q QueryId, String)> {
    let wanted: HashSet<&QueryId> = expected.iter().copied().collect();
    let mut seen = HashSet::with_capacity(recorded.len());
    for &query in recorded {
        if !seen.insert(query) {
            return Some((query, "is listed twice".to_owned()));
        }
        if !wanted.contains(query) {
            let problem = match owners.shard_of(&query.0) {
                Some(owner) => format!(
                    "is not one of shard {shard}'s queries of this dataset (it is shard {}'s)",
                    owners.shard(owner)
                ),
                None => "is not a query of this dataset".to_owned(),
            };
            return Some((query, problem));
        }
    }
    if let Some(&missing) = expected.iter().find(|query| !seen.contains(*query)) {
        return Some((
            missing,
            format!("is missing (shard {shard} of this dataset holds it)"),
        ));
    }
    recorded
        .iter()
        .zip(expected)
        .find(|(recorded, expected)| recorded != expected)
        .map(|(&query, _)| (query, "is out of dataset order".to_owned()))
}

/// Every configuration's per-query records (in the shards' configuration order),
/// recomputed over the whole of `dataset` from the run files beside the shard files
/// (`runs/<configuration>.run`) and checked against the shards' records, as the module
/// docs say. `shards` is the complete set in index order, their slices checked
/// ([`check_slices`]). Each digest's records carry the shard's hypothesis use and
/// settled floor.
pub fn recompute(shards: &[ShardInput], dataset: &Dataset) -> Result<Vec<Digest>, Error> {
    let owners = QueryOwners::of(dataset, shards.len());
    let configurations = shards[0].1.results.configurations.len();
    let digests: Vec<Result<Digest, Error>> = (0..configurations)
        .into_par_iter()
        .map(|index| recompute_configuration(shards, index, dataset, &owners))
        .collect();
    // The first configuration's error, whichever thread found it first.
    digests.into_iter().collect()
}

/// [`recompute`] of the `index`-th configuration.
fn recompute_configuration(
    shards: &[ShardInput],
    index: usize,
    dataset: &Dataset,
    owners: &QueryOwners<'_>,
) -> Result<Digest, Error> {
    let first = &shards[0].1.results;
    let name = &first.configurations[index].name;
    let files = shards
        .iter()
        .map(|(path, shard)| RunFile::open(path, shard, name))
        .collect::<Result<Vec<_>, _>>()?;
    let count = shards.len();
    let mut digest =
        RankingDigest::new(&dataset.queries, &dataset.qrels, &first.evaluation.settings);
    let mut readers: Vec<RunLines<'_>> = files
        .iter()
        .map(|file| RunLines::new(&file.bytes))
        .collect();
    let mut first_lines = Vec::with_capacity(dataset.queries.len());
    let mut batch = Vec::with_capacity(RANKINGS_PER_BATCH);
    for (position, query) in dataset.queries.iter().enumerate() {
        let source = position % count;
        let taken = readers[source]
            .take(&query.id.0)
            .map_err(|problem| files[source].error(problem.line, &problem.message))?;
        first_lines.push(taken.first_line);
        batch.push(QueryRanking {
            query: query.id.clone(),
            results: taken.results,
        });
        if batch.len() == RANKINGS_PER_BATCH {
            digest.accept(std::mem::take(&mut batch))?;
        }
    }
    digest.accept(batch)?;
    for (source, reader) in readers.iter().enumerate() {
        if let Some(problem) = reader.leftover(owners, source) {
            return Err(files[source].error(problem.line, &problem.message));
        }
    }
    let mut digest = digest.finish()?;

    let records = RecordCheck {
        count,
        owners,
        first_lines: &first_lines,
        relevance_level: first.evaluation.settings.relevance_level,
    };
    // A run file that is not the one its shard wrote is named first, at the first query
    // whose record it no longer gives, when there is one.
    for (source, file) in files.iter().enumerate() {
        if file.changed() {
            let configuration = &shards[source].1.results.configurations[index];
            return Err(match records.check(&mut digest, source, configuration) {
                Err(disagreement) => file.error(
                    disagreement.line,
                    &format!("query {}: {}", disagreement.query, disagreement.problem),
                ),
                Ok(()) => file.error(None, ""),
            });
        }
    }
    for (source, (path, shard)) in shards.iter().enumerate() {
        let configuration = &shard.results.configurations[index];
        records
            .check(&mut digest, source, configuration)
            .map_err(|disagreement| {
                let place = match disagreement.line {
                    Some(line) => format!("{}:{line}", files[source].path.display()),
                    None => files[source].path.display().to_string(),
                };
                Error::problem(
                    Problem::new(
                        path,
                        None,
                        format!(
                            "configuration {name}, query {}: {} (run file {place})",
                            disagreement.query, disagreement.problem
                        ),
                    )
                    .with_hint(REMEDY),
                )
            })?;
        check_hyde_accounting(path, shard, configuration)?;
    }
    Ok(digest)
}

/// A shard's run file of one configuration, read, with the digest its shard recorded.
struct RunFile<'s> {
    path: PathBuf,
    shard_path: &'s Path,
    shard: Shard,
    recorded: &'s str,
    found: String,
    bytes: InputBytes,
}

impl<'s> RunFile<'s> {
    /// The run file of configuration `name` beside the shard file `shard_path`.
    fn open(
        shard_path: &'s Path,
        shard: &'s ShardResults,
        name: &str,
    ) -> Result<RunFile<'s>, Error> {
        let recorded = shard
            .run_files
            .iter()
            .find(|file| file.configuration == name)
            .ok_or_else(|| {
                Error::problem(
                    Problem::new(
                        shard_path,
                        None,
                        format!("run_files: no digest of the run file of configuration {name}"),
                    )
                    .with_hint(REMEDY),
                )
            })?;
        let path = shard_path
            .parent()
            .unwrap_or(Path::new(""))
            .join("runs")
            .join(format!("{name}.run"));
        let bytes = read_mapped(&path, PageIn::OnTouch)?;
        Ok(RunFile {
            found: digest_of(&bytes),
            path,
            shard_path,
            shard: shard.shard,
            recorded: &recorded.digest,
            bytes,
        })
    }

    /// Whether the file's digest differs from the one its shard recorded.
    fn changed(&self) -> bool {
        self.recorded != self.found
    }

    /// The error for `problem` at `line` of this file (what is wrong, naming the
    /// query), with what its digest says when the file is not the one the shard wrote.
    fn error(&self, line: Option<usize>, problem: &str) -> Error {
        let mut message = problem.to_owned();
        if self.changed() {
            if !message.is_empty() {
                message.push_str("; ");
            }
            message.push_str(&format!(
                "this is not the run file shard {} wrote: {} records its digest as {}, the file's is {} (cut short, edited, or another shard's)",
                self.shard,
                self.shard_path.display(),
                self.recorded,
                self.found
            ));
        }
        Error::problem(Problem::new(&self.path, line, message).with_hint(REMEDY))
    }
}

/// A defect in a run file: its line (1-based) and what is wrong, naming the query.
struct LineProblem {
    line: Option<usize>,
    message: String,
}

/// One query's ranking read from a run file, and the number of its first line (`None`:
/// the query has no line).
struct TakenRanking {
    first_line: Option<usize>,
    results: Vec<(FactId, f64)>,
}

/// Reads a shard's run file one query at a time, in the order of the shard's queries.
struct RunLines<'a> {
    bytes: &'a [u8],
    /// Where the next query's lines start.
    offset: usize,
    /// The number of the line at `offset`.
    line: usize,
}

impl<'a> RunLines<'a> {
    fn new(bytes: &'a [u8]) -> RunLines<'a> {
        RunLines {
            bytes,
            offset: 0,
            line: 1,
        }
    }

    /// The ranking of `query`: its lines at the reading position, in file order (none
    /// is an empty ranking).
    fn take(&mut self, query: &str) -> Result<TakenRanking, LineProblem> {
        let (start, first_line) = (self.offset, self.line);
        while names_query(&self.bytes[self.offset..], query) {
            match memchr::memchr(b'\n', &self.bytes[self.offset..]) {
                Some(end) => {
                    self.offset += end + 1;
                    self.line += 1;
                }
                None => return Err(cut_short(self.line, query)),
            }
        }
        if self.offset == start {
            return Ok(TakenRanking {
                first_line: None,
                results: Vec::new(),
            });
        }
        let mut results = Vec::with_capacity(self.line - first_line);
        for_each_result(&self.bytes[start..self.offset], |_, document, score| {
            results.push((FactId::from(document), score));
        })
        .map_err(|(index, message, _)| LineProblem {
            line: Some(first_line + index),
            message: format!("query {query}: {message}"),
        })?;
        Ok(TakenRanking {
            first_line: Some(first_line),
            results,
        })
    }

    /// What is wrong with the first line no query of shard `source` took, if any.
    fn leftover(&self, owners: &QueryOwners<'_>, source: usize) -> Option<LineProblem> {
        let rest = self
            .bytes
            .get(self.offset..)
            .filter(|rest| !rest.is_empty())?;
        let end = memchr::memchr(b'\n', rest);
        let text = String::from_utf8_lossy(&rest[..end.unwrap_or(rest.len())]);
        let query = text.split_whitespace().next().unwrap_or_default();
        if end.is_none() {
            return Some(cut_short(self.line, query));
        }
        let message = match owners.shard_of(query) {
            _ if query.is_empty() => "a blank line".to_owned(),
            Some(owner) if owner == source => format!(
                "query {query}: a line out of the shard's query order (each query's lines together, the queries in dataset order)"
            ),
            Some(owner) => format!(
                "query {query}: a line of shard {}'s query in shard {}'s run file",
                owners.shard(owner),
                owners.shard(source)
            ),
            None => format!("query {query}: not a query of this dataset"),
        };
        Some(LineProblem {
            line: Some(self.line),
            message,
        })
    }
}

/// Whether the line at the start of `rest` is one of `query`'s.
fn names_query(rest: &[u8], query: &str) -> bool {
    rest.starts_with(query.as_bytes()) && matches!(rest.get(query.len()), Some(b' ' | b'\t'))
}

fn cut_short(line: usize, query: &str) -> LineProblem {
    LineProblem {
        line: Some(line),
        message: format!("query {query}: the line is cut short (the file ends inside it)"),
    }
}

/// A shard's record that disagrees with the recomputation: the query, the run-file line
/// where its ranking starts (when there is one), and how it disagrees.
struct Disagreement {
    query: QueryId,
    line: Option<usize>,
    problem: String,
}

/// What checking a shard's records against the recomputation needs.
struct RecordCheck<'c> {
    count: usize,
    owners: &'c QueryOwners<'c>,
    /// The run-file line of each dataset query's first result (`None`: no result).
    first_lines: &'c [Option<usize>],
    relevance_level: crate::dataset::Grade,
}

impl RecordCheck<'_> {
    /// Checks the records of shard `source` (`configuration`, the shard's part of it)
    /// against the recomputed records of its queries in `digest`, and gives each of
    /// those the shard's hypothesis use and settled floor. The first disagreement: a
    /// query with two records, a recomputed record the shard lacks, a value that
    /// differs, a record the recomputation does not have.
    fn check(
        &self,
        digest: &mut Digest,
        source: usize,
        configuration: &ConfigurationResult,
    ) -> Result<(), Disagreement> {
        let mut recorded: HashMap<&QueryId, &PerQueryResult> =
            HashMap::with_capacity(configuration.per_query.len());
        for record in &configuration.per_query {
            if recorded.insert(&record.query, record).is_some() {
                return Err(Disagreement {
                    query: record.query.clone(),
                    line: self.line_of(&record.query),
                    problem: "the shard file holds two records of it".to_owned(),
                });
            }
        }
        let uses_hypotheses = configuration.hyde.is_some();
        let mut recomputed: HashSet<QueryId> = HashSet::with_capacity(recorded.len());
        for (record, &position) in digest.per_query.iter_mut().zip(&digest.positions) {
            if position % self.count != source {
                continue;
            }
            let line = self.first_lines[position];
            let disagreement = |problem: String| Disagreement {
                query: record.query.clone(),
                line,
                problem,
            };
            let Some(shard_record) = recorded.get(&record.query) else {
                return Err(disagreement(
                    "the shard file has no record of it, but it has relevant facts".to_owned(),
                ));
            };
            if let Some(problem) = record_difference(shard_record, record) {
                return Err(disagreement(problem));
            }
            if shard_record.hypothesis_used.is_some() != uses_hypotheses {
                return Err(disagreement(format!(
                    "hypothesis_used is {}, but the configuration {} hypotheses",
                    shard_record
                        .hypothesis_used
                        .map_or("null".to_owned(), |used| used.to_string()),
                    if uses_hypotheses { "uses" } else { "uses no" }
                )));
            }
            record.hypothesis_used = shard_record.hypothesis_used;
            record.settled_floor = shard_record.settled_floor;
            recomputed.insert(record.query.clone());
        }
        if let Some(extra) = configuration
            .per_query
            .iter()
            .find(|record| !recomputed.contains(&record.query))
        {
            let problem = if self.owners.shard_of(&extra.query.0) == Some(source) {
                format!(
                    "the shard file holds a record of it, but it has no relevant fact at relevance level {} (so no record)",
                    self.relevance_level
                )
            } else {
                format!(
                    "the shard file holds a record of it, but it is not one of shard {}'s queries",
                    self.owners.shard(source)
                )
            };
            return Err(Disagreement {
                query: extra.query.clone(),
                line: self.line_of(&extra.query),
                problem,
            });
        }
        Ok(())
    }

    /// The run-file line where `query`'s ranking starts, when it is a dataset query
    /// with results.
    fn line_of(&self, query: &QueryId) -> Option<usize> {
        let position = *self.owners.positions.get(query.0.as_str())?;
        self.first_lines[position]
    }
}

/// How the shard's `recorded` record differs from the `recomputed` one (same query),
/// in the first field that differs; `None` when they agree. Metric values agree when
/// their bits do (serde_json reads back the numbers it writes exactly).
fn record_difference(recorded: &PerQueryResult, recomputed: &PerQueryResult) -> Option<String> {
    let differs = |field: &str, recorded: String, recomputed: String| {
        Some(format!(
            "{field} is {recorded} in the shard file, but its run file gives {recomputed}"
        ))
    };
    if recorded.relevant != recomputed.relevant {
        return differs(
            "relevant",
            recorded.relevant.to_string(),
            recomputed.relevant.to_string(),
        );
    }
    if recorded.returned != recomputed.returned {
        return differs(
            "returned",
            recorded.returned.to_string(),
            recomputed.returned.to_string(),
        );
    }
    let (names, values) = (recomputed.metrics.names(), recomputed.metrics.values());
    if recorded.metrics.names() != names {
        return differs(
            "the metric list",
            recorded.metrics.names().join(" "),
            names.join(" "),
        );
    }
    for ((name, &want), &have) in names.iter().zip(values).zip(recorded.metrics.values()) {
        if want.to_bits() != have.to_bits() && !(want.is_nan() && have.is_nan()) {
            return differs(name, number(have), number(want));
        }
    }
    if recorded.top != recomputed.top {
        return differs("top", facts(&recorded.top), facts(&recomputed.top));
    }
    if recorded.relevant_ranks != recomputed.relevant_ranks {
        let ranks = |record: &PerQueryResult| {
            let ranks: Vec<String> = record
                .relevant_ranks
                .iter()
                .map(|(fact, rank)| match rank {
                    Some(rank) => format!("{fact}: {rank}"),
                    None => format!("{fact}: null"),
                })
                .collect();
            format!("{{{}}}", ranks.join(", "))
        };
        return differs("relevant_ranks", ranks(recorded), ranks(recomputed));
    }
    None
}

/// A metric value as results.json writes it.
fn number(value: f64) -> String {
    if value.is_finite() {
        format!("{value:?}")
    } else {
        "null".to_owned()
    }
}

/// A list of fact ids, cut to a readable length.
fn facts(ids: &[FactId]) -> String {
    let shown: Vec<&str> = ids.iter().take(12).map(FactId::as_str).collect();
    let more = if ids.len() > shown.len() { ", ..." } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

/// Checks that a shard's HyDE accounting of `configuration` fits its queries: no more
/// eligible queries than it has, each eligible query used a hypothesis, fell back or
/// was skipped, as many used one as its records say (give or take its queries without
/// a record), and no more timed generations than queries that consulted the generator.
fn check_hyde_accounting(
    path: &Path,
    shard: &ShardResults,
    configuration: &ConfigurationResult,
) -> Result<(), Error> {
    let Some(hyde) = &configuration.hyde else {
        return Ok(());
    };
    let queries = shard.query_slice.len();
    let records = configuration.per_query.len();
    let used_records = configuration
        .per_query
        .iter()
        .filter(|record| record.hypothesis_used == Some(true))
        .count();
    let add = |counts: &[usize]| {
        counts
            .iter()
            .fold(0usize, |sum, count| sum.saturating_add(*count))
    };
    let outcomes = add(&[
        hyde.hypotheses_used,
        hyde.fallback_no_hypothesis,
        hyde.skipped_short_query,
        hyde.skipped_code_mention,
        hyde.skipped_few_characters,
        hyde.skipped_lookup_intent,
    ]);
    let consulted = add(&[hyde.hypotheses_used, hyde.fallback_no_hypothesis]);
    let timed = hyde.generation_time.as_ref().map_or(0, |time| time.queries);
    let problem = if hyde.eligible_queries > queries {
        format!(
            "eligible_queries is {}, more than the shard's {queries} queries",
            hyde.eligible_queries
        )
    } else if outcomes != hyde.eligible_queries {
        format!(
            "eligible_queries is {}, but {outcomes} queries used a hypothesis, fell back or were skipped",
            hyde.eligible_queries
        )
    } else if hyde.hypotheses_used < used_records
        || hyde.hypotheses_used > used_records + (queries - records.min(queries))
    {
        format!(
            "hypotheses_used is {}, but {used_records} of its {records} per-query records used one ({} queries have no record)",
            hyde.hypotheses_used,
            queries - records.min(queries)
        )
    } else if timed > consulted {
        format!(
            "generation_time counts {timed} queries, more than the {consulted} that consulted the generator"
        )
    } else {
        return Ok(());
    };
    Err(Error::problem(
        Problem::new(
            path,
            None,
            format!("configuration {}: hyde: {problem}", configuration.name),
        )
        .with_hint(REMEDY),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[&str]) -> Vec<QueryId> {
        names.iter().map(|name| QueryId(name.to_string())).collect()
    }

    #[test]
    fn a_slice_difference_names_the_first_query_and_what_is_wrong() {
        let dataset_ids = ids(&["q1", "q2", "q3", "q4", "q5"]);
        let owners = QueryOwners {
            positions: dataset_ids
                .iter()
                .enumerate()
                .map(|(position, id)| (id.0.as_str(), position))
                .collect(),
            count: 2,
        };
        let shard = owners.shard(0);
        // Shard 1/2 holds q1, q3, q5.
        let expected = ids(&["q1", "q3", "q5"]);
        let expected: Vec<&QueryId> = expected.iter().collect();
        let difference = |recorded: &[&str]| {
            let recorded = ids(recorded);
            let recorded: Vec<&QueryId> = recorded.iter().collect();
            slice_difference(&recorded, &expected, &owners, shard)
                .map(|(query, problem)| format!("{query} {problem}"))
        };
        assert_eq!(difference(&["q1", "q3", "q5"]), None);
        assert_eq!(
            difference(&["q1", "q3", "q3", "q5"]).unwrap(),
            "q3 is listed twice"
        );
        assert_eq!(
            difference(&["q1", "q2", "q3", "q5"]).unwrap(),
            "q2 is not one of shard 1/2's queries of this dataset (it is shard 2/2's)"
        );
        assert_eq!(
            difference(&["q1", "q9"]).unwrap(),
            "q9 is not a query of this dataset"
        );
        assert_eq!(
            difference(&["q1", "q5"]).unwrap(),
            "q3 is missing (shard 1/2 of this dataset holds it)"
        );
        assert_eq!(
            difference(&["q1", "q5", "q3"]).unwrap(),
            "q5 is out of dataset order"
        );
    }

    #[test]
    fn run_lines_are_taken_query_by_query_and_a_cut_line_is_named() {
        let text = "q1 Q0 f1 1 2 t\nq1 Q0 f2 2 1 t\nq10 Q0 f3 1 1 t\nq3 Q0 f4 1 1";
        let mut lines = RunLines::new(text.as_bytes());
        let taken = lines.take("q1").ok().unwrap();
        assert_eq!(taken.first_line, Some(1));
        assert_eq!(taken.results, vec![("f1".into(), 2.0), ("f2".into(), 1.0)]);
        // q2 returned nothing; q10 is not taken for q1 above.
        let taken = lines.take("q2").ok().unwrap();
        assert_eq!((taken.first_line, taken.results.len()), (None, 0));
        assert_eq!(lines.take("q10").ok().unwrap().first_line, Some(3));
        let problem = lines.take("q3").err().unwrap();
        assert_eq!(problem.line, Some(4));
        assert!(problem.message.contains("query q3: the line is cut short"));
    }
}
