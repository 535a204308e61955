//! What a run keeps of its rankings. The pipeline hands each configuration's rankings
//! over chunk by chunk ([`RankingSink`]); a [`RankingDigest`] reduces them, in query
//! order, to what the results document needs (per-query metrics, the top of each
//! ranking with the ranks of the relevant facts, expectation checks, abstentions) and,
//! when asked, appends them to the configuration's TREC run file or keeps them whole.
//! A run of any size thus holds one chunk of rankings at a time.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use std::sync::Arc;

use super::{MetricValues, PerQueryResult, RelevantRankMap, SharedSlice};
use crate::dataset::{FactId, Qrels, Query, QueryId};
use crate::error::Error;
use crate::expectations::ExpectationSummary;
use crate::metrics::{evaluate_query, MetricSettings};
use crate::ranking::{QueryRanking, RankingSink};
use crate::trec::write_trec_run_to_depth;
use crate::writeback::WritebackFile;

/// One configuration's rankings, reduced.
#[derive(Debug, Clone)]
pub struct Digest {
    /// One record per evaluated query, in dataset order; `hypothesis_used` is left
    /// unset for the caller, who knows the configuration.
    pub per_query: Vec<PerQueryResult>,
    /// The dataset position of each record's query.
    pub positions: Vec<usize>,
    /// Means of the records' metric values, in metric order.
    pub means: Vec<f64>,
    /// Queries without a relevant fact at the relevance level (not averaged).
    pub without_relevant: Vec<QueryId>,
    /// Rankings received (one per dataset query).
    pub queries: usize,
    /// Queries without a relevant fact for which nothing was returned.
    pub abstained_without_relevant: usize,
    /// `None` when the dataset defines no expectations.
    pub expectations: Option<ExpectationSummary>,
    /// Every ranking, in dataset order, when the digest was asked to keep them.
    pub rankings: Option<Vec<QueryRanking>>,
}

/// A TREC run file being appended to.
struct RunFile {
    path: PathBuf,
    tag: String,
    /// Lines written per query at most (`None`: the whole ranking).
    depth: Option<usize>,
    writer: BufWriter<WritebackFile>,
}

/// The reductions of the evaluated queries, in arrival order, stored flat: a long run's
/// reductions then sit in a few growing buffers instead of small allocations scattered
/// among the chunks' rankings, which would keep the memory those free from being reused.
#[derive(Default)]
struct Reductions {
    positions: Vec<usize>,
    relevant: Vec<usize>,
    returned: Vec<usize>,
    /// The metric values of each query, back to back.
    values: Vec<f64>,
    /// The top list of each query, back to back; `top_ends[i]` ends query i's.
    top: Vec<FactId>,
    top_ends: Vec<usize>,
    /// The relevant facts and their ranks of each query, back to back.
    ranks: Vec<(FactId, Option<usize>)>,
    rank_ends: Vec<usize>,
}

/// Reduces one configuration's rankings as they arrive (see the module docs).
pub struct RankingDigest<'d> {
    queries: &'d [Query],
    qrels: &'d Qrels,
    settings: &'d MetricSettings,
    /// Dataset position of the next query to arrive.
    next: usize,
    reductions: Reductions,
    /// Dataset positions of the queries without a relevant fact.
    without_relevant: Vec<usize>,
    abstained_without_relevant: usize,
    expectations: Option<ExpectationSummary>,
    run_file: Option<RunFile>,
    kept: Option<Vec<QueryRanking>>,
}

impl<'d> RankingDigest<'d> {
    /// A digest of rankings of `queries` (which arrive in that order), judged by `qrels`.
    pub fn new(
        queries: &'d [Query],
        qrels: &'d Qrels,
        settings: &'d MetricSettings,
    ) -> RankingDigest<'d> {
        let has_expectations = queries.iter().any(|query| !query.expectations.is_empty());
        // Sized for every query up front: the buffers hold the run's per-query records
        // to the end, and growing them by doubling would leave up to half unused.
        let metric_count = settings.metric_names().len();
        let reductions = Reductions {
            positions: Vec::with_capacity(queries.len()),
            relevant: Vec::with_capacity(queries.len()),
            returned: Vec::with_capacity(queries.len()),
            values: Vec::with_capacity(queries.len() * metric_count),
            top_ends: Vec::with_capacity(queries.len()),
            rank_ends: Vec::with_capacity(queries.len()),
            ..Reductions::default()
        };
        RankingDigest {
            queries,
            qrels,
            settings,
            next: 0,
            reductions,
            without_relevant: Vec::new(),
            abstained_without_relevant: 0,
            expectations: has_expectations.then(ExpectationSummary::default),
            run_file: None,
            kept: None,
        }
    }

    /// Also writes the rankings as a TREC run file at `path`, tagged `tag`, at most
    /// `depth` lines per query when given (the metrics still see whole rankings).
    pub fn writing_run_file(
        mut self,
        path: &Path,
        tag: &str,
        depth: Option<usize>,
    ) -> Result<Self, Error> {
        let file = File::create(path).map_err(|source| Error::Write {
            path: path.to_path_buf(),
            source,
        })?;
        self.run_file = Some(RunFile {
            path: path.to_path_buf(),
            tag: tag.to_owned(),
            depth,
            writer: BufWriter::with_capacity(1 << 20, WritebackFile::new(file)),
        });
        Ok(self)
    }

    /// Also keeps every ranking ([`Digest::rankings`]).
    pub fn keeping_rankings(mut self) -> Self {
        self.kept = Some(Vec::new());
        self
    }

    /// The reduction of every ranking received; flushes the run file.
    pub fn finish(self) -> Result<Digest, Error> {
        if let Some(mut run_file) = self.run_file {
            run_file.writer.flush().map_err(|source| Error::Write {
                path: run_file.path.clone(),
                source,
            })?;
        }
        let mut reductions = self.reductions;
        let names: Arc<[String]> = self.settings.metric_names().into();
        let metric_count = names.len();
        // Means summed query by query in order, as trec_eval averages.
        let mut means = vec![0.0; metric_count];
        for values in reductions.values.chunks_exact(metric_count.max(1)) {
            for (mean, value) in means.iter_mut().zip(values) {
                *mean += value;
            }
        }
        let evaluated = reductions.positions.len();
        if evaluated > 0 {
            for mean in &mut means {
                *mean /= evaluated as f64;
            }
        }
        reductions.top.shrink_to_fit();
        reductions.ranks.shrink_to_fit();
        let values = Arc::new(reductions.values);
        let top = Arc::new(reductions.top);
        let ranks = Arc::new(reductions.ranks);
        let mut per_query = Vec::with_capacity(evaluated);
        let (mut top_start, mut rank_start) = (0, 0);
        for (index, &position) in reductions.positions.iter().enumerate() {
            let (top_end, rank_end) = (reductions.top_ends[index], reductions.rank_ends[index]);
            per_query.push(PerQueryResult {
                query: self.queries[position].id.clone(),
                relevant: reductions.relevant[index],
                returned: reductions.returned[index],
                hypothesis_used: None,
                settled_floor: None,
                metrics: MetricValues::new(
                    names.clone(),
                    SharedSlice::new(
                        values.clone(),
                        index * metric_count..(index + 1) * metric_count,
                    ),
                ),
                top: SharedSlice::new(top.clone(), top_start..top_end),
                relevant_ranks: RelevantRankMap::new(ranks.clone(), rank_start..rank_end),
            });
            (top_start, rank_start) = (top_end, rank_end);
        }
        let without_relevant = self
            .without_relevant
            .iter()
            .map(|&position| self.queries[position].id.clone())
            .collect();
        Ok(Digest {
            per_query,
            positions: reductions.positions,
            means,
            without_relevant,
            queries: self.next,
            abstained_without_relevant: self.abstained_without_relevant,
            expectations: self.expectations,
            rankings: self.kept,
        })
    }
}

impl RankingSink for RankingDigest<'_> {
    fn accept(&mut self, rankings: Vec<QueryRanking>) -> Result<(), Error> {
        let depth = self.settings.cutoffs.last().copied().unwrap_or(0);
        for ranking in &rankings {
            let position = self.next;
            self.next += 1;
            let query = &self.queries[position];
            debug_assert_eq!(query.id, ranking.query, "rankings arrive in dataset order");
            if let Some(expectations) = &mut self.expectations {
                expectations.record(query, &ranking.results);
            }
            match evaluate_query(&query.id, &ranking.results, self.qrels, self.settings) {
                Some(evaluation) => {
                    let (top, relevant_ranks) = super::details::ranked_view(
                        &ranking.results,
                        self.qrels.get(&query.id).map_or(&[], Vec::as_slice),
                        self.settings.relevance_level,
                        depth,
                    );
                    let reductions = &mut self.reductions;
                    reductions.positions.push(position);
                    reductions.relevant.push(evaluation.relevant);
                    reductions.returned.push(evaluation.returned);
                    reductions.values.extend_from_slice(&evaluation.values);
                    reductions.top.extend(top);
                    reductions.top_ends.push(reductions.top.len());
                    reductions.ranks.extend(relevant_ranks);
                    reductions.rank_ends.push(reductions.ranks.len());
                }
                None => {
                    if ranking.results.is_empty() {
                        self.abstained_without_relevant += 1;
                    }
                    self.without_relevant.push(position);
                }
            }
        }
        if let Some(run_file) = &mut self.run_file {
            write_trec_run_to_depth(
                &mut run_file.writer,
                &rankings,
                &run_file.tag,
                run_file.depth,
            )
            .map_err(|source| Error::Write {
                path: run_file.path.clone(),
                source,
            })?;
        }
        if let Some(kept) = &mut self.kept {
            kept.extend(rankings);
        }
        Ok(())
    }
}
