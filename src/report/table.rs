//! Terminal tables: a run's configurations x metrics with the leaders of each column
//! (the best value and every value tied with it) marked, then tag, engine, HyDE, backend, scenario and gate sections; a comparison's
//! runs side by side; a sweep's summary. Returns strings, each table fitted to the
//! output's width (`fit`); the commands print them.

use comfy_table::{Attribute, Cell, CellAlignment, Color, Table};

use super::fit::{fit, new_table, output_width, wrap_prose};

use super::leaders;
use super::palette::{self, Rgb};
use super::sweep::point_label;
use super::{Document, Exporter};
use crate::compare::paired::significance_mark;
use crate::error::Error;
use crate::gate::{GateCheck, GateReport, NEAR_MISS_SHARE};
use crate::metric_names::display;
use crate::results::by_tag::tag_metric;
use crate::results::{ConfigurationResult, Results};
use crate::sweep::{ConfigurationSweep, SweepDescription, SweepResults};

/// The terminal exporter (comfy-table).
pub struct Terminal;

impl Exporter for Terminal {
    fn render(&self, document: &Document<'_>) -> Option<Result<String, Error>> {
        let text = match document {
            Document::Run {
                results,
                columns,
                gate,
            } => run_sections(results, columns, *gate).join("\n"),
            // Rendered by `comparison::render`, to which `report::render` sends it.
            Document::Compare(_) => return None,
            Document::Sweep(results) => format!(
                "{}\n{}\n{SWEEP_NOTE}",
                sweep_headline(results),
                sweep_table(results)
            ),
            Document::Eval { .. } => return None,
            Document::DatasetStats(stats) => stats.render().trim_end().to_owned(),
            Document::CacheStats { root, namespaces } => cache_stats_table(root, namespaces),
        };
        Some(Ok(wrap_prose(&text, output_width())))
    }
}

/// The terminal rendering of a run, section by section: the summary line, the metric
/// table, then (when they have anything to say) the breakdown by query tag, engine, HyDE,
/// backend, abstention, scenario, expectation and gate sections. The judged@k warning
/// is not among them: it goes to stderr ([`super::JudgedWarning`]).
pub fn run_sections(
    results: &Results,
    columns: &[String],
    gate: Option<&GateReport>,
) -> Vec<String> {
    let mut sections = vec![summary_line(results), metric_table(results, columns)];
    sections.extend(
        [
            tag_table(results, columns),
            engine_table(results, columns),
            hyde_table(results),
            adaptive_floor_table(results),
            backend_table(results),
            abstention_line(results),
            scenario_table(results),
            expectation_failures(results),
            gate.map(gate_summary),
        ]
        .into_iter()
        .flatten(),
    );
    sections
}

/// A palette colour for comfy-table, which styles cells only on a terminal.
fn terminal_color(rgb: Rgb) -> Color {
    Color::Rgb {
        r: rgb.0,
        g: rgb.1,
        b: rgb.2,
    }
}

/// The cell of a leading value (the column's best or tied with it): marked
/// [`leaders::MARK`], bold and in [`palette::BEST`].
pub(super) fn best_cell(shown: &str) -> Cell {
    Cell::new(format!("{shown}{}", leaders::MARK))
        .add_attribute(Attribute::Bold)
        .fg(terminal_color(palette::BEST))
}

/// A signed change, in [`palette::GAIN`] when positive and [`palette::LOSS`] when
/// negative.
pub(super) fn delta_cell(text: String, delta: f64) -> Cell {
    let cell = Cell::new(text);
    if delta >= 5e-5 {
        cell.fg(terminal_color(palette::GAIN))
    } else if delta <= -5e-5 {
        cell.fg(terminal_color(palette::LOSS))
    } else {
        cell
    }
}

/// The metric table, then its legend: the leaders of each column (the best value and
/// every value not significantly below it, see [`leaders`]) are bold, marked and (on a
/// terminal) blue.
pub fn metric_table(results: &Results, metrics: &[String]) -> String {
    let mut table = new_table();
    let mut headers = vec![Cell::new("configuration")];
    headers.extend(
        metrics
            .iter()
            .map(|metric| Cell::new(display(metric)).set_alignment(CellAlignment::Right)),
    );
    table.set_header(headers);
    let value = |configuration: &ConfigurationResult, metric: &str| {
        configuration
            .macro_metrics
            .get(metric)
            .and_then(|value| value.as_f64())
            .unwrap_or(0.0)
    };
    let leading: Vec<Vec<bool>> = metrics
        .iter()
        .map(|metric| leaders::of_configurations(&results.configurations, metric))
        .collect();
    add_marked_rows(
        &mut table,
        results,
        metrics,
        |c, metric| value(c, metric),
        &leading,
    );
    let mut text = fit(&table);
    if marks_any(&leading) {
        text.push('\n');
        text.push_str(&leaders::legend(
            &leaders::MARK.to_string(),
            &format!(
                "the {} evaluated queries",
                results.evaluation.evaluated_queries
            ),
            results.configurations.len(),
        ));
    }
    text
}

/// Whether any column has a leader to mark.
fn marks_any(leading: &[Vec<bool>]) -> bool {
    leading.iter().flatten().any(|&leads| leads)
}

/// One row per configuration with `value(configuration, column)` for each of `columns`;
/// the values `leading[column][configuration]` marks are bold, marked and blue.
fn add_marked_rows<C>(
    table: &mut Table,
    results: &Results,
    columns: &[C],
    value: impl Fn(&ConfigurationResult, &C) -> f64,
    leading: &[Vec<bool>],
) {
    for (row, configuration) in results.configurations.iter().enumerate() {
        let mut cells = vec![Cell::new(&configuration.name)];
        for (column, leads) in columns.iter().zip(leading) {
            let shown = format!("{:.4}", value(configuration, column));
            let cell = if leads.get(row).copied().unwrap_or(false) {
                best_cell(&shown)
            } else {
                Cell::new(format!("{shown} "))
            };
            cells.push(cell.set_alignment(CellAlignment::Right));
        }
        table.add_row(cells);
    }
}

/// The metric a one-metric section headlines: nDCG@10, else the deepest nDCG column,
/// else the first column.
pub fn headline_metric(columns: &[String]) -> Option<&String> {
    columns
        .iter()
        .find(|column| *column == "ndcg@10")
        .or_else(|| {
            columns
                .iter()
                .rev()
                .find(|column| column.starts_with("ndcg@"))
        })
        .or(columns.first())
}

/// The headline metric of each configuration (rows) on the queries of each tag
/// (columns, headed `tag (evaluated queries)`), the leaders of each column marked, then
/// the legend; `None` when no query has a tag.
pub fn tag_table(results: &Results, columns: &[String]) -> Option<String> {
    let metric = headline_metric(columns)?;
    let tags = &results.configurations.first()?.by_tag;
    if tags.is_empty() {
        return None;
    }
    let mut table = new_table();
    let mut headers = vec![Cell::new(format!("{} by query tag", display(metric)))];
    headers.extend(tags.iter().map(|tag| {
        Cell::new(format!("{} ({})", tag.tag, tag.queries)).set_alignment(CellAlignment::Right)
    }));
    table.set_header(headers);
    let leading: Vec<Vec<bool>> = tags
        .iter()
        .map(|tag| leaders::of_tag(results, &tag.tag, metric))
        .collect();
    add_marked_rows(
        &mut table,
        results,
        tags,
        |configuration, tag| tag_metric(configuration, &tag.tag, metric),
        &leading,
    );
    let mut text = fit(&table);
    if marks_any(&leading) {
        text.push('\n');
        text.push_str(&leaders::legend(
            &leaders::MARK.to_string(),
            "each tag's queries",
            results.configurations.len(),
        ));
    }
    Some(text)
}

/// The metric an engine section headlines ([`headline_metric`]) and the ANN recall
/// cut-off beside it (the metric's own, else the deepest).
pub fn engine_headline(results: &Results, columns: &[String]) -> Option<(String, String)> {
    let engine = results.engine.as_ref()?;
    let metric = headline_metric(columns)?.clone();
    let recalls = &engine.configurations.first()?.ann_recall;
    let recall = metric
        .split_once('@')
        .map(|(_, k)| format!("ann_recall@{k}"))
        .filter(|name| recalls.contains_key(name))
        .or_else(|| recalls.keys().next_back().cloned())?;
    Some((metric, recall))
}

/// The engine section's columns, shared by the terminal table and the Markdown summary
/// (the HTML report shows the same, with every ANN recall cut-off).
pub struct EngineColumns {
    pub header: Vec<String>,
    /// One row per configuration, each cell's text (numbers right-aligned by the caller
    /// from the third column on).
    pub rows: Vec<Vec<String>>,
    /// One line per configuration whose searches the engine truncated (see
    /// [`crate::results::engine::EngineConfiguration::truncation_note`]).
    pub notes: Vec<String>,
}

/// The engine section's header, rows and truncation notes (naming the moved metrics
/// among `shown`) for `metric` and the ANN recall column `recall`; `None` for runs
/// without an engine.
pub fn engine_columns(
    results: &Results,
    shown: &[String],
    metric: &str,
    recall: &str,
) -> Option<EngineColumns> {
    let engine = results.engine.as_ref()?;
    let evaluated = engine.evaluated_depth();
    let evaluated = if evaluated > 0 {
        format!(" @{evaluated}")
    } else {
        " (top k)".to_owned()
    };
    let headline = display(metric);
    let header = vec![
        "configuration".to_owned(),
        "from the engine".to_owned(),
        recall.replace("ann_recall", "ANN R"),
        format!("{headline} engine"),
        format!("{headline} exact"),
        "Δ".to_owned(),
        format!("differing beyond ties{evaluated}"),
        "differing beyond ties @search depth".to_owned(),
        "truncated".to_owned(),
    ];
    let number = |value: Option<&serde_json::Value>| {
        value
            .and_then(serde_json::Value::as_f64)
            .map_or("-".to_owned(), |value| format!("{value:.4}"))
    };
    let rows = engine
        .configurations
        .iter()
        .zip(&results.configurations)
        .map(|(configuration, served)| {
            let from_engine: Vec<&str> = configuration
                .signals
                .iter()
                .filter(|(_, source)| source.as_str() == Some("engine"))
                .map(|(signal, _)| signal.as_str())
                .collect();
            let searched = configuration.vector_searches > 0;
            let of_searches = |count: usize| {
                if searched {
                    format!("{count} of {}", configuration.vector_searches)
                } else {
                    "-".to_owned()
                }
            };
            vec![
                configuration.name.clone(),
                if from_engine.is_empty() {
                    "nothing (in-process)".to_owned()
                } else {
                    from_engine.join(", ")
                },
                if searched {
                    number(configuration.ann_recall.get(recall))
                } else {
                    "-".to_owned()
                },
                number(served.macro_metrics.get(metric)),
                number(configuration.exact_macro.get(metric)),
                configuration
                    .delta
                    .get(metric)
                    .and_then(serde_json::Value::as_f64)
                    .map_or("-".to_owned(), |delta| {
                        if delta.abs() < crate::results::engine::MOVE_SHOWN {
                            "±0.0000".to_owned()
                        } else {
                            format!("{delta:+.4}")
                        }
                    }),
                of_searches(configuration.differing_searches_at_evaluated_depth),
                of_searches(configuration.differing_searches),
                of_searches(configuration.truncated_searches),
            ]
        })
        .collect();
    let notes = engine
        .configurations
        .iter()
        .filter_map(|configuration| configuration.truncation_note(shown))
        .collect();
    Some(EngineColumns {
        header,
        rows,
        notes,
    })
}

/// What the run's search engine served and what its index cost against the exact
/// in-process index; `None` for runs without an engine.
pub fn engine_table(results: &Results, columns: &[String]) -> Option<String> {
    let engine = results.engine.as_ref()?;
    let (metric, recall) = engine_headline(results, columns)?;
    let engine_columns = engine_columns(results, columns, &metric, &recall)?;
    let mut table = new_table();
    table.set_header(engine_columns.header);
    for row in engine_columns.rows {
        table.add_row(row.into_iter().enumerate().map(|(column, text)| {
            let cell = Cell::new(text);
            if column >= 2 {
                cell.set_alignment(CellAlignment::Right)
            } else {
                cell
            }
        }));
    }
    let mut text = format!(
        "engine '{}' ({}; {}) beside the exact in-process index on the same vectors:\n{}",
        engine.name,
        engine.served_by,
        engine.index,
        fit(&table)
    );
    for note in engine_columns.notes {
        text.push_str("\ntruncated: ");
        text.push_str(&note);
    }
    Some(text)
}

/// HyDE accounting for configurations that use hypotheses, then the legend of its
/// significance marks; `None` when there are none.
pub fn hyde_table(results: &Results) -> Option<String> {
    let rows: Vec<_> = results
        .configurations
        .iter()
        .filter_map(|c| c.hyde.as_ref().map(|hyde| (&c.name, hyde)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut table = new_table();
    table.set_header(vec![
        "HyDE configuration",
        "used",
        "usage",
        "fallback (no hypothesis)",
        "skipped (short)",
        "skipped (code)",
        "cache hits",
        "gen ms (mean)",
        "nDCG@10 vs counterpart",
    ]);
    for (name, hyde) in rows {
        table.add_row(vec![
            Cell::new(name),
            Cell::new(format!(
                "{}/{}",
                hyde.hypotheses_used, hyde.eligible_queries
            ))
            .set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.1}%", hyde.usage_rate * 100.0))
                .set_alignment(CellAlignment::Right),
            Cell::new(hyde.fallback_no_hypothesis).set_alignment(CellAlignment::Right),
            Cell::new(hyde.skipped_short_query).set_alignment(CellAlignment::Right),
            Cell::new(hyde.skipped_code_mention).set_alignment(CellAlignment::Right),
            Cell::new(super::cache_hit_text(hyde)).set_alignment(CellAlignment::Right),
            Cell::new(super::generation_time_text(hyde)).set_alignment(CellAlignment::Right),
            Cell::new(crate::results::hyde_figures::Improvement::text_of(
                hyde.improvement.as_ref(),
            )),
        ]);
    }
    Some(format!(
        "{}\n{}",
        fit(&table),
        super::HYDE_IMPROVEMENT_LEGEND
    ))
}

/// Where each adaptive floor settled over the evaluated queries; `None` when no
/// configuration has one.
pub fn adaptive_floor_table(results: &Results) -> Option<String> {
    let rows: Vec<_> = results
        .configurations
        .iter()
        .filter_map(|c| c.adaptive_floor.as_ref().map(|floor| (&c.name, floor)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut table = new_table();
    table.set_header(vec![
        "adaptive floor",
        "start/step/min",
        "mean settled",
        "stepped down",
        "settled floors (queries)",
    ]);
    for (name, floor) in rows {
        table.add_row(vec![
            Cell::new(name),
            Cell::new(format!("{}/{}/{}", floor.start, floor.step, floor.minimum))
                .set_alignment(CellAlignment::Right),
            Cell::new(
                floor
                    .mean
                    .map_or("-".to_owned(), |mean| format!("{mean:.3}")),
            )
            .set_alignment(CellAlignment::Right),
            Cell::new(floor.stepped_down).set_alignment(CellAlignment::Right),
            Cell::new(floor.distribution()),
        ]);
    }
    Some(fit(&table))
}

/// What real backends spent, per configuration and in total; `None` when nothing was
/// spent (deterministic providers, recorded hypotheses).
pub fn backend_table(results: &Results) -> Option<String> {
    let run = results.backend.as_ref()?;
    let milliseconds = |value: Option<f64>| value.map_or("-".to_owned(), |ms| format!("{ms:.0}"));
    let mut table = new_table();
    table.set_header(vec![
        "backend use",
        "LLM calls",
        "hyps new/cached",
        "tokens in/out",
        "gen p50/p95 ms",
        "gen failed",
        "emb texts new/cached",
        "emb tokens",
    ]);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    for configuration in &results.configurations {
        let Some(spent) = &configuration.backend else {
            continue;
        };
        table.add_row(vec![
            Cell::new(&configuration.name),
            right(spent.llm_requests.to_string()),
            right(format!(
                "{}/{}",
                spent.hypotheses_generated, spent.hypotheses_from_cache
            )),
            right(format!(
                "{}/{}",
                spent.prompt_tokens, spent.completion_tokens
            )),
            right(format!(
                "{}/{}",
                milliseconds(spent.generation_latency_ms_p50),
                milliseconds(spent.generation_latency_ms_p95)
            )),
            right((spent.generation_failures + spent.hypothesis_embedding_failures).to_string()),
            right(format!(
                "{}/{}",
                spent.texts_embedded, spent.texts_from_cache
            )),
            right(spent.embedding_tokens.to_string()),
        ]);
    }
    let generation = run.generation.clone().unwrap_or_default();
    let embedding = run.embedding.unwrap_or_default();
    table.add_row(vec![
        Cell::new("run total (shared work once)").add_attribute(Attribute::Bold),
        right(format!(
            "{} (+{} retries)",
            generation.requests, generation.retries
        )),
        right(format!(
            "{}/{}",
            generation.hypotheses_generated, generation.hypotheses_from_cache
        )),
        right(format!(
            "{}/{}",
            generation.prompt_tokens, generation.completion_tokens
        )),
        right(format!(
            "{}/{}",
            milliseconds(generation.latency_ms_p50),
            milliseconds(generation.latency_ms_p95)
        )),
        right(generation.failures.to_string()),
        right(format!(
            "{}/{} ({} requests, +{} retries)",
            embedding.texts_embedded,
            embedding.texts_from_cache,
            embedding.requests,
            embedding.retries
        )),
        right(embedding.tokens.to_string()),
    ]);
    Some(fit(&table))
}

/// One line saying what was evaluated and how.
pub fn summary_line(results: &Results) -> String {
    let evaluation = &results.evaluation;
    let embedder = results
        .embedder
        .as_ref()
        .map(|identity| {
            format!(
                "{} ({}, {} dims)",
                identity.kind, identity.model, identity.dimension
            )
        })
        .unwrap_or_else(|| "none".into());
    format!(
        "{}: {} facts, {} queries ({} evaluated, {} without relevant facts); embedder {}; relevance >= {}; {:?} semantics",
        results.dataset.name,
        results.dataset.facts,
        results.dataset.queries,
        evaluation.evaluated_queries,
        evaluation.queries_without_relevant.len(),
        embedder,
        evaluation.settings.relevance_level,
        evaluation.settings.semantics,
    )
}

/// Correct abstentions on queries without relevant facts; `None` when every query has one.
pub fn abstention_line(results: &Results) -> Option<String> {
    let unanswerable = results.evaluation.queries_without_relevant.len();
    if unanswerable == 0 {
        return None;
    }
    let counts: Vec<String> = results
        .configurations
        .iter()
        .map(|c| {
            format!(
                "{} {}/{unanswerable}",
                c.name, c.counts.abstained_without_relevant
            )
        })
        .collect();
    Some(format!(
        "{unanswerable} queries have no relevant fact (not averaged); correct abstentions (no result): {}",
        counts.join(", ")
    ))
}

/// Expectations passed per scenario and configuration; `None` without expectations.
pub fn scenario_table(results: &Results) -> Option<String> {
    let summaries: Vec<_> = results
        .configurations
        .iter()
        .filter_map(|c| c.expectations.as_ref().map(|s| (&c.name, s)))
        .collect();
    let (_, first) = summaries.first()?;
    let mut table = new_table();
    let mut header = vec![Cell::new("scenario (expectations passed)")];
    header.extend(
        summaries
            .iter()
            .map(|(name, _)| Cell::new(name).set_alignment(CellAlignment::Right)),
    );
    table.set_header(header);
    let mut rows: Vec<(String, Vec<String>)> = first
        .by_scenario
        .iter()
        .map(|count| (count.scenario.clone(), Vec::new()))
        .collect();
    rows.push(("all".into(), Vec::new()));
    for (_, summary) in &summaries {
        for (scenario, cells) in rows.iter_mut() {
            let (passed, checked) = if scenario == "all" {
                (summary.passed, summary.checked)
            } else {
                summary
                    .by_scenario
                    .iter()
                    .find(|count| &count.scenario == scenario)
                    .map_or((0, 0), |count| (count.passed, count.checked))
            };
            cells.push(format!("{passed}/{checked}"));
        }
    }
    for (scenario, cells) in rows {
        let mut row = vec![Cell::new(scenario)];
        row.extend(
            cells
                .into_iter()
                .map(|cell| Cell::new(cell).set_alignment(CellAlignment::Right)),
        );
        table.add_row(row);
    }
    Some(fit(&table))
}

/// Failed expectations grouped by query: one line per (query, expectation), naming
/// each configuration that failed it and what its ranking did.
pub fn expectation_failures(results: &Results) -> Option<String> {
    let mut lines: Vec<(String, String, Vec<String>)> = Vec::new();
    for configuration in &results.configurations {
        let Some(summary) = &configuration.expectations else {
            continue;
        };
        for failure in &summary.failures {
            let expectation = serde_json::to_string(&failure.expectation).unwrap_or_default();
            let key = (failure.query.0.clone(), expectation);
            let entry = format!("{}: {}", configuration.name, failure.detail);
            match lines
                .iter_mut()
                .find(|(query, text, _)| (query, text) == (&key.0, &key.1))
            {
                Some((_, _, entries)) => entries.push(entry),
                None => lines.push((key.0, key.1, vec![entry])),
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    let mut text = String::from("failed expectations:");
    for (query, expectation, entries) in lines {
        text.push_str(&format!("\n  {query} {expectation}"));
        for entry in entries {
            text.push_str(&format!("\n      {entry}"));
        }
    }
    Some(text)
}

/// The gate's verdict, then the baseline checks that failed (or, when none failed, those
/// that moved), with significance after correction, then every absolute target check.
pub fn gate_summary(gate: &GateReport) -> String {
    let failed = gate.failed_checks().count();
    let mut text = gate.verdict();
    if !gate.checks.is_empty() {
        text.push_str(&baseline_checks(gate, failed > 0));
    }
    if let Some(near_misses) = near_miss_lines(gate) {
        text.push_str(&near_misses);
    }
    if !gate.target_checks.is_empty() {
        let mut table = new_table();
        table.set_header(vec!["configuration", "metric", "value", "min", "failed"]);
        for check in &gate.target_checks {
            let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
            table.add_row(vec![
                Cell::new(&check.configuration),
                Cell::new(display(&check.metric)),
                right(format!("{:.4}", check.value)),
                right(format!("{:.4}", check.target)),
                Cell::new(if check.failed { "yes" } else { "" }),
            ]);
        }
        text.push_str("\nabsolute targets:\n");
        text.push_str(&fit(&table));
    }
    if !gate.missing_configurations.is_empty() {
        text.push_str(&format!(
            "\nconfigurations of the baseline not in this run (not checked): {}",
            gate.missing_configurations.join(", ")
        ));
    }
    text
}

/// The checks that passed close to their threshold, one line each (as the Markdown
/// summary's near misses); `None` without any.
fn near_miss_lines(gate: &GateReport) -> Option<String> {
    let near_misses: Vec<&GateCheck> = gate.near_misses().collect();
    if near_misses.is_empty() {
        return None;
    }
    let mut text = format!(
        "\nnear misses ({}): passed, but dropped by at least {:.0}% of the allowed drop:",
        near_misses.len(),
        NEAR_MISS_SHARE * 100.0
    );
    for check in near_misses {
        let comparison = &check.comparison;
        text.push_str(&format!(
            "\n  {} {}: {:.4} -> {:.4} ({:+.4}{}, p adj. {:.4}); max drop {:.4}, {}",
            comparison.configuration,
            display(&comparison.metric),
            comparison.reference,
            comparison.candidate,
            comparison.delta,
            significance_mark(comparison, gate.options.significance.alpha),
            comparison.adjusted_p_value,
            check.max_drop,
            super::margin_text(check),
        ));
    }
    Some(text)
}

/// The baseline checks that failed (or, when none failed, those that moved) and the
/// significance line.
fn baseline_checks(gate: &GateReport, any_failed: bool) -> String {
    let mut text = String::new();
    let shown: Vec<&GateCheck> = if any_failed {
        gate.failed_checks().collect()
    } else {
        gate.checks
            .iter()
            .filter(|check| check.comparison.delta.abs() >= 5e-5)
            .collect()
    };
    if !shown.is_empty() {
        let mut table = new_table();
        table.set_header(vec![
            "configuration",
            "metric",
            "baseline",
            "current",
            "delta",
            "p (adj.)",
            "W/T/L",
            "max drop",
            "failed",
        ]);
        for check in shown {
            let comparison = &check.comparison;
            let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
            table.add_row(vec![
                Cell::new(&comparison.configuration),
                Cell::new(display(&comparison.metric)),
                right(format!("{:.4}", comparison.reference)),
                right(format!("{:.4}", comparison.candidate)),
                delta_cell(
                    format!(
                        "{:+.4}{}",
                        comparison.delta,
                        significance_mark(comparison, gate.options.significance.alpha)
                    ),
                    comparison.delta,
                )
                .set_alignment(CellAlignment::Right),
                right(format!("{:.4}", comparison.adjusted_p_value)),
                right(format!(
                    "{}/{}/{}",
                    comparison.wins, comparison.ties, comparison.losses
                )),
                right(format!("{:.4}", check.max_drop)),
                Cell::new(if check.failed { "yes" } else { "" }).fg(terminal_color(palette::LOSS)),
            ]);
        }
        text.push('\n');
        text.push_str(&fit(&table));
    }
    let significance = &gate.options.significance;
    text.push_str(&format!(
        "\n{:?} test, {:?} correction over {} checks; * p < {}, ** p < {}{}",
        significance.test,
        significance.correction,
        gate.checks.len(),
        significance.alpha,
        significance.alpha / 5.0,
        if gate.options.require_significant {
            "; only significant drops fail"
        } else {
            ""
        }
    ));
    text
}

/// One line saying what was swept.
pub fn sweep_headline(results: &SweepResults) -> String {
    let what = match &results.sweep {
        SweepDescription::Weights { steps } => {
            let points = |c: &ConfigurationSweep| c.points.len();
            let counts: Vec<String> = results
                .configurations
                .iter()
                .map(|c| format!("{} {}", c.name, points(c)))
                .collect();
            format!(
                "blend weights in steps of 1/{steps} (points: {})",
                counts.join(", ")
            )
        }
        SweepDescription::Param { parameter, values } => {
            format!("{parameter} over {} values", values.len())
        }
    };
    let served = results.engine.as_ref().map_or(String::new(), |engine| {
        format!("; vector searches served by {engine}")
    });
    format!(
        "{}: sweep of {what}; {} evaluated queries; {}-fold cross-validation (seed {}){served}",
        results.dataset.name,
        results.evaluation.evaluated_queries,
        results.cross_validation.folds,
        results.cross_validation.seed
    )
}

/// The terminal summary: per configuration and metric, the value at the own
/// parameters, the best value and where, the number of tied best points and the
/// cross-validated estimate.
pub fn sweep_table(results: &SweepResults) -> String {
    let mut table = new_table();
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    table.set_header(vec![
        Cell::new("configuration"),
        Cell::new("metric"),
        right("own".into()),
        right("best".into()),
        Cell::new("best at"),
        right("tied".into()),
        right("cross-validated".into()),
    ]);
    for configuration in &results.configurations {
        for summary in &configuration.summaries {
            let best_at = summary
                .best_points
                .first()
                .map(|at| point_label(configuration, at))
                .unwrap_or_default();
            table.add_row(vec![
                Cell::new(&configuration.name),
                Cell::new(display(&summary.metric)),
                right(format!("{:.4}", summary.default)),
                right(format!("{:.4}", summary.best)),
                Cell::new(best_at),
                right(summary.best_points.len().to_string()),
                right(format!("{:.4}", summary.cross_validated)),
            ]);
        }
    }
    fit(&table)
}

/// `cache stats`: the cache's directory, then a row per namespace (or that it is empty).
fn cache_stats_table(
    root: &std::path::Path,
    namespaces: &[crate::cache::NamespaceStats],
) -> String {
    if namespaces.is_empty() {
        return format!("the cache in {} is empty", root.display());
    }
    let mut table = new_table();
    table.set_header(super::CACHE_STATS_HEADER.to_vec());
    for row in super::cache_stats_rows(namespaces) {
        table.add_row(row);
    }
    format!("cache: {}\n{}", root.display(), fit(&table))
}

/// How to read the sweep summary.
pub const SWEEP_NOTE: &str = "own = the configuration's own parameters (what `run` reports); best at = the first best point in sweep order (all tied points are in sweep.json and sweep.csv); cross-validated = mean held-out value of the point chosen on the other folds. best minus cross-validated is how much of the gain is fitted to these queries.";

#[cfg(test)]
mod tests {
    use super::*;
    use comfy_table::presets;

    /// `cell` alone in a table that is styled even off a terminal.
    fn styled(cell: Cell) -> String {
        let mut table = Table::new();
        table.load_preset(presets::NOTHING).enforce_styling();
        table.add_row(vec![cell]);
        table.to_string()
    }

    #[test]
    fn best_gain_and_loss_cells_take_the_palette_colours() {
        // 24-bit foreground escapes: palette::BEST is #0072b2, palette::LOSS #d55e00.
        let blue = "\x1b[38;2;0;114;178m";
        let vermillion = "\x1b[38;2;213;94;0m";
        let best = styled(best_cell("0.8334"));
        // Best is marked ▲, never `*`, which is significance's mark.
        assert!(best.contains(blue) && best.contains("0.8334▲"), "{best:?}");
        assert!(!best.contains('*'), "{best:?}");
        let gain = styled(delta_cell("+0.0500".into(), 0.05));
        assert!(gain.contains(blue), "{gain:?}");
        let loss = styled(delta_cell("-0.0500**".into(), -0.05));
        assert!(loss.contains(vermillion), "{loss:?}");
        let unchanged = styled(delta_cell("+0.0000".into(), 0.00001));
        assert!(!unchanged.contains("\x1b[38;2"), "{unchanged:?}");
    }

    #[test]
    fn a_passing_gate_lists_its_near_misses_as_the_markdown_summary_does() {
        use crate::report::markdown::tests::{check, passed_gate};
        let gate = passed_gate(vec![
            // -0.006 of an allowed 0.01: 60% of the allowance, a near miss with 0.004 left.
            check("hyde-3b", "recall@10", (0.7, 0.694), 0.4, 0.01),
            // -0.001 of an allowed 0.01: 10%, not one.
            check("blend", "ndcg@10", (0.5, 0.499), 0.9, 0.01),
            // +0.025: an improvement, not a near miss.
            check("hyde-3b", "ndcg@10", (0.6, 0.625), 0.003, 0.01),
        ]);
        let text = gate_summary(&gate);
        assert!(text.starts_with("gate: PASS (3 checks"), "{text}");
        assert!(
            text.contains(
                "\nnear misses (1): passed, but dropped by at least 50% of the allowed drop:\n  \
                 hyde-3b R@10: 0.7000 -> 0.6940 (-0.0060, p adj. 0.4000); max drop 0.0100, margin left 0.0040"
            ),
            "{text}"
        );
        assert!(!text.contains("  blend nDCG@10:"), "{text}");
        // No near miss, no section.
        let quiet = passed_gate(vec![check("blend", "ndcg@10", (0.5, 0.499), 0.9, 0.01)]);
        assert!(!gate_summary(&quiet).contains("near misses"));
    }
}
