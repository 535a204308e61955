//! What the backends spent, as the results document records it: per configuration
//! (work shared between configurations counts for each that used it) and for the whole
//! run (shared work counted once). The pipeline fills these in.

use serde::{Deserialize, Serialize};

use crate::embed::EmbeddingUsage;

/// What the backends spent on one configuration's queries. Work shared between
/// configurations (the corpus' vectors, one query's hypotheses) counts for each that
/// used it; the run's totals are in [`RunBackendAccounting`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackendAccounting {
    /// Generation requests for the queries that consulted the generator.
    pub llm_requests: u64,
    pub hypotheses_generated: u64,
    pub hypotheses_from_cache: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Per-query generation latency over the queries that made requests (ms).
    pub generation_latency_ms_p50: Option<f64>,
    pub generation_latency_ms_p95: Option<f64>,
    /// Queries whose generation failed (they fell back).
    pub generation_failures: usize,
    /// Queries whose hypotheses could not be embedded (their vector search fell back).
    pub hypothesis_embedding_failures: usize,
    pub embedding_requests: u64,
    pub texts_embedded: u64,
    pub texts_from_cache: u64,
    pub embedding_tokens: u64,
}

/// What the backends spent in the whole run (shared work counted once).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunBackendAccounting {
    /// `null` when the embedder spends nothing (hash, concept).
    pub embedding: Option<EmbeddingUsage>,
    /// `null` when hypotheses were replayed from the dataset.
    pub generation: Option<GenerationTotals>,
}

/// The generator's spend over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationTotals {
    pub requests: u64,
    pub retries: u64,
    pub hypotheses_generated: u64,
    pub hypotheses_from_cache: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub failures: usize,
    pub corrupt_entries_ignored: u64,
    pub latency_ms_p50: Option<f64>,
    pub latency_ms_p95: Option<f64>,
}
