//! Markdown output for pull-request comments and `$GITHUB_STEP_SUMMARY`: the gate's
//! verdict first, then metric deltas with significance marks, then the metric table, the
//! breakdown by query tag and failed expectations. Also the metric table export of
//! reports, and the Markdown of a comparison, a sweep, `eval`, `dataset stats` and
//! `cache stats`. Pure: returns strings.

use std::fmt::Write;

use super::{Document, Exporter};
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
            // Rendered by `comparison::render`, to which `report::render` sends it.
            Document::Compare(_) => None,
            Document::Sweep(results) => Some(Ok(sweep_summary(results))),
            Document::Eval {
                runs, gate: None, ..
            } => Some(Ok(eval_summary(runs))),
            // The verdict first, as in a run's summary.
            Document::Eval {
                runs,
                gate: Some(gate),
                ..
            } => Some(Ok(format!(
                "{}\n{}",
                gate_section(gate),
                eval_summary(runs)
            ))),
            Document::DatasetStats(stats) => Some(Ok(format!(
                "## Dataset `{}`\n\n{}",
                cell(&stats.name),
                table(
                    &["field", "value"],
                    super::dataset_stats_fields(stats)
                        .into_iter()
                        .map(|(field, value)| vec![field, value])
                )
            ))),
            Document::CacheStats { root, namespaces } => Some(Ok(if namespaces.is_empty() {
                format!("The cache in `{}` is empty.\n", root.display())
            } else {
                format!(
                    "## Cache `{}`\n\n{}",
                    root.display(),
                    table(
                        &super::CACHE_STATS_HEADER,
                        super::cache_stats_rows(namespaces)
                    )
                )
            })),
        }
    }
}

use crate::compare::paired::{significance_mark, SignificanceTest};
use crate::gate::{GateCheck, GateReport, NEAR_MISS_SHARE};
use crate::metric_names::display;
use crate::results::by_tag::tag_metric;
use crate::results::Results;
use crate::sweep::SweepResults;
use crate::trec_eval::EvaluatedRun;

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
pub(super) fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// A Markdown table: a header and rows of cells, escaped.
pub fn table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut text = format!(
        "| {} |\n|{}\n",
        header
            .iter()
            .map(|name| cell(name))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(header.len())
    );
    for row in rows {
        let cells: Vec<String> = row.iter().map(|text| cell(text)).collect();
        let _ = writeln!(text, "| {} |", cells.join(" | "));
    }
    text
}

/// A sweep: what was swept, the summary table (as the terminal's), how to read it and
/// the flags and TOML of the best points.
fn sweep_summary(results: &SweepResults) -> String {
    let mut rows = Vec::new();
    for configuration in &results.configurations {
        for summary in &configuration.summaries {
            rows.push(vec![
                configuration.name.clone(),
                display(&summary.metric),
                number(summary.default),
                number(summary.best),
                summary
                    .best_points
                    .first()
                    .map(|at| super::sweep::point_label(configuration, at))
                    .unwrap_or_default(),
                summary.best_points.len().to_string(),
                number(summary.cross_validated),
            ]);
        }
    }
    let mut text = format!(
        "## Sweep: {}\n\n{}\n{}\n",
        cell(&super::table::sweep_headline(results)),
        table(
            &[
                "configuration",
                "metric",
                "own",
                "best",
                "best at",
                "tied",
                "cross-validated"
            ],
            rows
        ),
        super::table::SWEEP_NOTE
    );
    let best = super::sweep::best_point_settings(results);
    if !best.is_empty() {
        let _ = write!(
            text,
            "\nTo run a best point, add its flags to the sweep's options in `hyde-eval run`, or put its table in the config file:\n\n```\n{}\n```\n",
            best.trim_end()
        );
    }
    text
}

/// `eval`'s averages: a row per measure, a column per run (its file).
fn eval_summary(runs: &[EvaluatedRun]) -> String {
    let Some(first) = runs.first() else {
        return String::new();
    };
    let mut header = vec!["measure"];
    header.extend(runs.iter().map(|run| run.path.as_str()));
    let mut rows = vec![{
        let mut row = vec!["num_q".to_owned()];
        row.extend(
            runs.iter()
                .map(|run| run.evaluation.per_query.len().to_string()),
        );
        row
    }];
    for (index, column) in first.evaluation.columns.iter().enumerate() {
        let mut row = vec![column.name()];
        row.extend(runs.iter().map(|run| {
            run.evaluation
                .summary
                .get(index)
                .map_or_else(String::new, |value| {
                    super::trec_text::format_value(column, *value)
                })
        }));
        rows.push(row);
    }
    table(&header, rows)
}

/// The value of `metric` for the configuration at `index`, 0 when missing.
pub fn metric_value(results: &Results, index: usize, metric: &str) -> f64 {
    results.configurations[index]
        .macro_metrics
        .get(metric)
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0)
}

/// The metric table as Markdown (the given metric columns), the leaders of each column
/// in bold (the best value and every value tied with it, see
/// [`super::leaders`]), then the legend when any is bold.
pub fn metric_table(results: &Results, metrics: &[String]) -> String {
    let mut text = String::from("| configuration |");
    for metric in metrics {
        let _ = write!(text, " {} |", cell(&display(metric)));
    }
    text.push_str("\n|---|");
    text.push_str(&"---:|".repeat(metrics.len()));
    let leading: Vec<Vec<bool>> = metrics
        .iter()
        .map(|metric| super::leaders::of_configurations(&results.configurations, metric))
        .collect();
    for (index, configuration) in results.configurations.iter().enumerate() {
        let _ = write!(text, "\n| {} |", cell(&configuration.name));
        for (metric, leads) in metrics.iter().zip(&leading) {
            let shown = number(metric_value(results, index, metric));
            if leads[index] {
                let _ = write!(text, " **{shown}** |");
            } else {
                let _ = write!(text, " {shown} |");
            }
        }
    }
    text.push('\n');
    if leading.iter().flatten().any(|&leads| leads) {
        let _ = writeln!(
            text,
            "\n{}.",
            super::leaders::legend(
                "**Bold**",
                &format!(
                    "the {} evaluated queries",
                    results.evaluation.evaluated_queries
                ),
                results.configurations.len()
            )
        );
    }
    if metrics
        .iter()
        .any(|metric| !super::leaders::ranks_configurations(metric))
    {
        text.push_str(JUDGED_NOTE);
    }
    text
}

/// Why the `judged@k` columns carry no bold.
const JUDGED_NOTE: &str =
    "`judged@k` says how much of the top k has a judgment (coverage), not how good a ranking is, so it is never bold.\n";

/// Every metric of the run as a Markdown document (the report's `metrics.md` export).
pub fn metric_document(results: &Results) -> String {
    format!(
        "**{}**: {} queries evaluated, relevance >= {}, {:?} semantics\n\n{}",
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
    format!(
        "{test}, {} over {} checks; `*` p < {}, `**` p < {}",
        significance.correction.adjective(),
        gate.checks.len(),
        significance.alpha,
        significance.alpha / 5.0
    )
}

/// A Markdown table of baseline checks: values, delta with its significance mark,
/// corrected p, wins/ties/losses, the allowed drop and a mark on failed ones.
fn check_table(gate: &GateReport, checks: &[&GateCheck]) -> String {
    let mut text = String::from("| configuration | metric | baseline | current | Δ | p (adj.) | W/T/L | max drop | |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    for check in checks {
        let comparison = &check.comparison;
        let mark = significance_mark(comparison, gate.options.significance.alpha);
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {}{} | {:.4} | {}/{}/{} | {} | {} |",
            comparison.configuration,
            display(&comparison.metric),
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
    text
}

/// The gate section: verdict line, the failed baseline checks, the improvements and
/// near misses (checks that passed with little margin), every baseline check in a
/// collapsed table, a table of every absolute target check, then notes.
pub fn gate_section(gate: &GateReport) -> String {
    let failed: Vec<_> = gate.failed_checks().collect();
    let baseline = gate.baseline.as_deref().unwrap_or_default();
    let mut text = if gate.passed {
        format!(
            "## ✅ hyde-eval gate: PASS\n\n{}",
            gate.passed_parts(&format!("`{baseline}`")).join("; ")
        )
    } else {
        let reasons = gate.failure_reasons();
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
    if !failed.is_empty() {
        text.push_str("\nFailed checks:\n\n");
        text.push_str(&check_table(gate, &failed));
    }
    let improvements: Vec<&GateCheck> = gate.improvements().collect();
    if !improvements.is_empty() {
        let _ = write!(text, "\n**Improvements** ({}):\n\n", improvements.len());
        for check in &improvements {
            let comparison = &check.comparison;
            let _ = writeln!(
                text,
                "- {} {}: {} → {} ({}{}, p adj. {:.4})",
                comparison.configuration,
                display(&comparison.metric),
                number(comparison.reference),
                number(comparison.candidate),
                signed(comparison.delta),
                significance_mark(comparison, gate.options.significance.alpha),
                comparison.adjusted_p_value,
            );
        }
    }
    let near_misses: Vec<&GateCheck> = gate.near_misses().collect();
    if !near_misses.is_empty() {
        let _ = write!(
            text,
            "\n**Near misses** ({}): passed, but dropped by at least {:.0}% of the allowed drop:\n\n",
            near_misses.len(),
            NEAR_MISS_SHARE * 100.0
        );
        for check in &near_misses {
            let comparison = &check.comparison;
            let _ = writeln!(
                text,
                "- {} {}: {} → {} ({}{}, p adj. {:.4}); max drop {}, {}",
                comparison.configuration,
                display(&comparison.metric),
                number(comparison.reference),
                number(comparison.candidate),
                signed(comparison.delta),
                significance_mark(comparison, gate.options.significance.alpha),
                comparison.adjusted_p_value,
                number(check.max_drop),
                super::margin_text(check),
            );
        }
    }
    if !gate.checks.is_empty() {
        let _ = write!(
            text,
            "\n<details><summary>All {} checks against the baseline</summary>\n\n{}\n</details>\n",
            gate.checks.len(),
            check_table(gate, &gate.checks.iter().collect::<Vec<_>>())
        );
    }
    if !gate.target_checks.is_empty() {
        text.push_str("\nAbsolute targets:\n\n| configuration | metric | value | min | |\n|---|---|---:|---:|---|\n");
        for check in &gate.target_checks {
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} | {} |",
                check.configuration,
                display(&check.metric),
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
    if let Some(warning) = super::JudgedWarning::of(results) {
        let _ = write!(
            text,
            "\n> **Warning:** {} {}.\n",
            cell(&warning.headline()),
            cell(&warning.entries().join("; "))
        );
    }
    if let Some(tags) = tag_section(results, metrics) {
        text.push('\n');
        text.push_str(&tags);
    }
    if let Some(engine) = engine_section(results, metrics) {
        text.push('\n');
        text.push_str(&engine);
    }
    if let Some(hyde) = hyde_section(results) {
        text.push('\n');
        text.push_str(&hyde);
    }
    if let Some(expectations) = expectation_section(results) {
        text.push('\n');
        text.push_str(&expectations);
    }
    text
}

/// The headline metric (nDCG@10, as the terminal's breakdown) of each configuration on
/// the queries of each tag, the leaders of each column in bold, then the legend; `None`
/// when no query has a tag.
fn tag_section(results: &Results, metrics: &[String]) -> Option<String> {
    let metric = super::table::headline_metric(metrics)?;
    let tags = &results.configurations.first()?.by_tag;
    if tags.is_empty() {
        return None;
    }
    let mut text = format!("### {} by query tag\n\n| configuration |", display(metric));
    for tag in tags {
        let _ = write!(text, " {} ({}) |", cell(&tag.tag), tag.queries);
    }
    text.push_str("\n|---|");
    text.push_str(&"---:|".repeat(tags.len()));
    let leading: Vec<Vec<bool>> = tags
        .iter()
        .map(|tag| super::leaders::of_tag(results, &tag.tag, metric))
        .collect();
    for (index, configuration) in results.configurations.iter().enumerate() {
        let _ = write!(text, "\n| {} |", cell(&configuration.name));
        for (tag, leads) in tags.iter().zip(&leading) {
            let shown = number(tag_metric(configuration, &tag.tag, metric));
            if leads[index] {
                let _ = write!(text, " **{shown}** |");
            } else {
                let _ = write!(text, " {shown} |");
            }
        }
    }
    text.push('\n');
    if leading.iter().flatten().any(|&leads| leads) {
        let _ = writeln!(
            text,
            "\n{}.",
            super::leaders::legend(
                "**Bold**",
                "each tag's queries",
                results.configurations.len()
            )
        );
    }
    Some(text)
}

/// The HyDE figures of each HyDE configuration and where each adaptive floor settled;
/// `None` when the run has neither.
fn hyde_section(results: &Results) -> Option<String> {
    let mut text = String::new();
    let hyde: Vec<_> = results
        .configurations
        .iter()
        .filter_map(|c| c.hyde.as_ref().map(|hyde| (&c.name, hyde)))
        .collect();
    if !hyde.is_empty() {
        text.push_str(
            "| HyDE configuration | usage | cache hits | generation ms (mean) | nDCG@10 vs counterpart |\n|---|---:|---:|---:|---|\n",
        );
        for (name, hyde) in hyde {
            let _ = writeln!(
                text,
                "| {name} | {:.1}% ({}/{}) | {} | {} | {} |",
                hyde.usage_rate * 100.0,
                hyde.hypotheses_used,
                hyde.eligible_queries,
                super::cache_hit_text(hyde),
                super::generation_time_text(hyde),
                cell(&crate::results::hyde_figures::Improvement::text_of(
                    hyde.improvement.as_ref()
                ))
            );
        }
        let _ = writeln!(text, "\n{}.", super::HYDE_IMPROVEMENT_LEGEND);
    }
    let floors: Vec<_> = results
        .configurations
        .iter()
        .filter_map(|c| c.adaptive_floor.as_ref().map(|floor| (&c.name, floor)))
        .collect();
    if !floors.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(
            "| adaptive floor | start/step/min | mean settled | stepped down | settled floors (queries) |\n|---|---:|---:|---:|---|\n",
        );
        for (name, floor) in floors {
            let _ = writeln!(
                text,
                "| {name} | {}/{}/{} | {} | {} | {} |",
                floor.start,
                floor.step,
                floor.minimum,
                floor
                    .mean
                    .map_or("-".to_owned(), |mean| format!("{mean:.3}")),
                floor.stepped_down,
                floor.distribution()
            );
        }
    }
    (!text.is_empty()).then_some(text)
}

/// The run's search engine beside the exact in-process index, with the terminal table's
/// columns; `None` without an engine.
fn engine_section(results: &Results, metrics: &[String]) -> Option<String> {
    let engine = results.engine.as_ref()?;
    let (metric, recall) = super::table::engine_headline(results, metrics)?;
    let columns = super::table::engine_columns(results, metrics, &metric, &recall)?;
    let mut text = format!(
        "Candidates served by engine `{}` ({}, {}), beside the exact in-process index:\n\n|",
        engine.name, engine.served_by, engine.index,
    );
    for header in &columns.header {
        let _ = write!(text, " {} |", cell(header));
    }
    text.push_str("\n|---|---|");
    text.push_str(&"---:|".repeat(columns.header.len().saturating_sub(2)));
    text.push('\n');
    for row in &columns.rows {
        text.push('|');
        for value in row {
            let _ = write!(text, " {} |", cell(value));
        }
        text.push('\n');
    }
    if !columns.notes.is_empty() {
        text.push('\n');
        for note in &columns.notes {
            let _ = writeln!(text, "- Truncated: {}", cell(note));
        }
    }
    Some(text)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn cells_escape_table_syntax() {
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(cell("line\nbreak"), "line break");
    }

    use crate::compare::paired::{PairedComparison, SignificanceSettings};
    use crate::gate::GateOptions;
    use crate::stats::Interval;

    /// A check of `configuration`'s `metric`: baseline value, current value, corrected
    /// p and allowed drop, worked out by hand.
    pub(crate) fn check(
        configuration: &str,
        metric: &str,
        (reference, candidate): (f64, f64),
        adjusted_p_value: f64,
        max_drop: f64,
    ) -> GateCheck {
        let delta = candidate - reference;
        GateCheck {
            comparison: PairedComparison {
                configuration: configuration.into(),
                metric: metric.into(),
                reference,
                candidate,
                delta,
                paired_queries: 40,
                p_value: adjusted_p_value,
                adjusted_p_value,
                significant: adjusted_p_value < 0.05,
                difference_interval: Interval {
                    low: delta - 0.01,
                    high: delta + 0.01,
                    confidence: 0.95,
                },
                wins: 3,
                ties: 35,
                losses: 2,
            },
            max_drop,
            failed: delta < -max_drop,
        }
    }

    pub(crate) fn passed_gate(checks: Vec<GateCheck>) -> GateReport {
        GateReport {
            schema_version: crate::results::SCHEMA_VERSION,
            passed: checks.iter().all(|check| !check.failed),
            baseline: Some("baseline.json".into()),
            options: GateOptions {
                thresholds: Vec::new(),
                targets: Vec::new(),
                require_significant: false,
                require_expectations: false,
                significance: SignificanceSettings::default(),
            },
            checks,
            target_checks: Vec::new(),
            missing_configurations: Vec::new(),
            failed_expectations: 0,
        }
    }

    #[test]
    fn a_passing_gate_lists_improvements_and_near_misses_and_folds_the_wide_table() {
        let gate = passed_gate(vec![
            // +0.025, p 0.003 < 0.05 / 5: an improvement marked **.
            check("hyde-3b", "ndcg@10", (0.6, 0.625), 0.003, 0.01),
            // -0.006 of an allowed 0.01: 60% of the allowance, a near miss with 0.004 left.
            check("hyde-3b", "recall@10", (0.7, 0.694), 0.4, 0.01),
            // -0.001 of an allowed 0.01: 10%, neither.
            check("blend", "ndcg@10", (0.5, 0.499), 0.9, 0.01),
            // Unchanged.
            check("blend", "recall@10", (0.5, 0.5), 1.0, 0.01),
        ]);
        assert!(gate.passed);
        let text = gate_section(&gate);
        assert!(
            text.starts_with("## ✅ hyde-eval gate: PASS\n\n4 checks against `baseline.json`; none dropped beyond its threshold."),
            "{text}"
        );
        assert!(
            text.contains("**Improvements** (1):\n\n- hyde-3b nDCG@10: 0.6000 → 0.6250 (+0.0250**, p adj. 0.0030)\n"),
            "{text}"
        );
        assert!(
            text.contains("**Near misses** (1): passed, but dropped by at least 50% of the allowed drop:\n\n\
                 - hyde-3b R@10: 0.7000 → 0.6940 (-0.0060, p adj. 0.4000); max drop 0.0100, margin left 0.0040\n"),
            "{text}"
        );
        assert!(!text.contains("- blend"), "{text}");
        assert!(!text.contains("Failed checks"), "{text}");
        let details = text
            .find("<details><summary>All 4 checks against the baseline</summary>")
            .expect(&text);
        let closing = text.find("</details>").expect(&text);
        for row in [
            "| hyde-3b | nDCG@10 | 0.6000 | 0.6250 | +0.0250** | 0.0030 | 3/35/2 | 0.0100 |  |",
            "| hyde-3b | R@10 | 0.7000 | 0.6940 | -0.0060 | 0.4000 | 3/35/2 | 0.0100 |  |",
            "| blend | nDCG@10 | 0.5000 | 0.4990 | -0.0010 | 0.9000 | 3/35/2 | 0.0100 |  |",
            "| blend | R@10 | 0.5000 | 0.5000 | ±0.0000 | 1.0000 | 3/35/2 | 0.0100 |  |",
        ] {
            let at = text.find(row).expect(row);
            assert!(
                details < at && at < closing,
                "{row} inside <details>: {text}"
            );
        }
    }

    #[test]
    fn a_failing_gate_shows_its_failed_checks_before_the_folded_table() {
        let gate = passed_gate(vec![
            check("hyde-3b", "ndcg@10", (0.6, 0.55), 0.001, 0.01),
            check("blend", "ndcg@10", (0.5, 0.51), 0.5, 0.01),
        ]);
        assert!(!gate.passed);
        let text = gate_section(&gate);
        let failed = text.find("Failed checks:").expect(&text);
        let row =
            "| hyde-3b | nDCG@10 | 0.6000 | 0.5500 | -0.0500** | 0.0010 | 3/35/2 | 0.0100 | ❌ |";
        let details = text.find("<details>").expect(&text);
        assert!(failed < text.find(row).unwrap() && text.find(row).unwrap() < details);
        assert!(text.contains("- blend nDCG@10: 0.5000 → 0.5100 (+0.0100, p adj. 0.5000)"));
    }
}
