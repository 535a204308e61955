//! What charts and per-query diagnostics read of a scored configuration: its name, its
//! macro values and each evaluated query's metrics. A configuration of this run
//! ([`ConfigurationResult`]) and one read back from a `results.json` or scored from an
//! external run file ([`StoredConfiguration`]) both provide it, so the built-in report
//! and the report of external runs draw the same charts from the same code.

use serde_json::Value;

use super::stored::StoredConfiguration;
use super::{ConfigurationResult, MetricValues};
use crate::dataset::QueryId;

/// A configuration's scores, as charts and diagnostics read them.
pub trait ScoredConfiguration {
    /// The name it is shown under.
    fn name(&self) -> &str;
    /// The macro value of `metric`, if computed.
    fn macro_value(&self, metric: &str) -> Option<f64>;
    /// Every evaluated query with its metric values, in the run's query order.
    fn query_metrics(&self) -> impl Iterator<Item = (&QueryId, &MetricValues)>;
}

impl ScoredConfiguration for ConfigurationResult {
    fn name(&self) -> &str {
        &self.name
    }

    fn macro_value(&self, metric: &str) -> Option<f64> {
        self.macro_metrics.get(metric).and_then(Value::as_f64)
    }

    fn query_metrics(&self) -> impl Iterator<Item = (&QueryId, &MetricValues)> {
        self.per_query
            .iter()
            .map(|query| (&query.query, &query.metrics))
    }
}

impl ScoredConfiguration for StoredConfiguration {
    fn name(&self) -> &str {
        &self.name
    }

    fn macro_value(&self, metric: &str) -> Option<f64> {
        StoredConfiguration::macro_value(self, metric)
    }

    fn query_metrics(&self) -> impl Iterator<Item = (&QueryId, &MetricValues)> {
        self.per_query
            .iter()
            .map(|query| (&query.query, &query.metrics))
    }
}

impl<T: ScoredConfiguration> ScoredConfiguration for &T {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn macro_value(&self, metric: &str) -> Option<f64> {
        (**self).macro_value(metric)
    }

    fn query_metrics(&self) -> impl Iterator<Item = (&QueryId, &MetricValues)> {
        (**self).query_metrics()
    }
}
