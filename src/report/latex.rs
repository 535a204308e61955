//! LaTeX: a comparison (`compare --format latex`, and `compare.tex`) as the table a
//! paper prints, with booktabs rules: the runs (lettered `a`, `b`, ...) x the metrics for
//! each configuration, the best value of each column in bold, and after each value the
//! letters of the runs it beats significantly as a superscript. The caption states the
//! test, the correction and the level. A `table` float for the body of a document whose
//! preamble loads `booktabs`; every label is escaped. Other documents have no LaTeX form.

use std::fmt::Write as _;

use super::{Document, Exporter};
use crate::compare::{test_description, CompareReport};
use crate::error::Error;
use crate::metric_names::display;

/// The LaTeX exporter (comparisons only).
pub struct Latex;

impl Exporter for Latex {
    fn render(&self, document: &Document<'_>) -> Option<Result<String, Error>> {
        match document {
            Document::Compare(report) => Some(Ok(table(report))),
            _ => None,
        }
    }
}

/// `text` with LaTeX's special characters escaped, for text mode.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\\' => escaped.push_str("\\textbackslash{}"),
            '~' => escaped.push_str("\\textasciitilde{}"),
            '^' => escaped.push_str("\\textasciicircum{}"),
            '<' => escaped.push_str("\\textless{}"),
            '>' => escaped.push_str("\\textgreater{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                escaped.push('\\');
                escaped.push(character);
            }
            '\n' | '\r' => escaped.push(' '),
            other => escaped.push(other),
        }
    }
    escaped
}

/// `path` escaped, with a line break allowed after each `/`: a qrels path in the caption
/// is one long word, which would run past the margin (an overfull box) in a deep
/// directory.
fn breakable_path(path: &str) -> String {
    escape(path).replace('/', "/\\allowbreak{}")
}

/// The comparison as a booktabs `table` float.
pub fn table(report: &CompareReport) -> String {
    let configurations = report.shows_configurations();
    let metrics: Vec<String> = report
        .metrics
        .iter()
        .map(|metric| escape(&display(metric)))
        .collect();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "% hyde-eval compare: {}; needs \\usepackage{{booktabs}}",
        report.dataset.replace(['\n', '\r'], " ")
    );
    text.push_str("\\begin{table}[t]\n\\centering\n");
    let _ = writeln!(
        text,
        "\\caption{{{} on {}. Superscripts name the runs each run beats significantly ({}, $p < {}$). The best value of each {} is in bold.}}",
        metrics.join(", "),
        breakable_path(&report.dataset),
        escape(&test_description(report)),
        report.significance.alpha,
        if configurations {
            "configuration and metric"
        } else {
            "metric"
        }
    );
    text.push_str("\\label{tab:hyde-eval-compare}\n");
    let _ = writeln!(
        text,
        "\\begin{{tabular}}{{{}cl{}}}",
        if configurations { "l" } else { "" },
        "l".repeat(report.metrics.len())
    );
    text.push_str("\\toprule\n");
    let mut header: Vec<String> = Vec::new();
    if configurations {
        header.push("Configuration".to_owned());
    }
    header.push("\\#".to_owned());
    header.push("Run".to_owned());
    header.extend(metrics);
    let _ = writeln!(text, "{} \\\\", header.join(" & "));
    for row in &report.rows {
        text.push_str("\\midrule\n");
        for (index, run) in report.runs.iter().enumerate() {
            let mut cells: Vec<String> = Vec::new();
            if configurations {
                cells.push(if index == 0 {
                    escape(&row.configuration)
                } else {
                    String::new()
                });
            }
            cells.push(run.key.clone());
            cells.push(escape(&run.label));
            for metric in 0..report.metrics.len() {
                let cell = report.cell(row, index, metric);
                let mut shown = match cell.value {
                    Some(value) if cell.best => format!("\\textbf{{{value:.4}}}"),
                    Some(value) => format!("{value:.4}"),
                    None => "--".to_owned(),
                };
                let beaten = report.beaten_keys(cell);
                if !beaten.is_empty() {
                    let _ = write!(shown, "$^{{{beaten}}}$");
                }
                cells.push(shown);
            }
            let _ = writeln!(text, "{} \\\\", cells.join(" & "));
        }
    }
    text.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_special_character_is_escaped_for_text_mode() {
        assert_eq!(
            escape("a_b & c% $d #e {f} g~h^i\\j <k>"),
            "a\\_b \\& c\\% \\$d \\#e \\{f\\} g\\textasciitilde{}h\\textasciicircum{}i\\textbackslash{}j \\textless{}k\\textgreater{}"
        );
    }
}
