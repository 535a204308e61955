//! Side-by-side comparison of several runs of one dataset (one per embedding provider,
//! or stored results): configurations x runs on one metric, each candidate cell tested
//! against the reference run's same-named configuration, corrected over every cell, plus
//! what each run cost. Pure: stored results in, a [`CompareReport`] out; `report` renders it.

pub mod paired;

use serde::Serialize;

use crate::error::Error;
use crate::results::stored::StoredResults;
use paired::{compare, correct, significance_mark, PairedComparison, SignificanceSettings};

/// The version of `compare.json` (`schemas/compare.schema.json`); bumped whenever a
/// field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

/// What a run cost; `None` fields were not recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Accounting {
    pub embedded_texts: Option<usize>,
    pub embedding_ms: Option<f64>,
    pub retrieval_ms: Option<f64>,
}

/// One compared run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedRun {
    pub label: String,
    /// `kind (model, N dims)`, when the run used embeddings.
    pub embedder: Option<String>,
    pub accounting: Accounting,
}

/// One configuration across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    pub configuration: String,
    /// Macro value per run (`None` when that run lacks the configuration).
    pub values: Vec<Option<f64>>,
    /// Against the reference (first) run, per candidate run.
    pub comparisons: Vec<Option<PairedComparison>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    pub dataset: String,
    pub content_hash: String,
    pub metric: String,
    pub reference: String,
    pub significance: SignificanceSettings,
    pub runs: Vec<ComparedRun>,
    pub rows: Vec<CompareRow>,
}

impl CompareReport {
    /// Whether any run recorded an embedder or a cost: runs of other systems (`--qrels`)
    /// record neither, and a table of dashes would only be noise.
    pub fn has_costs(&self) -> bool {
        self.runs.iter().any(|run| {
            run.embedder.is_some()
                || run.accounting.embedded_texts.is_some()
                || run.accounting.embedding_ms.is_some()
                || run.accounting.retrieval_ms.is_some()
        })
    }
}

/// Compares `runs` (label, results, accounting); the first is the reference.
pub fn build(
    runs: &[(String, StoredResults, Accounting)],
    metric: Option<&str>,
    significance: &SignificanceSettings,
) -> Result<CompareReport, Error> {
    let (reference_label, reference, _) = runs
        .first()
        .ok_or_else(|| Error::Usage("nothing to compare".into()))?;
    if runs.len() < 2 {
        return Err(Error::Usage(
            "compare needs at least two runs: two --embedder options, two results.json files, or --qrels and two run files"
                .into(),
        ));
    }
    for (label, results, _) in runs {
        if results.dataset.content_hash != reference.dataset.content_hash {
            return Err(Error::Usage(format!(
                "{label} was run on dataset {:?} ({}), but {reference_label} on {:?} ({}); compare runs of one dataset",
                results.dataset.name, results.dataset.content_hash, reference.dataset.name, reference.dataset.content_hash
            )));
        }
        let differences = results.definition_differences(reference);
        if !differences.is_empty() {
            return Err(Error::Usage(format!(
                "{label}'s metrics are defined differently from {reference_label}'s ({}); their numbers do not compare",
                differences.join("; ")
            )));
        }
    }
    let metric = match metric {
        Some(metric) => crate::metric_names::resolve(
            metric,
            &reference.evaluation.metrics,
            &format!("--metric ({})", runs[0].0),
        )?,
        None => reference
            .evaluation
            .metrics
            .iter()
            .rfind(|name| name.starts_with("ndcg@"))
            .cloned()
            .unwrap_or_else(|| "mrr".into()),
    };
    for (label, results, _) in runs {
        if !results.evaluation.metrics.contains(&metric) {
            return Err(Error::Usage(format!(
                "{label} has no metric {metric:?}; it has {}",
                results.evaluation.metrics.join(", ")
            )));
        }
    }
    let mut names: Vec<String> = Vec::new();
    for (_, results, _) in runs {
        for configuration in &results.configurations {
            if !names.contains(&configuration.name) {
                names.push(configuration.name.clone());
            }
        }
    }
    // Every (configuration, candidate run) comparison, corrected together.
    let mut comparisons: Vec<PairedComparison> = Vec::new();
    let mut slots: Vec<(usize, usize)> = Vec::new();
    for (row, name) in names.iter().enumerate() {
        let Some(reference_configuration) = reference.configuration(name) else {
            continue;
        };
        for (column, (_, results, _)) in runs.iter().enumerate().skip(1) {
            if let Some(candidate) = results.configuration(name) {
                if let Some(comparison) =
                    compare(reference_configuration, candidate, &metric, significance)
                {
                    comparisons.push(comparison);
                    slots.push((row, column));
                }
            }
        }
    }
    correct(&mut comparisons, significance);
    let mut rows: Vec<CompareRow> = names
        .iter()
        .map(|name| CompareRow {
            configuration: name.clone(),
            values: runs
                .iter()
                .map(|(_, results, _)| {
                    results
                        .configuration(name)
                        .and_then(|c| c.macro_value(&metric))
                })
                .collect(),
            comparisons: vec![None; runs.len() - 1],
        })
        .collect();
    for (comparison, (row, column)) in comparisons.into_iter().zip(slots) {
        rows[row].comparisons[column - 1] = Some(comparison);
    }
    Ok(CompareReport {
        schema_version: SCHEMA_VERSION,
        dataset: reference.dataset.name.clone(),
        content_hash: reference.dataset.content_hash.clone(),
        metric,
        reference: reference_label.clone(),
        significance: *significance,
        runs: runs
            .iter()
            .map(|(label, results, accounting)| ComparedRun {
                label: label.clone(),
                embedder: results
                    .embedder
                    .as_ref()
                    .map(|e| format!("{} ({}, {} dims)", e.kind, e.model, e.dimension)),
                accounting: accounting.clone(),
            })
            .collect(),
        rows,
    })
}

/// The text of one cell: the value, and against the reference its difference and
/// significance mark.
pub fn cell_text(report: &CompareReport, row: &CompareRow, column: usize) -> String {
    let Some(value) = row.values[column] else {
        return "-".into();
    };
    if column == 0 {
        return format!("{value:.4}");
    }
    match &row.comparisons[column - 1] {
        Some(comparison) => format!(
            "{value:.4} ({:+.4}{})",
            comparison.delta,
            significance_mark(comparison, report.significance.alpha)
        ),
        None => format!("{value:.4}"),
    }
}

/// A measured number, or `-` when it was not recorded.
pub fn optional(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |value| format!("{value:.0}"))
}

/// What the comparison shows and how significance was tested, in one line.
pub fn legend(report: &CompareReport) -> String {
    format!(
        "{} on {}; differences from {}; * / ** = significant at {} / {} ({:?} test, {:?} correction over {} comparisons)",
        crate::metric_names::display(&report.metric),
        report.dataset,
        report.reference,
        report.significance.alpha,
        report.significance.alpha / 5.0,
        report.significance.test,
        report.significance.correction,
        report.rows.iter().flat_map(|row| row.comparisons.iter().flatten()).count()
    )
}
