//! Rendering for people and other tools: one file per output format, each an
//! [`Exporter`] of the documents the commands print or write ([`Document`]): `table`
//! for the terminal, `markdown` for pull-request summaries, `csv`, `json`, and
//! `trec_text` (trec_eval's layout, for `eval`), `latex` (a comparison's booktabs
//! table); `comparison` renders a comparison for the terminal, Markdown and CSV. `html` renders the report page (with
//! `charts` and the per-query `diagnostics`), `external_html` that of runs of any system
//! compared against qrels; `files` writes report directories
//! atomically. Every renderer reads the documents of `results`, `gate`, `compare`,
//! `sweep` and `trec_eval`; none computes them.

pub mod charts;
pub mod comparison;
pub mod csv;
pub mod diagnostics;
pub mod external_html;
pub mod files;
pub mod fit;
pub mod html;
pub mod json;
pub mod latex;
pub mod leaders;
pub mod markdown;
pub mod palette;
pub mod sweep;
pub mod table;
pub mod trec_text;

use std::path::Path;

use crate::cache::NamespaceStats;
use crate::compare::CompareReport;
use crate::dataset::stats::DatasetStats;
use crate::error::Error;
use crate::gate::GateReport;
use crate::results::{HydeSummary, Results};
use crate::sweep::SweepResults;
use crate::trec_eval::{EvalOptions, EvaluatedRun};

/// A HyDE configuration's cache hit rate with its counts: `66.7% (2/3)`, or `-` when no
/// hypothesis was served.
pub fn cache_hit_text(hyde: &HydeSummary) -> String {
    let reused = hyde.hypotheses_from_cache + hyde.hypotheses_recorded;
    hyde.cache_hit_rate.map_or("-".to_owned(), |rate| {
        format!(
            "{:.1}% ({reused}/{})",
            rate * 100.0,
            reused + hyde.hypotheses_generated
        )
    })
}

/// A HyDE configuration's mean generation time over the queries whose time is known:
/// `812 (3 queries)`, or `unknown` when no query's is.
pub fn generation_time_text(hyde: &HydeSummary) -> String {
    hyde.generation_time
        .as_ref()
        .map_or("unknown".to_owned(), |time| {
            format!("{:.0} ({} queries)", time.mean_ms, time.queries)
        })
}

/// The legend of the significance marks of HyDE's improvement over its counterpart
/// ([`crate::results::hyde_figures::Improvement`]), under every table that shows it.
pub const HYDE_IMPROVEMENT_LEGEND: &str = "vs counterpart: * p adj. < 0.05, ** p adj. < 0.01 (paired randomization test, Holm-corrected over the run's HyDE configurations)";

/// The warning that a run's scores are lower bounds: the configurations whose
/// `judged@k` at the run's deepest cut-off is below
/// [`crate::metrics::JUDGED_WARNING_THRESHOLD`] (their rankings hold many facts without a
/// judgment, which count as not relevant), each with its bpref, which leaves unjudged
/// facts out. `judged@k` measures how complete the judgments are, not how good a
/// ranking is, so it is reported only here and never marked best.
pub struct JudgedWarning {
    /// `judged@k` of the deepest cut-off.
    pub metric: String,
    /// The configurations below the threshold, in run order: name, `judged@k` and bpref
    /// (when the run computed it).
    pub low: Vec<(String, f64, Option<f64>)>,
    /// Configurations in the run.
    pub configurations: usize,
}

impl JudgedWarning {
    /// The warning for `results`; `None` when every configuration is at or above the
    /// threshold, when the results hold no `judged@k`, or when the dataset declares its
    /// judgments complete (`judgments_complete = true` in `dataset.toml`).
    pub fn of(results: &Results) -> Option<JudgedWarning> {
        if results.dataset.judgments_complete {
            return None;
        }
        let metric = results
            .evaluation
            .metrics
            .iter()
            .rfind(|metric| metric.starts_with("judged@"))?
            .clone();
        let value = |configuration: &crate::results::ConfigurationResult, metric: &str| {
            configuration
                .macro_metrics
                .get(metric)
                .and_then(serde_json::Value::as_f64)
        };
        let threshold = crate::metrics::JUDGED_WARNING_THRESHOLD;
        let low: Vec<(String, f64, Option<f64>)> = results
            .configurations
            .iter()
            .filter_map(|configuration| {
                let judged = value(configuration, &metric).unwrap_or(f64::NAN);
                (judged < threshold).then(|| {
                    (
                        configuration.name.clone(),
                        judged,
                        value(configuration, "bpref"),
                    )
                })
            })
            .collect();
        (!low.is_empty()).then_some(JudgedWarning {
            metric,
            low,
            configurations: results.configurations.len(),
        })
    }

    /// What is wrong and what to do, in one sentence.
    pub fn headline(&self) -> String {
        format!(
            "{} is below {} for {} of {} configurations: facts without a judgment count as not relevant, so their scores are lower bounds (bpref leaves unjudged facts out). Judge their top results with `hyde-eval judge`, or, if every fact without a judgment is known not relevant, set `judgments_complete = true` in dataset.toml.",
            self.metric,
            crate::metrics::JUDGED_WARNING_THRESHOLD,
            self.low.len(),
            self.configurations
        )
    }

    /// One entry per configuration below the threshold: `bm25: judged@10 0.09, bpref
    /// 0.6412`.
    pub fn entries(&self) -> Vec<String> {
        self.low
            .iter()
            .map(|(name, judged, bpref)| {
                let bpref = bpref.map_or(String::new(), |bpref| format!(", bpref {bpref:.4}"));
                format!("{name}: {} {judged:.2}{bpref}", self.metric)
            })
            .collect()
    }

    /// The warning as stderr prints it: `warning: ` and the headline, then one indented
    /// line per configuration.
    pub fn text(&self) -> String {
        let mut text = format!("warning: {}", self.headline());
        for entry in self.entries() {
            text.push_str("\n  ");
            text.push_str(&entry);
        }
        text
    }
}

/// The version of the JSON documents of `dataset stats` and `cache stats`.
pub const STATS_SCHEMA_VERSION: u32 = 1;

/// The header of `cache stats`' table (terminal, CSV and Markdown).
pub const CACHE_STATS_HEADER: [&str; 11] = [
    "family",
    "kind",
    "model",
    "endpoint",
    "dims",
    "entries",
    "segments",
    "size",
    "damaged",
    "unfinished",
    "directory",
];

/// The rows of `cache stats`' table, one per namespace, as [`CACHE_STATS_HEADER`].
pub fn cache_stats_rows(namespaces: &[NamespaceStats]) -> Vec<Vec<String>> {
    namespaces
        .iter()
        .map(|namespace| {
            let description =
                namespace
                    .description
                    .clone()
                    .unwrap_or(crate::cache::NamespaceDescription {
                        family: "?".into(),
                        kind: "?".into(),
                        endpoint: "?".into(),
                        model: "?".into(),
                        dimension: None,
                    });
            vec![
                description.family,
                description.kind,
                description.model,
                description.endpoint,
                description
                    .dimension
                    .map_or("native".into(), |dimension| dimension.to_string()),
                namespace.entries.to_string(),
                namespace.segments.to_string(),
                format!("{:.1} MB", namespace.bytes as f64 / 1e6),
                namespace.corrupt.to_string(),
                namespace.unfinished_writes.to_string(),
                namespace
                    .directory
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ]
        })
        .collect()
}

/// `dataset stats` as (field, value) rows, for CSV and Markdown: the JSON document's
/// fields, nested ones joined with `.` (`fact_words.p50`, `grades.2`).
pub fn dataset_stats_fields(stats: &DatasetStats) -> Vec<(String, String)> {
    fn flatten(prefix: &str, value: &serde_json::Value, fields: &mut Vec<(String, String)>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    let name = if prefix.is_empty() {
                        key.clone()
                    } else {
                        format!("{prefix}.{key}")
                    };
                    flatten(&name, value, fields);
                }
            }
            serde_json::Value::String(text) => fields.push((prefix.to_owned(), text.clone())),
            other => fields.push((prefix.to_owned(), other.to_string())),
        }
    }
    let mut fields = Vec::new();
    flatten(
        "",
        &serde_json::to_value(stats).expect("dataset stats serialize"),
        &mut fields,
    );
    fields
}

/// What a near miss ([`crate::gate::GateReport::near_misses`]) left of its allowed
/// drop: `margin left 0.0040`, or `beyond it by 0.0010 but not significant`.
pub fn margin_text(check: &crate::gate::GateCheck) -> String {
    let margin = check.margin();
    if margin >= 0.0 {
        format!("margin left {margin:.4}")
    } else {
        format!("beyond it by {:.4} but not significant", -margin)
    }
}

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
    /// trec_eval's text layout.
    Trec,
    /// A booktabs table (comparisons only).
    Latex,
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
            Format::Latex => "latex",
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
    /// `eval`'s evaluated runs, and the gate's verdict when gated.
    Eval {
        qrels: &'a str,
        runs: &'a [EvaluatedRun],
        options: &'a EvalOptions,
        per_query: bool,
        gate: Option<&'a GateReport>,
    },
    /// `dataset stats`.
    DatasetStats(&'a DatasetStats),
    /// `cache stats`: the cache directory and its namespaces.
    CacheStats {
        root: &'a Path,
        namespaces: &'a [NamespaceStats],
    },
}

impl Document<'_> {
    fn name(&self) -> &'static str {
        match self {
            Document::Run { .. } => "a run",
            Document::Compare(_) => "a comparison",
            Document::Sweep(_) => "a sweep",
            Document::Eval { .. } => "eval",
            Document::DatasetStats(_) => "dataset stats",
            Document::CacheStats { .. } => "cache stats",
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
        Format::Latex => &latex::Latex,
    }
}

/// `document` rendered in `format`; a format that does not apply is a usage error.
pub fn render(format: Format, document: &Document<'_>) -> Result<String, Error> {
    let rendered = match document {
        // A comparison's terminal, Markdown and CSV renderings share their cells, so
        // they live together in `comparison`, which builds on the format modules.
        Document::Compare(report) => {
            comparison::render(format, report).or_else(|| exporter(format).render(document))
        }
        _ => exporter(format).render(document),
    };
    rendered.unwrap_or_else(|| {
        Err(Error::Usage(format!(
            "--format {} is not available for {}",
            format.name(),
            document.name()
        )))
    })
}
