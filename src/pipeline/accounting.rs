//! Accounting: how each configuration used HyDE ([`HydeAccounting`]), what the
//! backends spent per configuration and for the whole run (requests, tokens, cache hits,
//! failures, latency percentiles; `StageUsage` per shared stage), the reasons of failed
//! generations and hypothesis embeddings, and the wall-clock time of the shared stages
//! ([`StageTimings`], filled in by the stages as they run).
//!
//! It only counts what the other stages recorded; it must not change a ranking or call
//! a backend.

use serde::{Deserialize, Serialize};

use super::expand::QueryExpansion;
use super::expand::{HydeOutcome, SkipReason};
use crate::embed::EmbeddingUsage;
use crate::generate::{GenerationCost, GenerationFailure};

/// Per-configuration HyDE accounting.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HydeAccounting {
    /// Queries the configuration would expand with hypotheses.
    pub eligible_queries: usize,
    /// Queries that were expanded with at least one hypothesis.
    pub hypotheses_used: usize,
    /// Skipped by the short-query heuristic.
    pub skipped_short_query: usize,
    /// Skipped by the code-mention heuristic.
    pub skipped_code_mention: usize,
    /// Skipped for having fewer than `min_query_chars` characters.
    pub skipped_few_characters: usize,
    /// Skipped by the intent gate as a lookup.
    pub skipped_lookup_intent: usize,
    /// Fell back (3a: original keywords; 3b: query embedding) for want of a hypothesis.
    pub fallback_no_hypothesis: usize,
    /// What the queries that consulted the generator (used or fell back) were served:
    /// summed counts, and the generation time of those whose time is known.
    pub supply: GenerationCost,
    /// Queries that consulted the generator with a known generation time.
    pub timed_queries: usize,
    /// Their generation time, summed in query order (ms).
    pub generation_time_ms: f64,
}

impl HydeAccounting {
    /// Share of eligible queries that used a hypothesis (0 when none were eligible).
    pub fn usage_rate(&self) -> f64 {
        crate::results::HydeSummary::rate(self.hypotheses_used, self.eligible_queries)
    }

    /// Share of the hypotheses served that were not generated for this run (from the
    /// cache or the recorded file); `None` when none was served.
    pub fn cache_hit_rate(&self) -> Option<f64> {
        crate::results::HydeSummary::hit_rate(
            self.supply.hypotheses_from_cache + self.supply.hypotheses_recorded,
            self.supply.hypotheses_generated,
        )
    }
}

/// Wall-clock time of the shared stages, milliseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StageTimings {
    pub index_ms: f64,
    pub embed_facts_ms: f64,
    pub expand_queries_ms: f64,
    pub retrieve_ms: f64,
}

/// Embedding spend per shared stage.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct StageUsage {
    pub(super) facts: EmbeddingUsage,
    pub(super) queries: EmbeddingUsage,
    pub(super) hypotheses: EmbeddingUsage,
}

/// The generation cost of some queries: summed counts, each query's latency, failures.
pub(super) struct GenerationSum {
    pub(super) cost: GenerationCost,
    pub(super) latencies: Vec<f64>,
    pub(super) failures: usize,
}

pub(super) fn generation_sum<'e>(
    expansions: impl Iterator<Item = &'e QueryExpansion>,
) -> GenerationSum {
    let mut sum = GenerationSum {
        cost: GenerationCost::default(),
        latencies: Vec::new(),
        failures: 0,
    };
    for expansion in expansions {
        sum.cost += &expansion.generation_cost;
        sum.latencies.extend(expansion.generation_cost.latency_ms);
        if matches!(expansion.hypotheses, Err(GenerationFailure::Failed(_))) {
            sum.failures += 1;
        }
    }
    sum
}

/// Nearest-rank percentile `p` (0..=100) of `values`; `None` when empty.
pub(super) fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

/// Counts how a configuration's queries used HyDE (each query's outcome with its
/// expansion, in dataset order).
pub(super) fn account<'e>(
    outcomes: impl Iterator<Item = (HydeOutcome, &'e QueryExpansion)>,
) -> HydeAccounting {
    let mut accounting = HydeAccounting::default();
    for (outcome, expansion) in outcomes {
        if outcome != HydeOutcome::NotApplicable {
            accounting.eligible_queries += 1;
        }
        if matches!(outcome, HydeOutcome::Used | HydeOutcome::Fallback) {
            let cost = &expansion.generation_cost;
            accounting.supply += cost;
            if let (Ok(_), Some(latency)) = (&expansion.hypotheses, cost.latency_ms) {
                accounting.timed_queries += 1;
                accounting.generation_time_ms += latency;
            }
        }
        match outcome {
            HydeOutcome::Used => accounting.hypotheses_used += 1,
            HydeOutcome::Skipped(SkipReason::ShortQuery) => accounting.skipped_short_query += 1,
            HydeOutcome::Skipped(SkipReason::CodeMention) => accounting.skipped_code_mention += 1,
            HydeOutcome::Skipped(SkipReason::FewCharacters) => {
                accounting.skipped_few_characters += 1
            }
            HydeOutcome::Skipped(SkipReason::LookupIntent) => accounting.skipped_lookup_intent += 1,
            HydeOutcome::Fallback => accounting.fallback_no_hypothesis += 1,
            HydeOutcome::NotApplicable => {}
        }
    }
    accounting
}
