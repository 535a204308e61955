//! The normalizations a score-based run fusion applies to each list first, as ranx's
//! `ranx.normalization` computes them over one query's list: min-max, max, sum and
//! zmuv (z-score), where every denominator below 1e-9 is raised to 1e-9, so a constant
//! list becomes all 0 under min-max, sum and zmuv; rank, which replaces the scores by
//! ranks; and borda, the one over all the query's lists at once, which gives each list
//! every candidate (the documents of any list) with its Borda points.

use std::collections::BTreeSet;

use crate::configuration::Normalization;

/// ranx's floor on every normalization's denominator.
pub const MIN_DENOMINATOR: f64 = 1e-9;

/// Normalizes the scores of `lists` (one query's lists, each in rank order) in place.
/// Under borda each list afterwards holds every candidate: its own documents in their
/// order, then the others by id.
pub fn normalize_lists<Id: Ord + Clone>(
    lists: &mut [Vec<(Id, f64)>],
    normalization: Normalization,
) {
    if normalization != Normalization::Borda {
        for list in lists.iter_mut() {
            normalize(list, normalization);
        }
        return;
    }
    let candidates: BTreeSet<Id> = lists.iter().flatten().map(|(id, _)| id.clone()).collect();
    let count = candidates.len() as f64;
    for list in lists.iter_mut() {
        let held: BTreeSet<Id> = list.iter().map(|(id, _)| id.clone()).collect();
        let unranked = 0.5 - (list.len() as f64 - 1.0) / (2.0 * count);
        for (position, (_, score)) in list.iter_mut().enumerate() {
            *score = 1.0 - position as f64 / count;
        }
        list.extend(
            candidates
                .iter()
                .filter(|id| !held.contains(*id))
                .map(|id| (id.clone(), unranked)),
        );
    }
}

/// Normalizes the scores of `list` (in rank order) in place, by any normalization but
/// borda, which reads every list of the query ([`normalize_lists`]) and is left to it.
pub fn normalize<Id>(list: &mut [(Id, f64)], normalization: Normalization) {
    if list.is_empty() {
        return;
    }
    if normalization == Normalization::Rank {
        let length = list.len() as f64;
        for (position, (_, score)) in list.iter_mut().enumerate() {
            *score = 1.0 - position as f64 / length;
        }
        return;
    }
    let count = list.len() as f64;
    let scores = || list.iter().map(|(_, score)| *score);
    let min = scores().fold(f64::INFINITY, f64::min);
    let max = scores().fold(f64::NEG_INFINITY, f64::max);
    let (shift, denominator) = match normalization {
        Normalization::None | Normalization::Rank | Normalization::Borda => return,
        Normalization::MinMax => (min, max - min),
        Normalization::Max => (0.0, max),
        Normalization::Sum => (min, scores().sum::<f64>() - min * count),
        Normalization::Zmuv => {
            let mean = scores().sum::<f64>() / count;
            let variance = scores()
                .map(|score| (score - mean) * (score - mean))
                .sum::<f64>()
                / count;
            (mean, variance.sqrt())
        }
    };
    let denominator = denominator.max(MIN_DENOMINATOR);
    for (_, score) in list.iter_mut() {
        *score = (*score - shift) / denominator;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(scores: &[f64], normalization: Normalization) -> Vec<f64> {
        let mut list: Vec<(usize, f64)> = scores.iter().copied().enumerate().collect();
        normalize(&mut list, normalization);
        list.into_iter().map(|(_, score)| score).collect()
    }

    #[test]
    fn normalizations_worked_by_hand() {
        let scores = [4.0, 2.0, 0.0];
        assert_eq!(normalized(&scores, Normalization::MinMax), [1.0, 0.5, 0.0]);
        assert_eq!(normalized(&scores, Normalization::Max), [1.0, 0.5, 0.0]);
        // sum - min x n = 6.
        assert_eq!(
            normalized(&scores, Normalization::Sum),
            [4.0 / 6.0, 2.0 / 6.0, 0.0]
        );
        // mean 2, population std sqrt(8/3).
        let std = (8.0f64 / 3.0).sqrt();
        assert_eq!(
            normalized(&scores, Normalization::Zmuv),
            [2.0 / std, 0.0, -2.0 / std]
        );
    }

    #[test]
    fn rank_and_borda_worked_by_hand() {
        assert_eq!(
            normalized(&[9.0, 5.0, 5.0, 1.0], Normalization::Rank),
            [1.0, 0.75, 0.5, 0.25]
        );
        // Candidates a, b, c, d: the first list ranks a, b, d, the second c.
        let mut lists = vec![
            vec![("a", 3.0), ("b", 1.0), ("d", 0.0)],
            vec![("c", 2.0)],
            vec![],
        ];
        normalize_lists(&mut lists, Normalization::Borda);
        assert_eq!(lists[0], [("a", 1.0), ("b", 0.75), ("d", 0.5), ("c", 0.25)]);
        assert_eq!(lists[1], [("c", 1.0), ("a", 0.5), ("b", 0.5), ("d", 0.5)]);
        assert_eq!(
            lists[2],
            [("a", 0.625), ("b", 0.625), ("c", 0.625), ("d", 0.625)]
        );
    }

    #[test]
    fn constant_lists_become_zero_and_max_keeps_its_floor() {
        for normalization in [
            Normalization::MinMax,
            Normalization::Sum,
            Normalization::Zmuv,
        ] {
            assert_eq!(normalized(&[0.7, 0.7], normalization), [0.0, 0.0]);
        }
        // ranx divides by max(max, 1e-9): a list of zeros stays zero.
        assert_eq!(normalized(&[0.0, 0.0], Normalization::Max), [0.0, 0.0]);
    }
}
