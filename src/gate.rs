//! The CI regression gate: compares a run with a stored baseline of the same dataset and
//! fails when a configured metric drops by more than its threshold (optionally only when
//! the drop is also significant after correction), when a configuration's macro value
//! falls below an absolute target (`--min`, no baseline needed), or when per-query
//! expectations fail and the gate requires them.
//!
//! A gate never passes on less than it was asked: every requested metric is checked for
//! every configuration of the run, and a check that cannot be made (a configuration or
//! metric the baseline lacks, a metric the run does not compute, a null value, no
//! per-query values to pair) is an error naming the metric and configuration (exit code
//! 2), as is a baseline whose metrics are defined differently (relevance level,
//! semantics, depth). Zero checks is never a pass.
//!
//! Pure: stored results in, a [`GateReport`] out; the caller maps a failed gate to the
//! regression exit code.

use std::path::Path;

use serde::Serialize;

use crate::compare::paired::{compare, correct, PairedComparison, SignificanceSettings};
use crate::error::{Error, Problem, Problems};
use crate::metric_names::{canonical, display, resolve};
use crate::results::stored::StoredResults;

/// The version of `gate.json` (`schemas/gate.schema.json`); bumped whenever a field
/// changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

/// A metric and the largest drop the gate tolerates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Threshold {
    pub metric: String,
    pub max_drop: f64,
}

/// A metric and the lowest macro value the gate accepts (an absolute target).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    pub metric: String,
    pub min: f64,
}

/// How many failed checks and missed targets [`GateReport::verdict_line`] names.
const FAILURES_NAMED: usize = 3;

/// Drops (and shortfalls below a target) smaller than this are float noise, never failures.
const DROP_TOLERANCE: f64 = 1e-12;

/// Parses `ndcg@10=0.01,recall@5=0.02`, given at `place` (`--max-drop`, or a config
/// file's `[gate] max_drop` table).
pub fn parse_thresholds(text: &str, place: &str) -> Result<Vec<Threshold>, Error> {
    let pairs = parse_metric_values(
        MetricValues {
            place,
            value_name: "DROP",
            value_noun: "drops",
            example: "ndcg@10=0.01",
        },
        text,
        |drop| drop >= 0.0,
        "the drop must be a number >= 0",
    )?;
    Ok(pairs
        .into_iter()
        .map(|(metric, max_drop)| Threshold { metric, max_drop })
        .collect())
}

/// Parses `precision@5=0.8,ndcg@10=0.8`, given at `place` (`--min`, or a config file's
/// `[gate] min` table); every metric is a fraction, so a target outside [0, 1] is
/// refused.
pub fn parse_targets(text: &str, place: &str) -> Result<Vec<Target>, Error> {
    let pairs = parse_metric_values(
        MetricValues {
            place,
            value_name: "VALUE",
            value_noun: "targets",
            example: "ndcg@10=0.8",
        },
        text,
        |min| (0.0..=1.0).contains(&min),
        "the target must be a number in [0, 1] (every metric is a fraction)",
    )?;
    Ok(pairs
        .into_iter()
        .map(|(metric, min)| Target { metric, min })
        .collect())
}

/// How a `METRIC=NUMBER,...` list is named in messages.
struct MetricValues<'a> {
    /// Where it was given: `--max-drop`, `[gate] min in hyde-eval.toml`.
    place: &'a str,
    /// The number's name in `METRIC=DROP`.
    value_name: &'a str,
    /// What the numbers are, in the plural: `drops`, `targets`.
    value_noun: &'a str,
    example: &'a str,
}

/// Parses `METRIC=NUMBER,...`. Each number must be finite and `accept`ed, else the error
/// says `requirement`. Two spellings of one metric (`ndcg@10`, `nDCG@10`) are one metric:
/// given with the same number they are merged, with different numbers refused (naming
/// both spellings), so that a metric is checked once, against one number.
fn parse_metric_values(
    names: MetricValues<'_>,
    text: &str,
    accept: impl Fn(f64) -> bool,
    requirement: &str,
) -> Result<Vec<(String, f64)>, Error> {
    let MetricValues {
        place,
        value_name,
        value_noun,
        example,
    } = names;
    if text.split(',').all(|part| part.trim().is_empty()) {
        return Err(Error::Usage(format!(
            "{place} {text:?} names no metric, so the gate would check nothing (an unset CI variable gives an empty value); give METRIC={value_name},..., e.g. {example}, or leave {place} out"
        )));
    }
    // (canonical metric, number, spelling as given), in the order given.
    let mut pairs: Vec<(String, f64, &str)> = Vec::new();
    for part in text.split(',').filter(|part| !part.trim().is_empty()) {
        let (spelling, value) = part.split_once('=').ok_or_else(|| {
            Error::Usage(format!(
                "{place} {part:?}: expected METRIC={value_name}, e.g. {example}"
            ))
        })?;
        let number: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|number: &f64| number.is_finite() && accept(*number))
            .ok_or_else(|| Error::Usage(format!("{place} {part:?}: {requirement}")))?;
        // Canonical when the spelling names a metric; the gate checks it against
        // what the run computes, with a "did you mean" for an unknown one.
        let spelling = spelling.trim();
        let metric = canonical(spelling).unwrap_or_else(|| spelling.to_owned());
        match pairs.iter().find(|(known, _, _)| *known == metric) {
            Some((_, first_number, first_spelling)) if *first_number != number => {
                return Err(Error::Usage(format!(
                    "{place}: {first_spelling:?} and {spelling:?} name one metric, {metric}, with different {value_noun} ({first_number} and {number}); give it once"
                )))
            }
            Some(_) => {}
            None => pairs.push((metric, number, spelling)),
        }
    }
    Ok(pairs
        .into_iter()
        .map(|(metric, number, _)| (metric, number))
        .collect())
}

/// What the gate checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateOptions {
    /// Empty: every metric of the run, with a tolerated drop of 0 (when there is a
    /// baseline).
    pub thresholds: Vec<Threshold>,
    /// Absolute targets, checked with or without a baseline.
    pub targets: Vec<Target>,
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

/// One (configuration, metric) check against an absolute target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetCheck {
    pub configuration: String,
    pub metric: String,
    /// The configuration's macro value.
    pub value: f64,
    pub target: f64,
    pub failed: bool,
}

/// The gate's verdict and everything behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    pub passed: bool,
    /// The baseline's path; `None` when only absolute targets were checked.
    pub baseline: Option<String>,
    pub options: GateOptions,
    /// Checks against the baseline.
    pub checks: Vec<GateCheck>,
    /// Checks against the absolute targets.
    pub target_checks: Vec<TargetCheck>,
    /// Configurations of the baseline that this run did not run (not checked).
    pub missing_configurations: Vec<String>,
    /// Failed expectations, counted when the gate requires expectations.
    pub failed_expectations: usize,
}

impl GateReport {
    pub fn failed_checks(&self) -> impl Iterator<Item = &GateCheck> {
        self.checks.iter().filter(|check| check.failed)
    }

    pub fn missed_targets(&self) -> impl Iterator<Item = &TargetCheck> {
        self.target_checks.iter().filter(|check| check.failed)
    }

    /// The verdict in one line, as the terminal summary opens: `gate: PASS (4 checks
    /// against B; none dropped beyond its threshold; 2 targets met)`, or `gate:
    /// REGRESSION (1 of 4 checks dropped beyond their threshold; baseline B)`.
    pub fn verdict(&self) -> String {
        if self.passed {
            let baseline = self.baseline.as_deref().unwrap_or_default();
            return format!("gate: PASS ({})", self.passed_parts(baseline).join("; "));
        }
        let reasons = self.failure_reasons();
        match &self.baseline {
            Some(baseline) => format!(
                "gate: REGRESSION ({}; baseline {baseline})",
                reasons.join("; ")
            ),
            None => format!("gate: REGRESSION ({})", reasons.join("; ")),
        }
    }

    /// What a passing gate held, part by part: its checks against `baseline` (the
    /// baseline's name as the caller quotes it) and its targets met.
    pub fn passed_parts(&self, baseline: &str) -> Vec<String> {
        let mut parts = Vec::new();
        if !self.checks.is_empty() {
            parts.push(format!(
                "{} checks against {baseline}; none dropped beyond its threshold",
                self.checks.len()
            ));
        }
        if !self.target_checks.is_empty() {
            parts.push(format!("{} targets met", self.target_checks.len()));
        }
        parts
    }

    /// Why a failing gate failed, part by part: checks dropped beyond their threshold,
    /// targets missed and expectations failed, each counted.
    pub fn failure_reasons(&self) -> Vec<String> {
        let failed = self.failed_checks().count();
        let missed = self.missed_targets().count();
        let mut reasons = Vec::new();
        if failed > 0 {
            reasons.push(format!(
                "{failed} of {} checks dropped beyond their threshold",
                self.checks.len()
            ));
        }
        if missed > 0 {
            reasons.push(format!(
                "{missed} of {} targets missed",
                self.target_checks.len()
            ));
        }
        if self.failed_expectations > 0 {
            reasons.push(format!("{} expectations failed", self.failed_expectations));
        }
        reasons
    }

    /// The line every gated command (`run`, `merge`, `eval`) prints on stderr, in every
    /// output format and whatever `--quiet` says (a verdict is not progress): the
    /// [`GateReport::verdict`], and for a failed gate the first
    /// [`FAILURES_NAMED`] failed checks and missed targets, so that a log shows what
    /// failed without the report.
    pub fn verdict_line(&self) -> String {
        let verdict = self.verdict();
        let failures: Vec<String> = self
            .failed_checks()
            .map(|check| {
                let comparison = &check.comparison;
                format!(
                    "{} {} {:.4} -> {:.4} ({:+.4}, max drop {:.4})",
                    comparison.configuration,
                    display(&comparison.metric),
                    comparison.reference,
                    comparison.candidate,
                    comparison.delta,
                    check.max_drop
                )
            })
            .chain(self.missed_targets().map(|check| {
                format!(
                    "{} {} {:.4} < min {:.4}",
                    check.configuration,
                    display(&check.metric),
                    check.value,
                    check.target
                )
            }))
            .collect();
        if failures.is_empty() {
            return verdict;
        }
        let mut named = failures[..failures.len().min(FAILURES_NAMED)].join("; ");
        if failures.len() > FAILURES_NAMED {
            named.push_str(&format!("; and {} more", failures.len() - FAILURES_NAMED));
        }
        format!("{verdict}: {named}")
    }

    /// The baseline checks whose metric rose (by at least what shows in 4 decimals).
    pub fn improvements(&self) -> impl Iterator<Item = &GateCheck> {
        self.checks
            .iter()
            .filter(|check| check.comparison.delta >= SHOWN_CHANGE)
    }

    /// The baseline checks that passed but came close to failing: a drop of at least
    /// [`NEAR_MISS_SHARE`] of the allowed drop (or beyond it, when only significant drops
    /// fail).
    pub fn near_misses(&self) -> impl Iterator<Item = &GateCheck> {
        self.checks.iter().filter(|check| {
            let drop = -check.comparison.delta;
            !check.failed && drop >= SHOWN_CHANGE && drop >= NEAR_MISS_SHARE * check.max_drop
        })
    }
}

/// The smallest change that shows in 4 decimals.
const SHOWN_CHANGE: f64 = 5e-5;

/// A passed check counts as a near miss when it dropped by at least this share of its
/// allowed drop (or beyond it, when only significant drops fail).
pub const NEAR_MISS_SHARE: f64 = 0.5;

impl GateCheck {
    /// What is left of the allowed drop: negative when the drop went beyond it (a pass
    /// then, only when only significant drops fail).
    pub fn margin(&self) -> f64 {
        self.max_drop + self.comparison.delta
    }
}

/// Runs the gate: the baseline checks (when there is a baseline, with its path) and the
/// target checks. `failed_expectations` is the number of failed expectations of the
/// current run (all configurations).
pub fn run_gate(
    current: &StoredResults,
    baseline: Option<(&StoredResults, &Path)>,
    options: &GateOptions,
    failed_expectations: usize,
) -> Result<GateReport, Error> {
    let (thresholds, checks, missing_configurations) = match baseline {
        Some((baseline, path)) => {
            let (thresholds, checks) = baseline_checks(current, baseline, path, options)?;
            let current_names = names(current);
            let missing = names(baseline)
                .into_iter()
                .filter(|name| !current_names.contains(name))
                .collect();
            (thresholds, checks, missing)
        }
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    let target_checks = target_checks(current, &options.targets)?;
    if checks.is_empty() && target_checks.is_empty() {
        return Err(Error::Usage(
            "the gate has nothing to check: give --baseline FILE or --min METRIC=VALUE,...".into(),
        ));
    }
    let counted_expectations = if options.require_expectations {
        failed_expectations
    } else {
        0
    };
    // Zero checks never pass (unreachable above, and kept so by the property test).
    let made_checks = !checks.is_empty() || !target_checks.is_empty();
    let any_failed =
        checks.iter().any(|check| check.failed) || target_checks.iter().any(|check| check.failed);
    let passed = made_checks && !any_failed && counted_expectations == 0;
    Ok(GateReport {
        schema_version: SCHEMA_VERSION,
        passed,
        baseline: baseline.map(|(_, path)| path.display().to_string()),
        options: GateOptions {
            thresholds,
            ..options.clone()
        },
        checks,
        target_checks,
        missing_configurations,
        failed_expectations: counted_expectations,
    })
}

/// Every configuration of the run against every target: its macro value, which must be
/// there.
fn target_checks(current: &StoredResults, targets: &[Target]) -> Result<Vec<TargetCheck>, Error> {
    for target in targets {
        resolve(&target.metric, &current.evaluation.metrics, "--min")?;
    }
    if !targets.is_empty() && current.configurations.is_empty() {
        return Err(Error::Usage(
            "--min has nothing to check: the run has no configuration".into(),
        ));
    }
    let mut checks = Vec::new();
    let mut unmade = Vec::new();
    for configuration in &current.configurations {
        for target in targets {
            match configuration.macro_value(&target.metric) {
                Some(value) => checks.push(TargetCheck {
                    configuration: configuration.name.clone(),
                    metric: target.metric.clone(),
                    value,
                    target: target.min,
                    failed: value < target.min - DROP_TOLERANCE,
                }),
                None => unmade.push(format!(
                    "{} of configuration {:?}",
                    target.metric, configuration.name
                )),
            }
        }
    }
    if !unmade.is_empty() {
        return Err(Error::Usage(format!(
            "--min: cannot check {}: this run has no value for it",
            unmade.join(", ")
        )));
    }
    Ok(checks)
}

/// The checks against the baseline, with the thresholds they used.
fn baseline_checks(
    current: &StoredResults,
    baseline: &StoredResults,
    baseline_path: &Path,
    options: &GateOptions,
) -> Result<(Vec<Threshold>, Vec<GateCheck>), Error> {
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
    let differences = current.definition_differences(baseline);
    if !differences.is_empty() {
        return Err(Error::problem(
            Problem::new(
                baseline_path,
                None,
                format!(
                    "the baseline's metrics are defined differently from this run's ({}); their numbers do not compare",
                    differences.join("; ")
                ),
            )
            .with_hint("run with the baseline's settings, or record a new baseline with `hyde-eval baseline update`"),
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
    if thresholds.is_empty() || current.configurations.is_empty() {
        return Err(Error::Usage(
            "the gate has nothing to check: the run computed no metric or no configuration".into(),
        ));
    }
    for threshold in &thresholds {
        resolve(&threshold.metric, &current.evaluation.metrics, "--max-drop")?;
    }
    // Every requested check, made or explained.
    let mut unmade = Problems::default();
    let mut comparisons = Vec::new();
    let mut drops = Vec::new();
    for configuration in &current.configurations {
        let Some(reference) = baseline.configuration(&configuration.name) else {
            unmade.push(
                Problem::new(
                    baseline_path,
                    None,
                    format!(
                        "cannot check configuration {:?}: the baseline does not hold it (it holds {})",
                        configuration.name,
                        names(baseline).join(", ")
                    ),
                )
                .with_hint("record a baseline that includes it (`hyde-eval baseline update`), or leave it out with --configurations"),
            );
            continue;
        };
        for threshold in &thresholds {
            let metric = &threshold.metric;
            let missing_from = if reference.macro_value(metric).is_none() {
                Some("the baseline has")
            } else if configuration.macro_value(metric).is_none() {
                Some("this run has")
            } else {
                None
            };
            if let Some(side) = missing_from {
                unmade.push(Problem::new(
                    baseline_path,
                    None,
                    format!(
                        "cannot check {metric} for configuration {:?}: {side} no {metric} value (baseline cut-offs {:?}, this run's {:?})",
                        configuration.name, baseline.evaluation.cutoffs, current.evaluation.cutoffs
                    ),
                ));
                continue;
            }
            match compare(reference, configuration, metric, &options.significance) {
                Some(comparison) if comparison.paired_queries > 0 => {
                    comparisons.push(comparison);
                    drops.push(threshold.max_drop);
                }
                _ => unmade.push(Problem::new(
                    baseline_path,
                    None,
                    format!(
                        "cannot check {metric} for configuration {:?}: the baseline and this run share no query with a per-query {metric} value",
                        configuration.name
                    ),
                )),
            }
        }
    }
    unmade.into_result()?;
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
    Ok((thresholds, checks))
}

/// The configuration names of `results`, in order.
fn names(results: &StoredResults) -> Vec<String> {
    results
        .configurations
        .iter()
        .map(|configuration| configuration.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_and_reject_nonsense() {
        let parsed = parse_thresholds("ndcg@10=0.01, recall@5=0.02", "--max-drop").unwrap();
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
        assert!(parse_thresholds("ndcg@10", "--max-drop").is_err());
        assert!(parse_thresholds("ndcg@10=-1", "--max-drop").is_err());
        assert!(parse_thresholds("ndcg@10=NaN", "--max-drop").is_err());
    }

    #[test]
    fn two_spellings_of_one_metric_are_one_check_or_refused() {
        // Same drop: one threshold (one check per configuration, one member of the
        // correction's family), in the order first given.
        let merged =
            parse_thresholds("ndcg@10=0.01,recall@5=0.02,NDCG_CUT_10=0.010", "--max-drop").unwrap();
        assert_eq!(
            merged,
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
        // Different drops for one metric: refused, naming both spellings and the place.
        let message = parse_thresholds("ndcg@10=0,nDCG@10=0.5", "--max-drop")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(
                "--max-drop: \"ndcg@10\" and \"nDCG@10\" name one metric, ndcg@10, with different drops (0 and 0.5)"
            ),
            "{message}"
        );
        let message = parse_targets("P@5=0.5,precision@5=0.6", "[gate] min in gate.toml")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(
                "[gate] min in gate.toml: \"P@5\" and \"precision@5\" name one metric, precision@5, with different targets (0.5 and 0.6)"
            ),
            "{message}"
        );
    }

    mod property {
        use std::sync::Arc;

        use proptest::prelude::*;
        use serde_json::{Map, Value};

        use super::super::*;
        use crate::dataset::QueryId;
        use crate::metrics::Semantics;
        use crate::results::stored::{
            StoredConfiguration, StoredDataset, StoredEvaluation, StoredParams, StoredQuery,
        };
        use crate::results::{MetricValues, SharedSlice};

        const METRICS: [&str; 3] = ["mrr", "map", "ndcg@10"];
        const NAMES: [&str; 4] = ["a", "b", "c", "d"];

        /// A metric value: a number, or (when `None`) a null or an absent entry.
        type Value3 = Option<f64>;
        /// A configuration: its name's index, macro values, and per-query values.
        type GeneratedConfiguration = (usize, Vec<Value3>, Vec<Vec<Value3>>);

        fn results(configurations: &[GeneratedConfiguration], metrics: &[usize]) -> StoredResults {
            let names: Vec<String> = metrics.iter().map(|&m| METRICS[m].to_owned()).collect();
            StoredResults {
                schema_version: crate::results::SCHEMA_VERSION,
                run_name: "r".into(),
                dataset: StoredDataset {
                    name: "d".into(),
                    content_hash: "sha256:0".into(),
                    queries: 3,
                },
                evaluation: StoredEvaluation {
                    metrics: names.clone(),
                    cutoffs: vec![10],
                    relevance_level: 1,
                    semantics: Semantics::Trec,
                },
                embedder: None,
                configurations: configurations
                    .iter()
                    .map(|(name, macros, queries)| {
                        let mut macro_metrics = Map::new();
                        for (metric, value) in names.iter().zip(macros) {
                            if let Some(value) = value {
                                macro_metrics.insert(metric.clone(), Value::from(*value));
                            } else if metric.len() % 2 == 0 {
                                macro_metrics.insert(metric.clone(), Value::Null);
                            }
                        }
                        StoredConfiguration {
                            name: NAMES[*name].into(),
                            params: StoredParams { depth: 1000 },
                            macro_metrics,
                            per_query: queries
                                .iter()
                                .enumerate()
                                .map(|(query, values)| StoredQuery {
                                    query: QueryId(format!("q{query}")),
                                    metrics: MetricValues::new(
                                        Arc::from(names.clone()),
                                        SharedSlice::owned(
                                            values
                                                .iter()
                                                .take(names.len())
                                                .map(|v| v.unwrap_or(f64::NAN))
                                                .collect(),
                                        ),
                                    ),
                                    top: Vec::new(),
                                })
                                .collect(),
                        }
                    })
                    .collect(),
            }
        }

        fn value() -> impl Strategy<Value = Value3> {
            prop_oneof![3 => (0u8..5).prop_map(|v| Some(f64::from(v) / 4.0)), 1 => Just(None)]
        }

        /// Configurations: distinct names, each with a value per metric and per query.
        fn configurations(
            names: std::ops::Range<usize>,
        ) -> impl Strategy<Value = Vec<GeneratedConfiguration>> {
            proptest::sample::subsequence(
                (names.start..names.end).collect::<Vec<_>>(),
                0..=names.len(),
            )
            .prop_flat_map(|chosen| {
                chosen
                    .into_iter()
                    .map(|name| {
                        (
                            Just(name),
                            proptest::collection::vec(value(), 3),
                            proptest::collection::vec(proptest::collection::vec(value(), 3), 0..4),
                        )
                    })
                    .collect::<Vec<_>>()
            })
        }

        proptest! {
            /// Whatever the baseline holds and whatever is asked: a PASS made at least
            /// one check, and every requested (configuration, metric) check.
            #[test]
            fn a_pass_made_every_requested_check(
                current in configurations(0..3),
                baseline in configurations(0..4),
                current_metrics in proptest::sample::subsequence(vec![0usize, 1, 2], 0..=3),
                baseline_metrics in proptest::sample::subsequence(vec![0usize, 1, 2], 0..=3),
                requested in proptest::sample::subsequence(vec![0usize, 1, 2], 0..=3),
                max_drop in 0u8..3,
            ) {
                let current = results(&current, &current_metrics);
                let baseline = results(&baseline, &baseline_metrics);
                let options = GateOptions {
                    thresholds: requested
                        .iter()
                        .map(|&m| Threshold {
                            metric: METRICS[m].into(),
                            max_drop: f64::from(max_drop) / 4.0,
                        })
                        .collect(),
                    targets: Vec::new(),
                    require_significant: false,
                    require_expectations: false,
                    significance: crate::compare::paired::SignificanceSettings {
                        iterations: 50,
                        ..Default::default()
                    },
                };
                if let Ok(report) = run_gate(&current, Some((&baseline, Path::new("b.json"))), &options, 0) {
                    if report.passed {
                        prop_assert!(!report.checks.is_empty());
                        let wanted: Vec<String> = if requested.is_empty() {
                            current.evaluation.metrics.clone()
                        } else {
                            requested.iter().map(|&m| METRICS[m].to_owned()).collect()
                        };
                        for configuration in &current.configurations {
                            for metric in &wanted {
                                prop_assert!(
                                    report.checks.iter().any(|check| {
                                        check.comparison.configuration == configuration.name
                                            && check.comparison.metric == *metric
                                            && check.comparison.paired_queries > 0
                                    }),
                                    "{} {} unchecked in a PASS", configuration.name, metric
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
