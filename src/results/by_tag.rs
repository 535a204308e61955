//! The macro metrics of each configuration broken down by query tag (`synonym`, `exact`,
//! `temporal`, ...): which kinds of query a configuration helps. Pure over the results
//! document: the tags come from its `queries`, the values from each configuration's
//! per-query records, so a run and the merge of its shards compute the same breakdown.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{metric_map, ConfigurationResult, PerQueryResult, Results};
use crate::dataset::QueryId;

/// The macro metrics of the evaluated queries that carry one tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TagMetrics {
    pub tag: String,
    /// Evaluated queries carrying the tag: the ones averaged.
    pub queries: usize,
    /// Means over those queries, in metric order (null for a NaN, as in `macro`).
    #[serde(rename = "macro")]
    pub macro_metrics: Map<String, Value>,
}

/// `configuration`'s macro `metric` on the queries tagged `tag`; 0 when it has no such
/// tag or value (as the metric tables show a missing value).
pub fn tag_metric(configuration: &ConfigurationResult, tag: &str, metric: &str) -> f64 {
    configuration
        .by_tag
        .iter()
        .find(|entry| entry.tag == tag)
        .and_then(|entry| entry.macro_metrics.get(metric))
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

/// Fills every configuration's `by_tag` from its per-query records and the tags of
/// `results.queries`.
pub fn add_tag_breakdowns(results: &mut Results) {
    let tags: HashMap<&QueryId, &[String]> = results
        .queries
        .iter()
        .map(|query| (&query.id, query.tags.as_slice()))
        .collect();
    let breakdowns: Vec<Vec<TagMetrics>> = results
        .configurations
        .iter()
        .map(|configuration| {
            tag_breakdown(&configuration.per_query, &tags, &results.evaluation.metrics)
        })
        .collect();
    for (configuration, by_tag) in results.configurations.iter_mut().zip(breakdowns) {
        configuration.by_tag = by_tag;
    }
}

/// One entry per tag of an evaluated query, in tag order: the number of evaluated
/// queries carrying it and the means of their metric values, summed in record order as
/// the overall macro averages are. A query with two tags counts in both.
pub fn tag_breakdown(
    per_query: &[PerQueryResult],
    tags: &HashMap<&QueryId, &[String]>,
    metrics: &[String],
) -> Vec<TagMetrics> {
    let mut sums: BTreeMap<&str, (usize, Vec<f64>)> = BTreeMap::new();
    for record in per_query {
        for tag in tags.get(&record.query).copied().unwrap_or_default() {
            let (count, sum) = sums
                .entry(tag.as_str())
                .or_insert_with(|| (0, vec![0.0; metrics.len()]));
            *count += 1;
            for (total, value) in sum.iter_mut().zip(record.metrics.values()) {
                *total += value;
            }
        }
    }
    sums.into_iter()
        .map(|(tag, (count, sum))| {
            let means: Vec<f64> = sum.iter().map(|total| total / count as f64).collect();
            TagMetrics {
                tag: tag.to_owned(),
                queries: count,
                macro_metrics: metric_map(metrics, &means),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::results::{MetricValues, SharedSlice};

    fn record(query: &str, names: &Arc<[String]>, values: [f64; 2]) -> PerQueryResult {
        PerQueryResult {
            query: QueryId(query.to_owned()),
            relevant: 1,
            returned: 1,
            hypothesis_used: None,
            settled_floor: None,
            metrics: MetricValues::new(names.clone(), SharedSlice::owned(values.to_vec())),
            top: SharedSlice::default(),
            relevant_ranks: Default::default(),
        }
    }

    #[test]
    fn each_tag_averages_its_queries_and_a_query_counts_in_each_of_its_tags() {
        let metrics = vec!["mrr".to_owned(), "ndcg@10".to_owned()];
        let names: Arc<[String]> = metrics.clone().into();
        // q1 [synonym], q2 [synonym, exact], q3 [exact], q4 untagged.
        let per_query = [
            record("q1", &names, [1.0, 1.0]),
            record("q2", &names, [0.5, 0.25]),
            record("q3", &names, [0.0, 0.125]),
            record("q4", &names, [1.0, 1.0]),
        ];
        let [q1, q2, q3] = ["q1", "q2", "q3"].map(|id| QueryId(id.to_owned()));
        let synonym = ["synonym".to_owned()];
        let both = ["synonym".to_owned(), "exact".to_owned()];
        let exact = ["exact".to_owned()];
        let tags: HashMap<&QueryId, &[String]> =
            HashMap::from([(&q1, &synonym[..]), (&q2, &both[..]), (&q3, &exact[..])]);
        let breakdown = tag_breakdown(&per_query, &tags, &metrics);
        // By hand: exact = q2, q3: mrr (0.5 + 0) / 2 = 0.25, nDCG (0.25 + 0.125) / 2 =
        // 0.1875; synonym = q1, q2: mrr (1 + 0.5) / 2 = 0.75, nDCG (1 + 0.25) / 2 = 0.625.
        let expected = |tag: &str, queries, mrr: f64, ndcg: f64| TagMetrics {
            tag: tag.to_owned(),
            queries,
            macro_metrics: metric_map(&metrics, &[mrr, ndcg]),
        };
        assert_eq!(
            breakdown,
            vec![
                expected("exact", 2, 0.25, 0.1875),
                expected("synonym", 2, 0.75, 0.625)
            ]
        );
    }

    #[test]
    fn no_tags_no_breakdown() {
        let metrics = vec!["mrr".to_owned(), "ndcg@10".to_owned()];
        let names: Arc<[String]> = metrics.clone().into();
        let per_query = [record("q1", &names, [1.0, 1.0])];
        assert!(tag_breakdown(&per_query, &HashMap::new(), &metrics).is_empty());
    }
}
