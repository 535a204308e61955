//! Property tests (proptest) of the metrics and of fusion: invariants that must hold
//! for every ranking and every candidate table, not only the hand-worked examples.
//!
//! - every metric lies in [0, 1];
//! - nDCG@k is 1 for an ideal ranking (grades descending, every positive grade present);
//! - reordering the non-relevant results below the last relevant one changes no metric;
//! - the blended ranking does not change when every weight is scaled by the same power of
//!   two (scaling by 2^n is exact in floating point, so the property holds bit for bit;
//!   any other factor can reorder candidates whose scores tie to the last bit);
//! - min-max normalization of a constant signal gives 0 for every candidate.

use hyde_eval::configuration::{Fusion, Params, Weights};
use hyde_eval::dataset::Grade;
use hyde_eval::fusion::{fuse, min_max_normalize, Candidate, CandidateTable, TableKind};
use hyde_eval::metrics::{query_metrics, MetricSettings, Semantics};
use proptest::prelude::*;

/// A query's world: a grade for each of `grades.len()` documents (`None` = unjudged) and
/// a ranking that returns some of them in some order.
#[derive(Debug, Clone)]
struct Judged {
    grades: Vec<Option<Grade>>,
    ranking: Vec<usize>,
}

impl Judged {
    fn ranked_grades(&self) -> Vec<Grade> {
        self.ranking
            .iter()
            .map(|&document| self.grades[document].unwrap_or(0))
            .collect()
    }

    fn judged_grades(&self) -> Vec<Grade> {
        self.grades.iter().flatten().copied().collect()
    }
}

fn judged_world() -> impl Strategy<Value = Judged> {
    prop::collection::vec(prop::option::weighted(0.7, 0..=3i32), 1..40)
        .prop_flat_map(|grades| {
            let documents = grades.len();
            (
                Just(grades),
                Just((0..documents).collect::<Vec<usize>>()).prop_shuffle(),
                0..=documents,
            )
        })
        .prop_map(|(grades, mut order, returned)| {
            order.truncate(returned);
            Judged {
                grades,
                ranking: order,
            }
        })
}

fn settings(level: Grade, semantics: Semantics) -> MetricSettings {
    MetricSettings {
        cutoffs: vec![1, 3, 5, 10, 20, 100],
        relevance_level: level,
        semantics,
    }
}

fn semantics() -> impl Strategy<Value = Semantics> {
    prop_oneof![Just(Semantics::Trec), Just(Semantics::Chatcli)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_metric_lies_between_zero_and_one(
        world in judged_world(),
        level in 1..=3i32,
        semantics in semantics(),
    ) {
        let settings = settings(level, semantics);
        let values = query_metrics(&world.ranked_grades(), &world.judged_grades(), &settings);
        for (name, value) in settings.metric_names().iter().zip(&values) {
            prop_assert!((0.0..=1.0).contains(value), "{name} = {value}");
        }
    }

    #[test]
    fn ndcg_is_one_for_an_ideal_ranking(grades in prop::collection::vec(0..=3i32, 1..40)) {
        prop_assume!(grades.iter().any(|&grade| grade > 0));
        let mut ideal = grades.clone();
        ideal.sort_unstable_by(|a, b| b.cmp(a));
        let settings = settings(1, Semantics::Trec);
        let values = query_metrics(&ideal, &grades, &settings);
        for (name, value) in settings.metric_names().iter().zip(&values) {
            if name.starts_with("ndcg@") {
                prop_assert!((value - 1.0).abs() < 1e-12, "{name} = {value}");
            }
        }
    }

    #[test]
    fn reordering_non_relevant_results_below_the_last_relevant_one_changes_nothing(
        world in judged_world(),
        level in 1..=3i32,
        semantics in semantics(),
        seed in any::<u64>(),
    ) {
        let ranked = world.ranked_grades();
        // nDCG counts every positive grade as gain, so "relevant" here is any grade > 0
        // (a superset of grade >= level).
        let tail_start = ranked.iter().rposition(|&grade| grade > 0).map_or(0, |last| last + 1);
        let mut reordered = ranked.clone();
        let tail = &mut reordered[tail_start..];
        // A seeded Fisher-Yates shuffle of the tail.
        let mut state = seed | 1;
        for index in (1..tail.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            tail.swap(index, (state % (index as u64 + 1)) as usize);
        }
        let settings = settings(level, semantics);
        let judged = world.judged_grades();
        prop_assert_eq!(
            query_metrics(&ranked, &judged, &settings),
            query_metrics(&reordered, &judged, &settings)
        );
    }

    #[test]
    fn blended_ranking_is_invariant_to_a_uniform_rescale_of_the_weights(
        signals in prop::collection::vec((0.0..1.0f64, 0.0..30.0f64, 0.0..1.0f64), 1..60),
        weights in (0.0..1.0f64, 0.0..1.0f64, 0.0..1.0f64),
        exponent in -8i32..8,
    ) {
        let table = CandidateTable {
            kind: TableKind::Signals,
            candidates: signals
                .iter()
                .enumerate()
                .map(|(fact, &(semantic, lexical, temporal))| Candidate {
                    fact: fact as u32,
                    semantic,
                    lexical,
                    temporal,
                })
                .collect(),
        };
        let with_weights = |scale: f64| {
            let params = Params {
                weights: Weights {
                    semantic: weights.0 * scale,
                    lexical: weights.1 * scale,
                    temporal: weights.2 * scale,
                },
                depth: usize::MAX,
                ..Params::default()
            };
            fuse(&table, Fusion::Blend, &params)
                .into_iter()
                .map(|(fact, _)| fact)
                .collect::<Vec<u32>>()
        };
        prop_assert_eq!(with_weights(1.0), with_weights(2f64.powi(exponent)));
    }

    #[test]
    fn min_max_of_a_constant_signal_is_zero(value in -1e6..1e6f64, length in 1..100usize) {
        let mut values = vec![value; length];
        min_max_normalize(&mut values);
        prop_assert!(values.iter().all(|&normalized| normalized == 0.0), "{values:?}");
    }
}
