//! Runs of any retrieval system as the read model the gate and `compare` use
//! ([`StoredResults`]): each run's rankings are scored against qrels by the same digest
//! that reduces hyde-eval's own rankings, so an external run and a built-in
//! configuration that rank alike get the same per-query values, macro values and
//! paired statistics.
//!
//! The queries are those of the qrels, in the qrels' first-seen order (the order of the
//! dataset for the `qrels.trec` hyde-eval writes); a qrels query a run does not answer
//! scores as an empty ranking, as a built-in configuration that returns nothing does; a
//! run's queries without judgments are counted and left out. Rankings are cut to
//! `depth` results after trec_eval's ordering. Pure: parsed files in, read models out.

use sha2::{Digest as _, Sha256};

use super::digest::RankingDigest;
use super::stored::{
    StoredConfiguration, StoredDataset, StoredEvaluation, StoredParams, StoredQuery, StoredResults,
};
use super::{metric_map, SCHEMA_VERSION};
use crate::dataset::{Qrels, Query, QueryId};
use crate::error::Error;
use crate::metrics::MetricSettings;
use crate::ranking::{QueryRanking, RankingSink};

/// Qrels that external runs are scored against.
pub struct Judgments {
    /// The name runs compared on these qrels are shown under (the file's name).
    pub name: String,
    /// `sha256:` of the qrels bytes: runs scored on other qrels do not compare.
    pub content_hash: String,
    qrels: Qrels,
    /// The qrels' queries, in first-seen order.
    queries: Vec<Query>,
}

/// One run scored against [`Judgments`].
pub struct ScoredRun {
    pub configuration: StoredConfiguration,
    /// Run queries without judgments (left out).
    pub unjudged_queries: usize,
    /// Qrels queries the run does not answer (scored as empty rankings).
    pub unanswered_queries: usize,
}

impl Judgments {
    /// The judgments read from qrels `bytes` (`qrels` with its queries in `order`).
    pub fn new(name: String, bytes: &[u8], qrels: Qrels, order: Vec<QueryId>) -> Judgments {
        let queries = order
            .into_iter()
            .map(|id| Query {
                id,
                text: String::new(),
                tags: Vec::new(),
                scenario: None,
                expectations: Vec::new(),
            })
            .collect();
        Judgments {
            name,
            content_hash: format!("sha256:{:x}", Sha256::digest(bytes)),
            qrels,
            queries,
        }
    }

    /// Scores `rankings` (each query's results in rank order) as the configuration
    /// `name`, with results past `depth` cut.
    pub fn score(
        &self,
        name: &str,
        rankings: Vec<QueryRanking>,
        settings: &MetricSettings,
        depth: usize,
    ) -> Result<ScoredRun, Error> {
        let mut by_query: std::collections::HashMap<QueryId, Vec<_>> =
            std::collections::HashMap::with_capacity(rankings.len());
        let mut unjudged_queries = 0;
        for ranking in rankings {
            if self.qrels.contains_key(&ranking.query) {
                by_query.insert(ranking.query, ranking.results);
            } else {
                unjudged_queries += 1;
            }
        }
        let unanswered_queries = self
            .queries
            .iter()
            .filter(|query| !by_query.contains_key(&query.id))
            .count();
        let ordered: Vec<QueryRanking> = self
            .queries
            .iter()
            .map(|query| {
                let mut results = by_query.remove(&query.id).unwrap_or_default();
                results.truncate(depth);
                QueryRanking {
                    query: query.id.clone(),
                    results,
                }
            })
            .collect();
        let mut digest = RankingDigest::new(&self.queries, &self.qrels, settings);
        digest.accept(ordered)?;
        let digest = digest.finish()?;
        let names = settings.metric_names();
        Ok(ScoredRun {
            configuration: StoredConfiguration {
                name: name.to_owned(),
                params: StoredParams { depth },
                macro_metrics: metric_map(&names, &digest.means),
                per_query: digest
                    .per_query
                    .into_iter()
                    .map(|query| StoredQuery {
                        top: query
                            .top
                            .iter()
                            .map(|fact| fact.as_str().to_owned())
                            .collect(),
                        query: query.query,
                        metrics: query.metrics,
                    })
                    .collect(),
            },
            unjudged_queries,
            unanswered_queries,
        })
    }

    /// The read model holding `configurations` scored with `settings`, as a run named
    /// `run_name` on these judgments.
    pub fn results(
        &self,
        run_name: &str,
        settings: &MetricSettings,
        configurations: Vec<StoredConfiguration>,
    ) -> StoredResults {
        StoredResults {
            schema_version: SCHEMA_VERSION,
            run_name: run_name.to_owned(),
            dataset: StoredDataset {
                name: self.name.clone(),
                content_hash: self.content_hash.clone(),
                queries: self.queries.len(),
            },
            evaluation: StoredEvaluation {
                metrics: settings.metric_names(),
                cutoffs: settings.cutoffs.clone(),
                relevance_level: settings.relevance_level,
                semantics: settings.semantics,
            },
            embedder: None,
            configurations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Semantics;
    use crate::trec::{read_trec_qrels, read_trec_run};
    use std::path::Path;

    #[test]
    fn runs_are_scored_over_the_qrels_queries_in_their_order() {
        // q2 first in the qrels; q3 has no relevant document (not averaged); q4 is not
        // judged at all.
        let qrels_text = "q2 0 a 1\nq1 0 b 2\nq1 0 c 1\nq3 0 a 0\n";
        let (qrels, order) = read_trec_qrels(Path::new("q"), qrels_text).unwrap();
        let judgments = Judgments::new("q".into(), qrels_text.as_bytes(), qrels, order);
        // q1: c (relevant) at rank 1, x, b (relevant) at rank 3; q2 unanswered.
        let run = read_trec_run(
            Path::new("r"),
            "q1 Q0 c 1 3 t\nq1 Q0 x 2 2 t\nq1 Q0 b 3 1 t\nq4 Q0 a 1 1 t\n",
        )
        .unwrap();
        let settings = MetricSettings {
            cutoffs: vec![1, 2],
            relevance_level: 1,
            semantics: Semantics::Trec,
        };
        let scored = judgments
            .score("run", run.clone(), &settings, 1000)
            .unwrap();
        assert_eq!(scored.unjudged_queries, 1);
        assert_eq!(scored.unanswered_queries, 2);
        let queries: Vec<&str> = scored
            .configuration
            .per_query
            .iter()
            .map(|query| query.query.0.as_str())
            .collect();
        assert_eq!(queries, vec!["q2", "q1"]);
        let q1 = &scored.configuration.per_query[1].metrics;
        // Relevant at ranks 1 and 3 of 2 relevant: recall@2 = 1/2, AP = (1 + 2/3) / 2.
        assert_eq!(q1.get("recall@2"), Some(0.5));
        assert!((q1.get("map").unwrap() - 5.0 / 6.0).abs() < 1e-12);
        let q2 = &scored.configuration.per_query[0].metrics;
        assert_eq!(q2.get("map"), Some(0.0));
        // The macro averages the two evaluated queries.
        let macro_map = scored.configuration.macro_value("map").unwrap();
        assert!((macro_map - 5.0 / 12.0).abs() < 1e-12);
        // Cut to depth 2, b (rank 3) is gone: AP = 1 / 2.
        let cut = judgments.score("run", run, &settings, 2).unwrap();
        assert_eq!(cut.configuration.per_query[1].metrics.get("map"), Some(0.5));
        let results = judgments.results("x", &settings, vec![cut.configuration]);
        assert_eq!(results.dataset.queries, 3);
        assert!(results.dataset.content_hash.starts_with("sha256:"));
        assert_eq!(results.configurations[0].params.depth, 2);
    }
}
