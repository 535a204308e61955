//! Scores sweep points one query at a time: each of the query's candidate tables is
//! laid out once and re-fused at every point that reads it, and the metrics are computed
//! without building fact-id rankings.
//!
//! A table whose fusion method blends weight-independent terms
//! ([`crate::fusion::WeightedColumns`]) becomes columns, and only the ranks of the
//! judged facts are found, since the metrics read nothing else: the columns are laid
//! out once as a [`RankTree`], which counts the candidates ahead of each judged fact
//! without scoring most of them. (Where the tree cannot bound the scores, every
//! candidate is scored, one multiply-add per column, and the ranking selected.) Other
//! tables are fused by the method at each point. The metrics read each ranking only up
//! to its last judged fact or longest cut-off ([`metric_prefix`]).
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

use super::rank_tree::{RankScratch, RankTree};

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

/// One evaluated query's candidates for one table set, as every point re-fuses them.
enum QueryCandidates<'t> {
    /// Laid out as weighted columns, with the table positions and grades of the judged
    /// facts among the candidates, and the tree that ranks them.
    Columns {
        columns: WeightedColumns,
        judged: Vec<(usize, Grade)>,
        tree: Option<Box<RankTree>>,
    },
    /// The table, fused point by point.
    Table(&'t CandidateTable),
}

/// Buffers reused from point to point.
#[derive(Default)]
struct Scratch {
    scores: Vec<f64>,
    ranks: Vec<usize>,
    tree: RankScratch,
    grades: Vec<Grade>,
}

impl<'t> QueryCandidates<'t> {
    fn new(table: &'t CandidateTable, fusion: Fusion, grade_of: &[(FactIndex, Grade)]) -> Self {
        match fusion::method(fusion).weighted_columns(table) {
            Some(columns) => {
                let judged: Vec<(usize, Grade)> = columns
                    .facts
                    .iter()
                    .enumerate()
                    .filter_map(|(position, &fact)| Some((position, grade_in(grade_of, fact)?)))
                    .collect();
                let tree = RankTree::new(&columns, judged.iter().map(|&(position, _)| position))
                    .map(Box::new);
                QueryCandidates::Columns {
                    columns,
                    judged,
                    tree,
                }
            }
            None => QueryCandidates::Table(table),
        }
    }

    /// The grades of the point's ranking, in rank order ([`NOT_JUDGED`] for unjudged
    /// facts), up to the last judged fact or the `longest_cutoff`-th fact, whichever is
    /// later: what grading `fuse(table, point.fusion, point.params)` gives, less a tail
    /// of unjudged facts that changes no metric ([`metric_prefix`]).
    fn ranked_grades<'s>(
        &self,
        point: &ScoredPoint<'_>,
        grade_of: &[(FactIndex, Grade)],
        longest_cutoff: usize,
        scratch: &'s mut Scratch,
    ) -> &'s [Grade] {
        let Scratch {
            scores,
            ranks,
            tree: tree_scratch,
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
            QueryCandidates::Columns {
                columns,
                judged,
                tree,
            } => {
                let ranked = columns.facts.len().min(point.params.depth);
                match tree {
                    Some(tree) if tree.accepts(&point.weights) => {
                        // Only the judged facts are placed: the others are unjudged.
                        tree.ranks(&point.weights, tree_scratch, ranks);
                        let last = ranks.iter().copied().filter(|&rank| rank < ranked).max();
                        let kept = last
                            .map_or(0, |rank| rank + 1)
                            .max(longest_cutoff)
                            .min(ranked);
                        grades.resize(kept, NOT_JUDGED);
                        for (&rank, &(_, grade)) in ranks.iter().zip(judged) {
                            if let Some(slot) = grades.get_mut(rank) {
                                *slot = grade;
                            }
                        }
                    }
                    _ => {
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
        }
        metric_prefix(grades, longest_cutoff)
    }
}

/// The part of a ranking's grades that the metrics read: up to the last judged fact or
/// the `longest_cutoff`-th, whichever is later. Past both, every fact is unjudged: no
/// cut-off reaches it, it adds no gain, no relevant fact and no judged one, so every
/// metric of [`query_metrics`] is the same, to the bit, on the prefix.
fn metric_prefix(grades: &[Grade], longest_cutoff: usize) -> &[Grade] {
    let judged_end = grades
        .iter()
        .rposition(|&grade| grade != NOT_JUDGED)
        .map_or(0, |last| last + 1);
    &grades[..judged_end.max(longest_cutoff).min(grades.len())]
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
    let longest_cutoff = settings.cutoffs.iter().copied().max().unwrap_or(0);
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
            let grades = layout.ranked_grades(point, grade_of, longest_cutoff, &mut scratch);
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
    use crate::metrics::Semantics;
    use proptest::prelude::*;

    proptest! {
        /// The columns route grades a blend's ranking exactly as fusing the table does:
        /// signals from a few values so scores tie and the fact decides (whole leaves of
        /// the tree alike), enough candidates for a tree of several levels, judged facts
        /// both in and out of the table, few and many; by the tree, and by scoring every
        /// candidate where no tree is laid out.
        #[test]
        fn blend_columns_grade_rankings_as_fusing_does(
            signals in proptest::collection::vec((0u8..4, 0u8..4, 0u8..3), 0..300),
            judged in proptest::collection::btree_map(0u32..900, 0i32..3, 0..60),
            depth in 1usize..400,
            longest_cutoff in 0usize..20,
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
            let by_fusing = QueryCandidates::Table(&table)
                .ranked_grades(&point, &grade_of, longest_cutoff, &mut Scratch::default())
                .to_vec();
            let QueryCandidates::Columns { columns, judged, tree } =
                QueryCandidates::new(&table, Fusion::Blend, &grade_of)
            else {
                panic!("a blend's table is laid out as columns");
            };
            prop_assert!(tree.is_some());
            let by_tree = QueryCandidates::Columns { columns: columns.clone(), judged: judged.clone(), tree }
                .ranked_grades(&point, &grade_of, longest_cutoff, &mut Scratch::default())
                .to_vec();
            prop_assert_eq!(&by_tree, &by_fusing);
            let by_scores = QueryCandidates::Columns { columns, judged, tree: None }
                .ranked_grades(&point, &grade_of, longest_cutoff, &mut Scratch::default())
                .to_vec();
            prop_assert_eq!(&by_scores, &by_fusing);
        }

        /// Cutting a ranking after its last judged fact and its longest cut-off changes
        /// no metric, to the bit, under either semantics.
        #[test]
        fn metric_prefix_changes_no_metric(
            head in proptest::collection::vec(-1i32..3, 0..40),
            tail in 0usize..60,
            judged in proptest::collection::vec(0i32..3, 1..12),
            cutoffs in proptest::collection::btree_set(1usize..30, 1..4),
            relevance_level in 1i32..3,
            chatcli in any::<bool>(),
        ) {
            let settings = MetricSettings {
                cutoffs: cutoffs.into_iter().collect(),
                relevance_level,
                semantics: if chatcli { Semantics::Chatcli } else { Semantics::Trec },
            };
            let mut ranking = head;
            ranking.resize(ranking.len() + tail, NOT_JUDGED);
            let longest_cutoff = *settings.cutoffs.last().expect("a cut-off");
            let prefix = metric_prefix(&ranking, longest_cutoff);
            let bits = |values: Vec<f64>| values.into_iter().map(f64::to_bits).collect::<Vec<_>>();
            prop_assert_eq!(
                bits(query_metrics(prefix, &judged, &settings)),
                bits(query_metrics(&ranking, &judged, &settings))
            );
        }
    }
}
