//! The HTML report: one self-contained page (inline CSS, charts embedded as PNG data
//! URIs, a Content-Security-Policy that forbids every network load) rendered from
//! `results.json` and optional `sweep.json` files, plus the files written beside it:
//! the charts as PNG, and the metric table as Markdown and CSV.
//!
//! Every piece of dataset text (queries, hypotheses, fact contents, names) goes through
//! maud's escaping; nothing is inserted as raw HTML except the fixed stylesheet.

use std::path::PathBuf;

use base64::Engine;
use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::charts::{self, ChartError};
use super::diagnostics::{self, Comparison, QueryDiagnosis};
use super::leaders;
use super::markdown::metric_value;
use super::palette;
use super::sweep::{file_slug, point_label, sweep_charts};
use super::table::{sweep_headline, SWEEP_NOTE};
use crate::configuration::{Fusion, ListMethod};
use crate::results::details::{FactDetail, QueryDetail};
use crate::results::{ConfigurationResult, Results};
use crate::stats;
use crate::sweep::SweepResults;

/// The page's file name.
pub const PAGE: &str = "report.html";

/// Largest wins and losses listed per comparison.
const DIAGNOSED_QUERIES: usize = 5;

/// Choices a reader of the report can make.
#[derive(Debug, Clone, Default)]
pub struct HtmlOptions {
    /// The reference configuration: every other configuration is compared with it
    /// instead of each HyDE configuration with its raw-query counterpart.
    pub reference: Option<String>,
    /// The metric of the deltas and diagnostics [default: ndcg@<largest k>].
    pub metric: Option<String>,
}

/// Why a report could not be built.
#[derive(Debug)]
pub enum ReportError {
    /// An option names something the results do not have.
    Usage(String),
    Chart(ChartError),
}

impl From<ChartError> for ReportError {
    fn from(error: ChartError) -> Self {
        ReportError::Chart(error)
    }
}

/// The page's stylesheet: layout, and the colours of [`palette`] (best and gains blue,
/// losses vermillion).
pub(super) fn style() -> String {
    let best = palette::BEST.hex();
    let best_tint = palette::BEST_TINT.hex();
    let loss = palette::LOSS.hex();
    let loss_tint = palette::LOSS_TINT.hex();
    format!(
        r#"
:root {{ --best: {best}; --best-tint: {best_tint}; --loss: {loss}; --loss-tint: {loss_tint}; }}
body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
       margin: 0 auto; max-width: 1280px; padding: 16px 24px; box-sizing: border-box; color: #1f2328; line-height: 1.45; }}
h1 {{ font-size: 1.6em; margin-bottom: 0.2em; }}
h2 {{ font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }}
h3 {{ font-size: 1.05em; margin-top: 1.4em; }}
.muted {{ color: #59636e; font-size: 0.92em; }}
.scroll {{ overflow-x: auto; max-width: 100%; }}
table {{ border-collapse: collapse; margin: 8px 0 16px; font-size: 0.9em; }}
th, td {{ border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f6f8fa; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
td.best {{ font-weight: 700; background: var(--best-tint); box-shadow: inset 3px 0 0 var(--best); }}
table.metrics {{ font-size: 0.82em; }}
table.metrics th, table.metrics td {{ padding: 2px 5px; }}
table.metrics th.sticky, table.metrics td.sticky {{ position: sticky; left: 0; z-index: 1;
       background: #fff; box-shadow: inset -1px 0 0 #d0d7de; white-space: nowrap; }}
table.metrics th.sticky {{ background: #f6f8fa; }}
table.metrics th.group {{ text-align: center; }}
span.ci {{ display: block; color: #59636e; font-size: 0.85em; font-weight: 400; }}
dl.summary {{ display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 16px; }}
dl.summary dt {{ font-weight: 600; }}
dl.summary dd {{ margin: 0; overflow-wrap: anywhere; }}
code, .mono {{ font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9em; }}
img.chart {{ max-width: 100%; height: auto; border: 1px solid #eaeef2; margin: 6px 0; }}
div.charts {{ display: flex; flex-wrap: wrap; gap: 8px; }}
.win {{ color: var(--best); font-weight: 600; }}
.loss {{ color: var(--loss); font-weight: 600; }}
ul.compact {{ margin: 2px 0; padding-left: 18px; }}
details {{ margin: 4px 0; }}
details.comparison {{ border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 12px; margin: 8px 0; }}
details.comparison > summary {{ cursor: pointer; font-weight: 600; padding: 4px 0; }}
.fact {{ color: #59636e; }}
"#
    )
}

/// Embeds PNG bytes as a data URI.
fn data_uri(png: &[u8]) -> String {
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    )
}

/// The `<head>` of every report page: a content policy that loads nothing from outside
/// the page, the viewport, `title` and the shared style.
pub(super) fn page_head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta http-equiv="Content-Security-Policy"
                content="default-src 'none'; img-src data:; style-src 'unsafe-inline'";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) }
            style { (PreEscaped(style())) }
        }
    }
}

/// A chart at its layout size; the PNG holds [`charts::SCALE`] times as many pixels,
/// so it is sharp on HiDPI screens.
pub(super) fn chart(png: &[u8], alt: &str) -> Markup {
    let (width, height) = charts::display_size(png).unwrap_or_default();
    html! { img.chart src=(data_uri(png)) width=(width) height=(height) alt=(alt); }
}

/// The metric the report compares with: `requested`, or `ndcg@<largest k>`.
fn headline_metric(results: &Results, requested: Option<&str>) -> Result<String, ReportError> {
    let metrics = &results.evaluation.metrics;
    if let Some(metric) = requested {
        return crate::metric_names::resolve(metric, metrics, "--metric")
            .map_err(|error| ReportError::Usage(error.to_string()));
    }
    let largest = results.evaluation.settings.cutoffs.last().copied();
    Ok(largest
        .map(|k| format!("ndcg@{k}"))
        .filter(|metric| metrics.contains(metric))
        .or_else(|| metrics.first().cloned())
        .unwrap_or_default())
}

/// The pairs the diagnostics compare: each configuration against `reference` when
/// given, else each HyDE configuration against its raw-query counterpart.
fn comparison_pairs<'r>(
    results: &'r Results,
    reference: Option<&str>,
) -> Result<Vec<(&'r ConfigurationResult, &'r ConfigurationResult)>, ReportError> {
    match reference {
        Some(name) => {
            let Some(base) = results.configurations.iter().find(|c| c.name == name) else {
                let known: Vec<&str> = results
                    .configurations
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect();
                return Err(ReportError::Usage(format!(
                    "--reference {name:?}{} is not in these results; they hold: {}",
                    crate::hints::suggestion(name, &known),
                    known.join(", ")
                )));
            };
            Ok(results
                .configurations
                .iter()
                .filter(|c| c.name != name)
                .map(|c| (c, base))
                .collect())
        }
        None => Ok(results
            .configurations
            .iter()
            .filter_map(|c| diagnostics::baseline_of(results, c).map(|base| (c, base)))
            .collect()),
    }
}

/// Every file of the report: `report.html`, `metrics.md`, `metrics.csv` and
/// `charts/*.png`, as paths relative to the report directory.
pub fn report_files(
    results: &Results,
    sweeps: &[SweepResults],
    options: &HtmlOptions,
) -> Result<Vec<(PathBuf, Vec<u8>)>, ReportError> {
    let metric = headline_metric(results, options.metric.as_deref())?;
    let pairs = comparison_pairs(results, options.reference.as_deref())?;
    let mut bar_metrics = vec![metric.clone()];
    if let Some(k) = results.evaluation.settings.cutoffs.last() {
        bar_metrics.push(format!("recall@{k}"));
    }
    bar_metrics.push("mrr".to_owned());
    bar_metrics.dedup();
    bar_metrics.retain(|m| results.evaluation.metrics.contains(m));

    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let title = charts::ChartTitle {
        dataset: &results.dataset.name,
        evaluated_queries: results.evaluation.evaluated_queries,
    };
    let bars = charts::metric_bars(&title, &results.configurations, &bar_metrics)?;
    let curves = charts::cutoff_curves(
        &results.evaluation.settings.cutoffs,
        &results.configurations,
        &["recall", "ndcg"],
    )?;
    files.push(("charts/metrics.png".into(), bars.clone()));
    files.push(("charts/cutoffs.png".into(), curves.clone()));

    let mut comparisons = Vec::new();
    for (configuration, baseline) in &pairs {
        let png = charts::delta_plot(configuration, baseline, &metric)?;
        files.push((
            format!(
                "charts/delta-{}-vs-{}.png",
                file_slug(&configuration.name),
                file_slug(&baseline.name)
            )
            .into(),
            png.clone(),
        ));
        comparisons.push((
            diagnostics::compare(results, configuration, baseline, &metric, DIAGNOSED_QUERIES),
            png,
        ));
    }

    let mut sweep_sections = Vec::new();
    for (index, sweep) in sweeps.iter().enumerate() {
        let pngs = sweep_charts(sweep)?;
        for (name, png) in &pngs {
            files.push((
                format!("charts/sweep{}-{name}", index + 1).into(),
                png.clone(),
            ));
        }
        sweep_sections.push(sweep_section(sweep, &pngs, index + 1));
    }

    let has_tags = results
        .configurations
        .first()
        .is_some_and(|configuration| !configuration.by_tag.is_empty());
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            (page_head(&format!("hyde-eval report: {}", results.run_name)))
            body {
                h1 { "hyde-eval report: " (results.run_name) }
                p.muted {
                    "dataset " (results.dataset.name) " (" (results.evaluation.evaluated_queries) " queries evaluated)"
                    " · " (results.tool.name) " " (results.tool.version)
                    " · results schema " (results.schema_version)
                    " · compared on " code { (metric) }
                }
                nav.muted {
                    a href="#metrics" { "Metrics" } " · "
                    @if has_tags { a href="#tags" { "By query tag" } " · " }
                    a href="#dataset" { "Dataset" } " · "
                    a href="#configurations" { "Configurations" } " · "
                    a href="#accounting" { "Accounting" } " · "
                    @if !sweep_sections.is_empty() { a href="#sweep-1" { "Sweeps" } " · " }
                    a href="#diagnostics" { "Per-query diagnostics" }
                }
                h2 #metrics { "Metrics" }
                p.muted { "Macro averages over the " (results.evaluation.evaluated_queries)
                    " queries with at least one relevant fact. Under each value, ± half the width of its 95% bootstrap "
                    "confidence interval over queries (" (charts::BAR_INTERVAL_RESAMPLES) " resamples; hover for the interval). "
                    span.win { "Blue" }
                    (leaders::legend("", &format!("the {} evaluated queries", results.evaluation.evaluated_queries), results.configurations.len()))
                    ". " code { "judged@k" } " is the share of the top k that has a judgment (coverage), not a ranking's quality: never blue." }
                (metric_table(results))
                @if let Some(warning) = super::JudgedWarning::of(results) {
                    p { strong { "Warning: " } (warning.headline()) }
                    ul.compact { @for entry in warning.entries() { li { (entry) } } }
                }
                (chart(&bars, "bar chart of the headline metrics per configuration"))
                (chart(&curves, "recall@k and nDCG@k over the cut-offs"))
                @if let Some(tags) = tag_section(results, &metric) { (tags) }
                (dataset_section(results))
                (configuration_table(results))
                @if let Some(engine) = engine_section(results, &metric) { (engine) }
                (accounting_table(results))
                @for section in &sweep_sections { (section) }
                h2 #diagnostics { "Per-query diagnostics" }
                p.muted {
                    "Per query, " (metric) " of each configuration minus its baseline. The tables list the largest gains and losses: "
                    "the ranks of the relevant facts under both configurations, and the non-relevant facts that the worse ranking "
                    "placed above them (with their rank in the other ranking)."
                }
                @if results.queries.is_empty() {
                    p { "This results.json predates per-query records (queries, top facts, relevant ranks); "
                        "re-run hyde-eval to see the queries, ranks and displacing facts behind the plots below." }
                }
                @if comparisons.is_empty() {
                    p { "No configuration pair to compare: none uses hypotheses and no --reference was given." }
                }
                @for (position, (comparison, png)) in comparisons.iter().enumerate() {
                    (comparison_section(results, comparison, png, position == 0))
                }
            }
        }
    };
    let csv = super::csv::metric_table(results)
        .map_err(|error| ReportError::Chart(ChartError(error.to_string())))?;
    files.push((
        "metrics.md".into(),
        super::markdown::metric_document(results).into_bytes(),
    ));
    files.push(("metrics.csv".into(), csv));
    files.push((PAGE.into(), page.into_string().into_bytes()));
    Ok(files)
}

fn dataset_section(results: &Results) -> Markup {
    let dataset = &results.dataset;
    let evaluation = &results.evaluation;
    html! {
        h2 #dataset { "Dataset" }
        p { (dataset.description) }
        dl.summary {
            dt { "name" } dd { (dataset.name) }
            dt { "facts" } dd { (dataset.facts) }
            dt { "queries" } dd { (dataset.queries) " (" (evaluation.evaluated_queries) " evaluated, "
                (evaluation.queries_without_relevant.len()) " without relevant facts)" }
            dt { "judgments" } dd { (dataset.judgments)
                @if dataset.judgments_complete { " (declared complete: every fact not judged for a query is not relevant to it)" } }
            dt { "queries with hypotheses" } dd { (dataset.queries_with_hypotheses) }
            dt { "now" } dd { (dataset.now) }
            dt { "content hash" } dd.mono { (dataset.content_hash) }
            dt { "files" } dd { (dataset.files.join(", ")) }
            dt { "cut-offs" } dd { (evaluation.settings.cutoffs.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")) }
            dt { "relevance level" } dd { (evaluation.settings.relevance_level) }
            dt { "semantics" } dd { (format!("{:?}", evaluation.settings.semantics)) }
            dt { "embedder" } dd {
                @match &results.embedder {
                    Some(embedder) => { (embedder.kind) " (" (embedder.model) ", " (embedder.dimension) " dimensions)" }
                    None => { "none" }
                }
            }
            dt { "hypotheses" } dd {
                (results.generator.kind)
                @for source in &results.generator.sources {
                    br;
                    span.muted {
                        (source.generator)
                        @if let Some(model) = &source.model { ", model " (model) }
                        @if let Some(date) = &source.date { ", " (date) }
                        @if let Some(note) = &source.note { ": " (note) }
                    }
                }
            }
        }
    }
}

/// Consecutive metrics that share a cut-off (`recall@5`, `ndcg@5`, ...), as the
/// group's heading (`@5`, or empty for metrics without one) and the metrics' names
/// without it.
fn metric_groups(metrics: &[String]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for metric in metrics {
        let (name, cutoff) = match metric.split_once('@') {
            Some((name, k)) => (name.to_owned(), format!("@{k}")),
            None => (metric.clone(), String::new()),
        };
        match groups.last_mut() {
            Some((last, names)) if *last == cutoff => names.push(name),
            _ => groups.push((cutoff, vec![name])),
        }
    }
    groups
}

/// Every metric of every configuration, the leaders of each column marked (the best
/// value and every value tied with it, see [`leaders`]), each value with ± half its 95%
/// bootstrap interval; columns grouped by cut-off and the
/// configuration column pinned while the table scrolls sideways.
fn metric_table(results: &Results) -> Markup {
    let metrics = &results.evaluation.metrics;
    let leading: Vec<Vec<bool>> = metrics
        .iter()
        .map(|metric| leaders::of_configurations(&results.configurations, metric))
        .collect();
    let groups = metric_groups(metrics);
    let grouped = groups.iter().any(|(cutoff, _)| !cutoff.is_empty());
    html! {
        div.scroll { table.metrics {
            thead {
                @if grouped {
                    tr {
                        th.sticky rowspan="2" { "configuration" }
                        @for (cutoff, names) in &groups {
                            th.group colspan=(names.len()) { (cutoff) }
                        }
                    }
                    tr { @for (_, names) in &groups { @for name in names { th { (name) } } } }
                } @else {
                    tr {
                        th.sticky { "configuration" }
                        @for metric in metrics { th { (metric) } }
                    }
                }
            }
            tbody {
                @for (index, configuration) in results.configurations.iter().enumerate() {
                    tr {
                        td.sticky { (configuration.name) }
                        @for (metric, leads) in metrics.iter().zip(&leading) {
                            @let shown = format!("{:.4}", metric_value(results, index, metric));
                            @let interval = charts::mean_interval(configuration, metric);
                            @let title = format!("{metric}: 95% bootstrap interval {:.4} to {:.4}", interval.low, interval.high);
                            @let spread = format!("±{:.3}", (interval.high - interval.low) / 2.0);
                            @if leads[index] {
                                td.num.best title=(format!("best in column or tied with it; {title}")) { (shown) span.ci { (spread) } }
                            } @else {
                                td.num title=(title) { (shown) span.ci { (spread) } }
                            }
                        }
                    }
                }
            }
        } }
    }
}

/// The headline metric of each configuration on the evaluated queries of each tag;
/// `None` when no query has a tag.
fn tag_section(results: &Results, headline: &str) -> Option<Markup> {
    let tags = &results.configurations.first()?.by_tag;
    if tags.is_empty() {
        return None;
    }
    let value = |configuration: &ConfigurationResult, tag: &str| {
        configuration
            .by_tag
            .iter()
            .find(|entry| entry.tag == tag)
            .and_then(|entry| entry.macro_metrics.get(headline))
            .and_then(serde_json::Value::as_f64)
    };
    let leading: Vec<Vec<bool>> = tags
        .iter()
        .map(|tag| leaders::of_tag(results, &tag.tag, headline))
        .collect();
    Some(html! {
        h2 #tags { "By query tag" }
        p.muted {
            (headline) " averaged over the evaluated queries of each tag (their number in brackets); "
            "a query with several tags counts in each. Every metric is in "
            code { "results.json" } " (" code { "configurations[].by_tag" } "). "
            span.win { "Blue" } (leaders::legend("", "each tag's queries", results.configurations.len())) "."
        }
        div.scroll { table {
            thead { tr {
                th { "configuration" }
                @for tag in tags { th { (tag.tag) " (" (tag.queries) ")" } }
            } }
            tbody {
                @for (index, configuration) in results.configurations.iter().enumerate() {
                    tr {
                        td { (configuration.name) }
                        @for (tag, leads) in tags.iter().zip(&leading) {
                            @let shown = value(configuration, &tag.tag).map_or("-".to_owned(), |v| format!("{v:.4}"));
                            @if leads[index] {
                                td.num.best title="best in column or tied with it" { (shown) }
                            } @else {
                                td.num { (shown) }
                            }
                        }
                    }
                }
            }
        } }
    })
}

fn configuration_table(results: &Results) -> Markup {
    html! {
        h2 #configurations { "Configurations" }
        div.scroll { table {
            thead { tr { th { "configuration" } th { "what it does" } th { "reproduces" } th { "plan" } th { "parameters" } } }
            tbody {
                @for configuration in &results.configurations {
                    @let plan = serde_json::to_value(configuration.plan).unwrap_or_default();
                    @let params = serde_json::to_value(&configuration.params).unwrap_or_default();
                    tr {
                        td { (configuration.name) br; span.muted { "preset " (configuration.preset.name()) } }
                        td { (configuration.description) }
                        td { (configuration.source) }
                        td.mono {
                            @if let Some(fields) = plan.as_object() {
                                @for (key, value) in fields { (key) ": " (compact(value)) br; }
                            }
                        }
                        td {
                            details {
                                summary { (parameter_summary(configuration)) }
                                ul.compact.mono {
                                    @if let Some(fields) = params.as_object() {
                                        @for (key, value) in fields { li { (key) " = " (compact(value)) } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        } }
    }
}

fn compact(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// The parameters that matter most for the plan, as the summary of the full list.
fn parameter_summary(configuration: &ConfigurationResult) -> String {
    let params = &configuration.params;
    match configuration.plan.fusion {
        Fusion::Blend => format!(
            "weights {} / {} / {}, top-K {}, floor {}",
            params.weights.semantic,
            params.weights.lexical,
            params.weights.temporal,
            params.vector_top_k,
            params.min_cosine
        ),
        Fusion::Hybrid => format!(
            "vector {} / text {}, min score {}",
            params.hybrid_vector_weight, params.hybrid_text_weight, params.hybrid_min_score
        ),
        Fusion::Bm25 => format!("k1 {}, b {}", params.bm25_k1, params.bm25_b),
        Fusion::KeywordTimesTemporal => format!("half-life {} days", params.half_life_days),
        Fusion::Cosine => "all parameters".to_owned(),
        Fusion::RankedLists => {
            let lists = params.lists.unwrap_or_default();
            match lists.method {
                ListMethod::Rrf => format!("rrf, k {}", lists.rrf_k),
                ListMethod::Borda | ListMethod::Isr | ListMethod::LogIsr => {
                    lists.method.name().to_owned()
                }
                ListMethod::LognIsr => format!(
                    "logn_isr, sigma {}",
                    crate::fusion::runs::logn_isr::DEFAULT_SIGMA
                ),
                ListMethod::Wsum => format!(
                    "wsum, {}, vector {} / text {}",
                    lists.normalization.name(),
                    lists.vector_weight,
                    lists.text_weight
                ),
                method => format!("{}, {}", method.name(), lists.normalization.name()),
            }
        }
    }
}

/// The run's search engine beside the exact in-process index, every metric; `None`
/// for runs without an engine.
fn engine_section(results: &Results, headline: &str) -> Option<Markup> {
    let engine = results.engine.as_ref()?;
    let recalls: Vec<&String> = engine.configurations.first()?.ann_recall.keys().collect();
    let number = |value: Option<&serde_json::Value>| {
        value
            .and_then(serde_json::Value::as_f64)
            .map_or("-".to_owned(), |value| format!("{value:.4}"))
    };
    let signed = |value: Option<&serde_json::Value>| {
        value
            .and_then(serde_json::Value::as_f64)
            .map_or("-".to_owned(), |value| {
                if value.abs() < crate::results::engine::MOVE_SHOWN {
                    "±0.0000".to_owned()
                } else {
                    format!("{value:+.4}")
                }
            })
    };
    let evaluated = engine.evaluated_depth();
    let of_searches = |configuration: &crate::results::engine::EngineConfiguration,
                       count: usize| {
        if configuration.vector_searches > 0 {
            format!("{count} / {}", configuration.vector_searches)
        } else {
            "-".to_owned()
        }
    };
    let notes: Vec<String> = engine
        .configurations
        .iter()
        .filter_map(|configuration| configuration.truncation_note(&[]))
        .collect();
    Some(html! {
        h2 #engine { "Search engine" }
        p.muted {
            "Candidates served by engine " code { (engine.name) } " (" (engine.served_by) ", " (engine.index) "). "
            "Beside each metric, the same configuration on the exact in-process index over the same vectors, and the "
            "overlap of the engine's vector top k with the exact top k (ANN recall@k)."
        }
        div.scroll { table {
            thead { tr {
                th { "configuration" } th { "signals" }
                @for recall in &recalls { th { (recall.replace("ann_recall", "ANN recall")) } }
                th { (headline) " engine" } th { (headline) " exact" } th { "Δ" }
                th { "differing beyond ties" @if evaluated > 0 { " @" (evaluated) } }
                th { "differing beyond ties @search depth" } th { "truncated" }
            } }
            tbody {
                @for (configuration, served) in engine.configurations.iter().zip(&results.configurations) {
                    tr {
                        td { (configuration.name) }
                        td { @for (signal, source) in &configuration.signals { (signal) ": " (source.as_str().unwrap_or("-")) br; } }
                        @for recall in &recalls {
                            td.num { @if configuration.vector_searches > 0 { (number(configuration.ann_recall.get(*recall))) } @else { "-" } }
                        }
                        td.num { (number(served.macro_metrics.get(headline))) }
                        td.num { (number(configuration.exact_macro.get(headline))) }
                        td.num { (signed(configuration.delta.get(headline))) }
                        td.num { (of_searches(configuration, configuration.differing_searches_at_evaluated_depth)) }
                        td.num { (of_searches(configuration, configuration.differing_searches)) }
                        td.num { (of_searches(configuration, configuration.truncated_searches)) }
                    }
                }
            }
        } }
        @for note in &notes { p.muted { "Truncated: " (note) } }
    })
}

fn accounting_table(results: &Results) -> Markup {
    let rows: Vec<_> = results
        .configurations
        .iter()
        .filter_map(|c| c.hyde.as_ref().map(|hyde| (c, hyde)))
        .collect();
    html! {
        h2 #accounting { "Accounting" }
        div.scroll { table {
            thead { tr { th { "configuration" } th { "returned nothing" } th { "abstained (no relevant facts)" }
                th { "hypotheses used" } th { "usage" } th { "fallback (no hypothesis)" } th { "skipped (short)" } th { "skipped (code)" }
                th { "cache hits" } th { "generation ms (mean)" } th { "nDCG@10 vs counterpart" } th { "adaptive floor settled (mean)" } } }
            tbody {
                @for configuration in &results.configurations {
                    @let hyde = rows.iter().find(|(c, _)| c.name == configuration.name).map(|(_, hyde)| *hyde);
                    tr {
                        td { (configuration.name) }
                        td.num { (configuration.counts.empty_rankings) " / " (configuration.counts.evaluated) }
                        td.num { (configuration.counts.abstained_without_relevant) }
                        @match hyde {
                            Some(hyde) => {
                                td.num { (hyde.hypotheses_used) " / " (hyde.eligible_queries) }
                                td.num { (format!("{:.1}%", hyde.usage_rate * 100.0)) }
                                td.num { (hyde.fallback_no_hypothesis) }
                                td.num { (hyde.skipped_short_query) }
                                td.num { (hyde.skipped_code_mention) }
                                td.num { (super::cache_hit_text(hyde)) }
                                td.num { (super::generation_time_text(hyde)) }
                                td { (crate::results::hyde_figures::Improvement::text_of(hyde.improvement.as_ref())) }
                            }
                            None => { td.muted colspan="8" { "uses no hypotheses" } }
                        }
                        @match &configuration.adaptive_floor {
                            Some(floor) => {
                                td.num { (floor.mean.map_or("-".to_owned(), |mean| format!("{mean:.3}"))) " (" (floor.distribution()) ")" }
                            }
                            None => { td.muted { "-" } }
                        }
                    }
                }
            }
        } }
        @if !rows.is_empty() { p.muted { "nDCG@10 " (super::HYDE_IMPROVEMENT_LEGEND) "." } }
    }
}

fn sweep_section(sweep: &SweepResults, pngs: &[(String, Vec<u8>)], number: usize) -> Markup {
    html! {
        h2 id=(format!("sweep-{number}")) { "Sweep " (number) }
        p { (sweep_headline(sweep)) }
        div.scroll { table {
            thead { tr { th { "configuration" } th { "metric" } th { "own" } th { "best" } th { "best at" }
                th { "tied" } th { "cross-validated" } } }
            tbody {
                @for configuration in &sweep.configurations {
                    @for summary in &configuration.summaries {
                        tr {
                            td { (configuration.name) }
                            td { (summary.metric) }
                            td.num { (format!("{:.4}", summary.default)) }
                            td.num { (format!("{:.4}", summary.best)) }
                            td { (summary.best_points.first().map(|at| point_label(configuration, at)).unwrap_or_default()) }
                            td.num { (summary.best_points.len()) }
                            td.num { (format!("{:.4}", summary.cross_validated)) }
                        }
                    }
                }
            }
        } }
        p.muted { (SWEEP_NOTE) }
        div.charts { @for (name, png) in pngs { (chart(png, name)) } }
    }
}

fn fact_line(facts: &[FactDetail], id: &str) -> Markup {
    let content = facts
        .iter()
        .find(|fact| fact.id.as_str() == id)
        .map(|fact| fact.content.as_str())
        .unwrap_or("");
    html! { span.mono { (id) } " " span.fact { (shorten(content, 140)) } }
}

fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(limit).collect::<String>())
    }
}

fn rank_text(rank: Option<usize>) -> String {
    rank.map_or_else(|| "not returned".to_owned(), |rank| rank.to_string())
}

/// Permutations of the diagnostics' randomization tests, as the gate's default.
const PERMUTATIONS: usize = 10_000;

/// The mean per-query difference of a comparison with its 95% bootstrap interval and
/// the paired randomization test's p (uncorrected), as the gate computes them.
fn significance_line(results: &Results, comparison: &Comparison) -> String {
    let find = |name: &str| results.configurations.iter().find(|c| c.name == name);
    let (Some(configuration), Some(baseline)) =
        (find(&comparison.configuration), find(&comparison.baseline))
    else {
        return String::new();
    };
    let deltas = diagnostics::per_query_deltas(configuration, baseline, &comparison.metric);
    if deltas.is_empty() {
        return String::new();
    }
    let ours: Vec<f64> = deltas.iter().map(|delta| delta.value).collect();
    let theirs: Vec<f64> = deltas.iter().map(|delta| delta.baseline).collect();
    let mean = deltas.iter().map(|delta| delta.delta).sum::<f64>() / deltas.len() as f64;
    let interval = stats::bootstrap_difference_interval(
        &theirs,
        &ours,
        charts::BAR_INTERVAL_RESAMPLES,
        0.95,
        42,
    );
    let p_value = stats::randomization_test(&theirs, &ours, PERMUTATIONS, 42);
    format!(
        "Mean difference {mean:+.4} (95% bootstrap interval {:+.4} to {:+.4}); paired randomization test \
         p = {p_value:.4} ({PERMUTATIONS} permutations; not corrected for multiple comparisons).",
        interval.low, interval.high
    )
}

/// One comparison, collapsible (the first one open): its counts in the summary, then
/// the plot of per-query differences and the largest gains and losses.
fn comparison_section(
    results: &Results,
    comparison: &Comparison,
    png: &[u8],
    open: bool,
) -> Markup {
    html! {
        details.comparison open[open] {
            summary {
                (comparison.configuration) " vs " (comparison.baseline) " on " (comparison.metric) ": "
                span.win { (comparison.better) " better" } ", "
                span.loss { (comparison.worse) " worse" } ", "
                (comparison.tied) " tied"
            }
            p.muted { (significance_line(results, comparison)) }
            (chart(png, &format!("per-query {} of {} minus {}", comparison.metric, comparison.configuration, comparison.baseline)))
            @if !comparison.wins.is_empty() {
                p { b { "Largest gains" } }
                (diagnosis_table(results, comparison, &comparison.wins))
            }
            @if !comparison.losses.is_empty() {
                p { b { "Largest losses" } }
                (diagnosis_table(results, comparison, &comparison.losses))
            }
        }
    }
}

fn diagnosis_table(results: &Results, comparison: &Comparison, rows: &[QueryDiagnosis]) -> Markup {
    let query_of = |id: &crate::dataset::QueryId| -> Option<&QueryDetail> {
        results.queries.iter().find(|q| q.id == *id)
    };
    html! {
        div.scroll { table {
            thead { tr {
                th { "query" }
                th { (comparison.metric) }
                th { "relevant facts: rank in " (comparison.configuration) " / " (comparison.baseline) }
                th { "displaced by (in the worse ranking)" }
            } }
            tbody {
                @for row in rows {
                    @let query = query_of(&row.delta.query);
                    tr {
                        td {
                            span.mono { (row.delta.query.0) } " "
                            @if let Some(query) = query {
                                (query.text)
                                @if !query.hypotheses.is_empty() {
                                    details {
                                        summary { (query.hypotheses.len()) " recorded hypotheses" }
                                        ol.compact { @for hypothesis in &query.hypotheses { li { (hypothesis) } } }
                                    }
                                }
                            }
                        }
                        td.num {
                            (format!("{:.3}", row.delta.value)) " vs " (format!("{:.3}", row.delta.baseline))
                            br;
                            @if row.delta.delta > 0.0 {
                                span.win { (format!("{:+.3}", row.delta.delta)) }
                            } @else {
                                span.loss { (format!("{:+.3}", row.delta.delta)) }
                            }
                        }
                        td { ul.compact {
                            @for relevant in &row.relevant {
                                li {
                                    (rank_text(relevant.rank)) " / " (rank_text(relevant.baseline_rank))
                                    " (grade " (relevant.grade) ") "
                                    (fact_line(&results.facts, &relevant.fact.0))
                                }
                            }
                        } }
                        td {
                            @if row.displaced_by.is_empty() {
                                span.muted { "no non-relevant fact moved above them" }
                            }
                            ul.compact {
                                @for displacer in &row.displaced_by {
                                    li {
                                        "rank " (displacer.rank)
                                        " (other: " (displacer.other_rank.map_or_else(|| "not in top".to_owned(), |r| r.to_string())) ") "
                                        (fact_line(&results.facts, &displacer.fact.0))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        } }
    }
}
