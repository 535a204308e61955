//! The data the stages pass on: what the pipeline is given ([`PipelineInputs`]), the
//! indexed corpus ([`IndexedCorpus`]), the shared stages' product ([`Prepared`]) with
//! what can be read off it (backend accounting, failures), and what a run puts out
//! ([`PipelineOutput`]). The stages' code lives in their files.

use super::accounting::{generation_sum, percentile, HydeAccounting, StageTimings, StageUsage};
use super::expand::{HydeOutcome, QueryExpansion};
use super::served::{check_loaded, embedder_stamp, expected_stamp, AnnTally, ServedBy};
use super::vector_spill::SpilledVectors;
use crate::configuration::{Configuration, Params, Plan, SearchVector};
use crate::dataset::{FactId, Query};
use crate::embed::EmbeddingProvider;
use crate::engine::SearchEngine;
use crate::error::Error;
use crate::generate::{GenerationFailure, HypothesisGenerator};
use crate::index::{ChunkOwners, FactIndex, FlatIndex, LexicalIndex};
use crate::progress::Counted;
use crate::results::accounting::{BackendAccounting, GenerationTotals, RunBackendAccounting};
use crate::text::ChunkSpec;
use std::collections::HashMap;
use std::time::Instant;

/// What the pipeline needs besides the dataset.
pub struct PipelineInputs<'a> {
    /// Required when any configuration uses vectors.
    pub embedder: Option<&'a dyn EmbeddingProvider>,
    pub generator: &'a dyn HypothesisGenerator,
    pub configurations: &'a [Configuration],
    /// Show progress bars on stderr (they hide themselves when stderr is no terminal).
    pub progress: bool,
}

/// What one configuration produced.
#[derive(Debug, Clone)]
pub struct ConfigurationOutput {
    pub configuration: Configuration,
    /// Whether each query used a hypothesis, in dataset order.
    pub used_hypotheses: Vec<bool>,
    /// The floor each query's adaptive floor settled on, in dataset order (`None`
    /// without an adaptive floor).
    pub settled_floors: Vec<Option<f64>>,
    pub accounting: HydeAccounting,
    /// `None` when no backend spent anything (deterministic providers, recorded hypotheses).
    pub backend: Option<BackendAccounting>,
    /// Summed per-query retrieval time, milliseconds.
    pub retrieval_ms: f64,
}

/// The pipeline's output for every configuration.
pub struct PipelineOutput {
    pub configurations: Vec<ConfigurationOutput>,
    pub timings: StageTimings,
    /// Texts sent to the embedder (facts, queries, hypotheses).
    pub embedded_texts: usize,
    /// Chunks indexed for vector search, when the facts were chunked (`--chunk`).
    pub chunks: Option<usize>,
    /// `None` when no backend spent anything.
    pub backend: Option<RunBackendAccounting>,
    /// Why hypotheses failed, per failing query (they fell back), for the run's notes.
    pub backend_failures: Vec<String>,
    /// The hypotheses each query got, in dataset order (empty when it got none).
    pub hypotheses: Vec<Vec<String>>,
    /// ANN recall of each configuration's vector searches, when an engine served them
    /// (empty otherwise).
    pub ann: Vec<AnnTally>,
}

/// The shared stages of a run, computed once for all its configurations.
pub struct Prepared<'a> {
    /// The dataset's queries (borrowed apart from its facts, which can be set aside
    /// while the queries are retrieved).
    pub(super) queries: &'a [Query],
    pub(super) configurations: &'a [Configuration],
    pub(super) plans: Vec<Plan>,
    pub(super) corpus: Corpus,
    pub(super) expansions: Vec<QueryExpansion>,
    /// The expansions' vectors, when they wait on disk (see
    /// [`IndexedCorpus::spilling_query_vectors`]).
    pub(super) spilled_vectors: Option<SpilledVectors>,
    /// Facts, queries and hypotheses embedded.
    pub(super) embedded_texts: usize,
    /// Temporal score of every fact, per distinct half-life (keyed by its bits).
    pub(super) temporal_by_setting: HashMap<TemporalKey, Vec<f64>>,
    pub(super) timings: StageTimings,
    /// What the embedder spent per stage, when it spends anything.
    pub(super) embedding_usage: Option<StageUsage>,
    /// HTTP requests and retries of the generator.
    pub(super) generator_requests: (u64, u64),
    /// Whether a live generator (not the recording) wrote the hypotheses.
    pub(super) generator_live: bool,
    pub(super) progress: bool,
    /// The search engine serving the vector searches (and text rankings), when the run
    /// names one; the in-process index otherwise.
    pub(super) served: Option<ServedBy<'a>>,
    /// ANN recall per configuration (aligned with `configurations`), when served.
    pub(super) ann: Vec<AnnTally>,
    /// Each fact's source weight (corpus order), applied to every fused ranking.
    pub(super) source_weights: Option<Vec<f64>>,
}

/// The corpus' fact ids, sorted, with its indexes (facts are addressed by position).
pub(super) struct Corpus {
    pub(super) ids: Vec<FactId>,
    pub(super) lexical: LexicalIndex,
    pub(super) vectors: Option<FlatIndex>,
    /// With `--chunk`, the fact of each row of `vectors` (one row per chunk).
    pub(super) chunk_owners: Option<ChunkOwners>,
}

/// Milliseconds since `started`.
pub(super) fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// The progress of a counted stage when `progress` (see [`crate::progress::counted`]),
/// with a bar on a terminal when the stage is `large`.
pub(super) fn progress_bar(
    progress: bool,
    large: bool,
    length: usize,
    message: &'static str,
) -> Counted {
    crate::progress::counted(progress, large, length, message)
}

/// The shared stages that read the facts themselves (corpus order, lexical index,
/// temporal scores, ids); the fact vectors and query expansions follow in
/// [`IndexedCorpus::embed`], which needs nothing of the facts but their texts.
pub struct IndexedCorpus<'a> {
    pub(super) configurations: &'a [Configuration],
    pub(super) plans: Vec<Plan>,
    pub(super) embedder: Option<&'a dyn EmbeddingProvider>,
    pub(super) generator: &'a dyn HypothesisGenerator,
    pub(super) max_hypotheses: usize,
    pub(super) progress: bool,
    /// Position in the dataset of each fact, in corpus (fact id) order.
    pub(super) fact_order: Vec<u32>,
    pub(super) ids: Vec<FactId>,
    pub(super) lexical: LexicalIndex,
    pub(super) temporal_by_setting: HashMap<TemporalKey, Vec<f64>>,
    pub(super) timings: StageTimings,
    /// Query and hypothesis vectors totalling this many bytes go to disk as they are
    /// made (see [`Self::spilling_query_vectors`]).
    pub(super) vector_spill_min_bytes: Option<usize>,
    /// Split each fact into windows for the vector index (see [`Self::chunking`]).
    pub(super) chunking: Option<ChunkSpec>,
    /// Each fact's source weight, when the run filters or boosts sources (see
    /// [`Self::weighting_sources`]).
    pub(super) source_weights: Option<Vec<f64>>,
}

impl<'a> Prepared<'a> {
    /// Has `engine` serve the vector searches (and text rankings, where it ranks text),
    /// the exact index measuring ANN recall beside it at each of `cutoffs`.
    pub fn serve_from(&mut self, label: String, engine: &'a dyn SearchEngine, cutoffs: &[usize]) {
        self.ann = vec![AnnTally::new(cutoffs.len()); self.configurations.len()];
        self.served = Some(ServedBy {
            engine,
            label,
            cutoffs: cutoffs.to_vec(),
        });
    }

    /// Has `engine` (the `[engines.NAME]` table `name`) serve this run's vector searches,
    /// after checking that it holds this corpus (`dataset_hash`) embedded by `embedder`.
    pub fn serve_checked(
        &mut self,
        name: &str,
        engine: &'a dyn SearchEngine,
        dataset_hash: &str,
        embedder: &dyn EmbeddingProvider,
        cutoffs: &[usize],
    ) -> Result<(), Error> {
        let identity = embedder.identity();
        let expected = expected_stamp(
            dataset_hash,
            &embedder_stamp(&identity),
            identity.dimension,
            self.fact_count(),
        );
        let label = crate::engine::label(name, engine);
        check_loaded(&label, engine, &expected)?;
        self.serve_from(label, engine, cutoffs);
        Ok(())
    }

    /// The number of facts in the corpus.
    pub fn fact_count(&self) -> usize {
        self.corpus.ids.len()
    }

    /// The number of chunks indexed for vector search, when the facts were chunked.
    pub fn chunk_count(&self) -> Option<usize> {
        self.corpus.chunk_owners.as_ref().map(ChunkOwners::chunks)
    }
}

impl Prepared<'_> {
    /// The id of the fact at `index` in the prepared corpus.
    pub fn fact_id(&self, index: FactIndex) -> &FactId {
        &self.corpus.ids[index as usize]
    }

    /// The ids of the corpus facts, by position.
    pub fn fact_ids(&self) -> Vec<&FactId> {
        self.corpus.ids.iter().collect()
    }
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

/// What a configuration's temporal scores depend on: its half-life and Gimli decay bits.
pub(super) type TemporalKey = (u64, u64);

/// The [`TemporalKey`] of `params`.
pub(super) fn temporal_key(params: &Params) -> TemporalKey {
    (
        params.half_life_days.to_bits(),
        params.recency_decay_days.to_bits(),
    )
}
