//! k-fold cross-validation of a sweep: how well would the best point, chosen on some
//! queries, do on queries it was not chosen on?
//!
//! Queries are dealt into folds by a seeded shuffle (ChaCha8, whose output stream is
//! fixed across platforms and rand_chacha versions), then round-robin, so fold sizes
//! differ by at most one. For each fold, the point with the best mean on the other folds
//! is chosen (ties go to the first point in sweep order) and scored on the held-out fold.
//! The cross-validated estimate is the mean over all queries of the held-out scores, so
//! it is directly comparable with the in-sample best, which is a mean over the same
//! queries.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The fold (0-based) of each of `count` queries, for `folds` folds and `seed`.
pub fn assign_folds(count: usize, folds: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..count).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let mut fold_of = vec![0; count];
    for (position, &query) in order.iter().enumerate() {
        fold_of[query] = position % folds.max(1);
    }
    fold_of
}

/// What one fold chose and scored.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldOutcome {
    /// Held-out queries in this fold.
    pub size: usize,
    /// Index of the point chosen on the other folds.
    pub chosen: usize,
    /// Its mean on the other folds.
    pub train_mean: f64,
    /// Its mean on this fold.
    pub held_out_mean: f64,
}

/// A cross-validated estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossValidation {
    pub folds: Vec<FoldOutcome>,
    /// Mean over every query of the score it got from the point chosen without it.
    pub held_out_mean: f64,
}

fn mean_over(values: &[f64], members: &[usize]) -> f64 {
    if members.is_empty() {
        return 0.0;
    }
    members
        .iter()
        .fold(0.0, |total, &query| total + values[query])
        / members.len() as f64
}

/// Cross-validates the choice among points. `values[point][query]` is a per-query
/// metric value; `fold_of[query]` comes from [`assign_folds`]. Empty folds (more folds
/// than queries) are skipped.
pub fn cross_validate(values: &[Vec<f64>], fold_of: &[usize], folds: usize) -> CrossValidation {
    let count = fold_of.len();
    let mut outcomes = Vec::new();
    let mut held_out_total = 0.0;
    for fold in 0..folds {
        let held_out: Vec<usize> = (0..count).filter(|&q| fold_of[q] == fold).collect();
        let train: Vec<usize> = (0..count).filter(|&q| fold_of[q] != fold).collect();
        if held_out.is_empty() {
            continue;
        }
        let mut chosen = 0;
        let mut train_mean = f64::NEG_INFINITY;
        for (point, point_values) in values.iter().enumerate() {
            let mean = mean_over(point_values, &train);
            if mean > train_mean {
                chosen = point;
                train_mean = mean;
            }
        }
        let held_out_mean = mean_over(&values[chosen], &held_out);
        held_out_total += held_out
            .iter()
            .fold(0.0, |total, &query| total + values[chosen][query]);
        outcomes.push(FoldOutcome {
            size: held_out.len(),
            chosen,
            train_mean,
            held_out_mean,
        });
    }
    CrossValidation {
        folds: outcomes,
        held_out_mean: if count == 0 {
            0.0
        } else {
            held_out_total / count as f64
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_are_a_balanced_seeded_partition() {
        let fold_of = assign_folds(23, 5, 42);
        let mut sizes = [0usize; 5];
        for &fold in &fold_of {
            sizes[fold] += 1;
        }
        assert_eq!(sizes.iter().sum::<usize>(), 23);
        assert!(
            sizes.iter().all(|&size| size == 4 || size == 5),
            "{sizes:?}"
        );
        assert_eq!(fold_of, assign_folds(23, 5, 42), "same seed, same folds");
        assert_ne!(
            fold_of,
            assign_folds(23, 5, 43),
            "another seed deals differently"
        );
    }

    #[test]
    fn fold_assignment_is_pinned_for_seed_42() {
        // A stability pin, not a derived value: if a dependency update changes the
        // ChaCha8 stream or rand's shuffle, every cross-validated figure in sweep.json
        // would silently change; this test makes that visible.
        assert_eq!(assign_folds(10, 3, 42), vec![0, 1, 2, 0, 0, 2, 1, 0, 1, 2]);
    }

    #[test]
    fn cross_validation_worked_by_hand() {
        // Two points, four queries; folds {0, 1} and {2, 3}.
        // Point 0 scores [1, 1, 0, 0]; point 1 scores [0, 0, 0.5, 0.5].
        // Fold 0 trains on queries 2, 3: point 0 has mean 0, point 1 has 0.5 -> point 1,
        // which scores 0 on queries 0, 1. Fold 1 trains on 0, 1: point 0 (mean 1) wins
        // and scores 0 on queries 2, 3. The held-out estimate is 0, although the
        // in-sample best (either point) is 0.5: all of its gain is overfitting.
        let values = vec![vec![1.0, 1.0, 0.0, 0.0], vec![0.0, 0.0, 0.5, 0.5]];
        let cv = cross_validate(&values, &[0, 0, 1, 1], 2);
        assert_eq!(cv.folds.len(), 2);
        assert_eq!((cv.folds[0].chosen, cv.folds[0].train_mean), (1, 0.5));
        assert_eq!((cv.folds[1].chosen, cv.folds[1].train_mean), (0, 1.0));
        assert_eq!(cv.folds[0].held_out_mean, 0.0);
        assert_eq!(cv.held_out_mean, 0.0);

        // A point that is best everywhere is chosen in every fold, and the estimate is
        // its mean; ties go to the earlier point.
        let values = vec![
            vec![0.2, 0.4, 0.6],
            vec![0.5, 0.5, 1.0],
            vec![0.5, 0.5, 1.0],
        ];
        let cv = cross_validate(&values, &[0, 1, 2], 3);
        assert!(cv.folds.iter().all(|fold| fold.chosen == 1));
        assert!((cv.held_out_mean - 2.0 / 3.0).abs() < 1e-15);
    }
}
