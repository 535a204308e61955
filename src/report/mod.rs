//! Results and their outputs. [`Results`] is the contract: a versioned, deterministic
//! JSON document that the gate, comparisons and HTML reports read. Building it is pure;
//! `table` renders it for the terminal and `files` writes it (with per-query CSV, TREC
//! run files and timings) atomically.

pub mod eval;
pub mod files;
pub mod table;

use serde::Serialize;
use serde_json::{Map, Number, Value};

use crate::dataset::{Dataset, QueryId};
use crate::embed::ProviderIdentity;
use crate::generate::GeneratorIdentity;
use crate::metrics::{Evaluation, MetricSettings};
use crate::pipeline::config::{Params, Plan, Preset};
use crate::pipeline::ConfigurationOutput;

/// Bumped whenever a field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub run_name: String,
    pub dataset: DatasetSummary,
    pub evaluation: EvaluationSummary,
    /// `null` when no configuration used embeddings.
    pub embedder: Option<ProviderIdentity>,
    pub generator: GeneratorIdentity,
    pub configurations: Vec<ConfigurationResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolInfo {
    pub name: &'static str,
    pub version: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct DatasetSummary {
    pub name: String,
    pub description: String,
    /// `sha256:` over every file read; baselines must match it.
    pub content_hash: String,
    pub files: Vec<String>,
    /// The fixed "now" of temporal scores (RFC 3339).
    pub now: String,
    pub facts: usize,
    pub queries: usize,
    pub judgments: usize,
    pub queries_with_hypotheses: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvaluationSummary {
    #[serde(flatten)]
    pub settings: MetricSettings,
    pub metrics: Vec<String>,
    /// Queries with at least one relevant fact (the ones averaged).
    pub evaluated_queries: usize,
    /// Queries without a relevant fact at this relevance level (not averaged).
    pub queries_without_relevant: Vec<QueryId>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigurationResult {
    pub name: String,
    pub preset: Preset,
    pub description: &'static str,
    pub source: &'static str,
    pub plan: Plan,
    pub params: Params,
    /// Macro averages over evaluated queries, in metric order.
    #[serde(rename = "macro")]
    pub macro_metrics: Map<String, Value>,
    pub counts: Counts,
    /// HyDE accounting; `null` for configurations that use no hypotheses.
    pub hyde: Option<HydeSummary>,
    pub per_query: Vec<PerQueryResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Counts {
    pub queries: usize,
    pub evaluated: usize,
    /// Evaluated queries for which the configuration returned nothing.
    pub empty_rankings: usize,
    /// Queries without relevant facts for which it returned nothing (correct abstention).
    pub abstained_without_relevant: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct HydeSummary {
    pub eligible_queries: usize,
    pub hypotheses_used: usize,
    pub usage_rate: f64,
    pub fallback_no_hypothesis: usize,
    pub skipped_short_query: usize,
    pub skipped_code_mention: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PerQueryResult {
    pub query: QueryId,
    pub relevant: usize,
    pub returned: usize,
    /// Whether a hypothesis shaped this ranking; `null` when the configuration uses none.
    pub hypothesis_used: Option<bool>,
    pub metrics: Map<String, Value>,
}

fn metric_map(names: &[String], values: &[f64]) -> Map<String, Value> {
    names
        .iter()
        .zip(values)
        .map(|(name, &value)| {
            (
                name.clone(),
                Number::from_f64(value).map_or(Value::Null, Value::Number),
            )
        })
        .collect()
}

/// Assembles the results document from the pipeline's outputs and their evaluations.
pub fn build_results(
    run_name: &str,
    dataset: &Dataset,
    settings: &MetricSettings,
    embedder: Option<ProviderIdentity>,
    generator: GeneratorIdentity,
    outputs: &[ConfigurationOutput],
    evaluations: &[Evaluation],
) -> Results {
    let names = settings.metric_names();
    let first = evaluations.first();
    let configurations = outputs
        .iter()
        .zip(evaluations)
        .map(|(output, evaluation)| {
            let configuration = &output.configuration;
            let uses_hypotheses = configuration.plan().uses_hypotheses();
            let position_of: std::collections::HashMap<&QueryId, usize> = output
                .rankings
                .iter()
                .enumerate()
                .map(|(index, ranking)| (&ranking.query, index))
                .collect();
            let per_query = evaluation
                .per_query
                .iter()
                .map(|query| PerQueryResult {
                    query: query.query.clone(),
                    relevant: query.relevant,
                    returned: query.returned,
                    hypothesis_used: uses_hypotheses
                        .then(|| output.used_hypotheses[position_of[&query.query]]),
                    metrics: metric_map(&names, &query.values),
                })
                .collect();
            let abstained = evaluation
                .without_relevant
                .iter()
                .filter(|query| output.rankings[position_of[query]].results.is_empty())
                .count();
            let accounting = &output.accounting;
            ConfigurationResult {
                name: configuration.name.clone(),
                preset: configuration.preset,
                description: configuration.preset.description(),
                source: configuration.preset.source(),
                plan: configuration.plan(),
                params: configuration.params.clone(),
                macro_metrics: metric_map(&names, &evaluation.means),
                counts: Counts {
                    queries: output.rankings.len(),
                    evaluated: evaluation.per_query.len(),
                    empty_rankings: evaluation
                        .per_query
                        .iter()
                        .filter(|query| query.returned == 0)
                        .count(),
                    abstained_without_relevant: abstained,
                },
                hyde: uses_hypotheses.then(|| HydeSummary {
                    eligible_queries: accounting.eligible_queries,
                    hypotheses_used: accounting.hypotheses_used,
                    usage_rate: accounting.usage_rate(),
                    fallback_no_hypothesis: accounting.fallback_no_hypothesis,
                    skipped_short_query: accounting.skipped_short_query,
                    skipped_code_mention: accounting.skipped_code_mention,
                }),
                per_query,
            }
        })
        .collect();
    Results {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "hyde-eval",
            version: env!("CARGO_PKG_VERSION"),
        },
        run_name: run_name.to_owned(),
        dataset: DatasetSummary {
            name: dataset.manifest.name.clone(),
            description: dataset.manifest.description.clone(),
            content_hash: dataset.content_hash.clone(),
            files: dataset.files.clone(),
            now: dataset.manifest.now.to_rfc3339(),
            facts: dataset.facts.len(),
            queries: dataset.queries.len(),
            judgments: dataset.judgment_count(),
            queries_with_hypotheses: dataset.hypotheses.len(),
        },
        evaluation: EvaluationSummary {
            settings: settings.clone(),
            metrics: names,
            evaluated_queries: first.map_or(0, |evaluation| evaluation.per_query.len()),
            queries_without_relevant: first
                .map_or_else(Vec::new, |evaluation| evaluation.without_relevant.clone()),
        },
        embedder,
        generator,
        configurations,
    }
}
