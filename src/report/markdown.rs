//! Markdown output for pull-request comments and `$GITHUB_STEP_SUMMARY`: the gate's
//! verdict first, then metric deltas with significance marks, then the metric table and
//! failed expectations. Also the metric table export of reports. Pure: returns strings.

use std::fmt::Write;

use super::{Document, Exporter};
use crate::compare::{cell_text, legend, optional, CompareReport};
use crate::error::Error;

/// The Markdown exporter (pull-request summaries).
pub struct Markdown;

impl Exporter for Markdown {
    fn render(&self, document: &Document<'_>) -> Option<Result<String, Error>> {
        match document {
            Document::Run {
                results,
                columns,
                gate,
            } => Some(Ok(summary(results, columns, *gate))),
            Document::Compare(report) => Some(Ok(compare_summary(report))),
            Document::Sweep(_) | Document::Eval { .. } => None,
        }
    }
}

use crate::compare::paired::{significance_mark, SignificanceTest};
use crate::gate::GateReport;
use crate::results::Results;
use crate::stats::Correction;

fn number(value: f64) -> String {
    format!("{value:.4}")
}

fn signed(value: f64) -> String {
    if value.abs() < 5e-5 {
        "±0.0000".into()
    } else {
        format!("{value:+.4}")
    }
}

/// Escapes the characters that would break a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// The value of `metric` for the configuration at `index`, 0 when missing.
pub fn metric_value(results: &Results, index: usize, metric: &str) -> f64 {
    results.configurations[index]
        .macro_metrics
        .get(metric)
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0)
}

/// The best value of `metric` over the configurations, as printed (4 decimals): a value
/// that prints the same is marked best, as in the terminal table.
fn best_of(results: &Results, metric: &str) -> String {
    number(
        (0..results.configurations.len())
            .map(|index| metric_value(results, index, metric))
            .fold(f64::NEG_INFINITY, f64::max),
    )
}

/// For each metric of the run, in metric order, the best value as printed.
pub fn best_printed(results: &Results) -> Vec<String> {
    results
        .evaluation
        .metrics
        .iter()
        .map(|metric| best_of(results, metric))
        .collect()
}

/// The metric table as Markdown (the given metric columns), best value per column in bold.
pub fn metric_table(results: &Results, metrics: &[String]) -> String {
    let mut text = String::from("| configuration |");
    for metric in metrics {
        let _ = write!(text, " {} |", cell(metric));
    }
    text.push_str("\n|---|");
    text.push_str(&"---:|".repeat(metrics.len()));
    let best: Vec<String> = metrics
        .iter()
        .map(|metric| best_of(results, metric))
        .collect();
    for (index, configuration) in results.configurations.iter().enumerate() {
        let _ = write!(text, "\n| {} |", cell(&configuration.name));
        for (metric, best) in metrics.iter().zip(&best) {
            let shown = number(metric_value(results, index, metric));
            if shown == *best && results.configurations.len() > 1 {
                let _ = write!(text, " **{shown}** |");
            } else {
                let _ = write!(text, " {shown} |");
            }
        }
    }
    text.push('\n');
    text
}

/// Every metric of the run as a Markdown document (the report's `metrics.md` export).
pub fn metric_document(results: &Results) -> String {
    format!(
        "**{}**: {} queries evaluated, relevance >= {}, {:?} semantics; **bold** = best in column\n\n{}",
        cell(&results.dataset.name),
        results.evaluation.evaluated_queries,
        results.evaluation.settings.relevance_level,
        results.evaluation.settings.semantics,
        metric_table(results, &results.evaluation.metrics)
    )
}

fn describe_significance(gate: &GateReport) -> String {
    let significance = &gate.options.significance;
    let test = match significance.test {
        SignificanceTest::Randomization => format!(
            "paired randomization test ({} permutations)",
            significance.iterations
        ),
        SignificanceTest::TTest => "paired t-test".to_owned(),
    };
    let correction = match significance.correction {
        Correction::Holm => "Holm",
        Correction::Bonferroni => "Bonferroni",
    };
    format!(
        "{test}, {correction}-corrected over {} checks; `*` p < {}, `**` p < {}",
        gate.checks.len(),
        significance.alpha,
        significance.alpha / 5.0
    )
}

/// The gate section: verdict line, then a table of failed baseline checks (or of every
/// check that moved), a table of every absolute target check, then notes.
pub fn gate_section(gate: &GateReport) -> String {
    let failed: Vec<_> = gate.failed_checks().collect();
    let missed = gate.missed_targets().count();
    let baseline = gate.baseline.as_deref().unwrap_or_default();
    let mut text = if gate.passed {
        let mut parts = Vec::new();
        if !gate.checks.is_empty() {
            parts.push(format!(
                "{} checks against `{baseline}`; none dropped beyond its threshold",
                gate.checks.len()
            ));
        }
        if !gate.target_checks.is_empty() {
            parts.push(format!("{} targets met", gate.target_checks.len()));
        }
        format!("## ✅ hyde-eval gate: PASS\n\n{}", parts.join("; "))
    } else {
        let mut reasons = Vec::new();
        if !failed.is_empty() {
            reasons.push(format!(
                "{} of {} checks dropped beyond their threshold",
                failed.len(),
                gate.checks.len()
            ));
        }
        if missed > 0 {
            reasons.push(format!(
                "{missed} of {} targets missed",
                gate.target_checks.len()
            ));
        }
        if gate.failed_expectations > 0 {
            reasons.push(format!("{} expectations failed", gate.failed_expectations));
        }
        let against = match &gate.baseline {
            Some(baseline) => format!(" (baseline `{baseline}`)"),
            None => String::new(),
        };
        format!(
            "## ❌ hyde-eval gate: REGRESSION\n\n{}{against}",
            reasons.join("; ")
        )
    };
    if gate.options.require_significant {
        text.push_str(", counting only significant drops");
    }
    if gate.checks.is_empty() {
        text.push_str(".\n");
    } else {
        let _ = write!(
            text,
            ".\n\nSignificance: {}.\n",
            describe_significance(gate)
        );
    }
    let moved: Vec<_> = gate
        .checks
        .iter()
        .filter(|check| check.comparison.delta.abs() >= 5e-5)
        .collect();
    let shown: Vec<_> = if failed.is_empty() { moved } else { failed };
    if !shown.is_empty() {
        text.push_str("\n| configuration | metric | baseline | current | Δ | p (adj.) | W/T/L | max drop | |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n");
        for check in shown {
            let comparison = &check.comparison;
            let mark = significance_mark(comparison, gate.options.significance.alpha);
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} | {}{} | {:.4} | {}/{}/{} | {} | {} |",
                comparison.configuration,
                comparison.metric,
                number(comparison.reference),
                number(comparison.candidate),
                signed(comparison.delta),
                mark,
                comparison.adjusted_p_value,
                comparison.wins,
                comparison.ties,
                comparison.losses,
                number(check.max_drop),
                if check.failed { "❌" } else { "" },
            );
        }
    }
    if !gate.target_checks.is_empty() {
        text.push_str("\nAbsolute targets:\n\n| configuration | metric | value | min | |\n|---|---|---:|---:|---|\n");
        for check in &gate.target_checks {
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} | {} |",
                check.configuration,
                check.metric,
                number(check.value),
                number(check.target),
                if check.failed { "❌" } else { "✅" },
            );
        }
    }
    if !gate.missing_configurations.is_empty() {
        let _ = writeln!(
            text,
            "\nConfigurations of the baseline not in this run (not checked): {}.",
            gate.missing_configurations.join(", ")
        );
    }
    text
}

/// Failed expectations as a Markdown list, grouped by configuration.
pub fn expectation_section(results: &Results) -> Option<String> {
    let mut text = String::new();
    for configuration in &results.configurations {
        let Some(summary) = &configuration.expectations else {
            continue;
        };
        if summary.failures.is_empty() {
            continue;
        }
        let _ = writeln!(
            text,
            "- **{}** ({}/{} passed)",
            configuration.name, summary.passed, summary.checked
        );
        for failure in &summary.failures {
            let expectation = serde_json::to_string(&failure.expectation).unwrap_or_default();
            let _ = writeln!(
                text,
                "  - `{}` `{}`: {}",
                failure.query, expectation, failure.detail
            );
        }
    }
    (!text.is_empty()).then(|| format!("### Failed expectations\n\n{text}"))
}

/// The whole summary: gate verdict (when a baseline was given), metric table, failed
/// expectations.
pub fn summary(results: &Results, metrics: &[String], gate: Option<&GateReport>) -> String {
    let mut text = String::new();
    match gate {
        Some(gate) => text.push_str(&gate_section(gate)),
        None => {
            let _ = writeln!(text, "## hyde-eval results: {}", results.dataset.name);
        }
    }
    let _ = write!(
        text,
        "\nDataset `{}` ({} facts, {} queries, {} evaluated), content `{}`.\n\n",
        results.dataset.name,
        results.dataset.facts,
        results.dataset.queries,
        results.evaluation.evaluated_queries,
        results.dataset.content_hash
    );
    text.push_str(&metric_table(results, metrics));
    if let Some(judged) = super::JudgedSummary::of(results) {
        let _ = write!(text, "\n{}\n", judged.line());
        if let Some(warning) = &judged.warning {
            let _ = write!(text, "\n> **Warning:** {}\n", cell(warning));
        }
    }
    if let Some(engine) = engine_section(results, metrics) {
        text.push('\n');
        text.push_str(&engine);
    }
    if let Some(expectations) = expectation_section(results) {
        text.push('\n');
        text.push_str(&expectations);
    }
    text
}

/// The run's search engine beside the exact in-process index; `None` without an engine.
fn engine_section(results: &Results, metrics: &[String]) -> Option<String> {
    let engine = results.engine.as_ref()?;
    let (metric, recall) = super::table::engine_headline(results, metrics)?;
    let mut text = format!(
        "Candidates served by engine `{}` ({}, {}), beside the exact in-process index:\n\n\
         | configuration | {recall} | {metric} engine | {metric} exact | Δ |\n|---|---:|---:|---:|---:|\n",
        engine.name, engine.served_by, engine.index
    );
    for (configuration, served) in engine.configurations.iter().zip(&results.configurations) {
        let value = |value: Option<&serde_json::Value>| {
            value
                .and_then(serde_json::Value::as_f64)
                .map_or("-".to_owned(), number)
        };
        let recall_text = if configuration.vector_searches > 0 {
            value(configuration.ann_recall.get(&recall))
        } else {
            "-".to_owned()
        };
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} |",
            configuration.name,
            recall_text,
            value(served.macro_metrics.get(&metric)),
            value(configuration.exact_macro.get(&metric)),
            configuration
                .delta
                .get(&metric)
                .and_then(serde_json::Value::as_f64)
                .map_or("-".to_owned(), signed)
        );
    }
    Some(text)
}

/// Markdown rendering of the same two tables.
pub fn compare_summary(report: &CompareReport) -> String {
    let mut text = format!(
        "## hyde-eval compare: {}\n\n{}.\n\n| configuration |",
        report.dataset,
        legend(report)
    );
    for run in &report.runs {
        let _ = write!(text, " {} |", run.label);
    }
    text.push_str("\n|---|");
    text.push_str(&"---:|".repeat(report.runs.len()));
    for row in &report.rows {
        let _ = write!(text, "\n| {} |", row.configuration);
        for column in 0..report.runs.len() {
            let _ = write!(text, " {} |", cell_text(report, row, column));
        }
    }
    text.push_str("\n\n| run | embedder | texts embedded | embedding ms | retrieval ms |\n|---|---|---:|---:|---:|\n");
    for run in &report.runs {
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} |",
            run.label,
            run.embedder.clone().unwrap_or_else(|| "-".into()),
            run.accounting
                .embedded_texts
                .map_or_else(|| "-".into(), |count| count.to_string()),
            optional(run.accounting.embedding_ms),
            optional(run.accounting.retrieval_ms)
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_escape_table_syntax() {
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(cell("line\nbreak"), "line break");
    }
}
