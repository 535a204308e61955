//! The per-query records of the results document that reports show beside the metrics:
//! each query's text, hypotheses and judgments, the facts any top list or judgment
//! names, and how a ranking's top and relevant facts are taken from it. Pure over the
//! dataset and the rankings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Results;
use crate::dataset::{Dataset, FactId, Grade, Judgment, Query, QueryId};

/// A query as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryDetail {
    pub id: QueryId,
    pub text: String,
    pub tags: Vec<String>,
    /// The hypotheses of the run: recorded, or written by the run's generator (each
    /// configuration uses its first N).
    pub hypotheses: Vec<String>,
    /// Every judgment of the query: fact id -> grade.
    pub judgments: BTreeMap<FactId, Grade>,
}

/// A fact that appears in some configuration's top results or is relevant to a query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactDetail {
    pub id: FactId,
    pub content: String,
}

/// Each of `queries` (the dataset's, or a shard of them) with its hypotheses and
/// judgments, in their order.
pub fn query_details(dataset: &Dataset, queries: &[Query]) -> Vec<QueryDetail> {
    queries
        .iter()
        .map(|query| QueryDetail {
            id: query.id.clone(),
            text: query.text.clone(),
            tags: query.tags.clone(),
            hypotheses: dataset
                .hypotheses
                .get(&query.id)
                .map(|recorded| recorded.texts.clone())
                .unwrap_or_default(),
            judgments: dataset
                .qrels
                .get(&query.id)
                .map(|judgments| {
                    judgments
                        .iter()
                        .map(|j| (j.fact.clone(), j.grade))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// The first `depth` fact ids of `ranking`, and the 1-based rank of every relevant fact
/// (`None` when it was not returned).
pub fn ranked_view(
    results: &[(FactId, f64)],
    judgments: &[Judgment],
    relevance_level: Grade,
    depth: usize,
) -> (Vec<FactId>, BTreeMap<FactId, Option<usize>>) {
    let top = results
        .iter()
        .take(depth)
        .map(|(fact, _)| fact.clone())
        .collect();
    let mut relevant: BTreeMap<FactId, Option<usize>> = judgments
        .iter()
        .filter(|judgment| judgment.grade >= relevance_level)
        .map(|judgment| (judgment.fact.clone(), None))
        .collect();
    let mut unfound = relevant.len();
    for (position, (fact, _)) in results.iter().enumerate() {
        if unfound == 0 {
            break;
        }
        if let Some(rank @ None) = relevant.get_mut(fact) {
            *rank = Some(position + 1);
            unfound -= 1;
        }
    }
    (top, relevant)
}

/// Facts named by any top list or judgment of `results`, in dataset fact order.
pub fn fact_details(dataset: &Dataset, results: &Results) -> Vec<FactDetail> {
    let mut named: std::collections::HashSet<&FactId> = std::collections::HashSet::new();
    for configuration in &results.configurations {
        for query in &configuration.per_query {
            named.extend(query.top.iter());
            named.extend(query.relevant_ranks.facts());
        }
    }
    dataset
        .facts
        .iter()
        .filter(|fact| named.contains(&fact.id))
        .map(|fact| FactDetail {
            id: fact.id.clone(),
            content: fact.content.clone(),
        })
        .collect()
}
