//! Side-by-side comparison of several runs of one dataset (one per embedding provider,
//! stored results, or run files of any system scored against qrels), as the table a
//! paper prints: runs x metrics for each configuration, every pair of runs tested on
//! every metric, all the tests corrected together. Each cell names the runs it beats
//! significantly (ranx's superscripts: the later letters `a`, `b`, ... of the runs) and
//! whether it is the best of the runs; the pairs keep their difference, p-values,
//! interval and wins / ties / losses. Also what each run cost. Pure: runs in, a
//! [`CompareReport`] out; `report` renders it.

pub mod paired;

use serde::Serialize;

use crate::error::Error;
use crate::results::stored::StoredResults;
use crate::stats::TIE_TOLERANCE;
use paired::{compare, correct, PairedComparison, SignificanceSettings, SignificanceTest};

/// The version of `compare.json` (`schemas/compare.schema.json`); bumped whenever a
/// field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 2;

/// Runs a comparison holds at most: each is named by a letter, `a` to `z`.
pub const MAX_RUNS: usize = 26;

/// What a run cost; `None` fields were not recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Accounting {
    pub embedded_texts: Option<usize>,
    pub embedding_ms: Option<f64>,
    pub retrieval_ms: Option<f64>,
}

/// Where the compared runs come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComparisonKind {
    /// Run files of any system scored against qrels (`compare --qrels`): one
    /// configuration each, named `run`.
    RunFiles,
    /// Stored `results.json` files.
    StoredResults,
    /// The dataset run once per `--embedder`.
    Embedders,
}

/// One run to compare: its label, where it was read from, its results and its cost.
pub struct ComparedInput {
    pub label: String,
    /// The file it was read from (`-` for standard input); `None` for a run made here.
    pub source: Option<String>,
    pub results: StoredResults,
    pub accounting: Accounting,
}

/// One compared run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedRun {
    /// The letter that names it in superscripts: `a` for the first run, `b`, ...
    pub key: String,
    pub label: String,
    pub source: Option<String>,
    /// `kind (model, N dims)`, when the run used embeddings.
    pub embedder: Option<String>,
    pub accounting: Accounting,
}

/// One run's value of one metric for one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareCell {
    pub run: String,
    pub metric: String,
    /// Macro value; `None` when the run lacks the configuration.
    pub value: Option<f64>,
    /// The highest value of the runs (ties all best); never for a coverage metric
    /// (judged@k), nor when one run alone has a value.
    pub best: bool,
    /// The runs this one is significantly better than, after the correction, in run order.
    pub beats: Vec<String>,
}

/// One pair of runs on one metric of one configuration: the later run (candidate)
/// against the earlier (reference).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairComparison {
    pub reference_run: String,
    pub candidate_run: String,
    #[serde(flatten)]
    pub comparison: PairedComparison,
}

/// One configuration across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    pub configuration: String,
    /// Run by run, each run's metrics in [`CompareReport::metrics`] order.
    pub cells: Vec<CompareCell>,
    /// Every pair of runs holding the configuration, on every metric.
    pub comparisons: Vec<PairComparison>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    pub kind: ComparisonKind,
    pub dataset: String,
    pub content_hash: String,
    /// The compared metrics, in column order.
    pub metrics: Vec<String>,
    pub significance: SignificanceSettings,
    /// Tests made and corrected together: one per pair of runs, metric and configuration.
    pub tests: usize,
    pub runs: Vec<ComparedRun>,
    pub rows: Vec<CompareRow>,
}

impl CompareReport {
    /// Whether any run recorded an embedder or a cost: runs of other systems (`--qrels`)
    /// record neither, and a table of dashes would only be noise.
    pub fn has_costs(&self) -> bool {
        self.runs.iter().any(|run| {
            run.embedder.is_some()
                || run.accounting.embedded_texts.is_some()
                || run.accounting.embedding_ms.is_some()
                || run.accounting.retrieval_ms.is_some()
        })
    }

    /// Whether the tables name the configuration: run files hold one each, named `run`.
    pub fn shows_configurations(&self) -> bool {
        self.kind != ComparisonKind::RunFiles
    }

    /// `run`'s value of metric number `metric` in `row`.
    pub fn cell<'r>(&self, row: &'r CompareRow, run: usize, metric: usize) -> &'r CompareCell {
        &row.cells[run * self.metrics.len() + metric]
    }

    /// The key of the run labelled `label`.
    pub fn key_of(&self, label: &str) -> &str {
        self.runs
            .iter()
            .find(|run| run.label == label)
            .map_or("?", |run| run.key.as_str())
    }

    /// The keys of the runs `cell` beats, run after run: `bc`.
    pub fn beaten_keys(&self, cell: &CompareCell) -> String {
        cell.beats.iter().map(|label| self.key_of(label)).collect()
    }

    /// `row`'s pair comparisons on metric number `metric`, in pair order.
    pub fn pairs<'r>(
        &self,
        row: &'r CompareRow,
        metric: usize,
    ) -> impl Iterator<Item = &'r PairComparison> {
        let metric = self.metrics[metric].clone();
        row.comparisons
            .iter()
            .filter(move |pair| pair.comparison.metric == metric)
    }

    /// Every pair of runs (reference, candidate labels) compared in `row`, in order.
    pub fn pair_labels<'r>(&self, row: &'r CompareRow) -> Vec<(&'r str, &'r str)> {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for pair in &row.comparisons {
            let labels = (pair.reference_run.as_str(), pair.candidate_run.as_str());
            if !pairs.contains(&labels) {
                pairs.push(labels);
            }
        }
        pairs
    }
}

/// The letter naming run number `index` (`a`, `b`, ...).
fn key(index: usize) -> String {
    char::from(b'a' + index as u8).to_string()
}

/// Refuses fewer than two runs, and more than [`MAX_RUNS`] (`compare` checks the count
/// before any work).
pub fn check_run_count(runs: usize) -> Result<(), Error> {
    if runs < 2 {
        return Err(Error::Usage(
            "compare needs at least two runs: two --embedder options, two results.json files, or --qrels and two run files"
                .into(),
        ));
    }
    if runs > MAX_RUNS {
        return Err(Error::Usage(format!(
            "compare names its runs a to z: it compares at most {MAX_RUNS} runs, not {runs}"
        )));
    }
    Ok(())
}

/// Coverage, not quality: a higher judged@k is never "best".
fn is_coverage(metric: &str) -> bool {
    metric.starts_with("judged@")
}

/// The metrics compared: `requested` (resolved against the first run's, duplicates
/// merged, `place` naming the flag in errors), or nDCG at the largest cut-off (MRR when
/// there is none).
fn compared_metrics(
    reference: &ComparedInput,
    requested: &[String],
    place: &str,
) -> Result<Vec<String>, Error> {
    let computed = &reference.results.evaluation.metrics;
    if requested.is_empty() {
        return Ok(vec![computed
            .iter()
            .rfind(|name| name.starts_with("ndcg@"))
            .cloned()
            .unwrap_or_else(|| "mrr".into())]);
    }
    let mut metrics: Vec<String> = Vec::new();
    for spelling in requested {
        let metric = crate::metric_names::resolve(
            spelling,
            computed,
            &format!("{place} ({})", reference.label),
        )?;
        if !metrics.contains(&metric) {
            metrics.push(metric);
        }
    }
    Ok(metrics)
}

/// Compares `inputs` on `requested` metrics (`place` is the flag that named them): every
/// pair of runs, on every metric, for every configuration both hold.
pub fn build(
    kind: ComparisonKind,
    inputs: &[ComparedInput],
    requested: &[String],
    place: &str,
    significance: &SignificanceSettings,
) -> Result<CompareReport, Error> {
    let reference = inputs
        .first()
        .ok_or_else(|| Error::Usage("nothing to compare".into()))?;
    check_run_count(inputs.len())?;
    for (index, input) in inputs.iter().enumerate() {
        if let Some(earlier) = inputs[..index]
            .iter()
            .find(|earlier| earlier.label == input.label)
        {
            return Err(Error::Usage(format!(
                "two runs are labelled {:?} ({} and {}); name them: NAME=PATH",
                input.label,
                earlier.source.as_deref().unwrap_or("-"),
                input.source.as_deref().unwrap_or("-")
            )));
        }
        let results = &input.results;
        if results.dataset.content_hash != reference.results.dataset.content_hash {
            return Err(Error::Usage(format!(
                "{} was run on dataset {:?} ({}), but {} on {:?} ({}); compare runs of one dataset",
                input.label,
                results.dataset.name,
                results.dataset.content_hash,
                reference.label,
                reference.results.dataset.name,
                reference.results.dataset.content_hash
            )));
        }
        let differences = results.definition_differences(&reference.results);
        if !differences.is_empty() {
            return Err(Error::Usage(format!(
                "{}'s metrics are defined differently from {}'s ({}); their numbers do not compare",
                input.label,
                reference.label,
                differences.join("; ")
            )));
        }
    }
    let metrics = compared_metrics(reference, requested, place)?;
    for input in inputs {
        if let Some(metric) = metrics
            .iter()
            .find(|metric| !input.results.evaluation.metrics.contains(metric))
        {
            return Err(Error::Usage(format!(
                "{} has no metric {metric:?}; it has {}",
                input.label,
                input.results.evaluation.metrics.join(", ")
            )));
        }
    }
    let mut names: Vec<String> = Vec::new();
    for input in inputs {
        for configuration in &input.results.configurations {
            if !names.contains(&configuration.name) {
                names.push(configuration.name.clone());
            }
        }
    }
    // Every (configuration, metric, pair of runs) test, corrected together.
    let mut comparisons: Vec<PairedComparison> = Vec::new();
    let mut slots: Vec<(usize, usize, usize)> = Vec::new();
    for (row, name) in names.iter().enumerate() {
        for metric in &metrics {
            for (first, earlier) in inputs.iter().enumerate() {
                let Some(reference_configuration) = earlier.results.configuration(name) else {
                    continue;
                };
                for (second, later) in inputs.iter().enumerate().skip(first + 1) {
                    let Some(candidate) = later.results.configuration(name) else {
                        continue;
                    };
                    if let Some(comparison) =
                        compare(reference_configuration, candidate, metric, significance)
                    {
                        comparisons.push(comparison);
                        slots.push((row, first, second));
                    }
                }
            }
        }
    }
    correct(&mut comparisons, significance);
    let tests = comparisons.len();
    let mut rows: Vec<CompareRow> = names
        .iter()
        .map(|name| CompareRow {
            configuration: name.clone(),
            cells: inputs
                .iter()
                .flat_map(|input| {
                    metrics.iter().map(|metric| CompareCell {
                        run: input.label.clone(),
                        metric: metric.clone(),
                        value: input
                            .results
                            .configuration(name)
                            .and_then(|configuration| configuration.macro_value(metric)),
                        best: false,
                        beats: Vec::new(),
                    })
                })
                .collect(),
            comparisons: Vec::new(),
        })
        .collect();
    for (comparison, (row, first, second)) in comparisons.into_iter().zip(slots) {
        rows[row].comparisons.push(PairComparison {
            reference_run: inputs[first].label.clone(),
            candidate_run: inputs[second].label.clone(),
            comparison,
        });
    }
    let labels: Vec<&str> = inputs.iter().map(|input| input.label.as_str()).collect();
    for row in &mut rows {
        mark(row, &labels, &metrics);
    }
    Ok(CompareReport {
        schema_version: SCHEMA_VERSION,
        kind,
        dataset: reference.results.dataset.name.clone(),
        content_hash: reference.results.dataset.content_hash.clone(),
        metrics,
        significance: *significance,
        tests,
        runs: inputs
            .iter()
            .enumerate()
            .map(|(index, input)| ComparedRun {
                key: key(index),
                label: input.label.clone(),
                source: input.source.clone(),
                embedder: input
                    .results
                    .embedder
                    .as_ref()
                    .map(|e| format!("{} ({}, {} dims)", e.kind, e.model, e.dimension)),
                accounting: input.accounting.clone(),
            })
            .collect(),
        rows,
    })
}

/// Marks in `row` the best value of each metric and, in each cell, the runs it beats:
/// those of a significant pair whose difference favours it.
fn mark(row: &mut CompareRow, labels: &[&str], metrics: &[String]) {
    let position = |label: &str| labels.iter().position(|known| *known == label);
    for (metric_index, metric) in metrics.iter().enumerate() {
        let cell_index = |run: usize| run * metrics.len() + metric_index;
        let mut wins: Vec<(usize, usize)> = Vec::new();
        for pair in &row.comparisons {
            let comparison = &pair.comparison;
            if comparison.metric != *metric || !comparison.significant {
                continue;
            }
            let (Some(reference), Some(candidate)) =
                (position(&pair.reference_run), position(&pair.candidate_run))
            else {
                continue;
            };
            if comparison.delta > 0.0 {
                wins.push((candidate, reference));
            } else if comparison.delta < 0.0 {
                wins.push((reference, candidate));
            }
        }
        wins.sort_unstable();
        for (winner, loser) in wins {
            row.cells[cell_index(winner)]
                .beats
                .push(labels[loser].to_owned());
        }
        let values: Vec<f64> = (0..labels.len())
            .filter_map(|run| row.cells[cell_index(run)].value)
            .collect();
        if is_coverage(metric) || values.len() < 2 {
            continue;
        }
        let top = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        for run in 0..labels.len() {
            let cell = &mut row.cells[cell_index(run)];
            cell.best = cell.value.is_some_and(|value| value >= top - TIE_TOLERANCE);
        }
    }
}

/// How the pairs were tested, in words (without the level, which LaTeX sets in math):
/// `paired t-test, Holm-corrected over 9 tests`.
pub fn test_description(report: &CompareReport) -> String {
    let significance = &report.significance;
    let test = match significance.test {
        SignificanceTest::Randomization => format!(
            "paired randomization test (every sign pattern when there are at most {0}, else {0} random ones)",
            significance.iterations
        ),
        SignificanceTest::TTest => "paired t-test".to_owned(),
    };
    format!(
        "{test}, {} over {} test{}",
        significance.correction.adjective(),
        report.tests,
        if report.tests == 1 { "" } else { "s" }
    )
}

/// What the comparison shows and how significance was tested, in one sentence (without
/// the mark of the best value, which each format shows its own way).
pub fn legend(report: &CompareReport) -> String {
    let metrics: Vec<String> = report
        .metrics
        .iter()
        .map(|metric| crate::metric_names::display(metric))
        .collect();
    format!(
        "{} on {}; superscript letters name the runs each run beats significantly ({}, p < {})",
        metrics.join(", "),
        report.dataset,
        test_description(report),
        report.significance.alpha
    )
}

/// A p-value as tables print it, one width for every p so that a column aligns:
/// `p = 0.0289`, or `p < 0.0001`.
pub fn p_text(p: f64) -> String {
    if p < 0.0001 {
        "p < 0.0001".to_owned()
    } else {
        format!("p = {p:.4}")
    }
}

/// A measured number, or `-` when it was not recorded.
pub fn optional(value: Option<f64>) -> String {
    value.map_or_else(|| "-".into(), |value| format!("{value:.0}"))
}
