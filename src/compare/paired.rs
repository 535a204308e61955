//! Paired comparisons of two stored runs' configurations on one metric: the per-query
//! values are aligned by query id, tested for significance (randomization test by
//! default, or a paired t-test), bootstrapped for an interval of the mean difference and
//! counted as wins / ties / losses. Used by the regression gate and by `compare`; the
//! multiple-comparison correction is applied over every comparison made together.

use std::collections::HashMap;

use serde::Serialize;

use crate::results::stored::StoredConfiguration;
use crate::stats::{
    adjust, bootstrap_difference_interval, paired_t_test, randomization_test, win_tie_loss,
    Correction, Interval, DEFAULT_ALPHA, DEFAULT_ITERATIONS, DEFAULT_SEED,
};

/// Which paired significance test to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignificanceTest {
    /// Fisher's randomization (sign-flip permutation) test.
    Randomization,
    /// Paired two-sided Student t-test.
    TTest,
}

impl SignificanceTest {
    /// Every test, with a line on each (for help texts).
    pub const CHOICES: [(SignificanceTest, &'static str); 2] = [
        (
            SignificanceTest::Randomization,
            "Fisher's randomization (sign-flip permutation) test",
        ),
        (SignificanceTest::TTest, "Paired two-sided Student t-test"),
    ];
}

/// How comparisons are tested; stated in every output so readers know what "significant"
/// means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SignificanceSettings {
    pub test: SignificanceTest,
    pub correction: Correction,
    pub alpha: f64,
    /// Permutations (randomization test) and bootstrap resamples.
    pub iterations: usize,
    pub seed: u64,
}

impl Default for SignificanceSettings {
    fn default() -> SignificanceSettings {
        SignificanceSettings {
            test: SignificanceTest::Randomization,
            correction: Correction::Holm,
            alpha: DEFAULT_ALPHA,
            iterations: DEFAULT_ITERATIONS,
            seed: DEFAULT_SEED,
        }
    }
}

/// One configuration of a candidate run against the same-named one of a reference run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedComparison {
    pub configuration: String,
    pub metric: String,
    /// Macro values as each run reported them.
    pub reference: f64,
    pub candidate: f64,
    /// `candidate - reference`.
    pub delta: f64,
    /// Queries present in both runs (the paired sample).
    pub paired_queries: usize,
    pub p_value: f64,
    /// After the multiple-comparison correction over all comparisons made together.
    pub adjusted_p_value: f64,
    pub significant: bool,
    pub difference_interval: Interval,
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
}

/// Compares `candidate` with `reference` on `metric`; `None` when either run lacks it.
pub fn compare(
    reference: &StoredConfiguration,
    candidate: &StoredConfiguration,
    metric: &str,
    settings: &SignificanceSettings,
) -> Option<PairedComparison> {
    let reference_value = reference.macro_value(metric)?;
    let candidate_value = candidate.macro_value(metric)?;
    let reference_by_query: HashMap<_, _> =
        reference.per_query_values(metric).into_iter().collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (query, value) in candidate.per_query_values(metric) {
        if let Some(&reference_value) = reference_by_query.get(query) {
            a.push(reference_value);
            b.push(value);
        }
    }
    let p_value = match settings.test {
        SignificanceTest::Randomization => {
            randomization_test(&a, &b, settings.iterations, settings.seed)
        }
        SignificanceTest::TTest => paired_t_test(&a, &b).p_value,
    };
    let counts = win_tie_loss(&a, &b);
    Some(PairedComparison {
        configuration: candidate.name.clone(),
        metric: metric.to_owned(),
        reference: reference_value,
        candidate: candidate_value,
        delta: candidate_value - reference_value,
        paired_queries: a.len(),
        p_value,
        adjusted_p_value: p_value,
        significant: false,
        difference_interval: bootstrap_difference_interval(
            &a,
            &b,
            settings.iterations,
            0.95,
            settings.seed,
        ),
        wins: counts.wins,
        ties: counts.ties,
        losses: counts.losses,
    })
}

/// Applies the correction over all `comparisons` and marks the significant ones.
pub fn correct(comparisons: &mut [PairedComparison], settings: &SignificanceSettings) {
    let p_values: Vec<f64> = comparisons
        .iter()
        .map(|comparison| comparison.p_value)
        .collect();
    for (comparison, adjusted) in comparisons
        .iter_mut()
        .zip(adjust(&p_values, settings.correction))
    {
        comparison.adjusted_p_value = adjusted;
        comparison.significant = adjusted < settings.alpha;
    }
}

/// `*` when significant at alpha, `**` when also below alpha / 5, else nothing.
pub fn significance_mark(comparison: &PairedComparison, alpha: f64) -> &'static str {
    if comparison.adjusted_p_value < alpha / 5.0 {
        "**"
    } else if comparison.adjusted_p_value < alpha {
        "*"
    } else {
        ""
    }
}
