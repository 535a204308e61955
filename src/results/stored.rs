//! A read model of `results.json`: the subset that the gate and `compare` need (dataset
//! identity, how the metrics were defined, each configuration's macro and per-query
//! metrics). Unknown fields are ignored so later schema additions stay readable; the
//! schema version is checked, and a file without configurations is refused.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{MetricValues, Results, SCHEMA_VERSION};
use crate::dataset::{Grade, QueryId};
use crate::error::{Error, Problem, Problems};
use crate::metric_names::canonical;
use crate::metrics::Semantics;

/// How far past [0, 1] a stored metric value may lie and still be float rounding.
const METRIC_RANGE_SLACK: f64 = 1e-9;

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

/// How the metrics were defined: two results compare number for number only when
/// these agree (see [`StoredResults::definition_differences`]).
#[derive(Debug, Clone, Deserialize)]
pub struct StoredEvaluation {
    pub metrics: Vec<String>,
    pub cutoffs: Vec<usize>,
    pub relevance_level: Grade,
    pub semantics: Semantics,
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
    pub params: StoredParams,
    #[serde(rename = "macro")]
    pub macro_metrics: Map<String, Value>,
    pub per_query: Vec<StoredQuery>,
}

/// The parameters that define a configuration's metrics rather than its retrieval.
#[derive(Debug, Clone, Deserialize)]
pub struct StoredParams {
    /// Results kept per query (trec_eval's -M).
    pub depth: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StoredQuery {
    pub query: QueryId,
    pub metrics: MetricValues,
    /// The ranking's first facts (as deep as the largest cut-off); what judging pools.
    #[serde(default)]
    pub top: Vec<String>,
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
            .filter_map(|query| query.metrics.get(metric).map(|value| (&query.query, value)))
            .collect()
    }
}

impl StoredResults {
    /// Reads and checks a `results.json` file.
    pub fn load(path: &Path) -> Result<StoredResults, Error> {
        let bytes = crate::input::read(path)?;
        let stored: StoredResults = serde_json::from_slice(&bytes).map_err(|error| {
            let hint =
                "pass a results.json written by `hyde-eval run` or `hyde-eval baseline update`";
            Error::problem(
                super::kind::wrong_document(
                    path,
                    &bytes,
                    super::kind::DocumentKind::Results,
                    |_| hint.into(),
                )
                .unwrap_or_else(|| {
                    Problem::new(
                        path,
                        Some(error.line()),
                        format!("not a hyde-eval results.json: {error}"),
                    )
                    .with_hint(hint)
                }),
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
        stored.check_ranges(path)?;
        if stored.configurations.is_empty() {
            return Err(Error::problem(
                Problem::new(
                    path,
                    None,
                    "holds no configurations, so nothing in it can be compared",
                )
                .with_hint(
                    "pass a results.json of a run that evaluated at least one configuration",
                ),
            ));
        }
        Ok(stored)
    }

    /// Refuses metric values outside [0, 1], the range of every metric hyde-eval
    /// computes (beyond float rounding): a file holding one was edited or is not
    /// hyde-eval's, and a gate or comparison against it would judge by numbers no run
    /// can produce. Each value is named by configuration, query and metric.
    fn check_ranges(&self, path: &Path) -> Result<(), Error> {
        let outside = |value: f64| {
            !value.is_nan() && !(-METRIC_RANGE_SLACK..=1.0 + METRIC_RANGE_SLACK).contains(&value)
        };
        let mut problems = Problems::default();
        let hint = "every metric is a fraction in [0, 1], so the file was edited: use the results.json hyde-eval wrote, or record the baseline again (`hyde-eval baseline update`)";
        for configuration in &self.configurations {
            let name = &configuration.name;
            for (metric, value) in &configuration.macro_metrics {
                match value.as_f64() {
                    Some(value) if canonical(metric).is_some() && outside(value) => problems.push(
                        Problem::new(
                            path,
                            None,
                            format!("configuration {name:?}: {metric} = {value} is outside [0, 1]"),
                        )
                        .with_hint(hint),
                    ),
                    _ => {}
                }
            }
            for query in &configuration.per_query {
                for (metric, value) in query.metrics.entries() {
                    if canonical(metric).is_some() && outside(value) {
                        problems.push(
                            Problem::new(
                                path,
                                None,
                                format!(
                                    "configuration {name:?}, query {}: {metric} = {value} is outside [0, 1]",
                                    query.query
                                ),
                            )
                            .with_hint(hint),
                        );
                    }
                }
            }
        }
        problems.into_result()
    }

    /// How `other`'s metrics are defined differently from these (relevance level,
    /// semantics, and the depth of each configuration both hold), one line each; empty
    /// when their numbers compare number for number.
    pub fn definition_differences(&self, other: &StoredResults) -> Vec<String> {
        let mut differences = Vec::new();
        if self.evaluation.relevance_level != other.evaluation.relevance_level {
            differences.push(format!(
                "relevance level {} here, {} there",
                self.evaluation.relevance_level, other.evaluation.relevance_level
            ));
        }
        if self.evaluation.semantics != other.evaluation.semantics {
            differences.push(format!(
                "{} semantics here, {} there",
                self.evaluation.semantics.name(),
                other.evaluation.semantics.name()
            ));
        }
        for configuration in &self.configurations {
            if let Some(counterpart) = other.configuration(&configuration.name) {
                if configuration.params.depth != counterpart.params.depth {
                    differences.push(format!(
                        "{}: depth {} here, {} there",
                        configuration.name, configuration.params.depth, counterpart.params.depth
                    ));
                }
            }
        }
        differences
    }

    /// The read model of in-memory results: what [`Self::load`] reads from their
    /// `results.json` (a test holds the two equal).
    pub fn from_results(results: &Results) -> StoredResults {
        let evaluation = &results.evaluation;
        StoredResults {
            schema_version: results.schema_version,
            run_name: results.run_name.clone(),
            dataset: StoredDataset {
                name: results.dataset.name.clone(),
                content_hash: results.dataset.content_hash.clone(),
                queries: results.dataset.queries,
            },
            evaluation: StoredEvaluation {
                metrics: evaluation.metrics.clone(),
                cutoffs: evaluation.settings.cutoffs.clone(),
                relevance_level: evaluation.settings.relevance_level,
                semantics: evaluation.settings.semantics,
            },
            embedder: results.embedder.as_ref().map(|embedder| StoredEmbedder {
                kind: embedder.kind.clone(),
                model: embedder.model.clone(),
                dimension: embedder.dimension,
            }),
            configurations: results
                .configurations
                .iter()
                .map(|configuration| StoredConfiguration {
                    name: configuration.name.clone(),
                    params: StoredParams {
                        depth: configuration.params.depth,
                    },
                    macro_metrics: configuration.macro_metrics.clone(),
                    per_query: configuration
                        .per_query
                        .iter()
                        .map(|query| StoredQuery {
                            query: query.query.clone(),
                            metrics: query.metrics.clone(),
                            top: query
                                .top
                                .iter()
                                .map(|fact| fact.as_str().to_owned())
                                .collect(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    pub fn configuration(&self, name: &str) -> Option<&StoredConfiguration> {
        self.configurations
            .iter()
            .find(|configuration| configuration.name == name)
    }
}
