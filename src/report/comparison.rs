//! A comparison ([`CompareReport`]) for the terminal, Markdown and CSV, as a paper's
//! table: the runs (lettered `a`, `b`, ...) x the metrics for each configuration, each
//! value followed by the letters of the runs it beats significantly and the best of the
//! runs marked; then the pairwise tests (difference and p, per metric); then what each
//! run cost, when recorded. CSV is the pairwise tests, one row per pair, metric and
//! configuration. LaTeX is `latex`'s; the exporters of `table`, `markdown` and `csv`
//! call these.

use std::fmt::Write as _;

use comfy_table::{Cell, CellAlignment};

use super::fit::{fit, new_table, output_width, wrap_prose};
use super::Format;
use crate::compare::{legend, optional, p_text, CompareCell, CompareReport, PairComparison};
use crate::error::Error;
use crate::metric_names::display;

/// Unicode superscripts of `a` to `z` (ranx's, with a true small q).
const SUPERSCRIPTS: [char; 26] = [
    'ᵃ', 'ᵇ', 'ᶜ', 'ᵈ', 'ᵉ', 'ᶠ', 'ᵍ', 'ʰ', 'ⁱ', 'ʲ', 'ᵏ', 'ˡ', 'ᵐ', 'ⁿ', 'ᵒ', 'ᵖ', '𐞥', 'ʳ', 'ˢ',
    'ᵗ', 'ᵘ', 'ᵛ', 'ʷ', 'ˣ', 'ʸ', 'ᶻ',
];

/// `keys` (`bc`) as superscript letters (`ᵇᶜ`).
pub fn superscript(keys: &str) -> String {
    keys.chars()
        .map(|key| {
            if key.is_ascii_lowercase() {
                SUPERSCRIPTS[usize::from(key as u8 - b'a')]
            } else {
                key
            }
        })
        .collect()
}

/// A cell's value with four decimals, or `-` when the run lacks the configuration.
fn value_text(cell: &CompareCell) -> String {
    cell.value
        .map_or_else(|| "-".to_owned(), |value| format!("{value:.4}"))
}

/// A pair's difference and its p after the correction: `+0.0123 (p = 0.0040)`.
fn pair_text(pair: &PairComparison) -> String {
    format!(
        "{:+.4} ({})",
        pair.comparison.delta,
        p_text(pair.comparison.adjusted_p_value)
    )
}

/// What the pairwise table shows.
fn pairs_legend(report: &CompareReport) -> String {
    format!(
        "pairwise tests: the difference of the first run named minus the second, with its p ({})",
        report.significance.correction.adjective()
    )
}

/// The header of a table whose rows are the configurations' runs or pairs.
fn header(report: &CompareReport, first: &[&str]) -> Vec<String> {
    let mut header: Vec<String> = Vec::new();
    if report.shows_configurations() {
        header.push("configuration".to_owned());
    }
    header.extend(first.iter().map(|name| (*name).to_owned()));
    header.extend(report.metrics.iter().map(|metric| display(metric)));
    header
}

/// The comparison in `format`, for the formats rendered here (terminal, Markdown, CSV);
/// `None` for the others, whose exporters render it.
pub fn render(format: Format, report: &CompareReport) -> Option<Result<String, Error>> {
    match format {
        Format::Table => Some(Ok(wrap_prose(&terminal(report), output_width()))),
        Format::Markdown => Some(Ok(markdown(report))),
        Format::Csv => Some(
            csv(report)
                .map(|bytes| String::from_utf8(bytes).expect("CSV of UTF-8 text is UTF-8"))
                .map_err(super::csv::csv_error),
        ),
        _ => None,
    }
}

/// Terminal rendering: the legend, the runs x metrics table, the pairwise tests, then
/// the accounting table when costs were recorded.
pub fn terminal(report: &CompareReport) -> String {
    let best_mark = super::table::best_cell("").content();
    let mut table = new_table();
    table.set_header(header(report, &["#", "run"]));
    for row in &report.rows {
        for (index, run) in report.runs.iter().enumerate() {
            let mut cells = Vec::new();
            if report.shows_configurations() {
                cells.push(Cell::new(&row.configuration));
            }
            cells.push(Cell::new(&run.key));
            cells.push(Cell::new(&run.label));
            for metric in 0..report.metrics.len() {
                let cell = report.cell(row, index, metric);
                let shown = format!(
                    "{}{}",
                    value_text(cell),
                    superscript(&report.beaten_keys(cell))
                );
                cells.push(if cell.best {
                    super::table::best_cell(&shown)
                } else {
                    Cell::new(shown)
                });
            }
            table.add_row(cells);
        }
    }
    let mut pairs = new_table();
    pairs.set_header(header(report, &["pair"]));
    for row in &report.rows {
        for (reference, candidate) in report.pair_labels(row) {
            let mut cells = Vec::new();
            if report.shows_configurations() {
                cells.push(Cell::new(&row.configuration));
            }
            cells.push(Cell::new(format!("{candidate} vs {reference}")));
            for metric in 0..report.metrics.len() {
                cells.push(
                    match report.pairs(row, metric).find(|pair| {
                        pair.reference_run == reference && pair.candidate_run == candidate
                    }) {
                        Some(pair) => {
                            super::table::delta_cell(pair_text(pair), pair.comparison.delta)
                                .set_alignment(CellAlignment::Right)
                        }
                        None => Cell::new("-"),
                    },
                );
            }
            pairs.add_row(cells);
        }
    }
    let mut text = format!(
        "{}; {best_mark} = best of the runs\n{}\n{}\n{}",
        legend(report),
        fit(&table),
        pairs_legend(report),
        fit(&pairs)
    );
    if report.has_costs() {
        let mut costs = new_table();
        costs.set_header(COST_HEADER.to_vec());
        for row in cost_rows(report) {
            costs.add_row(row);
        }
        text.push('\n');
        text.push_str(&fit(&costs));
    }
    text
}

/// The header of the accounting table.
const COST_HEADER: [&str; 5] = [
    "run",
    "embedder",
    "texts embedded",
    "embedding ms",
    "retrieval ms",
];

/// One accounting row per run, as [`COST_HEADER`].
fn cost_rows(report: &CompareReport) -> Vec<Vec<String>> {
    report
        .runs
        .iter()
        .map(|run| {
            vec![
                run.label.clone(),
                run.embedder.clone().unwrap_or_else(|| "-".into()),
                run.accounting
                    .embedded_texts
                    .map_or_else(|| "-".into(), |count| count.to_string()),
                optional(run.accounting.embedding_ms),
                optional(run.accounting.retrieval_ms),
            ]
        })
        .collect()
}

/// Appends a Markdown table row of `cells` (escaped) to `text`.
fn markdown_row(text: &mut String, cells: &[String]) {
    text.push('|');
    for cell in cells {
        let _ = write!(text, " {} |", super::markdown::cell(cell));
    }
    text.push('\n');
}

/// Appends a Markdown header row and its delimiter (`left` columns left-aligned, the
/// rest right-aligned).
fn markdown_header(text: &mut String, header: &[String], left: usize) {
    markdown_row(text, header);
    text.push('|');
    for column in 0..header.len() {
        text.push_str(if column < left { "---|" } else { "---:|" });
    }
    text.push('\n');
}

/// Markdown rendering: the same tables; the best value in bold, the letters of the
/// beaten runs as `<sup>`.
pub fn markdown(report: &CompareReport) -> String {
    let mut text = format!(
        "## hyde-eval compare: {}\n\n{}; **bold** = best of the runs.\n\n",
        super::markdown::cell(&report.dataset),
        super::markdown::cell(&legend(report))
    );
    let header = header(report, &["#", "run"]);
    let left = header.len() - report.metrics.len();
    markdown_header(&mut text, &header, left);
    for row in &report.rows {
        for (index, run) in report.runs.iter().enumerate() {
            let mut cells = Vec::new();
            if report.shows_configurations() {
                cells.push(row.configuration.clone());
            }
            cells.push(run.key.clone());
            cells.push(run.label.clone());
            for metric in 0..report.metrics.len() {
                let cell = report.cell(row, index, metric);
                let mut shown = value_text(cell);
                if cell.best {
                    shown = format!("**{shown}**");
                }
                let beaten = report.beaten_keys(cell);
                if !beaten.is_empty() {
                    let _ = write!(shown, "<sup>{beaten}</sup>");
                }
                cells.push(shown);
            }
            markdown_row(&mut text, &cells);
        }
    }
    let _ = write!(text, "\n{}.\n\n", pairs_legend(report));
    let header = self::header(report, &["pair"]);
    let left = header.len() - report.metrics.len();
    markdown_header(&mut text, &header, left);
    for row in &report.rows {
        for (reference, candidate) in report.pair_labels(row) {
            let mut cells = Vec::new();
            if report.shows_configurations() {
                cells.push(row.configuration.clone());
            }
            cells.push(format!("{candidate} vs {reference}"));
            for metric in 0..report.metrics.len() {
                cells.push(
                    report
                        .pairs(row, metric)
                        .find(|pair| {
                            pair.reference_run == reference && pair.candidate_run == candidate
                        })
                        .map_or_else(|| "-".to_owned(), pair_text),
                );
            }
            markdown_row(&mut text, &cells);
        }
    }
    if report.has_costs() {
        text.push('\n');
        let header: Vec<String> = COST_HEADER.iter().map(|name| (*name).to_owned()).collect();
        markdown_header(&mut text, &header, 2);
        for row in cost_rows(report) {
            markdown_row(&mut text, &row);
        }
    }
    text
}

/// The header of the comparison's CSV.
const CSV_HEADER: [&str; 16] = [
    "configuration",
    "metric",
    "reference_run",
    "candidate_run",
    "reference",
    "candidate",
    "delta",
    "p_value",
    "adjusted_p_value",
    "significant",
    "interval_low",
    "interval_high",
    "paired_queries",
    "wins",
    "ties",
    "losses",
];

/// CSV: one row per pairwise test (configuration, metric, pair of runs); `wins` count
/// the queries where the candidate is better.
pub fn csv(report: &CompareReport) -> Result<Vec<u8>, csv::Error> {
    let number = super::csv::csv_number;
    let lines = report.rows.iter().flat_map(|row| {
        row.comparisons.iter().map(|pair| {
            let comparison = &pair.comparison;
            vec![
                row.configuration.clone(),
                comparison.metric.clone(),
                pair.reference_run.clone(),
                pair.candidate_run.clone(),
                number(comparison.reference),
                number(comparison.candidate),
                number(comparison.delta),
                number(comparison.p_value),
                number(comparison.adjusted_p_value),
                comparison.significant.to_string(),
                number(comparison.difference_interval.low),
                number(comparison.difference_interval.high),
                comparison.paired_queries.to_string(),
                comparison.wins.to_string(),
                comparison.ties.to_string(),
                comparison.losses.to_string(),
            ]
        })
    });
    super::csv::rows(&CSV_HEADER, lines)
}
