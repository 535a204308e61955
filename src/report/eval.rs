//! Outputs of `hyde-eval eval`: trec_eval's text layout (the default), JSON and CSV.
//! Pure functions from evaluations to text; the command writes them to stdout.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::trec_eval::{Column, EvalOptions, Family, RunEvaluation};

/// An evaluated run and the file it came from.
pub struct EvaluatedRun {
    pub path: String,
    pub evaluation: RunEvaluation,
}

fn format_value(column: &Column, value: f64) -> String {
    if column.is_count() {
        format!("{}", value as u64)
    } else {
        format!("{value:.4}")
    }
}

/// trec_eval's layout: `measure<pad to 22>\tquery\tvalue`, per-query blocks (with
/// `per_query`) before the `all` block of each run; values to 4 decimals, counts as
/// integers.
pub fn trec_text(runs: &[EvaluatedRun], options: &EvalOptions, per_query: bool) -> String {
    let mut out = String::new();
    let mut line = |name: &str, query: &str, value: &str| {
        out.push_str(&format!("{name:<22}\t{query}\t{value}\n"));
    };
    for run in runs {
        let evaluation = &run.evaluation;
        if per_query {
            for scores in &evaluation.per_query {
                for (column, value) in evaluation.columns.iter().zip(&scores.values) {
                    if column.is_printed_per_query() {
                        line(&column.name(), &scores.query, &format_value(column, *value));
                    }
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

#[derive(Serialize)]
struct JsonDocument<'a> {
    schema_version: u32,
    tool: &'static str,
    version: &'static str,
    qrels: &'a str,
    relevance_level: i32,
    complete: bool,
    max_results: Option<usize>,
    runs: Vec<JsonRun<'a>>,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    path: &'a str,
    runid: &'a str,
    num_q: usize,
    /// Qrels queries absent from the run (left out of the averages unless `complete`).
    missing_from_run: &'a [String],
    /// Run queries without judgments (ignored).
    unjudged_queries: usize,
    all: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    per_query: Option<Map<String, Value>>,
}

fn measure_map(columns: &[Column], values: &[f64], per_query: bool) -> Map<String, Value> {
    columns
        .iter()
        .zip(values)
        .filter(|(column, _)| !per_query || column.is_printed_per_query())
        .map(|(column, &value)| {
            let value = if column.is_count() {
                Value::from(value as u64)
            } else {
                serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
            };
            (column.name(), value)
        })
        .collect()
}

/// A JSON document with full-precision values: `runs[].all` and, with `per_query`,
/// `runs[].per_query.{query}`.
pub fn json(
    qrels_path: &str,
    runs: &[EvaluatedRun],
    options: &EvalOptions,
    per_query: bool,
) -> String {
    let document = JsonDocument {
        schema_version: 1,
        tool: "hyde-eval eval",
        version: env!("CARGO_PKG_VERSION"),
        qrels: qrels_path,
        relevance_level: options.relevance_level,
        complete: options.complete,
        max_results: (options.max_results != usize::MAX).then_some(options.max_results),
        runs: runs
            .iter()
            .map(|run| {
                let evaluation = &run.evaluation;
                JsonRun {
                    path: &run.path,
                    runid: &evaluation.run_id,
                    num_q: evaluation.per_query.len(),
                    missing_from_run: &evaluation.missing_from_run,
                    unjudged_queries: evaluation.unjudged_queries,
                    all: measure_map(&evaluation.columns, &evaluation.summary, false),
                    per_query: per_query.then(|| {
                        evaluation
                            .per_query
                            .iter()
                            .map(|scores| {
                                (
                                    scores.query.clone(),
                                    Value::Object(measure_map(
                                        &evaluation.columns,
                                        &scores.values,
                                        true,
                                    )),
                                )
                            })
                            .collect()
                    }),
                }
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&document).expect("serializable");
    text.push('\n');
    text
}

/// CSV rows `run,runid,query,measure,value` (query `all` for the averages).
pub fn csv(runs: &[EvaluatedRun], per_query: bool) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(["run", "runid", "query", "measure", "value"])?;
    for run in runs {
        let evaluation = &run.evaluation;
        let mut rows: Vec<(&str, &[f64])> = Vec::new();
        if per_query {
            rows.extend(
                evaluation
                    .per_query
                    .iter()
                    .map(|scores| (scores.query.as_str(), scores.values.as_slice())),
            );
        }
        rows.push(("all", &evaluation.summary));
        for (query, values) in rows {
            for (column, value) in evaluation.columns.iter().zip(values) {
                if query != "all" && !column.is_printed_per_query() {
                    continue;
                }
                let value = if column.is_count() {
                    format!("{}", *value as u64)
                } else {
                    format!("{value}")
                };
                writer.write_record([
                    run.path.as_str(),
                    evaluation.run_id.as_str(),
                    query,
                    &column.name(),
                    &value,
                ])?;
            }
        }
    }
    let bytes = writer.into_inner().map_err(|error| error.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings"))
}
