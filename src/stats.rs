//! Significance tests and confidence intervals over per-query metric values.
//!
//! - Paired two-sided Student t-test (statrs' t distribution).
//! - Fisher's randomization (permutation) test for paired samples: the signs of the
//!   per-query differences are flipped at random; p = (extreme + 1) / (iterations + 1)
//!   (the Monte Carlo p-value that counts the observed labelling, as scipy does).
//! - Percentile bootstrap intervals of a mean (resampling queries with replacement),
//!   quantiles interpolated linearly between order statistics (numpy's default).
//! - Holm (default) and Bonferroni corrections for multiple comparisons.
//! - Win / tie / loss counts.
//!
//! Random streams are ChaCha8 seeded from 32 bytes derived from a user seed, and indices
//! are drawn by multiply-shift from raw 64-bit outputs, so results are identical across
//! platforms and rand versions. Everything here is pure.

use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Differences at most this far apart count as ties.
pub const TIE_TOLERANCE: f64 = 1e-12;

/// A seeded, version-stable random stream.
fn stream(seed: u64) -> ChaCha8Rng {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    ChaCha8Rng::from_seed(bytes)
}

/// A uniform index in `0..n` by multiply-shift (Lemire) from one 64-bit draw.
fn index_below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

fn mean(values: &[f64]) -> f64 {
    values.iter().fold(0.0, |total, value| total + value) / values.len() as f64
}

/// Result of a paired t-test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TTest {
    pub statistic: f64,
    pub degrees_of_freedom: usize,
    pub p_value: f64,
}

/// Paired two-sided t-test of `b - a`. With no variation in the differences the
/// statistic is 0 (all equal: p = 1) or infinite (all the same non-zero shift: p = 0).
pub fn paired_t_test(a: &[f64], b: &[f64]) -> TTest {
    assert_eq!(a.len(), b.len(), "paired samples");
    let differences: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    let n = differences.len();
    let degrees_of_freedom = n.saturating_sub(1);
    if n < 2 {
        return TTest {
            statistic: 0.0,
            degrees_of_freedom,
            p_value: 1.0,
        };
    }
    let average = mean(&differences);
    let variance = differences
        .iter()
        .map(|d| (d - average).powi(2))
        .fold(0.0, |t, v| t + v)
        / (n - 1) as f64;
    let standard_error = (variance / n as f64).sqrt();
    if standard_error <= TIE_TOLERANCE {
        let (statistic, p_value) = if average.abs() <= TIE_TOLERANCE {
            (0.0, 1.0)
        } else {
            (average.signum() * f64::INFINITY, 0.0)
        };
        return TTest {
            statistic,
            degrees_of_freedom,
            p_value,
        };
    }
    let statistic = average / standard_error;
    let distribution =
        StudentsT::new(0.0, 1.0, degrees_of_freedom as f64).expect("degrees of freedom >= 1");
    let p_value = (2.0 * distribution.cdf(-statistic.abs())).min(1.0);
    TTest {
        statistic,
        degrees_of_freedom,
        p_value,
    }
}

/// Fisher's paired randomization test of `b - a`, two-sided on |mean difference|.
pub fn randomization_test(a: &[f64], b: &[f64], iterations: usize, seed: u64) -> f64 {
    assert_eq!(a.len(), b.len(), "paired samples");
    let differences: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    if differences.is_empty() {
        return 1.0;
    }
    let observed = differences.iter().fold(0.0, |t, d| t + d).abs();
    let mut rng = stream(seed);
    let mut extreme = 0usize;
    for _ in 0..iterations {
        let mut total = 0.0;
        let mut bits = 0u64;
        for (index, difference) in differences.iter().enumerate() {
            if index % 64 == 0 {
                bits = rng.next_u64();
            }
            total += if bits & 1 == 1 {
                -difference
            } else {
                *difference
            };
            bits >>= 1;
        }
        // Compare sums (not means) with a tolerance so exact ties count as extreme.
        if total.abs() >= observed - 1e-9 {
            extreme += 1;
        }
    }
    (extreme + 1) as f64 / (iterations + 1) as f64
}

/// The `q`-quantile of sorted `values`, interpolated linearly (numpy's "linear").
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    sorted[below] + (sorted[above] - sorted[below]) * (position - below as f64)
}

/// A confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
}

/// Percentile bootstrap interval of the mean of `values`.
pub fn bootstrap_mean_interval(
    values: &[f64],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Interval {
    if values.is_empty() {
        return Interval {
            low: 0.0,
            high: 0.0,
            confidence,
        };
    }
    let mut rng = stream(seed);
    let n = values.len();
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| {
            (0..n)
                .map(|_| values[index_below(&mut rng, n)])
                .fold(0.0, |t, v| t + v)
                / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let alpha = 1.0 - confidence;
    Interval {
        low: quantile(&means, alpha / 2.0),
        high: quantile(&means, 1.0 - alpha / 2.0),
        confidence,
    }
}

/// Percentile bootstrap interval of the mean paired difference `b - a`.
pub fn bootstrap_difference_interval(
    a: &[f64],
    b: &[f64],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Interval {
    let differences: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    bootstrap_mean_interval(&differences, resamples, confidence, seed)
}

/// Permutations and bootstrap resamples of a paired comparison unless told otherwise
/// (`compare`, the gate, and HyDE's improvement over its counterpart).
pub const DEFAULT_ITERATIONS: usize = 10_000;
/// The seed of those permutations and resamples unless told otherwise.
pub const DEFAULT_SEED: u64 = 42;
/// The significance level of those comparisons unless told otherwise.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Multiple-comparison correction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Correction {
    /// Holm-Bonferroni step-down (controls the family-wise error, more power).
    Holm,
    /// Bonferroni (p x number of tests).
    Bonferroni,
}

impl Correction {
    /// Every correction, with a line on each (for help texts).
    pub const CHOICES: [(Correction, &'static str); 2] = [
        (
            Correction::Holm,
            "Holm-Bonferroni step-down (controls the family-wise error, more power)",
        ),
        (Correction::Bonferroni, "Bonferroni (p x number of tests)"),
    ];
}

/// Adjusted p-values, in the order given.
pub fn adjust(p_values: &[f64], correction: Correction) -> Vec<f64> {
    let m = p_values.len();
    match correction {
        Correction::Bonferroni => p_values.iter().map(|p| (p * m as f64).min(1.0)).collect(),
        Correction::Holm => {
            let mut order: Vec<usize> = (0..m).collect();
            order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]).then(i.cmp(&j)));
            let mut adjusted = vec![0.0; m];
            let mut running = 0.0f64;
            for (rank, &index) in order.iter().enumerate() {
                running = running.max(((m - rank) as f64 * p_values[index]).min(1.0));
                adjusted[index] = running;
            }
            adjusted
        }
    }
}

/// Per-query wins, ties and losses of `b` against `a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WinTieLoss {
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
}

pub fn win_tie_loss(a: &[f64], b: &[f64]) -> WinTieLoss {
    let mut counts = WinTieLoss {
        wins: 0,
        ties: 0,
        losses: 0,
    };
    for (x, y) in a.iter().zip(b) {
        if (y - x).abs() <= TIE_TOLERANCE {
            counts.ties += 1;
        } else if y > x {
            counts.wins += 1;
        } else {
            counts.losses += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_and_bonferroni_worked_by_hand() {
        // p = [0.01, 0.04, 0.03, 0.20], m = 4. Sorted: 0.01 (x4 = 0.04), 0.03 (x3 = 0.09),
        // 0.04 (x2 = 0.08 -> running max 0.09), 0.20 (x1 = 0.20).
        let holm = adjust(&[0.01, 0.04, 0.03, 0.20], Correction::Holm);
        let expected = [0.04, 0.09, 0.09, 0.20];
        for (got, want) in holm.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{holm:?}");
        }
        assert_eq!(
            adjust(&[0.01, 0.3], Correction::Bonferroni),
            vec![0.02, 0.6]
        );
    }

    #[test]
    fn t_test_worked_by_hand_and_degenerate_cases() {
        // Differences 1, 2, 3: mean 2, sd 1, se 1/sqrt(3), t = 2 sqrt(3) = 3.4641, df 2.
        // Two-sided p for t = 2 sqrt(3) with 2 df: 1 - t / sqrt(t^2 + 2) = 1 - sqrt(12/14).
        let test = paired_t_test(&[0.0, 0.0, 0.0], &[1.0, 2.0, 3.0]);
        assert!((test.statistic - 2.0 * 3f64.sqrt()).abs() < 1e-12);
        assert!(
            (test.p_value - (1.0 - (12.0f64 / 14.0).sqrt())).abs() < 1e-12,
            "{}",
            test.p_value
        );
        assert_eq!(paired_t_test(&[0.5, 0.5], &[0.5, 0.5]).p_value, 1.0);
        assert_eq!(paired_t_test(&[0.1, 0.2], &[0.2, 0.3]).p_value, 0.0);
    }

    #[test]
    fn randomization_exact_small_case_and_seed_stability() {
        // Differences (1, 1, 1): of the 8 sign patterns, 2 reach |sum| = 3, so the exact
        // p is 1/4; the Monte Carlo estimate converges there.
        let p = randomization_test(&[0.0; 3], &[1.0; 3], 20_000, 7);
        assert!((p - 0.25).abs() < 0.01, "{p}");
        assert_eq!(p, randomization_test(&[0.0; 3], &[1.0; 3], 20_000, 7));
        assert_eq!(randomization_test(&[0.3; 4], &[0.3; 4], 100, 1), 1.0);
    }

    #[test]
    fn quantile_and_win_tie_loss() {
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.0), 1.0);
        let counts = win_tie_loss(&[0.1, 0.5, 0.9], &[0.2, 0.5, 0.1]);
        assert_eq!(
            counts,
            WinTieLoss {
                wins: 1,
                ties: 1,
                losses: 1
            }
        );
    }
}
