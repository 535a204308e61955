//! The judging pool, as TREC builds its pools: per query, the union of the top k facts
//! of every configuration of a `results.json` and of every TREC run given, less the
//! pairs the qrels already judge. Pure: the caller reads the files.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::dataset::{Dataset, FactId, QueryId};
use crate::ranking::QueryRanking;
use crate::results::stored::StoredResults;

/// One (query, fact) pair to judge, by position in the dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolPair {
    pub query: usize,
    pub fact: usize,
}

/// What went into a pool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolSummary {
    /// Distinct (query, fact) pairs in the union of the top lists.
    pub pooled: usize,
    /// Of those, pairs the qrels already judge.
    pub already_judged: usize,
    /// Pooled facts or queries the dataset does not have (left out, counted).
    pub unknown: usize,
}

/// The unjudged pairs of the pool of depth `depth` over `results` and `runs`, in
/// dataset query order, facts by id within a query.
pub fn pool(
    dataset: &Dataset,
    results: &[StoredResults],
    runs: &[Vec<QueryRanking>],
    depth: usize,
) -> (Vec<PoolPair>, PoolSummary) {
    let mut pooled: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for stored in results {
        for configuration in &stored.configurations {
            for record in &configuration.per_query {
                let facts = pooled.entry(record.query.0.as_str()).or_default();
                facts.extend(record.top.iter().take(depth).map(String::as_str));
            }
        }
    }
    for run in runs {
        for ranking in run {
            let facts = pooled.entry(ranking.query.0.as_str()).or_default();
            facts.extend(
                ranking
                    .results
                    .iter()
                    .take(depth)
                    .map(|(fact, _)| fact.as_str()),
            );
        }
    }
    let fact_position: HashMap<&str, usize> = dataset
        .facts
        .iter()
        .enumerate()
        .map(|(position, fact)| (fact.id.as_str(), position))
        .collect();
    let query_ids: HashSet<&QueryId> = dataset.queries.iter().map(|query| &query.id).collect();
    let mut summary = PoolSummary::default();
    for (query, facts) in &pooled {
        if !query_ids.contains(&QueryId((*query).to_owned())) {
            summary.unknown += facts.len();
        }
    }
    let mut pairs = Vec::new();
    for (query_position, query) in dataset.queries.iter().enumerate() {
        let Some(facts) = pooled.get(query.id.0.as_str()) else {
            continue;
        };
        let judged: HashSet<&FactId> = dataset
            .qrels
            .get(&query.id)
            .map(|judgments| judgments.iter().map(|judgment| &judgment.fact).collect())
            .unwrap_or_default();
        for fact in facts {
            let Some(&fact_position) = fact_position.get(fact) else {
                summary.unknown += 1;
                continue;
            };
            summary.pooled += 1;
            if judged.contains(&dataset.facts[fact_position].id) {
                summary.already_judged += 1;
            } else {
                pairs.push(PoolPair {
                    query: query_position,
                    fact: fact_position,
                });
            }
        }
    }
    (pairs, summary)
}
