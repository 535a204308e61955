//! The normalizations a score-based run fusion applies to each list first, as ranx's
//! `ranx.normalization` computes them over one query's list: min-max, max, sum and
//! zmuv (z-score). Every denominator below 1e-9 is raised to 1e-9, so a constant list
//! becomes all 0 under min-max, sum and zmuv.

use crate::configuration::Normalization;

/// ranx's floor on every normalization's denominator.
pub const MIN_DENOMINATOR: f64 = 1e-9;

/// Normalizes the scores of `list` in place.
pub fn normalize<Id>(list: &mut [(Id, f64)], normalization: Normalization) {
    if list.is_empty() {
        return;
    }
    let count = list.len() as f64;
    let scores = || list.iter().map(|(_, score)| *score);
    let min = scores().fold(f64::INFINITY, f64::min);
    let max = scores().fold(f64::NEG_INFINITY, f64::max);
    let (shift, denominator) = match normalization {
        Normalization::None => return,
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
