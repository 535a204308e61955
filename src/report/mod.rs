//! Rendering for people and other tools: one file per output format, each an
//! [`Exporter`] of the documents the commands print or write ([`Document`]): `table`
//! for the terminal, `markdown` for pull-request summaries, `csv`, `json`, and
//! `trec_text` (trec_eval's layout, for `eval`). `html` renders the report page (with
//! `charts` and the per-query `diagnostics`), `external_html` that of runs of any system
//! compared against qrels; `files` writes report directories
//! atomically. Every renderer reads the documents of `results`, `gate`, `compare`,
//! `sweep` and `trec_eval`; none computes them.

pub mod charts;
pub mod csv;
pub mod diagnostics;
pub mod external_html;
pub mod files;
pub mod html;
pub mod json;
pub mod markdown;
pub mod sweep;
pub mod table;
pub mod trec_text;

use crate::compare::CompareReport;
use crate::error::Error;
use crate::gate::GateReport;
use crate::results::Results;
use crate::sweep::SweepResults;
use crate::trec_eval::{EvalOptions, EvaluatedRun};

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
    /// trec_eval's text layout.
    Trec,
}

impl Format {
    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Markdown => "markdown",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Trec => "trec",
        }
    }
}

/// What a command prints or writes.
pub enum Document<'a> {
    /// A run: its results, the metric columns of its tables and the gate's verdict.
    Run {
        results: &'a Results,
        columns: &'a [String],
        gate: Option<&'a GateReport>,
    },
    Compare(&'a CompareReport),
    Sweep(&'a SweepResults),
    /// `eval`'s evaluated runs.
    Eval {
        qrels: &'a str,
        runs: &'a [EvaluatedRun],
        options: &'a EvalOptions,
        per_query: bool,
    },
}

impl Document<'_> {
    fn name(&self) -> &'static str {
        match self {
            Document::Run { .. } => "a run",
            Document::Compare(_) => "a comparison",
            Document::Sweep(_) => "a sweep",
            Document::Eval { .. } => "eval",
        }
    }
}

/// One output format: renders a document as text.
pub trait Exporter {
    /// The document in this format; `None` when the format does not apply to it.
    fn render(&self, document: &Document<'_>) -> Option<Result<String, Error>>;
}

/// The exporter of `format`.
pub fn exporter(format: Format) -> &'static dyn Exporter {
    match format {
        Format::Table => &table::Terminal,
        Format::Markdown => &markdown::Markdown,
        Format::Csv => &csv::Csv,
        Format::Json => &json::Json,
        Format::Trec => &trec_text::TrecText,
    }
}

/// `document` rendered in `format`; a format that does not apply is a usage error.
pub fn render(format: Format, document: &Document<'_>) -> Result<String, Error> {
    exporter(format).render(document).unwrap_or_else(|| {
        Err(Error::Usage(format!(
            "--format {} is not available for {}",
            format.name(),
            document.name()
        )))
    })
}
