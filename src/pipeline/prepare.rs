//! Prepare: the shared stages that read the facts themselves. The corpus is sorted by
//! fact id (facts are addressed by position from here on), the lexical index is built
//! for what the configurations' fusion methods read, and every fact's recency is scored
//! once per distinct half-life. The result, an [`IndexedCorpus`], no longer borrows the
//! dataset, so a large corpus' facts can wait on disk ([`super::fact_spill`]) while the
//! fact vectors are made from their texts ([`IndexedCorpus::embed`]).
//!
//! It embeds nothing and expands no query.

use std::collections::HashMap;
use std::time::Instant;

use super::accounting::StageTimings;
use super::expand::max_hypotheses;
use super::state::{
    elapsed_ms, temporal_key, IndexedCorpus, PipelineInputs, Prepared, TemporalKey,
};
use crate::configuration::{Configuration, Plan};
use crate::dataset::{Dataset, Fact, FactId};
use crate::error::Error;
use crate::fusion;
use crate::index::{gimli_recency, temporal_score, LexicalIndex, LexicalNeeds};
use crate::text::ChunkSpec;

/// Prepares the shared stages of `dataset` for every configuration of `inputs`: the
/// corpus and its indexes, fact vectors, query expansions and temporal scores. The
/// result borrows the dataset's queries. (A caller that sets the facts aside before the
/// vectors are made runs [`index_corpus`] and [`IndexedCorpus::embed`] itself.)
pub fn prepare<'a>(
    dataset: &'a Dataset,
    inputs: &PipelineInputs<'a>,
) -> Result<Prepared<'a>, Error> {
    let indexed = index_corpus(dataset, inputs)?;
    let texts = indexed.texts_of(&dataset.facts);
    indexed.embed(&texts, &dataset.queries)
}

/// Sorts `dataset`'s facts by id, builds the lexical index the configurations of
/// `inputs` read and scores every fact's recency. The result does not borrow `dataset`.
pub fn index_corpus<'a>(
    dataset: &Dataset,
    inputs: &PipelineInputs<'a>,
) -> Result<IndexedCorpus<'a>, Error> {
    crate::progress::stage(
        inputs.progress,
        &format!("indexing {} facts", dataset.facts.len()),
    );
    let plans: Vec<Plan> = inputs
        .configurations
        .iter()
        .map(Configuration::plan)
        .collect();
    let needs_vectors = plans.iter().any(|plan| plan.vector.is_some());
    let embedder = match (needs_vectors, inputs.embedder) {
        (true, None) => {
            return Err(Error::Usage(
                "a configuration needs embeddings but no embedder is set".into(),
            ))
        }
        (true, Some(embedder)) => Some(embedder),
        (false, _) => None,
    };
    let fact_count = u32::try_from(dataset.facts.len()).map_err(|_| {
        Error::Usage(format!(
            "{} facts: at most {} are supported",
            dataset.facts.len(),
            u32::MAX
        ))
    })?;
    let mut timings = StageTimings::default();

    let started = Instant::now();
    let mut fact_order: Vec<u32> = (0..fact_count).collect();
    fact_order.sort_by(|&a, &b| {
        dataset.facts[a as usize]
            .id
            .cmp(&dataset.facts[b as usize].id)
    });
    let facts: Vec<&Fact> = fact_order
        .iter()
        .map(|&position| &dataset.facts[position as usize])
        .collect();
    let needs = LexicalNeeds {
        keywords: plans.iter().any(|plan| {
            plan.keywords.is_some() || fusion::method(plan.fusion).spec().keyword_relevance
        }),
        bm25_analyzers: inputs
            .configurations
            .iter()
            .zip(&plans)
            .filter(|(_, plan)| fusion::method(plan.fusion).spec().bm25)
            .map(|(configuration, _)| configuration.params.bm25_analyzer)
            .collect(),
    };
    let lexical = LexicalIndex::build(&facts, &needs);
    timings.index_ms = elapsed_ms(started);
    // Temporal scores depend only on the half-life or Gimli's decay; compute once per
    // distinct setting.
    let mut temporal_by_setting: HashMap<TemporalKey, Vec<f64>> = HashMap::new();
    for configuration in inputs.configurations {
        let params = &configuration.params;
        let (half_life, decay) = (params.half_life_days, params.recency_decay_days);
        let now = dataset.manifest.now;
        temporal_by_setting
            .entry(temporal_key(params))
            .or_insert_with(|| {
                facts
                    .iter()
                    .map(|fact| {
                        if decay > 0.0 {
                            gimli_recency(fact, now, decay)
                        } else {
                            temporal_score(fact, now, half_life)
                        }
                    })
                    .collect()
            });
    }
    // Copies rather than shared clones: the dataset's ids sit among its fact texts,
    // whose pages are given back once the facts are set aside (`pipeline::fact_spill`).
    let ids = facts
        .iter()
        .map(|fact| FactId::from(fact.id.as_str()))
        .collect();
    drop(facts);
    // The tokens and per-term buffers of building are freed; give their pages back
    // before the fact vectors are allocated.
    crate::memory::release_freed_memory();
    Ok(IndexedCorpus {
        configurations: inputs.configurations,
        plans,
        embedder,
        generator: inputs.generator,
        max_hypotheses: max_hypotheses(inputs.configurations),
        progress: inputs.progress,
        fact_order,
        ids,
        lexical,
        temporal_by_setting,
        timings,
        vector_spill_min_bytes: None,
        chunking: None,
        source_weights: None,
    })
}

impl<'a> IndexedCorpus<'a> {
    /// Sets the query and hypothesis vectors aside in a temporary file as soon as they
    /// are made when they total `min_bytes` or more (see [`super::vector_spill`]); each chunk
    /// of queries reads its own back before it is searched.
    pub fn spilling_query_vectors(mut self, min_bytes: usize) -> Self {
        self.vector_spill_min_bytes = Some(min_bytes);
        self
    }

    /// Indexes each fact's windows of `spec` for vector search rather than the whole
    /// fact, a fact scoring as its best window (see [`super::chunks`]); `None` indexes
    /// whole facts.
    pub fn chunking(mut self, spec: Option<ChunkSpec>) -> Self {
        self.chunking = spec;
        self
    }

    /// Filters and boosts every fused ranking by each fact's source weight (corpus
    /// order; see [`super::sources`]); `None` leaves rankings as fused.
    pub fn weighting_sources(mut self, weights: Option<Vec<f64>>) -> Self {
        self.source_weights = weights;
        self
    }

    /// Where in the dataset each fact of the corpus is, in corpus order.
    pub fn fact_order(&self) -> &[u32] {
        &self.fact_order
    }

    /// The contents of `facts` (the dataset's, in memory) in corpus order.
    pub fn texts_of<'f>(&self, facts: &'f [Fact]) -> Vec<&'f str> {
        self.fact_order
            .iter()
            .map(|&position| facts[position as usize].content.as_str())
            .collect()
    }
}
