//! Scores one sweep point: fuse every query's candidate table with the point's
//! parameters and compute the metrics, without building fact-id rankings.
//!
//! Grades are looked up by corpus position, and per-query values and means are computed
//! exactly as [`crate::metrics::evaluate`] does (same per-query function, same summation
//! order), so a sweep point equal to a configuration's own parameters reproduces `run`'s
//! numbers bit for bit.

use std::collections::HashMap;

use crate::configuration::{Fusion, Params};
use crate::dataset::{Dataset, FactId, Grade};
use crate::fusion::{fuse, CandidateTable};
use crate::index::FactIndex;
use crate::metrics::{query_metrics, MetricSettings, NOT_JUDGED};

/// The judgments of the evaluated queries (those with at least one relevant fact),
/// keyed by corpus position.
pub struct JudgedQueries {
    /// Dataset positions of the evaluated queries, in dataset order.
    pub positions: Vec<usize>,
    /// Per query, its judged facts sorted by corpus position (a handful, so a binary
    /// search beats hashing every ranked fact).
    grade_of: Vec<Vec<(FactIndex, Grade)>>,
    judged: Vec<Vec<Grade>>,
}

impl JudgedQueries {
    /// `fact_ids[index]` is the id of the fact at corpus position `index`.
    pub fn new(dataset: &Dataset, fact_ids: &[&FactId], relevance_level: Grade) -> Self {
        let position_of: HashMap<&FactId, FactIndex> = fact_ids
            .iter()
            .enumerate()
            .map(|(index, &id)| (id, index as FactIndex))
            .collect();
        let mut judged_queries = JudgedQueries {
            positions: Vec::new(),
            grade_of: Vec::new(),
            judged: Vec::new(),
        };
        for (position, query) in dataset.queries.iter().enumerate() {
            let judgments = dataset
                .qrels
                .get(&query.id)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            if !judgments.iter().any(|j| j.grade >= relevance_level) {
                continue;
            }
            judged_queries.positions.push(position);
            let mut grades: Vec<(FactIndex, Grade)> = judgments
                .iter()
                .filter_map(|j| position_of.get(&j.fact).map(|&index| (index, j.grade)))
                .collect();
            grades.sort_by_key(|&(index, _)| index);
            // Dataset validation rejects duplicate judgments; keep the last like a map would.
            grades.dedup_by(|later, earlier| {
                let same = later.0 == earlier.0;
                if same {
                    earlier.1 = later.1;
                }
                same
            });
            judged_queries.grade_of.push(grades);
            judged_queries
                .judged
                .push(judgments.iter().map(|j| j.grade).collect());
        }
        judged_queries
    }

    /// Number of evaluated queries.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// True when no query has a relevant fact.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// Per-query values of the metrics at `metric_indices` (positions in
/// [`MetricSettings::metric_names`]) when `tables` (one per dataset query) are fused
/// with `params`: `values[metric][evaluated query]`.
pub fn score_point(
    tables: &[CandidateTable],
    fusion: Fusion,
    params: &Params,
    judged: &JudgedQueries,
    settings: &MetricSettings,
    metric_indices: &[usize],
) -> Vec<Vec<f64>> {
    let mut values = vec![Vec::with_capacity(judged.len()); metric_indices.len()];
    for (query, &position) in judged.positions.iter().enumerate() {
        let ranking = fuse(&tables[position], fusion, params);
        let grades: Vec<Grade> = ranking
            .iter()
            .map(|(fact, _)| {
                let grades = &judged.grade_of[query];
                grades
                    .binary_search_by_key(fact, |&(index, _)| index)
                    .map_or(NOT_JUDGED, |found| grades[found].1)
            })
            .collect();
        let all = query_metrics(&grades, &judged.judged[query], settings);
        for (column, &index) in values.iter_mut().zip(metric_indices) {
            column.push(all[index]);
        }
    }
    values
}

/// The macro average, summed in query order from +0.0 as `metrics::evaluate` does.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut total = 0.0;
    for value in values {
        total += value;
    }
    total / values.len() as f64
}
