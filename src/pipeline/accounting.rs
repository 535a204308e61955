//! Accounting: how each configuration used HyDE ([`HydeAccounting`]), what the
//! backends spent per configuration and for the whole run (requests, tokens, cache hits,
//! failures, latency percentiles; `StageUsage` per shared stage), the reasons of failed
//! generations and hypothesis embeddings, and the wall-clock time of the shared stages
//! ([`StageTimings`], filled in by the stages as they run).
//!
//! It only counts what the other stages recorded; it must not change a ranking or call
//! a backend.

use serde::Serialize;

use super::expand::{HydeOutcome, SkipReason};
use super::{Prepared, QueryExpansion};
use crate::configuration::{Plan, SearchVector};
use crate::embed::EmbeddingUsage;
use crate::generate::{GenerationCost, GenerationFailure};
use crate::results::accounting::{BackendAccounting, GenerationTotals, RunBackendAccounting};

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
    /// Fell back (3a: original keywords; 3b: query embedding) for want of a hypothesis.
    pub fallback_no_hypothesis: usize,
}

impl HydeAccounting {
    /// Share of eligible queries that used a hypothesis (0 when none were eligible).
    pub fn usage_rate(&self) -> f64 {
        if self.eligible_queries == 0 {
            0.0
        } else {
            self.hypotheses_used as f64 / self.eligible_queries as f64
        }
    }
}

/// Wall-clock time of the shared stages, milliseconds.
#[derive(Debug, Clone, Default, Serialize)]
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
struct GenerationSum {
    cost: GenerationCost,
    latencies: Vec<f64>,
    failures: usize,
}

fn generation_sum<'e>(expansions: impl Iterator<Item = &'e QueryExpansion>) -> GenerationSum {
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
fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

impl Prepared<'_> {
    /// What one configuration's queries cost, given how each used HyDE.
    pub(super) fn backend_accounting(
        &self,
        plan: Plan,
        outcomes: &[HydeOutcome],
    ) -> Option<BackendAccounting> {
        if self.embedding_usage.is_none() && !self.generator_live {
            return None;
        }
        let mut accounting = BackendAccounting::default();
        let consulted: Vec<&QueryExpansion> = self
            .expansions
            .iter()
            .zip(outcomes)
            .filter(|(_, outcome)| matches!(outcome, HydeOutcome::Used | HydeOutcome::Fallback))
            .map(|(expansion, _)| expansion)
            .collect();
        if self.generator_live {
            let generation = generation_sum(consulted.iter().copied());
            accounting.llm_requests = generation.cost.requests;
            accounting.hypotheses_generated = generation.cost.hypotheses_generated;
            accounting.hypotheses_from_cache = generation.cost.hypotheses_from_cache;
            accounting.prompt_tokens = generation.cost.prompt_tokens;
            accounting.completion_tokens = generation.cost.completion_tokens;
            accounting.generation_latency_ms_p50 = percentile(&generation.latencies, 50.0);
            accounting.generation_latency_ms_p95 = percentile(&generation.latencies, 95.0);
            accounting.generation_failures = generation.failures;
        }
        if plan
            .vector
            .is_some_and(|vector| vector != SearchVector::Query)
        {
            accounting.hypothesis_embedding_failures = consulted
                .iter()
                .filter(|expansion| expansion.hypothesis_embedding_failure.is_some())
                .count();
        }
        if let (Some(usage), Some(vector)) = (&self.embedding_usage, plan.vector) {
            let mut spent = usage.facts;
            spent += usage.queries;
            if vector != SearchVector::Query && plan.uses_hypotheses() {
                spent += usage.hypotheses;
            }
            accounting.embedding_requests = spent.requests;
            accounting.texts_embedded = spent.texts_embedded;
            accounting.texts_from_cache = spent.texts_from_cache;
            accounting.embedding_tokens = spent.tokens;
        }
        Some(accounting)
    }

    /// What the run's backends spent, shared work counted once.
    pub(super) fn run_backend_accounting(&self) -> Option<RunBackendAccounting> {
        if self.embedding_usage.is_none() && !self.generator_live {
            return None;
        }
        let embedding = self.embedding_usage.map(|usage| {
            let mut total = usage.facts;
            total += usage.queries;
            total += usage.hypotheses;
            total
        });
        let generation = self.generator_live.then(|| {
            let mut totals = GenerationTotals {
                requests: self.generator_requests.0,
                retries: self.generator_requests.1,
                ..GenerationTotals::default()
            };
            let generation = generation_sum(self.expansions.iter());
            totals.hypotheses_generated = generation.cost.hypotheses_generated;
            totals.hypotheses_from_cache = generation.cost.hypotheses_from_cache;
            totals.prompt_tokens = generation.cost.prompt_tokens;
            totals.completion_tokens = generation.cost.completion_tokens;
            totals.corrupt_entries_ignored = generation.cost.corrupt_entries_ignored;
            totals.failures = generation.failures;
            totals.latency_ms_p50 = percentile(&generation.latencies, 50.0);
            totals.latency_ms_p95 = percentile(&generation.latencies, 95.0);
            totals
        });
        Some(RunBackendAccounting {
            embedding,
            generation,
        })
    }

    /// The reasons of failed generations and hypothesis embeddings, per failing query.
    pub(super) fn backend_failures(&self) -> Vec<String> {
        self.expansions
            .iter()
            .filter_map(|expansion| {
                match (
                    &expansion.hypotheses,
                    &expansion.hypothesis_embedding_failure,
                ) {
                    (Err(GenerationFailure::Failed(reason)), _) => {
                        Some(format!("generation: {reason}"))
                    }
                    (_, Some(reason)) => Some(format!("hypothesis embedding: {reason}")),
                    _ => None,
                }
            })
            .collect()
    }
}

/// Counts how a configuration's queries used HyDE.
pub(super) fn account(outcomes: impl Iterator<Item = HydeOutcome>) -> HydeAccounting {
    let mut accounting = HydeAccounting::default();
    for outcome in outcomes {
        if outcome != HydeOutcome::NotApplicable {
            accounting.eligible_queries += 1;
        }
        match outcome {
            HydeOutcome::Used => accounting.hypotheses_used += 1,
            HydeOutcome::Skipped(SkipReason::ShortQuery) => accounting.skipped_short_query += 1,
            HydeOutcome::Skipped(SkipReason::CodeMention) => accounting.skipped_code_mention += 1,
            HydeOutcome::Fallback => accounting.fallback_no_hypothesis += 1,
            HydeOutcome::NotApplicable => {}
        }
    }
    accounting
}
