//! Significance tests and confidence intervals over per-query metric values.
//!
//! - Paired two-sided Student t-test (statrs' t distribution).
//! - Fisher's randomization (permutation) test for paired samples. Exact when feasible:
//!   when the 2^m sign patterns of the m non-zero per-query differences are no more than
//!   the iterations asked for, every pattern is enumerated and p is the exact share of
//!   patterns at least as extreme. Otherwise the signs are flipped at random and
//!   p = (extreme + 1) / (iterations + 1) (the Monte Carlo p-value that counts the
//!   observed labelling, as scipy does).
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

/// Fisher's paired randomization test of `b - a`, two-sided on |mean difference|: exact
/// (every sign pattern of the non-zero differences) when there are at most `iterations`
/// patterns, else `iterations` random sign flips from `seed`.
pub fn randomization_test(a: &[f64], b: &[f64], iterations: usize, seed: u64) -> f64 {
    assert_eq!(a.len(), b.len(), "paired samples");
    let differences: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    if differences.is_empty() {
        return 1.0;
    }
    let observed = differences.iter().fold(0.0, |t, d| t + d).abs();
    // Compare sums (not means) with a tolerance so exact ties count as extreme.
    let extreme = |total: f64| total.abs() >= observed - 1e-9;
    // A zero difference is the same under either sign: only the others make patterns.
    let non_zero: Vec<f64> = differences.iter().copied().filter(|d| *d != 0.0).collect();
    if let Some(patterns) = exact_patterns(non_zero.len(), iterations) {
        let extreme_patterns = (0..patterns)
            .filter(|&pattern| {
                let total = non_zero
                    .iter()
                    .enumerate()
                    .fold(0.0, |total, (index, difference)| {
                        if pattern >> index & 1 == 1 {
                            total - difference
                        } else {
                            total + difference
                        }
                    });
                extreme(total)
            })
            .count();
        return extreme_patterns as f64 / patterns as f64;
    }
    let mut rng = stream(seed);
    let mut extreme_count = 0usize;
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
        if extreme(total) {
            extreme_count += 1;
        }
    }
    (extreme_count + 1) as f64 / (iterations + 1) as f64
}

/// The number of sign patterns of `signs` differences, 2^signs, when it is at most
/// `iterations`: the exact test is then no more work than the sampled one.
fn exact_patterns(signs: usize, iterations: usize) -> Option<u64> {
    let patterns = 1u64.checked_shl(u32::try_from(signs).ok()?)?;
    (patterns <= iterations as u64).then_some(patterns)
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
    /// None: each test at alpha on its own (as ranx's `compare` and most papers' tables).
    None,
}

impl Correction {
    /// Every correction, with a line on each (for help texts).
    pub const CHOICES: [(Correction, &'static str); 3] = [
        (
            Correction::Holm,
            "Holm-Bonferroni step-down (controls the family-wise error, more power)",
        ),
        (Correction::Bonferroni, "Bonferroni (p x number of tests)"),
        (
            Correction::None,
            "no correction: each test at alpha on its own (as ranx's compare)",
        ),
    ];

    /// How the correction reads in a sentence: `Holm-corrected`, `uncorrected`.
    pub fn adjective(self) -> &'static str {
        match self {
            Correction::Holm => "Holm-corrected",
            Correction::Bonferroni => "Bonferroni-corrected",
            Correction::None => "uncorrected",
        }
    }
}

/// Adjusted p-values, in the order given.
pub fn adjust(p_values: &[f64], correction: Correction) -> Vec<f64> {
    let m = p_values.len();
    match correction {
        Correction::None => p_values.to_vec(),
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
        assert_eq!(adjust(&[0.01, 0.3], Correction::None), vec![0.01, 0.3]);
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
    fn randomization_is_exact_when_every_sign_pattern_fits_in_the_iterations() {
        // Differences (1, 1, 1): of the 8 sign patterns, 2 reach |sum| = 3, so p = 1/4
        // exactly, whatever the seed.
        for seed in [1, 7, 42] {
            assert_eq!(randomization_test(&[0.0; 3], &[1.0; 3], 8, seed), 0.25);
        }
        // Differences (0.5, 0.25, -0.125, 0, 0): the zeros make no patterns; of the 8
        // patterns of the others (sums +-0.875, +-0.625, +-0.375, +-0.125), 4 reach
        // |0.625|: p = 1/2.
        let a = [0.0, 0.25, 0.5, 0.3, 0.3];
        let b = [0.5, 0.5, 0.375, 0.3, 0.3];
        assert_eq!(randomization_test(&a, &b, 8, 3), 0.5);
        assert_eq!(randomization_test(&a, &b, 10_000, 4), 0.5);
        // One pattern too many for the iterations: sampled, p = (extreme + 1) / 8.
        let sampled = randomization_test(&a, &b, 7, 3);
        assert_eq!((sampled * 8.0).fract(), 0.0, "{sampled}");
        // Fourteen non-zero differences have 16,384 patterns, more than 10,000: sampled,
        // seed-stable, and near the exact p. Differences 1..=14 with the first 4 negative:
        // observed |sum| = 105 - 2 * 10 = 85.
        let a = [0.0; 14];
        let b: Vec<f64> = (1..=14)
            .map(|d| if d <= 4 { -f64::from(d) } else { f64::from(d) })
            .collect();
        let p = randomization_test(&a, &b, 10_000, 7);
        assert_eq!(p, randomization_test(&a, &b, 10_000, 7));
        assert_eq!((p * 10_001.0).round(), p * 10_001.0);
        let exact = randomization_test(&a, &b, 1 << 14, 0);
        // The exact p by enumeration here, and the sample within 4 standard errors of it.
        let extreme = (0u32..1 << 14)
            .filter(|pattern| {
                let total: f64 = b
                    .iter()
                    .enumerate()
                    .map(|(i, d)| if pattern >> i & 1 == 1 { -d } else { *d })
                    .sum();
                total.abs() >= 85.0
            })
            .count();
        assert_eq!(exact, extreme as f64 / 16_384.0);
        let error = (exact * (1.0 - exact) / 10_000.0).sqrt();
        assert!((p - exact).abs() < 4.0 * error, "{p} vs {exact}");
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
