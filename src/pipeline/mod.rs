//! The one shared pipeline every configuration runs through, one file per stage in the
//! order data flows:
//! - [`prepare`](mod@prepare): the corpus sorted by id, its lexical index and temporal scores
//!   (`prepare.rs`); a large corpus' facts wait on disk meanwhile ([`fact_spill`]);
//! - [`expand`]: each query's keywords and hypotheses, and the skip heuristics
//!   (`expand.rs`);
//! - [`embed`]: fact vectors, query and hypothesis vectors (`embed.rs`), large sets of
//!   the latter waiting on disk until their chunk ([`vector_spill`]);
//! - [`retrieve`]: queries in chunks, each chunk's vector searches in one batch, and what
//!   each configuration searches with for each query (`retrieve.rs`);
//! - [`fuse`]: a configuration's candidates and ranking for one query, by its fusion
//!   method (`fuse.rs`, over [`crate::fusion`]);
//! - [`run`](mod@run): the driver: every configuration over every query into the ranking sinks,
//!   and a whole evaluation ([`run::execute`]);
//! - [`accounting`]: HyDE and backend accounting, percentiles, stage timings.
//!
//! Configurations differ only in their [`Plan`] and
//! [`Params`](crate::configuration::Params); there is no per-
//! configuration code path. Queries run in parallel, in chunks: a chunk's vectors are
//! searched in one batch, its rankings handed to each configuration's
//! [`crate::ranking::RankingSink`] in query order, and only then is the next chunk
//! retrieved, so memory does not grow with the number of queries and results do not
//! depend on the thread count.
//!
//! This file holds the types the stages share and re-exports the public entry points;
//! the stages' code lives in their files. The pipeline imports [`crate::fusion`] and the
//! layers below it (and `results` for its output types), never reports, sweeps, the
//! gate, comparisons, settings or the command line.

pub mod accounting;
pub mod embed;
pub mod expand;
pub mod fact_spill;
pub mod fuse;
pub mod prepare;
pub mod retrieve;
pub mod run;
pub mod vector_spill;

use std::collections::HashMap;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rustc_hash::FxHashMap;

use crate::configuration::{Configuration, Plan};
use crate::dataset::{FactId, Query};
use crate::embed::EmbeddingProvider;
use crate::generate::{GenerationCost, GenerationFailure, HypothesisGenerator};
use crate::index::{FactIndex, FlatIndex, LexicalIndex};
use crate::results::accounting::{BackendAccounting, RunBackendAccounting};
use accounting::StageUsage;
use vector_spill::SpilledVectors;

pub use accounting::{HydeAccounting, StageTimings};
pub use expand::{max_hypotheses, mentions_code};
pub use fuse::ConfigurationTables;
pub use prepare::{index_corpus, prepare};
pub use run::run;

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
    /// `None` when no backend spent anything.
    pub backend: Option<RunBackendAccounting>,
    /// Why hypotheses failed, per failing query (they fell back), for the run's notes.
    pub backend_failures: Vec<String>,
    /// The hypotheses each query got, in dataset order (empty when it got none).
    pub hypotheses: Vec<Vec<String>>,
}

/// A search vector's bits (see `retrieve::vector_key`).
type VectorKey = Vec<u32>;

/// Per-query work shared by every configuration.
struct QueryExpansion {
    keywords: Vec<String>,
    hypotheses: Result<Vec<String>, GenerationFailure>,
    /// chatcli `ExtractKeywords([first hypothesis])`.
    first_hypothesis_keywords: Vec<String>,
    query_vector: Option<Vec<f32>>,
    hypothesis_vectors: Vec<Vec<f32>>,
    /// What generating the hypotheses cost.
    generation_cost: GenerationCost,
    /// Why the hypotheses could not be embedded (their vector searches fall back).
    hypothesis_embedding_failure: Option<String>,
    /// Nearest facts of every vector some configuration searches, by the vector's bits.
    search_hits: FxHashMap<VectorKey, Vec<(FactIndex, f64)>>,
}

/// The shared stages of a run, computed once for all its configurations.
pub struct Prepared<'a> {
    /// The dataset's queries (borrowed apart from its facts, which can be set aside
    /// while the queries are retrieved).
    queries: &'a [Query],
    configurations: &'a [Configuration],
    plans: Vec<Plan>,
    corpus: Corpus,
    expansions: Vec<QueryExpansion>,
    /// The expansions' vectors, when they wait on disk (see
    /// [`IndexedCorpus::spilling_query_vectors`]).
    spilled_vectors: Option<SpilledVectors>,
    /// Facts, queries and hypotheses embedded.
    embedded_texts: usize,
    /// Temporal score of every fact, per distinct half-life (keyed by its bits).
    temporal_by_half_life: HashMap<u64, Vec<f64>>,
    timings: StageTimings,
    /// What the embedder spent per stage, when it spends anything.
    embedding_usage: Option<StageUsage>,
    /// HTTP requests and retries of the generator.
    generator_requests: (u64, u64),
    /// Whether a live generator (not the recording) wrote the hypotheses.
    generator_live: bool,
    progress: bool,
}

/// The corpus' fact ids, sorted, with its indexes (facts are addressed by position).
struct Corpus {
    ids: Vec<FactId>,
    lexical: LexicalIndex,
    vectors: Option<FlatIndex>,
}

/// Milliseconds since `started`.
fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// A progress bar on stderr, hidden unless `enabled`.
fn progress_bar(enabled: bool, length: usize, message: &'static str) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(length as u64), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{msg:>12} [{bar:30}] {pos}/{len} ({eta})")
        .expect("static template")
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(message);
    bar
}

/// The shared stages that read the facts themselves (corpus order, lexical index,
/// temporal scores, ids); the fact vectors and query expansions follow in
/// [`IndexedCorpus::embed`], which needs nothing of the facts but their texts.
pub struct IndexedCorpus<'a> {
    configurations: &'a [Configuration],
    plans: Vec<Plan>,
    embedder: Option<&'a dyn EmbeddingProvider>,
    generator: &'a dyn HypothesisGenerator,
    max_hypotheses: usize,
    progress: bool,
    /// Position in the dataset of each fact, in corpus (fact id) order.
    fact_order: Vec<u32>,
    ids: Vec<FactId>,
    lexical: LexicalIndex,
    temporal_by_half_life: HashMap<u64, Vec<f64>>,
    timings: StageTimings,
    /// Query and hypothesis vectors totalling this many bytes go to disk as they are
    /// made (see [`Self::spilling_query_vectors`]).
    vector_spill_min_bytes: Option<usize>,
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
