//! Scores sweep points one query at a time: each of the query's candidate tables is
//! laid out once and re-fused at every point that reads it, and the metrics are computed
//! without building fact-id rankings.
//!
//! A table whose fusion method blends weight-independent terms
//! ([`crate::fusion::WeightedColumns`]) becomes columns: a point's scores are one
//! multiply-add per column and candidate, and only the ranks of the judged facts are
//! found (by counting the candidates ahead of each), since the metrics read nothing
//! else. Other tables are fused by the method at each point.
//!
//! Grades are looked up by corpus position, and per-query values and means are computed
//! exactly as [`crate::metrics::evaluate`] does (same per-query function, same summation
//! order), so a sweep point equal to a configuration's own parameters reproduces `run`'s
//! numbers bit for bit.

use std::collections::HashMap;

use crate::configuration::{Fusion, Params};
use crate::dataset::{Dataset, FactId, Grade};
use crate::fusion::{self, fuse, CandidateTable, WeightedColumns};
use crate::index::{select_top_by_score_then_id, FactIndex};
use crate::metrics::{query_metrics, MetricSettings, NOT_JUDGED};
use crate::pipeline::ConfigurationTables;

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

/// One point as [`score_query`] scores it.
pub struct ScoredPoint<'a> {
    /// Which of the sweep's table sets the point fuses.
    pub tables: usize,
    pub fusion: Fusion,
    pub params: &'a Params,
    /// The point's weights along its fusion method's weight axes.
    weights: Vec<f64>,
}

impl<'a> ScoredPoint<'a> {
    pub fn new(tables: usize, fusion: Fusion, params: &'a Params) -> Self {
        let weights = fusion::method(fusion)
            .spec()
            .weight_axes
            .iter()
            .map(|axis| (axis.get)(params))
            .collect();
        ScoredPoint {
            tables,
            fusion,
            params,
            weights,
        }
    }
}

/// Judged facts at most this many in a table are ranked by counting the candidates ahead
/// of each (a pass over the scores per judged fact); more, and the point's ranking is
/// selected instead.
const RANKED_BY_COUNTING: usize = 16;

/// One evaluated query's candidates for one table set, as every point re-fuses them.
enum QueryCandidates<'t> {
    /// Laid out as weighted columns, with the table positions and grades of the judged
    /// facts among the candidates.
    Columns {
        columns: WeightedColumns,
        judged: Vec<(usize, Grade)>,
    },
    /// The table, fused point by point.
    Table(&'t CandidateTable),
}

/// Buffers reused from point to point.
#[derive(Default)]
struct Scratch {
    scores: Vec<f64>,
    keys: Vec<i64>,
    grades: Vec<Grade>,
}

impl<'t> QueryCandidates<'t> {
    fn new(table: &'t CandidateTable, fusion: Fusion, grade_of: &[(FactIndex, Grade)]) -> Self {
        match fusion::method(fusion).weighted_columns(table) {
            Some(columns) => {
                let judged = columns
                    .facts
                    .iter()
                    .enumerate()
                    .filter_map(|(position, &fact)| Some((position, grade_in(grade_of, fact)?)))
                    .collect();
                QueryCandidates::Columns { columns, judged }
            }
            None => QueryCandidates::Table(table),
        }
    }

    /// The grades of the point's ranking, in rank order ([`NOT_JUDGED`] for unjudged
    /// facts): what grading `fuse(table, point.fusion, point.params)` gives.
    fn ranked_grades<'s>(
        &self,
        point: &ScoredPoint<'_>,
        grade_of: &[(FactIndex, Grade)],
        scratch: &'s mut Scratch,
    ) -> &'s [Grade] {
        let Scratch {
            scores,
            keys,
            grades,
        } = scratch;
        grades.clear();
        match self {
            QueryCandidates::Table(table) => {
                let ranking = fuse(table, point.fusion, point.params);
                grades.extend(
                    ranking
                        .iter()
                        .map(|&(fact, _)| grade_of_fact(grade_of, fact)),
                );
            }
            QueryCandidates::Columns { columns, judged } => {
                let ranked = columns.facts.len().min(point.params.depth);
                if judged.is_empty() {
                    // No judged fact to place: the ranking's length is all that counts.
                    grades.resize(ranked, NOT_JUDGED);
                } else if judged.len() <= RANKED_BY_COUNTING {
                    columns.scores(&point.weights, scores);
                    grades.resize(ranked, NOT_JUDGED);
                    let ordered = ordered_as_floats(scores);
                    if !ordered {
                        keys.clear();
                        keys.extend(scores.iter().map(|&score| total_order_key(score)));
                    }
                    for &(position, grade) in judged {
                        let rank = if ordered {
                            rank_by_floats(scores, &columns.facts, position)
                        } else {
                            rank_of(keys, &columns.facts, position)
                        };
                        if let Some(slot) = grades.get_mut(rank) {
                            *slot = grade;
                        }
                    }
                } else {
                    columns.scores(&point.weights, scores);
                    let ranking = select_top_by_score_then_id(
                        columns.facts.iter().copied().zip(scores.iter().copied()),
                        point.params.depth,
                    );
                    grades.extend(
                        ranking
                            .iter()
                            .map(|&(fact, _)| grade_of_fact(grade_of, fact)),
                    );
                }
            }
        }
        grades
    }
}

/// True when `f64`'s comparison operators order `scores` as `f64::total_cmp` does:
/// no NaN, and no -0.0 (which `total_cmp` puts below +0.0, while `<` calls them equal).
fn ordered_as_floats(scores: &[f64]) -> bool {
    scores.iter().fold(true, |ordered, &score| {
        ordered & !score.is_nan() & ((score != 0.0) | score.is_sign_positive())
    })
}

/// [`rank_of`] for scores that [`ordered_as_floats`]: the candidates with higher
/// scores, plus those with equal scores and lower facts (looked for only when the score
/// is shared).
fn rank_by_floats(scores: &[f64], facts: &[FactIndex], position: usize) -> usize {
    let (score, fact) = (scores[position], facts[position]);
    let (higher, equal) = scores
        .iter()
        .fold((0usize, 0usize), |(higher, equal), &other| {
            (
                higher + usize::from(other > score),
                equal + usize::from(other == score),
            )
        });
    if equal == 1 {
        return higher;
    }
    higher
        + scores
            .iter()
            .zip(facts)
            .filter(|&(&other, &other_fact)| other == score && other_fact < fact)
            .count()
}

/// `f64::total_cmp` as an integer order: `total_order_key(a).cmp(&total_order_key(b))`
/// is `a.total_cmp(&b)` (the same bit flip the standard library makes).
fn total_order_key(value: f64) -> i64 {
    let bits = value.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// The 0-based rank of candidate `position` when candidates rank by score descending,
/// then fact ascending (the order of [`select_top_by_score_then_id`]): how many are
/// ahead of it. `keys` are the scores' [`total_order_key`]s.
fn rank_of(keys: &[i64], facts: &[FactIndex], position: usize) -> usize {
    let (key, fact) = (keys[position], facts[position]);
    keys.iter()
        .zip(facts)
        .map(|(&other_key, &other_fact)| {
            usize::from((other_key > key) | ((other_key == key) & (other_fact < fact)))
        })
        .sum()
}

/// The grade of `fact` among a query's judged facts (sorted by corpus position).
fn grade_in(grade_of: &[(FactIndex, Grade)], fact: FactIndex) -> Option<Grade> {
    grade_of
        .binary_search_by_key(&fact, |&(index, _)| index)
        .ok()
        .map(|found| grade_of[found].1)
}

/// The grade of `fact` for a query, [`NOT_JUDGED`] when it is not judged.
fn grade_of_fact(grade_of: &[(FactIndex, Grade)], fact: FactIndex) -> Grade {
    grade_in(grade_of, fact).unwrap_or(NOT_JUDGED)
}

/// The values of the metrics at `metric_indices` (positions in
/// [`MetricSettings::metric_names`]) for evaluated query `query` at every point:
/// `values[point][metric]`. `table_sets[point.tables].tables` holds one table per
/// dataset query. Each table set is laid out once for the query and re-fused at every
/// point that reads it.
pub fn score_query(
    query: usize,
    points: &[ScoredPoint<'_>],
    table_sets: &[ConfigurationTables],
    judged: &JudgedQueries,
    settings: &MetricSettings,
    metric_indices: &[usize],
) -> Vec<Vec<f64>> {
    let position = judged.positions[query];
    let grade_of = &judged.grade_of[query];
    let mut layouts: Vec<Option<QueryCandidates<'_>>> = table_sets.iter().map(|_| None).collect();
    let mut scratch = Scratch::default();
    points
        .iter()
        .map(|point| {
            let layout = layouts[point.tables].get_or_insert_with(|| {
                QueryCandidates::new(
                    &table_sets[point.tables].tables[position],
                    point.fusion,
                    grade_of,
                )
            });
            let grades = layout.ranked_grades(point, grade_of, &mut scratch);
            let all = query_metrics(grades, &judged.judged[query], settings);
            metric_indices.iter().map(|&index| all[index]).collect()
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configuration::Weights;
    use crate::fusion::{Candidate, TableKind};
    use proptest::prelude::*;

    #[test]
    fn total_order_keys_order_like_total_cmp() {
        let values = [
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1e-300,
            0.3,
            1.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for a in values {
            for b in values {
                assert_eq!(
                    total_order_key(a).cmp(&total_order_key(b)),
                    a.total_cmp(&b),
                    "{a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn ranks_count_higher_scores_then_lower_facts() {
        // Score descending, fact ascending: 0.9 (fact 1), 0.5 (fact 0), 0.5 (fact 2),
        // +0.0 (fact 4), -0.0 (fact 3; total_cmp puts it below +0.0).
        let scores = [0.5, 0.9, 0.5, -0.0, 0.0];
        let keys: Vec<i64> = scores.iter().map(|&s| total_order_key(s)).collect();
        let facts = [0, 1, 2, 3, 4];
        let ranks: Vec<usize> = (0..5).map(|p| rank_of(&keys, &facts, p)).collect();
        assert_eq!(ranks, [1, 0, 2, 4, 3]);
    }

    #[test]
    fn float_ranks_equal_total_order_ranks_when_floats_order_alike() {
        // Ties at 0.5 and 0.25 are broken by fact; -0.0 makes the floats unusable.
        let scores = [0.5, 0.25, 0.9, 0.5, 0.25, 0.0];
        let facts = [3, 8, 1, 2, 5, 0];
        assert!(ordered_as_floats(&scores));
        let keys: Vec<i64> = scores.iter().map(|&s| total_order_key(s)).collect();
        let by_floats: Vec<usize> = (0..6).map(|p| rank_by_floats(&scores, &facts, p)).collect();
        let by_keys: Vec<usize> = (0..6).map(|p| rank_of(&keys, &facts, p)).collect();
        // 0.9 (fact 1), 0.5 (facts 2, 3), 0.25 (facts 5, 8), 0.0 (fact 0).
        assert_eq!(by_floats, [2, 4, 0, 1, 3, 5]);
        assert_eq!(by_keys, by_floats);
        assert!(!ordered_as_floats(&[0.5, -0.0]));
        assert!(!ordered_as_floats(&[f64::NAN, 0.5]));
        assert!(ordered_as_floats(&[-0.5, 0.0]));
    }

    proptest! {
        /// The columns route grades a blend's ranking exactly as fusing the table does:
        /// signals from a few values so scores tie and the fact decides, judged facts
        /// both in and out of the table, few (ranked by counting) and many (selected).
        #[test]
        fn blend_columns_grade_rankings_as_fusing_does(
            signals in proptest::collection::vec((0u8..4, 0u8..4, 0u8..3), 0..60),
            judged in proptest::collection::btree_map(0u32..200, 0i32..3, 0..40),
            depth in 1usize..80,
            (semantic, lexical) in (0u32..=4, 0u32..=4),
        ) {
            let candidates: Vec<Candidate> = signals
                .iter()
                .enumerate()
                .map(|(index, &(semantic, lexical, temporal))| Candidate {
                    fact: index as FactIndex * 3,
                    semantic: f64::from(semantic) * 0.25,
                    lexical: f64::from(lexical) / 3.0,
                    temporal: f64::from(temporal) * 0.5,
                })
                .collect();
            let table = CandidateTable { kind: TableKind::Signals, candidates };
            let grade_of: Vec<(FactIndex, Grade)> = judged.into_iter().collect();
            let temporal = 8u32.saturating_sub(semantic + lexical);
            let params = Params {
                weights: Weights {
                    semantic: f64::from(semantic) / 8.0,
                    lexical: f64::from(lexical) / 8.0,
                    temporal: f64::from(temporal) / 8.0,
                },
                depth,
                ..Params::default()
            };
            let point = ScoredPoint::new(0, Fusion::Blend, &params);
            let columns = QueryCandidates::new(&table, Fusion::Blend, &grade_of);
            let laid_out_as_columns = matches!(columns, QueryCandidates::Columns { .. });
            prop_assert!(laid_out_as_columns);
            let by_columns = columns
                .ranked_grades(&point, &grade_of, &mut Scratch::default())
                .to_vec();
            let by_fusing = QueryCandidates::Table(&table)
                .ranked_grades(&point, &grade_of, &mut Scratch::default())
                .to_vec();
            prop_assert_eq!(by_columns, by_fusing);
        }
    }
}
