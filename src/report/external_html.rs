//! The HTML report of runs of any system compared against qrels (`compare --qrels
//! --html`): one self-contained page with the style of the built-in report, rendered from
//! the comparison and the runs' read models. External runs carry no preset, plan or
//! parameters, so each is shown as an external run file with its depth, never with
//! invented parameters. Sections: what was compared, every metric per run, the paired
//! comparison with the reference run, and per-query diagnostics (queries better, worse,
//! tied and the largest gains and losses). Every label goes through maud's escaping.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::compare::paired::significance_mark;
use crate::compare::CompareReport;
use crate::results::stored::{StoredConfiguration, StoredResults};

/// Largest gains and losses listed per comparison.
const DIAGNOSED_QUERIES: usize = 5;

/// One compared run: its label and read model (holding one configuration).
pub type ExternalRun<'a> = (&'a str, &'a StoredResults);

/// The page comparing `runs` (the first is the reference) as `report` describes them.
pub fn page(report: &CompareReport, runs: &[ExternalRun<'_>]) -> String {
    let Some((_, reference)) = runs.first() else {
        return String::new();
    };
    let metrics = &reference.evaluation.metrics;
    let configuration_of = |results: &StoredResults| results.configurations.first().cloned();
    let best: Vec<Option<String>> = metrics
        .iter()
        .map(|metric| {
            runs.iter()
                .filter_map(|(_, results)| configuration_of(results)?.macro_value(metric))
                .reduce(f64::max)
                .map(|top| format!("{top:.4}"))
        })
        .collect();
    let comparisons: Vec<_> = report
        .rows
        .iter()
        .flat_map(|row| row.comparisons.iter().enumerate())
        .filter_map(|(column, comparison)| comparison.as_ref().map(|c| (column + 1, c)))
        .collect();
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy"
                    content="default-src 'none'; img-src data:; style-src 'unsafe-inline'";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "hyde-eval report: external runs on " (report.dataset) }
                style { (PreEscaped(super::html::style())) }
            }
            body {
                h1 { "External runs on " (report.dataset) }
                nav.muted {
                    a href="#dataset" { "Qrels" } " · "
                    a href="#metrics" { "Metrics" } " · "
                    a href="#configurations" { "Runs" } " · "
                    a href="#significance" { "Paired comparison" } " · "
                    a href="#diagnostics" { "Per-query diagnostics" }
                }
                h2 #dataset { "Qrels" }
                dl.summary {
                    dt { "name" } dd { (report.dataset) }
                    dt { "queries" } dd { (reference.dataset.queries) }
                    dt { "content hash" } dd.mono { (report.content_hash) }
                    dt { "cut-offs" } dd { (reference.evaluation.cutoffs.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")) }
                    dt { "relevance level" } dd { (reference.evaluation.relevance_level) }
                    dt { "semantics" } dd { (reference.evaluation.semantics.name()) }
                }
                h2 #metrics { "Metrics" }
                p.muted { "Macro averages over the qrels queries with at least one relevant document. Green = best in column." }
                div.scroll { table {
                    thead { tr { th { "run" } @for metric in metrics { th { (metric) } } } }
                    tbody {
                        @for (label, results) in runs {
                            @let configuration = configuration_of(results);
                            tr data-run=(label) {
                                td { (label) }
                                @for (metric, best) in metrics.iter().zip(&best) {
                                    @let shown = configuration.as_ref().and_then(|c| c.macro_value(metric)).map_or("-".to_owned(), |v| format!("{v:.4}"));
                                    @if runs.len() > 1 && Some(&shown) == best.as_ref() {
                                        td.num.best data-metric=(metric) title="best in column" { (shown) }
                                    } @else {
                                        td.num data-metric=(metric) { (shown) }
                                    }
                                }
                            }
                        }
                    }
                } }
                h2 #configurations { "Runs" }
                table {
                    thead { tr { th { "run" } th { "what it is" } th { "depth" } } }
                    tbody {
                        @for (label, results) in runs {
                            tr {
                                td { (label) }
                                td { "external run file, scored against the qrels; its system's parameters are not known to hyde-eval" }
                                td.num { (configuration_of(results).map_or("-".to_owned(), |c| c.params.depth.to_string())) }
                            }
                        }
                    }
                }
                h2 #significance { "Paired comparison" }
                p.muted { (crate::compare::legend(report)) }
                table {
                    thead { tr { th { "run" } th { (report.metric) } th { "Δ vs " (report.reference) } th { "interval of Δ" }
                        th { "p" } th { "adjusted p" } th { "paired queries" } th { "wins / ties / losses" } } }
                    tbody {
                        @for (column, comparison) in &comparisons {
                            tr data-run=(report.runs[*column].label) {
                                td { (report.runs[*column].label) }
                                td.num { (format!("{:.4}", comparison.candidate)) }
                                td.num { (format!("{:+.4}", comparison.delta)) (significance_mark(comparison, report.significance.alpha)) }
                                td.num { (format!("[{:+.4}, {:+.4}] at {}%", comparison.difference_interval.low, comparison.difference_interval.high, comparison.difference_interval.confidence * 100.0)) }
                                td.num data-p-value=(comparison.p_value) { (format!("{:.4}", comparison.p_value)) }
                                td.num data-adjusted-p-value=(comparison.adjusted_p_value) { (format!("{:.4}", comparison.adjusted_p_value)) }
                                td.num { (comparison.paired_queries) }
                                td.num { (comparison.wins) " / " (comparison.ties) " / " (comparison.losses) }
                            }
                        }
                    }
                }
                h2 #diagnostics { "Per-query diagnostics" }
                p.muted { "Per query, " (report.metric) " of each run minus the reference run " (report.reference)
                    ": the queries better, worse and tied, and the largest gains and losses." }
                @for (label, results) in runs.iter().skip(1) {
                    @if let (Some(configuration), Some(base)) = (configuration_of(results), configuration_of(reference)) {
                        (diagnosis(label, &configuration, runs[0].0, &base, &report.metric))
                    }
                }
            }
        }
    };
    page.into_string()
}

/// `label` against `reference_label` query by query on `metric`.
fn diagnosis(
    label: &str,
    configuration: &StoredConfiguration,
    reference_label: &str,
    reference: &StoredConfiguration,
    metric: &str,
) -> Markup {
    let reference_values = reference.per_query_values(metric);
    let mut deltas: Vec<(&str, f64, f64)> = configuration
        .per_query_values(metric)
        .into_iter()
        .filter_map(|(query, value)| {
            reference_values
                .iter()
                .find(|(id, _)| *id == query)
                .map(|(_, base)| (query.0.as_str(), value, *base))
        })
        .collect();
    let better = deltas.iter().filter(|(_, v, b)| v > b).count();
    let worse = deltas.iter().filter(|(_, v, b)| v < b).count();
    let tied = deltas.len() - better - worse;
    deltas.sort_by(|x, y| (x.1 - x.2).total_cmp(&(y.1 - y.2)).then(x.0.cmp(y.0)));
    let losses: Vec<_> = deltas
        .iter()
        .filter(|(_, v, b)| v < b)
        .take(DIAGNOSED_QUERIES)
        .collect();
    let gains: Vec<_> = deltas
        .iter()
        .rev()
        .filter(|(_, v, b)| v > b)
        .take(DIAGNOSED_QUERIES)
        .collect();
    let rows = |rows: &[&(&str, f64, f64)]| {
        html! {
            table {
                thead { tr { th { "query" } th { (label) } th { (reference_label) } th { "Δ" } } }
                tbody {
                    @for (query, value, base) in rows {
                        tr {
                            td.mono { (query) }
                            td.num { (format!("{value:.4}")) }
                            td.num { (format!("{base:.4}")) }
                            td.num { (format!("{:+.4}", value - base)) }
                        }
                    }
                }
            }
        }
    };
    html! {
        h3 { (label) " vs " (reference_label) " on " (metric) }
        p {
            span.win { (better) " better" } ", "
            span.loss { (worse) " worse" } ", "
            (tied) " tied"
        }
        @if !gains.is_empty() { p { b { "Largest gains" } } (rows(&gains)) }
        @if !losses.is_empty() { p { b { "Largest losses" } } (rows(&losses)) }
    }
}
