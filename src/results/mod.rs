//! The results document: [`Results`] is the contract, a versioned, deterministic JSON
//! document (`results.json`) that the gate, comparisons, sweeps and reports read, and
//! that another tool can read without hyde-eval's code. This module owns its types and
//! nothing that renders them: the pipeline's run assembles a document (`pipeline::run`),
//! `digest` reduces the rankings streaming out of the pipeline to its per-query records,
//! `by_tag` breaks the macro averages down by query tag, `stored` is the read model of a
//! file on disk, `external` builds it from runs of any system scored against qrels,
//! `shard`, `recompute` and `merge` split a run across machines and put it back
//! together (checking each shard against the dataset and its run files), and `report`
//! renders it.

pub mod accounting;
pub mod by_tag;
pub mod details;
pub mod digest;
pub mod engine;
pub mod external;
pub mod hyde_figures;
pub mod kind;
pub mod merge;
pub mod per_query;
pub mod recompute;
pub mod scored;
pub mod shard;
pub mod stored;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::configuration::{Params, Plan, Preset};
use crate::dataset::{Dataset, FactId, QueryId};
use crate::embed::ProviderIdentity;
use crate::expectations::ExpectationSummary;
use crate::generate::GeneratorIdentity;
use crate::metrics::MetricSettings;
use accounting::{BackendAccounting, RunBackendAccounting};
pub use hyde_figures::AdaptiveFloorSummary;
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
    /// The search engine that served the candidates (`run --engine`), with what its
    /// index cost; absent for runs on the in-process indexes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<engine::EngineRun>,
    /// How facts were split for vector search (`run --chunk`); absent when whole facts
    /// were indexed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunking: Option<Chunking>,
    pub configurations: Vec<ConfigurationResult>,
    /// What real backends spent in the run (requests, tokens, cache hits). Absent for
    /// deterministic providers and recorded hypotheses; unlike every other field it
    /// differs between a first run and a cached rerun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<RunBackendAccounting>,
    /// Every query with its hypotheses and judgments, for per-query diagnostics.
    #[serde(default)]
    pub queries: Vec<details::QueryDetail>,
    /// The facts named by any `top` list or judgment, for per-query diagnostics.
    #[serde(default)]
    pub facts: Vec<details::FactDetail>,
}

/// The windows facts were split into for vector search, and how many there were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunking {
    /// Whitespace-separated words per window.
    pub tokens: usize,
    /// Words each window shares with the next.
    pub overlap: usize,
    /// Windows indexed, over every fact of the corpus.
    pub chunks: usize,
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
    /// The dataset declares its judgments complete (`judgments_complete = true` in
    /// `dataset.toml`); absent when it does not.
    #[serde(default, skip_serializing_if = "is_false")]
    pub judgments_complete: bool,
}

impl DatasetSummary {
    /// The summary of `dataset`.
    pub fn of(dataset: &Dataset) -> DatasetSummary {
        DatasetSummary {
            name: dataset.manifest.name.clone(),
            description: dataset.manifest.description.clone(),
            content_hash: dataset.content_hash.clone(),
            files: dataset.files.clone(),
            now: dataset.manifest.now.to_rfc3339(),
            facts: dataset.facts.len(),
            queries: dataset.queries.len(),
            judgments: dataset.judgment_count(),
            queries_with_hypotheses: dataset.hypotheses.len(),
            judgments_complete: dataset.manifest.judgments_complete,
        }
    }
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
    /// The macro averages of the evaluated queries of each tag, in tag order; absent
    /// when no query has a tag.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_tag: Vec<by_tag::TagMetrics>,
    pub counts: Counts,
    /// HyDE accounting; `null` for configurations that use no hypotheses.
    pub hyde: Option<HydeSummary>,
    /// The floors the adaptive floor settled on over the evaluated queries; absent
    /// when the configuration has no adaptive floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive_floor: Option<AdaptiveFloorSummary>,
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
    /// Skipped by `min_query_chars` (omitted when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_few_characters: usize,
    /// Skipped by `intent_gate` as lookups (omitted when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_lookup_intent: usize,
    /// Hypotheses of the queries that consulted the generator (used or fell back):
    /// generated for this run, served from hyde-eval's cache, replayed from the
    /// dataset's recorded file. A query's hypotheses count for every configuration
    /// that consulted them. (Documents written before these figures read as 0 / null.)
    #[serde(default)]
    pub hypotheses_generated: u64,
    #[serde(default)]
    pub hypotheses_from_cache: u64,
    #[serde(default)]
    pub hypotheses_recorded: u64,
    /// Share of those hypotheses not generated for this run (from the cache or the
    /// recorded file); `null` when no hypothesis was served.
    #[serde(default)]
    pub cache_hit_rate: Option<f64>,
    /// The generation time of the queries whose time is known (measured when their
    /// hypotheses were generated, or stated by the recorded provenance); `null` when
    /// no query's is.
    #[serde(default)]
    pub generation_time: Option<hyde_figures::GenerationTime>,
    /// nDCG@10 against the configuration's counterpart without HyDE; set once every
    /// configuration of the document is in ([`hyde_figures::add_improvements`]).
    #[serde(default)]
    pub improvement: Option<hyde_figures::Improvement>,
}

fn is_false(value: &bool) -> bool {
    !value
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PerQueryResult {
    pub query: QueryId,
    pub relevant: usize,
    pub returned: usize,
    /// Whether a hypothesis shaped this ranking; `null` when the configuration uses none.
    pub hypothesis_used: Option<bool>,
    /// The cosine floor this query's adaptive floor settled on; absent when the
    /// configuration has no adaptive floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_floor: Option<f64>,
    pub metrics: MetricValues,
    /// The first (largest cut-off) fact ids of the ranking.
    #[serde(default)]
    pub top: SharedSlice<FactId>,
    /// 1-based rank of every relevant fact; `null` when it was not returned.
    #[serde(default)]
    pub relevant_ranks: RelevantRankMap,
}

impl HydeSummary {
    /// Share of the hypotheses served that were `reused` (from the cache or the
    /// recorded file) rather than `generated`; `None` when none was served.
    pub fn hit_rate(reused: u64, generated: u64) -> Option<f64> {
        let served = reused + generated;
        (served > 0).then(|| reused as f64 / served as f64)
    }

    /// Share of `eligible` queries that used a hypothesis (0 when none were eligible).
    pub fn rate(used: usize, eligible: usize) -> f64 {
        if eligible == 0 {
            0.0
        } else {
            used as f64 / eligible as f64
        }
    }
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

/// `names[i]` mapped to `values[i]`, a NaN as null: the document's macro averages.
pub fn metric_map(names: &[String], values: &[f64]) -> Map<String, Value> {
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
