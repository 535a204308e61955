//! The HTML report of runs of any system compared against qrels (`compare --qrels
//! --html`): one self-contained page with the style of the built-in report, rendered from
//! the comparison and the runs' read models. External runs carry no preset, plan or
//! parameters, so each is shown as an external run file with its depth, never with
//! invented parameters. Sections: what was compared, every metric per run with the
//! built-in report's charts (metric bars with bootstrap whiskers, curves over the
//! cut-offs), the pairwise comparison (the runs x compared metrics with the letters of
//! the runs each beats significantly, then every pair's difference, interval and p), and
//! per-query diagnostics of every pair on the first compared metric (the per-query
//! difference plot, queries better, worse and tied, and the largest gains and losses).
//! Every label goes through maud's escaping.

use maud::{html, Markup, DOCTYPE};

use super::charts::{self, ChartError, ChartTitle};
use super::diagnostics::{per_query_deltas, QueryDelta};
use super::html::{chart, page_head};
use crate::compare::{test_description, CompareReport};
use crate::results::scored::ScoredConfiguration;
use crate::results::stored::{StoredConfiguration, StoredResults};

/// Largest gains and losses listed per comparison.
const DIAGNOSED_QUERIES: usize = 5;

/// One compared run: its label and read model (holding one configuration).
pub type ExternalRun<'a> = (&'a str, &'a StoredResults);

/// A run's one scored configuration, shown under the run's label.
struct LabelledRun<'a> {
    label: &'a str,
    configuration: &'a StoredConfiguration,
}

impl ScoredConfiguration for LabelledRun<'_> {
    fn name(&self) -> &str {
        self.label
    }

    fn macro_value(&self, metric: &str) -> Option<f64> {
        self.configuration.macro_value(metric)
    }

    fn query_metrics(
        &self,
    ) -> impl Iterator<Item = (&crate::dataset::QueryId, &crate::results::MetricValues)> {
        ScoredConfiguration::query_metrics(self.configuration)
    }
}

/// The page comparing `runs` as `report` describes them.
pub fn page(report: &CompareReport, runs: &[ExternalRun<'_>]) -> Result<String, ChartError> {
    let Some((_, reference)) = runs.first() else {
        return Ok(String::new());
    };
    let metrics = &reference.evaluation.metrics;
    let configuration_of = |results: &StoredResults| results.configurations.first().cloned();
    let scored: Vec<LabelledRun<'_>> = runs
        .iter()
        .filter_map(|(label, results)| {
            results
                .configurations
                .first()
                .map(|configuration| LabelledRun {
                    label,
                    configuration,
                })
        })
        .collect();
    let cutoffs = &reference.evaluation.cutoffs;
    let headline = &report.metrics[0];
    let mut bar_metrics = vec![headline.clone()];
    if let Some(k) = cutoffs.last() {
        bar_metrics.push(format!("recall@{k}"));
    }
    bar_metrics.push("mrr".to_owned());
    bar_metrics.dedup();
    bar_metrics.retain(|metric| metrics.contains(metric));
    let title = ChartTitle {
        dataset: &report.dataset,
        evaluated_queries: reference.dataset.queries,
    };
    let bars = charts::metric_bars(&title, &scored, &bar_metrics)?;
    let families: Vec<&str> = ["recall", "ndcg"]
        .into_iter()
        .filter(|family| {
            cutoffs
                .iter()
                .all(|k| metrics.contains(&format!("{family}@{k}")))
        })
        .collect();
    let curves = if families.is_empty() {
        None
    } else {
        Some(charts::cutoff_curves(cutoffs, &scored, &families)?)
    };
    let mut diagnoses = Vec::new();
    for (index, base) in scored.iter().enumerate() {
        for candidate in &scored[index + 1..] {
            let png = charts::delta_plot(candidate, base, headline)?;
            diagnoses.push(diagnosis(candidate, base, headline, &png));
        }
    }
    let leading: Vec<Vec<bool>> = metrics
        .iter()
        .map(|metric| super::leaders::of_configurations(&scored, metric))
        .collect();
    let compared = report.rows.first();
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            (page_head(&format!("hyde-eval report: external runs on {}", report.dataset)))
            body {
                h1 { "External runs on " (report.dataset) }
                nav.muted {
                    a href="#dataset" { "Qrels" } " · "
                    a href="#metrics" { "Metrics" } " · "
                    a href="#configurations" { "Runs" } " · "
                    a href="#significance" { "Pairwise comparison" } " · "
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
                p.muted { "Macro averages over the qrels queries with at least one relevant document. " span.win { "Blue" }
                    (super::leaders::legend("", "the queries both runs answer", scored.len())) ". " code { "judged@k" } " is coverage: never blue." }
                div.scroll { table {
                    thead { tr { th { "run" } @for metric in metrics { th { (metric) } } } }
                    tbody {
                        @for (label, results) in runs {
                            @let configuration = configuration_of(results);
                            @let position = scored.iter().position(|run| run.label == *label);
                            tr data-run=(label) {
                                td { (label) }
                                @for (metric, leads) in metrics.iter().zip(&leading) {
                                    @let shown = configuration.as_ref().and_then(|c| c.macro_value(metric)).map_or("-".to_owned(), |v| format!("{v:.4}"));
                                    @if position.and_then(|at| leads.get(at)).copied().unwrap_or(false) {
                                        td.num.best data-metric=(metric) title="best in column or tied with it" { (shown) }
                                    } @else {
                                        td.num data-metric=(metric) { (shown) }
                                    }
                                }
                            }
                        }
                    }
                } }
                (chart(&bars, "bar chart of the headline metrics per run"))
                @if let Some(curves) = &curves {
                    (chart(curves, "metrics over the cut-offs per run"))
                }
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
                h2 #significance { "Pairwise comparison" }
                p.muted { (crate::compare::legend(report)) ". " span.win { "Blue" } " = best of the runs." }
                @if let Some(row) = compared {
                    table {
                        thead { tr { th { "#" } th { "run" } @for metric in &report.metrics { th { (metric) } } } }
                        tbody {
                            @for (index, run) in report.runs.iter().enumerate() {
                                tr data-compared-run=(run.label) {
                                    td { (run.key) }
                                    td { (run.label) }
                                    @for metric in 0..report.metrics.len() {
                                        @let cell = report.cell(row, index, metric);
                                        @let shown = cell.value.map_or("-".to_owned(), |v| format!("{v:.4}"));
                                        @let beaten = report.beaten_keys(cell);
                                        @if cell.best {
                                            td.num.best data-metric=(cell.metric) data-beats=(beaten) title="best of the runs" { (shown) sup { (beaten) } }
                                        } @else {
                                            td.num data-metric=(cell.metric) data-beats=(beaten) { (shown) sup { (beaten) } }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    p.muted { "Every pair: the difference of the later run minus the earlier, its 95% bootstrap interval, p and p after the correction (" (test_description(report)) ")." }
                    table {
                        thead { tr { th { "pair" } th { "metric" } th { "Δ" } th { "interval of Δ" }
                            th { "p" } th { "adjusted p" } th { "paired queries" } th { "wins / ties / losses" } } }
                        tbody {
                            @for pair in &row.comparisons {
                                @let comparison = &pair.comparison;
                                tr data-pair=(format!("{} vs {}", pair.candidate_run, pair.reference_run)) {
                                    td { (pair.candidate_run) " vs " (pair.reference_run) }
                                    td { (comparison.metric) }
                                    td.num { (format!("{:+.4}", comparison.delta)) }
                                    td.num { (format!("[{:+.4}, {:+.4}] at {}%", comparison.difference_interval.low, comparison.difference_interval.high, comparison.difference_interval.confidence * 100.0)) }
                                    td.num data-p-value=(comparison.p_value) { (format!("{:.4}", comparison.p_value)) }
                                    td.num data-adjusted-p-value=(comparison.adjusted_p_value) { (format!("{:.4}", comparison.adjusted_p_value)) }
                                    td.num { (comparison.paired_queries) }
                                    td.num { (comparison.wins) " / " (comparison.ties) " / " (comparison.losses) }
                                }
                            }
                        }
                    }
                }
                h2 #diagnostics { "Per-query diagnostics" }
                p.muted { "Per query, " (headline) " of each later run minus each earlier one"
                    ": the queries better, worse and tied, and the largest gains and losses." }
                @for diagnosis in &diagnoses { (diagnosis) }
            }
        }
    };
    Ok(page.into_string())
}

/// `run` against `reference` query by query on `metric`: the difference plot, the counts
/// of queries better, worse and tied, and the largest gains and losses.
fn diagnosis(
    run: &LabelledRun<'_>,
    reference: &LabelledRun<'_>,
    metric: &str,
    delta_png: &[u8],
) -> Markup {
    let mut deltas = per_query_deltas(run, reference, metric);
    let better = deltas.iter().filter(|query| query.delta > 0.0).count();
    let worse = deltas.iter().filter(|query| query.delta < 0.0).count();
    let tied = deltas.len() - better - worse;
    deltas.sort_by(|x, y| x.delta.total_cmp(&y.delta).then(x.query.cmp(&y.query)));
    let losses: Vec<&QueryDelta> = deltas
        .iter()
        .filter(|query| query.delta < 0.0)
        .take(DIAGNOSED_QUERIES)
        .collect();
    let gains: Vec<&QueryDelta> = deltas
        .iter()
        .rev()
        .filter(|query| query.delta > 0.0)
        .take(DIAGNOSED_QUERIES)
        .collect();
    let rows = |rows: &[&QueryDelta]| {
        html! {
            table {
                thead { tr { th { "query" } th { (run.label) } th { (reference.label) } th { "Δ" } } }
                tbody {
                    @for query in rows {
                        tr {
                            td.mono { (query.query.0) }
                            td.num { (format!("{:.4}", query.value)) }
                            td.num { (format!("{:.4}", query.baseline)) }
                            td.num { (format!("{:+.4}", query.delta)) }
                        }
                    }
                }
            }
        }
    };
    html! {
        h3 { (run.label) " vs " (reference.label) " on " (metric) }
        (chart(delta_png, "per-query differences, sorted"))
        p {
            span.win { (better) " better" } ", "
            span.loss { (worse) " worse" } ", "
            (tied) " tied"
        }
        @if !gains.is_empty() { p { b { "Largest gains" } } (rows(&gains)) }
        @if !losses.is_empty() { p { b { "Largest losses" } } (rows(&losses)) }
    }
}
