//! Results and their outputs. [`Results`] is the contract: a versioned, deterministic
//! JSON document that the gate, comparisons and HTML reports read. Building it is pure;
//! `table` renders it for the terminal and `files` writes it (with per-query CSV, TREC
//! run files and timings) atomically. `html` renders the report page from it (with
//! `charts`, `markdown`, `metrics_csv` and the per-query `diagnostics`), and `sweep`
//! renders `hyde-eval sweep` results. `digest` reduces the rankings streaming out of
//! the pipeline to what the document needs.

pub mod charts;
pub mod diagnostics;
pub mod digest;
pub mod eval;
pub mod files;
pub mod html;
pub mod markdown;
pub mod metrics_csv;
pub mod per_query;
pub mod stored;
pub mod sweep;
pub mod table;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::configuration::{Params, Plan, Preset};
use crate::dataset::{Dataset, FactId, QueryId};
use crate::embed::ProviderIdentity;
use crate::expectations::ExpectationSummary;
use crate::generate::GeneratorIdentity;
use crate::metrics::MetricSettings;
use crate::pipeline::{BackendAccounting, ConfigurationOutput, RunBackendAccounting};
use digest::Digest;
pub use per_query::{MetricValues, RelevantRankMap, SharedSlice};

/// Bumped whenever a field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// What real backends spent in the run (requests, tokens, cache hits). Absent for
    /// deterministic providers and recorded hypotheses; unlike every other field it
    /// differs between a first run and a cached rerun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<RunBackendAccounting>,
    /// Every query with its hypotheses and judgments, for per-query diagnostics.
    #[serde(default)]
    pub queries: Vec<diagnostics::QueryDetail>,
    /// The facts named by any `top` list or judgment, for per-query diagnostics.
    #[serde(default)]
    pub facts: Vec<diagnostics::FactDetail>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvaluationSummary {
    #[serde(flatten)]
    pub settings: MetricSettings,
    pub metrics: Vec<String>,
    /// Queries with at least one relevant fact (the ones averaged).
    pub evaluated_queries: usize,
    /// Queries without a relevant fact at this relevance level (not averaged).
    pub queries_without_relevant: Vec<QueryId>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigurationResult {
    pub name: String,
    pub preset: Preset,
    pub description: String,
    pub source: String,
    pub plan: Plan,
    pub params: Params,
    /// Macro averages over evaluated queries, in metric order.
    #[serde(rename = "macro")]
    pub macro_metrics: Map<String, Value>,
    pub counts: Counts,
    /// HyDE accounting; `null` for configurations that use no hypotheses.
    pub hyde: Option<HydeSummary>,
    /// Per-query expectations; absent when the dataset defines none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectations: Option<ExpectationSummary>,
    /// What real backends spent on this configuration's queries; absent for
    /// deterministic providers and recorded hypotheses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<BackendAccounting>,
    /// One line per record in `results.json` (see [`per_query::one_line_each`]).
    #[serde(serialize_with = "per_query::one_line_each")]
    pub per_query: Vec<PerQueryResult>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Counts {
    pub queries: usize,
    pub evaluated: usize,
    /// Evaluated queries for which the configuration returned nothing.
    pub empty_rankings: usize,
    /// Queries without relevant facts for which it returned nothing (correct abstention).
    pub abstained_without_relevant: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HydeSummary {
    pub eligible_queries: usize,
    pub hypotheses_used: usize,
    pub usage_rate: f64,
    pub fallback_no_hypothesis: usize,
    pub skipped_short_query: usize,
    pub skipped_code_mention: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PerQueryResult {
    pub query: QueryId,
    pub relevant: usize,
    pub returned: usize,
    /// Whether a hypothesis shaped this ranking; `null` when the configuration uses none.
    pub hypothesis_used: Option<bool>,
    pub metrics: MetricValues,
    /// The first (largest cut-off) fact ids of the ranking.
    #[serde(default)]
    pub top: SharedSlice<FactId>,
    /// 1-based rank of every relevant fact; `null` when it was not returned.
    #[serde(default)]
    pub relevant_ranks: RelevantRankMap,
}

impl ToolInfo {
    /// This build of hyde-eval.
    pub fn current() -> ToolInfo {
        ToolInfo {
            name: "hyde-eval".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
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

/// Assembles the results document from the pipeline's outputs and the digests of their
/// rankings (aligned with `outputs`).
pub fn build_results(
    run_name: &str,
    dataset: &Dataset,
    settings: &MetricSettings,
    embedder: Option<ProviderIdentity>,
    generator: GeneratorIdentity,
    outputs: &[ConfigurationOutput],
    digests: Vec<Digest>,
) -> Results {
    let names = settings.metric_names();
    let evaluated_queries = digests.first().map_or(0, |digest| digest.per_query.len());
    let queries_without_relevant = digests
        .first()
        .map_or_else(Vec::new, |digest| digest.without_relevant.clone());
    let configurations = outputs
        .iter()
        .zip(digests)
        .map(|(output, digest)| {
            let configuration = &output.configuration;
            let uses_hypotheses = configuration.plan().uses_hypotheses();
            let evaluated = digest.per_query.len();
            let empty_rankings = digest
                .per_query
                .iter()
                .filter(|query| query.returned == 0)
                .count();
            let macro_metrics = metric_map(&names, &digest.means);
            let mut per_query = digest.per_query;
            if uses_hypotheses {
                for (query, &position) in per_query.iter_mut().zip(&digest.positions) {
                    query.hypothesis_used = Some(output.used_hypotheses[position]);
                }
            }
            let accounting = &output.accounting;
            ConfigurationResult {
                name: configuration.name.clone(),
                preset: configuration.preset,
                description: configuration.preset.description().to_owned(),
                source: configuration.preset.source().to_owned(),
                plan: configuration.plan(),
                params: configuration.params.clone(),
                macro_metrics,
                counts: Counts {
                    queries: digest.queries,
                    evaluated,
                    empty_rankings,
                    abstained_without_relevant: digest.abstained_without_relevant,
                },
                hyde: uses_hypotheses.then(|| HydeSummary {
                    eligible_queries: accounting.eligible_queries,
                    hypotheses_used: accounting.hypotheses_used,
                    usage_rate: accounting.usage_rate(),
                    fallback_no_hypothesis: accounting.fallback_no_hypothesis,
                    skipped_short_query: accounting.skipped_short_query,
                    skipped_code_mention: accounting.skipped_code_mention,
                }),
                expectations: digest.expectations,
                backend: output.backend.clone(),
                per_query,
            }
        })
        .collect();
    let mut results = Results {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::current(),
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
            evaluated_queries,
            queries_without_relevant,
        },
        embedder,
        generator,
        configurations,
        backend: None,
        queries: diagnostics::query_details(dataset),
        facts: Vec::new(),
    };
    results.facts = diagnostics::fact_details(dataset, &results);
    results
}
