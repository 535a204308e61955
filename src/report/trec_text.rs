//! trec_eval's text layout, `hyde-eval eval`'s default output: one line per measure
//! (and per query with `-q`), as trec_eval prints it.

use super::{Document, Exporter};
use crate::error::Error;
use crate::trec_eval::{Column, EvalOptions, EvaluatedRun, Family};

/// The trec_eval text exporter (`eval` only).
pub struct TrecText;

impl Exporter for TrecText {
    fn render(&self, document: &Document<'_>) -> Option<Result<String, Error>> {
        match document {
            Document::Eval {
                runs,
                options,
                per_query,
                ..
            } => Some(Ok(trec_text(runs, options, *per_query))),
            _ => None,
        }
    }
}

pub(super) fn format_value(column: &Column, value: f64) -> String {
    if column.is_count() {
        format!("{}", value as u64)
    } else {
        format!("{value:.4}")
    }
}

/// trec_eval's layout: `measure<pad to 22>\tquery\tvalue`, per-query blocks (with
/// `per_query`) before the `all` block of each run; values to 4 decimals, counts as
/// integers. With several runs, each run's block opens with a `run all PATH` line.
pub fn trec_text(runs: &[EvaluatedRun], options: &EvalOptions, per_query: bool) -> String {
    let mut out = String::new();
    let mut line = |name: &str, query: &str, value: &str| {
        out.push_str(&format!("{name:<22}\t{query}\t{value}\n"));
    };
    for run in runs {
        let evaluation = &run.evaluation;
        if runs.len() > 1 {
            // Several runs: each block opens with the file it scores, in the same layout.
            line("run", "all", &run.path);
        }
        if per_query {
            let relstring_name = options.measures.relstring().map(|(name, _)| name);
            for scores in &evaluation.per_query {
                // trec_eval prints relstring between the P and recall lines.
                let mut relstring = relstring_name.as_ref().zip(scores.relstring.as_ref());
                for (column, value) in evaluation.columns.iter().zip(&scores.values) {
                    if column.family > Family::P {
                        if let Some((name, string)) = relstring.take() {
                            line(name, &scores.query, &format!("'{string}'"));
                        }
                    }
                    if column.is_printed_per_query() {
                        line(&column.name(), &scores.query, &format_value(column, *value));
                    }
                }
                if let Some((name, string)) = relstring {
                    line(name, &scores.query, &format!("'{string}'"));
                }
            }
        }
        if options.measures.contains(Family::RunId) {
            line("runid", "all", &evaluation.run_id);
        }
        if options.measures.contains(Family::NumQ) {
            line("num_q", "all", &evaluation.per_query.len().to_string());
        }
        for (column, value) in evaluation.columns.iter().zip(&evaluation.summary) {
            line(&column.name(), "all", &format_value(column, *value));
        }
    }
    out
}
