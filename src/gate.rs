//! The CI regression gate: compares a run with a stored baseline of the same dataset and
//! fails when a configured metric drops by more than its threshold (optionally only when
//! the drop is also significant after correction), or when per-query expectations fail
//! and the gate requires them.
//!
//! Pure: stored results in, a [`GateReport`] out; the caller maps a failed gate to the
//! regression exit code.

use std::path::Path;

use serde::Serialize;

use crate::comparison::{compare, correct, PairedComparison, SignificanceSettings};
use crate::error::{Error, Problem};
use crate::report::stored::StoredResults;

/// A metric and the largest drop the gate tolerates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Threshold {
    pub metric: String,
    pub max_drop: f64,
}

/// Drops smaller than this are float noise, never regressions.
const DROP_TOLERANCE: f64 = 1e-12;

/// Parses `ndcg@10=0.01,recall@5=0.02`.
pub fn parse_thresholds(text: &str) -> Result<Vec<Threshold>, Error> {
    text.split(',')
        .filter(|part| !part.trim().is_empty())
        .map(|part| {
            let (metric, value) = part.split_once('=').ok_or_else(|| {
                Error::Usage(format!(
                    "--max-drop {part:?}: expected METRIC=DROP, e.g. ndcg@10=0.01"
                ))
            })?;
            let max_drop: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|drop: &f64| drop.is_finite() && *drop >= 0.0)
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "--max-drop {part:?}: the drop must be a number >= 0"
                    ))
                })?;
            Ok(Threshold {
                metric: metric.trim().to_owned(),
                max_drop,
            })
        })
        .collect()
}

/// What the gate checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateOptions {
    /// Empty: every metric of the run, with a tolerated drop of 0.
    pub thresholds: Vec<Threshold>,
    pub require_significant: bool,
    pub require_expectations: bool,
    pub significance: SignificanceSettings,
}

/// One (configuration, metric) check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateCheck {
    #[serde(flatten)]
    pub comparison: PairedComparison,
    pub max_drop: f64,
    pub failed: bool,
}

/// The gate's verdict and everything behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateReport {
    pub passed: bool,
    pub baseline: String,
    pub options: GateOptions,
    pub checks: Vec<GateCheck>,
    /// Configurations of the baseline that this run did not run (not checked).
    pub missing_configurations: Vec<String>,
    /// Configurations of this run that the baseline lacks (not checked).
    pub new_configurations: Vec<String>,
    /// Failed expectations, counted when the gate requires expectations.
    pub failed_expectations: usize,
}

impl GateReport {
    pub fn failed_checks(&self) -> impl Iterator<Item = &GateCheck> {
        self.checks.iter().filter(|check| check.failed)
    }
}

/// Runs the gate. `failed_expectations` is the number of failed expectations of the
/// current run (all configurations).
pub fn run_gate(
    current: &StoredResults,
    baseline: &StoredResults,
    baseline_path: &Path,
    options: &GateOptions,
    failed_expectations: usize,
) -> Result<GateReport, Error> {
    if current.dataset.content_hash != baseline.dataset.content_hash {
        return Err(Error::problem(
            Problem::new(
                baseline_path,
                None,
                format!(
                    "dataset content hash differs: the baseline was made on {:?} ({}), this run is on {:?} ({})",
                    baseline.dataset.name, baseline.dataset.content_hash, current.dataset.name, current.dataset.content_hash
                ),
            )
            .with_hint("compare runs of the same dataset; after an intentional dataset change run `hyde-eval baseline update`"),
        ));
    }
    let thresholds: Vec<Threshold> = if options.thresholds.is_empty() {
        current
            .evaluation
            .metrics
            .iter()
            .map(|metric| Threshold {
                metric: metric.clone(),
                max_drop: 0.0,
            })
            .collect()
    } else {
        options.thresholds.clone()
    };
    for threshold in &thresholds {
        if !current.evaluation.metrics.contains(&threshold.metric) {
            return Err(Error::Usage(format!(
                "--max-drop: this run does not compute {:?}; it computes {}",
                threshold.metric,
                current.evaluation.metrics.join(", ")
            )));
        }
    }
    let mut comparisons = Vec::new();
    let mut drops = Vec::new();
    for configuration in &current.configurations {
        let Some(reference) = baseline.configuration(&configuration.name) else {
            continue;
        };
        for threshold in &thresholds {
            if let Some(comparison) = compare(
                reference,
                configuration,
                &threshold.metric,
                &options.significance,
            ) {
                comparisons.push(comparison);
                drops.push(threshold.max_drop);
            }
        }
    }
    correct(&mut comparisons, &options.significance);
    let checks: Vec<GateCheck> = comparisons
        .into_iter()
        .zip(drops)
        .map(|(comparison, max_drop)| {
            let dropped = -comparison.delta > max_drop + DROP_TOLERANCE;
            let failed = dropped && (!options.require_significant || comparison.significant);
            GateCheck {
                comparison,
                max_drop,
                failed,
            }
        })
        .collect();
    let names = |results: &StoredResults| {
        results
            .configurations
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    let current_names = names(current);
    let baseline_names = names(baseline);
    let counted_expectations = if options.require_expectations {
        failed_expectations
    } else {
        0
    };
    let passed = !checks.iter().any(|check| check.failed) && counted_expectations == 0;
    Ok(GateReport {
        passed,
        baseline: baseline_path.display().to_string(),
        options: GateOptions {
            thresholds,
            ..options.clone()
        },
        checks,
        missing_configurations: baseline_names
            .iter()
            .filter(|name| !current_names.contains(name))
            .cloned()
            .collect(),
        new_configurations: current_names
            .iter()
            .filter(|name| !baseline_names.contains(name))
            .cloned()
            .collect(),
        failed_expectations: counted_expectations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_and_reject_nonsense() {
        let parsed = parse_thresholds("ndcg@10=0.01, recall@5=0.02").unwrap();
        assert_eq!(
            parsed,
            vec![
                Threshold {
                    metric: "ndcg@10".into(),
                    max_drop: 0.01
                },
                Threshold {
                    metric: "recall@5".into(),
                    max_drop: 0.02
                },
            ]
        );
        assert!(parse_thresholds("ndcg@10").is_err());
        assert!(parse_thresholds("ndcg@10=-1").is_err());
        assert!(parse_thresholds("ndcg@10=NaN").is_err());
    }
}
