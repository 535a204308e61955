//! What a run keeps of its rankings. The pipeline hands each configuration's rankings
//! over chunk by chunk ([`RankingSink`]); a [`RankingDigest`] reduces them, in query
//! order, to what the results document needs (per-query metrics, the top of each
//! ranking with the ranks of the relevant facts, expectation checks, abstentions) and,
//! when asked, appends them to the configuration's TREC run file or keeps them whole.
//! A run of any size thus holds one chunk of rankings at a time.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::dataset::{FactId, Qrels, Query, QueryId};
use crate::error::Error;
use crate::expectations::ExpectationSummary;
use crate::metrics::{evaluate_query, Evaluation, MetricSettings, QueryEvaluation};
use crate::pipeline::RankingSink;
use crate::run::QueryRanking;
use crate::trec::write_trec_run;

/// The top of one evaluated query's ranking and the rank of each of its relevant facts.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedView {
    /// The query's position in the dataset.
    pub position: usize,
    /// The first (largest cut-off) fact ids of the ranking.
    pub top: Vec<FactId>,
    /// 1-based rank of every relevant fact; `None` when it was not returned.
    pub relevant_ranks: BTreeMap<FactId, Option<usize>>,
}

/// One configuration's rankings, reduced.
#[derive(Debug, Clone, PartialEq)]
pub struct Digest {
    pub evaluation: Evaluation,
    /// Aligned with `evaluation.per_query`.
    pub views: Vec<RankedView>,
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
    writer: BufWriter<File>,
}

/// Reduces one configuration's rankings as they arrive (see the module docs).
pub struct RankingDigest<'d> {
    queries: &'d [Query],
    qrels: &'d Qrels,
    settings: &'d MetricSettings,
    /// Dataset position of the next query to arrive.
    next: usize,
    per_query: Vec<QueryEvaluation>,
    without_relevant: Vec<QueryId>,
    views: Vec<RankedView>,
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
        RankingDigest {
            queries,
            qrels,
            settings,
            next: 0,
            per_query: Vec::new(),
            without_relevant: Vec::new(),
            views: Vec::new(),
            abstained_without_relevant: 0,
            expectations: has_expectations.then(ExpectationSummary::default),
            run_file: None,
            kept: None,
        }
    }

    /// Also writes the rankings as a TREC run file at `path`, tagged `tag`.
    pub fn writing_run_file(mut self, path: &Path, tag: &str) -> Result<Self, Error> {
        let file = File::create(path).map_err(|source| Error::Write {
            path: path.to_path_buf(),
            source,
        })?;
        self.run_file = Some(RunFile {
            path: path.to_path_buf(),
            tag: tag.to_owned(),
            writer: BufWriter::with_capacity(1 << 20, file),
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
        Ok(Digest {
            evaluation: Evaluation::from_queries(
                self.settings,
                self.per_query,
                self.without_relevant,
            ),
            views: self.views,
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
                    let (top, relevant_ranks) = super::diagnostics::ranked_view(
                        &ranking.results,
                        self.qrels.get(&query.id).map_or(&[], Vec::as_slice),
                        self.settings.relevance_level,
                        depth,
                    );
                    self.per_query.push(evaluation);
                    self.views.push(RankedView {
                        position,
                        top,
                        relevant_ranks,
                    });
                }
                None => {
                    if ranking.results.is_empty() {
                        self.abstained_without_relevant += 1;
                    }
                    self.without_relevant.push(query.id.clone());
                }
            }
        }
        if let Some(run_file) = &mut self.run_file {
            write_trec_run(&mut run_file.writer, &rankings, &run_file.tag).map_err(|source| {
                Error::Write {
                    path: run_file.path.clone(),
                    source,
                }
            })?;
        }
        if let Some(kept) = &mut self.kept {
            kept.extend(rankings);
        }
        Ok(())
    }
}
