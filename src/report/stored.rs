//! A read model of `results.json`: the subset that the gate and `compare` need (dataset
//! identity, metric names, each configuration's macro and per-query metrics). Unknown
//! fields are ignored so later schema additions stay readable; the schema version is
//! checked.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Results, SCHEMA_VERSION};
use crate::dataset::QueryId;
use crate::error::{Error, Problem};

#[derive(Debug, Clone, Deserialize)]
pub struct StoredResults {
    pub schema_version: u32,
    pub run_name: String,
    pub dataset: StoredDataset,
    pub evaluation: StoredEvaluation,
    pub embedder: Option<StoredEmbedder>,
    pub configurations: Vec<StoredConfiguration>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StoredDataset {
    pub name: String,
    pub content_hash: String,
    pub queries: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StoredEvaluation {
    pub metrics: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StoredEmbedder {
    pub kind: String,
    pub model: String,
    pub dimension: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StoredConfiguration {
    pub name: String,
    #[serde(rename = "macro")]
    pub macro_metrics: Map<String, Value>,
    pub per_query: Vec<StoredQuery>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StoredQuery {
    pub query: QueryId,
    pub metrics: Map<String, Value>,
}

impl StoredConfiguration {
    /// The macro value of `metric`, if this run computed it.
    pub fn macro_value(&self, metric: &str) -> Option<f64> {
        self.macro_metrics.get(metric).and_then(Value::as_f64)
    }

    /// `(query, value)` of `metric` for every evaluated query.
    pub fn per_query_values(&self, metric: &str) -> Vec<(&QueryId, f64)> {
        self.per_query
            .iter()
            .filter_map(|query| {
                query
                    .metrics
                    .get(metric)
                    .and_then(Value::as_f64)
                    .map(|value| (&query.query, value))
            })
            .collect()
    }
}

impl StoredResults {
    /// Reads and checks a `results.json` file.
    pub fn load(path: &Path) -> Result<StoredResults, Error> {
        let bytes = crate::input::read(path)?;
        let stored: StoredResults = serde_json::from_slice(&bytes).map_err(|error| {
            Error::problem(
                Problem::new(
                    path,
                    Some(error.line()),
                    format!("not a hyde-eval results.json: {error}"),
                )
                .with_hint(
                    "pass a results.json written by `hyde-eval run` or `hyde-eval baseline update`",
                ),
            )
        })?;
        if stored.schema_version != SCHEMA_VERSION {
            return Err(Error::problem(Problem::new(
                path,
                None,
                format!(
                    "results schema version {} (this hyde-eval reads {SCHEMA_VERSION})",
                    stored.schema_version
                ),
            )));
        }
        Ok(stored)
    }

    /// The read model of in-memory results (through their JSON form, so both paths agree).
    pub fn from_results(results: &Results) -> StoredResults {
        let value = serde_json::to_value(results).expect("results serialize");
        serde_json::from_value(value).expect("results.json always has the stored fields")
    }

    pub fn configuration(&self, name: &str) -> Option<&StoredConfiguration> {
        self.configurations
            .iter()
            .find(|configuration| configuration.name == name)
    }
}
