//! JSON: the documents (`results.json`, `compare.json`, `gate.json`, `sweep.json`),
//! `eval`, `dataset stats` and `cache stats` with `--format json`, pretty-printed with a
//! final newline, each with its `schema_version`.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Document, Exporter};
use crate::error::Error;
use crate::sweep::SweepResults;
use crate::trec_eval::{Column, EvalOptions, EvaluatedRun};

/// The JSON exporter.
pub struct Json;

impl Exporter for Json {
    fn render(&self, document: &Document<'_>) -> Option<Result<String, Error>> {
        let bytes = match document {
            Document::Run {
                results,
                gate: None,
                ..
            } => json_bytes(results),
            // results.json as written, with the gate's verdict (gate.json) beside.
            Document::Run {
                results,
                gate: Some(gate),
                ..
            } => json_bytes(&GatedRun { results, gate }),
            Document::Compare(report) => json_bytes(report),
            Document::Sweep(results) => sweep_json(results),
            Document::Eval {
                qrels,
                runs,
                options,
                per_query,
                gate,
            } => {
                return Some(Ok(eval_json(
                    EvalDocument {
                        qrels,
                        runs,
                        options,
                        per_query: *per_query,
                    },
                    *gate,
                )))
            }
            Document::DatasetStats(stats) => json_bytes(&Versioned {
                schema_version: super::STATS_SCHEMA_VERSION,
                document: stats,
            }),
            Document::CacheStats { root, namespaces } => json_bytes(&Versioned {
                schema_version: super::STATS_SCHEMA_VERSION,
                document: CacheDocument {
                    cache: root,
                    namespaces,
                },
            }),
        };
        Some(Ok(String::from_utf8(bytes).expect("JSON is UTF-8")))
    }
}

/// A gated run as `--format json` prints it: results.json's fields, then `gate`.
#[derive(Serialize)]
struct GatedRun<'a> {
    #[serde(flatten)]
    results: &'a crate::results::Results,
    gate: &'a crate::gate::GateReport,
}

/// A document with `schema_version` as its first field.
#[derive(Serialize)]
struct Versioned<T: Serialize> {
    schema_version: u32,
    #[serde(flatten)]
    document: T,
}

/// `cache stats`' document: the cache directory and its namespaces.
#[derive(Serialize)]
struct CacheDocument<'a> {
    cache: &'a std::path::Path,
    namespaces: &'a [crate::cache::NamespaceStats],
}

/// Pretty JSON with a final newline.
pub fn json_bytes(value: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("report types serialize");
    bytes.push(b'\n');
    bytes
}

/// `sweep.json`, pretty-printed with a final newline.
pub fn sweep_json(results: &SweepResults) -> Vec<u8> {
    let mut json = serde_json::to_vec_pretty(results).expect("sweep results serialize");
    json.push(b'\n');
    json
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
    /// The gate's verdict and checks (gate.json's document), when gated.
    #[serde(skip_serializing_if = "Option::is_none")]
    gate: Option<&'a crate::gate::GateReport>,
}

/// What `eval`'s JSON document holds besides the gate.
pub struct EvalDocument<'a> {
    pub qrels: &'a str,
    pub runs: &'a [EvaluatedRun],
    pub options: &'a EvalOptions,
    pub per_query: bool,
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
/// `runs[].per_query.{query}`; with a `gate`, the gate's document as `gate`.
pub fn eval_json(document: EvalDocument<'_>, gate: Option<&crate::gate::GateReport>) -> String {
    let EvalDocument {
        qrels: qrels_path,
        runs,
        options,
        per_query,
    } = document;
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
        gate,
    };
    let mut text = serde_json::to_string_pretty(&document).expect("serializable");
    text.push('\n');
    text
}
