//! The one shared pipeline every configuration runs through:
//! prepare (corpus sorted by id, lexical postings, fact vectors) → expand (keywords,
//! hypotheses, query/hypothesis vectors, once per query) → signals (a candidate table
//! per configuration) → fuse → ranking.
//!
//! Configurations differ only in their [`Plan`] and [`Params`]; there is no per-
//! configuration code path. Queries run in parallel, in chunks of [`CHUNK_QUERIES`]:
//! a chunk's vectors are searched in one batch, its rankings handed to each
//! configuration's [`RankingSink`] in query order, and only then is the next chunk
//! retrieved, so memory does not grow with the number of queries and results do not
//! depend on the thread count.

pub mod fact_spill;
pub mod run;
pub mod vector_spill;

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::configuration::{Configuration, KeywordSource, Params, Plan, SearchVector};
use crate::dataset::{Dataset, Fact, FactId, Query};
use crate::embed::{embed_checked, CorpusTexts, EmbeddingProvider, EmbeddingUsage, TextKind};
use crate::error::Error;
use crate::fusion::{self, CandidateTable, Searches, SignalSources};
use crate::generate::{GenerationCost, GenerationFailure, HypothesisGenerator};
use crate::http::map_in_parallel;
use crate::index::{temporal_score, FactIndex, FlatIndex, LexicalIndex, LexicalNeeds};
use crate::ranking::{QueryRanking, RankingSink};
use crate::results::accounting::{BackendAccounting, GenerationTotals, RunBackendAccounting};
use crate::text::{extract_keywords, merge_keywords};
use vector_spill::{SpilledVectors, VectorSpillWriter};

/// What the pipeline needs besides the dataset.
pub struct PipelineInputs<'a> {
    /// Required when any configuration uses vectors.
    pub embedder: Option<&'a dyn EmbeddingProvider>,
    pub generator: &'a dyn HypothesisGenerator,
    pub configurations: &'a [Configuration],
    /// Show progress bars on stderr (they hide themselves when stderr is no terminal).
    pub progress: bool,
}

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

/// Wall-clock time of the shared stages, milliseconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StageTimings {
    pub index_ms: f64,
    pub embed_facts_ms: f64,
    pub expand_queries_ms: f64,
    pub retrieve_ms: f64,
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

/// Why a query skipped HyDE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SkipReason {
    ShortQuery,
    CodeMention,
}

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

impl QueryExpansion {
    /// The nearest facts of `vector`, searched with its chunk of queries (see
    /// [`search_all`]).
    fn hits(&self, vector: &[f32]) -> &[(FactIndex, f64)] {
        self.search_hits
            .get(&vector_key(vector))
            .map(Vec::as_slice)
            .expect("every search vector is searched before its query is retrieved")
    }
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

/// Embedding spend per shared stage.
#[derive(Debug, Clone, Copy, Default)]
struct StageUsage {
    facts: EmbeddingUsage,
    queries: EmbeddingUsage,
    hypotheses: EmbeddingUsage,
}

/// The corpus' fact ids, sorted, with its indexes (facts are addressed by position).
struct Corpus {
    ids: Vec<FactId>,
    lexical: LexicalIndex,
    vectors: Option<FlatIndex>,
}

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

/// The most hypotheses any of `configurations` reads per query (0 when none uses them).
pub fn max_hypotheses(configurations: &[Configuration]) -> usize {
    configurations
        .iter()
        .filter(|configuration| configuration.plan().uses_hypotheses())
        .map(|configuration| configuration.params.num_hypotheses)
        .max()
        .unwrap_or(0)
}

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
    // Temporal scores depend only on the half-life; compute once per distinct value.
    let mut temporal_by_half_life: HashMap<u64, Vec<f64>> = HashMap::new();
    for configuration in inputs.configurations {
        let half_life = configuration.params.half_life_days;
        temporal_by_half_life
            .entry(half_life.to_bits())
            .or_insert_with(|| {
                facts
                    .iter()
                    .map(|fact| temporal_score(fact, dataset.manifest.now, half_life))
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
        temporal_by_half_life,
        timings,
        vector_spill_min_bytes: None,
    })
}

impl<'a> IndexedCorpus<'a> {
    /// Sets the query and hypothesis vectors aside in a temporary file as soon as they
    /// are made when they total `min_bytes` or more (see [`vector_spill`]); each chunk
    /// of queries reads its own back before it is searched.
    pub fn spilling_query_vectors(mut self, min_bytes: usize) -> Self {
        self.vector_spill_min_bytes = Some(min_bytes);
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

    /// Embeds the corpus' `texts` (in corpus order, see [`Self::fact_order`]) and
    /// expands `queries`, completing the shared stages.
    pub fn embed(
        self,
        texts: &dyn CorpusTexts,
        queries: &'a [Query],
    ) -> Result<Prepared<'a>, Error> {
        let IndexedCorpus {
            configurations,
            plans,
            embedder,
            generator,
            max_hypotheses,
            progress,
            fact_order: _,
            ids,
            lexical,
            temporal_by_half_life,
            mut timings,
            vector_spill_min_bytes,
        } = self;
        assert_eq!(texts.len(), ids.len(), "one text per fact of the corpus");
        let started = Instant::now();
        let usage_before = embedder.and_then(|embedder| embedder.usage());
        let vectors = match embedder {
            Some(embedder) => {
                crate::progress::stage(progress, &format!("embedding {} facts", texts.len()));
                let bar = progress_bar(progress && texts.len() > 2000, texts.len(), "embedding");
                // Each chunk's vectors go straight into the matrix: the corpus' vectors
                // are never held twice. The matrix is made after the first answer, when
                // an HTTP provider knows its dimension.
                let mut build = || {
                    let mut index: Option<FlatIndex> = None;
                    texts.for_each_chunk(256, &mut |chunk| {
                        let vectors = embed_checked(embedder, chunk, TextKind::Document)?;
                        let index = index.get_or_insert_with(|| {
                            FlatIndex::with_capacity(embedder.identity().dimension, texts.len())
                        });
                        for vector in vectors {
                            index.push(&vector);
                        }
                        bar.inc(chunk.len() as u64);
                        Ok(())
                    })?;
                    Ok(index.unwrap_or_else(|| {
                        FlatIndex::with_capacity(embedder.identity().dimension, 0)
                    }))
                };
                let index = embedder.corpus_index(texts, &mut build);
                bar.finish_and_clear();
                Some(index?)
            }
            None => None,
        };
        timings.embed_facts_ms = elapsed_ms(started);
        let usage_after_facts = embedder.and_then(|embedder| embedder.usage());
        let corpus = Corpus {
            ids,
            lexical,
            vectors,
        };

        let started = Instant::now();
        crate::progress::stage(
            progress,
            &format!(
                "expanding {} queries (keywords, hypotheses, vectors)",
                queries.len()
            ),
        );
        let Expanded {
            expansions,
            spilled,
            hypothesis_vectors,
            usage: query_usage,
        } = expand_queries(
            queries,
            generator,
            embedder,
            max_hypotheses,
            vector_spill_min_bytes,
        )?;
        timings.expand_queries_ms = elapsed_ms(started);
        let embedding_usage = match (usage_before, usage_after_facts) {
            (Some(before), Some(after)) => Some(StageUsage {
                facts: after - before,
                queries: query_usage.0,
                hypotheses: query_usage.1,
            }),
            _ => None,
        };
        let embedded_texts = if corpus.vectors.is_some() {
            corpus.ids.len() + expansions.len() + hypothesis_vectors
        } else {
            0
        };
        Ok(Prepared {
            queries,
            configurations,
            plans,
            corpus,
            expansions,
            spilled_vectors: spilled,
            embedded_texts,
            temporal_by_half_life,
            timings,
            embedding_usage,
            generator_requests: generator.requests(),
            generator_live: generator.identity().kind != "recorded",
            progress,
        })
    }
}

/// Queries retrieved together: their vector searches run as one batch and their rankings
/// are handed to the sinks before the next chunk starts, which bounds the memory held
/// by hits and rankings whatever the number of queries. A chunk's rankings take about
/// 24 bytes per entry per configuration (30 MB for ten configurations at depth 1,000);
/// 128 queries still fill both query blocks of a two-thread batch search.
const CHUNK_QUERIES: usize = 128;

/// Prepares `dataset` and runs every configuration of `inputs` on it (see
/// [`Prepared::retrieve`]).
pub fn run<S: RankingSink>(
    dataset: &Dataset,
    inputs: &PipelineInputs<'_>,
    sinks: &mut [S],
) -> Result<PipelineOutput, Error> {
    prepare(dataset, inputs)?.retrieve(sinks)
}

impl Prepared<'_> {
    /// Runs every configuration on the prepared queries, handing each configuration's
    /// rankings to its sink (`sinks` is aligned with the configurations).
    pub fn retrieve<S: RankingSink>(mut self, sinks: &mut [S]) -> Result<PipelineOutput, Error> {
        let configurations = self.configurations;
        assert_eq!(
            sinks.len(),
            configurations.len(),
            "one sink per configuration"
        );
        let mut timings = self.timings.clone();
        let started = Instant::now();
        let query_count = self.queries.len();
        crate::progress::stage(
            self.progress,
            &format!(
                "retrieving {query_count} queries x {} configurations",
                configurations.len()
            ),
        );
        let bar = progress_bar(
            self.progress && query_count * configurations.len() > 5000,
            query_count,
            "retrieving",
        );
        let embedded_texts = self.embedded_texts;
        let mut outcomes: Vec<Vec<HydeOutcome>> = vec![Vec::new(); configurations.len()];
        let mut retrieval_ms = vec![0.0; configurations.len()];
        self.in_chunks(
            |shared, query, expansion| {
                let outcomes = configurations
                    .iter()
                    .zip(&shared.plans)
                    .map(|(configuration, plan)| {
                        let started = Instant::now();
                        let (ranking, hyde) =
                            shared.query_ranking(query, expansion, configuration, *plan);
                        QueryOutcome {
                            ranking: ranking
                                .into_iter()
                                .map(|(fact, score)| (shared.fact_id(fact).clone(), score))
                                .collect(),
                            hyde,
                            elapsed_ms: elapsed_ms(started),
                        }
                    })
                    .collect::<Vec<_>>();
                bar.inc(1);
                outcomes
            },
            |queries, per_query| {
                let mut rankings: Vec<Vec<QueryRanking>> = (0..configurations.len())
                    .map(|_| Vec::with_capacity(queries.len()))
                    .collect();
                for (query, query_outcomes) in queries.iter().zip(per_query) {
                    for (index, outcome) in query_outcomes.into_iter().enumerate() {
                        outcomes[index].push(outcome.hyde);
                        retrieval_ms[index] += outcome.elapsed_ms;
                        rankings[index].push(QueryRanking {
                            query: query.id.clone(),
                            results: outcome.ranking,
                        });
                    }
                }
                sinks
                    .par_iter_mut()
                    .zip(rankings)
                    .try_for_each(|(sink, rankings)| sink.accept(rankings))
            },
        )?;
        bar.finish_and_clear();
        timings.retrieve_ms = elapsed_ms(started);

        let outputs = configurations
            .iter()
            .zip(outcomes)
            .zip(retrieval_ms)
            .enumerate()
            .map(
                |(index, ((configuration, outcomes), retrieval_ms))| ConfigurationOutput {
                    configuration: configuration.clone(),
                    used_hypotheses: outcomes
                        .iter()
                        .map(|&outcome| outcome == HydeOutcome::Used)
                        .collect(),
                    accounting: account(outcomes.iter().copied()),
                    backend: self.backend_accounting(self.plans[index], &outcomes),
                    retrieval_ms,
                },
            )
            .collect();
        Ok(PipelineOutput {
            configurations: outputs,
            timings,
            embedded_texts,
            backend: self.run_backend_accounting(),
            backend_failures: self.backend_failures(),
            hypotheses: self
                .expansions
                .iter()
                .map(|expansion| expansion.hypotheses.clone().unwrap_or_default())
                .collect(),
        })
    }
}

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// A search vector's bits (see [`vector_key`]).
type VectorKey = Vec<u32>;
/// How deep a vector is searched, and the vector.
type Wanted = (usize, Vec<f32>);

/// Searches, in batches, every vector any configuration searches for any query, each as
/// deep as the deepest configuration that searches it reads.
fn search_all(
    queries: &[Query],
    expansions: &mut [QueryExpansion],
    configurations: &[Configuration],
    plans: &[Plan],
    index: &FlatIndex,
) {
    // A vector searched by several configurations is searched once, as deep as the
    // deepest needs.
    let mut wanted: Vec<FxHashMap<VectorKey, Wanted>> = vec![FxHashMap::default(); queries.len()];
    for ((query, expansion), wanted) in queries.iter().zip(expansions.iter()).zip(&mut wanted) {
        for (configuration, plan) in configurations.iter().zip(plans) {
            if plan.vector.is_none() {
                continue;
            }
            let limit = fusion::method(plan.fusion).search_depth(&configuration.params);
            let (_, vectors, _) =
                configuration_inputs(query, expansion, &configuration.params, *plan);
            for vector in vectors {
                let entry = wanted.entry(vector_key(&vector)).or_insert((limit, vector));
                entry.0 = entry.0.max(limit);
            }
        }
    }
    // Per depth: (query position, vector key, vector).
    let mut by_limit: BTreeMap<usize, Vec<(usize, VectorKey, Vec<f32>)>> = BTreeMap::new();
    for (position, wanted) in wanted.into_iter().enumerate() {
        for (key, (limit, vector)) in wanted {
            by_limit
                .entry(limit)
                .or_default()
                .push((position, key, vector));
        }
    }
    for (limit, searches) in by_limit {
        let vectors: Vec<&[f32]> = searches
            .iter()
            .map(|(_, _, vector)| vector.as_slice())
            .collect();
        let results = index.search_batch(&vectors, limit, f64::NEG_INFINITY);
        for ((position, key, _), hits) in searches.into_iter().zip(results) {
            expansions[position].search_hits.insert(key, hits);
        }
    }
}

/// Queries whose hypotheses are embedded at once when a batch of them failed.
const QUERY_RETRY_WORKERS: usize = 16;

/// What [`expand_queries`] makes.
struct Expanded {
    expansions: Vec<QueryExpansion>,
    /// The expansions' vectors, when they were set aside on disk.
    spilled: Option<SpilledVectors>,
    /// Hypothesis vectors made.
    hypothesis_vectors: usize,
    /// The embedder's spend on queries and on hypotheses.
    usage: (EmbeddingUsage, EmbeddingUsage),
}

/// Extracts keywords, fetches hypotheses and embeds queries and hypotheses, once per
/// query for all configurations. When the vectors will total `spill_min_bytes` or
/// more, each kind goes to disk as soon as it is made (see [`vector_spill`]).
fn expand_queries(
    queries: &[Query],
    generator: &dyn HypothesisGenerator,
    embedder: Option<&dyn EmbeddingProvider>,
    max_hypotheses: usize,
    spill_min_bytes: Option<usize>,
) -> Result<Expanded, Error> {
    let generations = if max_hypotheses == 0 {
        Vec::new()
    } else {
        generator.generate_all(queries, max_hypotheses)?
    };
    let mut generations = generations.into_iter();
    let mut expansions: Vec<QueryExpansion> = queries
        .iter()
        .map(|query| {
            let (hypotheses, generation_cost) = match generations.next() {
                Some(generation) => (generation.hypotheses, generation.cost),
                None => (
                    Err(GenerationFailure::NotRecorded),
                    GenerationCost::default(),
                ),
            };
            let first_hypothesis_keywords = match &hypotheses {
                Ok(texts) if !texts.is_empty() => extract_keywords(&texts[..1]),
                _ => Vec::new(),
            };
            QueryExpansion {
                keywords: extract_keywords(&[query.text.as_str()]),
                hypotheses,
                first_hypothesis_keywords,
                query_vector: None,
                hypothesis_vectors: Vec::new(),
                generation_cost,
                hypothesis_embedding_failure: None,
                search_hits: FxHashMap::default(),
            }
        })
        .collect();
    let Some(embedder) = embedder else {
        return Ok(Expanded {
            expansions,
            spilled: None,
            hypothesis_vectors: 0,
            usage: Default::default(),
        });
    };
    let usage = || embedder.usage().unwrap_or_default();
    let before = usage();
    let query_texts: Vec<&str> = queries.iter().map(|query| query.text.as_str()).collect();
    let query_vectors = embed_checked(embedder, &query_texts, TextKind::Query)?;
    let after_queries = usage();
    let dimension = query_vectors.first().map_or(0, Vec::len);
    for (expansion, query_vector) in expansions.iter_mut().zip(query_vectors) {
        expansion.query_vector = Some(query_vector);
    }
    let hypothesis_count: usize = expansions
        .iter()
        .map(|expansion| expansion.hypotheses.as_ref().map_or(0, Vec::len))
        .sum();
    let vector_bytes = (queries.len() + hypothesis_count) * dimension * 4;
    let mut spill = match spill_min_bytes {
        Some(min_bytes) if dimension > 0 && vector_bytes >= min_bytes => {
            let mut writer = VectorSpillWriter::new(dimension)?;
            writer.take_query_vectors(&mut expansions)?;
            Some(writer)
        }
        _ => None,
    };
    let hypothesis_texts = |expansion: &QueryExpansion| -> Vec<String> {
        expansion.hypotheses.as_ref().cloned().unwrap_or_default()
    };
    let all_refs: Vec<&str> = expansions
        .iter()
        .flat_map(|expansion| expansion.hypotheses.iter().flatten())
        .map(String::as_str)
        .collect();
    let embedded = embed_checked(embedder, &all_refs, TextKind::Hypothesis);
    drop(all_refs);
    match embedded {
        Ok(vectors) => {
            let mut vectors = vectors.into_iter();
            for expansion in &mut expansions {
                let count = expansion.hypotheses.as_ref().map(Vec::len).unwrap_or(0);
                expansion.hypothesis_vectors = vectors.by_ref().take(count).collect();
            }
        }
        // A backend failure on hypotheses is retried query by query; the queries that
        // still fail fall back to the query's own vector, as the seeds do.
        Err(Error::Backend(_)) => {
            let per_query: Vec<Vec<String>> = expansions.iter().map(hypothesis_texts).collect();
            // Concurrent, so a server that times out costs one timeout per batch of
            // queries rather than per query; the provider bounds the requests in flight.
            let answers = map_in_parallel(&per_query, QUERY_RETRY_WORKERS, |texts| {
                if texts.is_empty() {
                    return Ok(Vec::new());
                }
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                embed_checked(embedder, &refs, TextKind::Hypothesis)
            });
            for (expansion, answer) in expansions.iter_mut().zip(answers) {
                match answer {
                    Ok(vectors) => expansion.hypothesis_vectors = vectors,
                    Err(Error::Backend(message)) => {
                        expansion.hypothesis_embedding_failure = Some(message);
                    }
                    Err(other) => return Err(other),
                }
            }
        }
        Err(other) => return Err(other),
    }
    let after_hypotheses = usage();
    let hypothesis_vectors = expansions
        .iter()
        .map(|expansion| expansion.hypothesis_vectors.len())
        .sum();
    let spilled = match spill.take() {
        Some(mut writer) => {
            writer.take_hypothesis_vectors(&mut expansions)?;
            Some(writer.finish()?)
        }
        None => None,
    };
    Ok(Expanded {
        expansions,
        spilled,
        hypothesis_vectors,
        usage: (after_queries - before, after_hypotheses - after_queries),
    })
}

/// Whether and how a configuration used hypotheses for one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HydeOutcome {
    NotApplicable,
    Used,
    Skipped(SkipReason),
    Fallback,
}

struct QueryOutcome {
    ranking: Vec<(FactId, f64)>,
    hyde: HydeOutcome,
    elapsed_ms: f64,
}

/// Every query's candidate table for one configuration (see
/// [`Prepared::candidate_tables`]).
#[derive(Debug, Clone)]
pub struct ConfigurationTables {
    pub configuration: Configuration,
    /// One table per dataset query, in dataset order; candidates address facts by
    /// [`FactIndex`] (see [`Prepared::fact_id`]).
    pub tables: Vec<CandidateTable>,
}

/// The seeds' skip heuristics: very short queries and queries that name code entities
/// are answered without HyDE.
fn skip_reason(query: &str, params: &Params) -> Option<SkipReason> {
    if params.skip_short_queries > 0
        && query.split_whitespace().count() <= params.skip_short_queries
    {
        return Some(SkipReason::ShortQuery);
    }
    if params.skip_code_mentions && mentions_code(query) {
        return Some(SkipReason::CodeMention);
    }
    None
}

/// A backtick, or a word shaped like code: `snake_case`, `camelCase`, `a::b`, `call()`,
/// `file.ext`.
pub fn mentions_code(query: &str) -> bool {
    if query.contains('`') {
        return true;
    }
    query.split_whitespace().any(|word| {
        let word =
            word.trim_matches(|c: char| !c.is_alphanumeric() && c != '(' && c != ')' && c != '_');
        let chars: Vec<char> = word.chars().collect();
        let inner_underscore = chars
            .windows(3)
            .any(|w| w[0].is_alphanumeric() && w[1] == '_' && w[2].is_alphanumeric());
        let camel = chars
            .windows(2)
            .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
        let file_extension = word.rsplit_once('.').is_some_and(|(stem, extension)| {
            stem.chars().count() >= 2
                && (1..=4).contains(&extension.len())
                && extension.chars().all(|c| c.is_ascii_lowercase())
        });
        inner_underscore || camel || word.contains("::") || word.ends_with("()") || file_extension
    })
}

impl Prepared<'_> {
    /// What one configuration's queries cost, given how each used HyDE.
    fn backend_accounting(
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
    fn run_backend_accounting(&self) -> Option<RunBackendAccounting> {
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
    fn backend_failures(&self) -> Vec<String> {
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

    /// The id of the fact at `index` in the prepared corpus.
    pub fn fact_id(&self, index: FactIndex) -> &FactId {
        &self.corpus.ids[index as usize]
    }

    /// The ids of the corpus facts, by position.
    pub fn fact_ids(&self) -> Vec<&FactId> {
        self.corpus.ids.iter().collect()
    }

    /// The candidate table of every configuration for every query, without fusing,
    /// configurations in input order. Sweeps re-fuse these
    /// tables per parameter point instead of recomputing signals.
    pub fn candidate_tables(&mut self) -> Result<Vec<ConfigurationTables>, Error> {
        let bar = progress_bar(
            self.progress && self.queries.len() * self.configurations.len() > 5000,
            self.queries.len(),
            "signals",
        );
        let mut tables: Vec<ConfigurationTables> = self
            .configurations
            .iter()
            .map(|configuration| ConfigurationTables {
                configuration: configuration.clone(),
                tables: Vec::with_capacity(self.queries.len()),
            })
            .collect();
        self.in_chunks(
            |shared, query, expansion| {
                let query_tables = shared
                    .configurations
                    .iter()
                    .zip(&shared.plans)
                    .map(|(configuration, plan)| {
                        shared.query_table(query, expansion, configuration, *plan)
                    })
                    .collect::<Vec<_>>();
                bar.inc(1);
                query_tables
            },
            |_, per_query| {
                for query_tables in per_query {
                    for (configuration, table) in tables.iter_mut().zip(query_tables) {
                        configuration.tables.push(table);
                    }
                }
                Ok(())
            },
        )?;
        bar.finish_and_clear();
        Ok(tables)
    }

    /// Runs `per_query` on every query, [`CHUNK_QUERIES`] at a time: a chunk's vectors
    /// (read back first when they wait on disk) are searched in one batch, its queries
    /// mapped in parallel (each query's vectors and search hits dropped once it is
    /// mapped), and `consume` takes the chunk's queries and results, in order, before
    /// the next chunk starts.
    fn in_chunks<T: Send>(
        &mut self,
        per_query: impl Fn(&Self, &Query, &mut QueryExpansion) -> T + Sync,
        mut consume: impl FnMut(&[Query], Vec<T>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        // Taken out so each chunk's expansions can take and drop their search hits.
        let mut expansions = std::mem::take(&mut self.expansions);
        let shared = &*self;
        let query_count = shared.queries.len();
        let outcome = (0..query_count)
            .step_by(CHUNK_QUERIES)
            .try_for_each(|first| {
                let queries = &shared.queries[first..(first + CHUNK_QUERIES).min(query_count)];
                let chunk = &mut expansions[first..first + queries.len()];
                if let Some(spilled) = &shared.spilled_vectors {
                    spilled.restore(first, chunk)?;
                }
                shared.search(queries, chunk);
                let results = queries
                    .par_iter()
                    .zip(chunk.par_iter_mut())
                    .map(|(query, expansion)| {
                        let result = per_query(shared, query, expansion);
                        expansion.query_vector = None;
                        expansion.hypothesis_vectors = Vec::new();
                        expansion.search_hits = FxHashMap::default();
                        result
                    })
                    .collect();
                consume(queries, results)
            });
        self.expansions = expansions;
        outcome
    }

    /// Searches, in one batch, every vector that some configuration searches for
    /// `queries`, storing the hits in their `expansions` (aligned with `queries`).
    fn search(&self, queries: &[Query], expansions: &mut [QueryExpansion]) {
        if let Some(index) = &self.corpus.vectors {
            search_all(queries, expansions, self.configurations, &self.plans, index);
        }
    }

    /// The candidate table of one configuration for one query.
    fn query_table(
        &self,
        query: &Query,
        expansion: &QueryExpansion,
        configuration: &Configuration,
        plan: Plan,
    ) -> CandidateTable {
        let (table, _) =
            self.with_signal_sources(query, expansion, configuration, plan, |sources| {
                fusion::method(plan.fusion).candidate_table(sources)
            });
        table
    }

    /// One configuration's ranking of one query, and how it used HyDE: what fusing its
    /// candidate table gives, mostly without building the table (see [`fusion::Fuser::fused_ranking`]).
    fn query_ranking(
        &self,
        query: &Query,
        expansion: &QueryExpansion,
        configuration: &Configuration,
        plan: Plan,
    ) -> (Vec<(FactIndex, f64)>, HydeOutcome) {
        self.with_signal_sources(query, expansion, configuration, plan, |sources| {
            fusion::method(plan.fusion).fused_ranking(sources)
        })
    }

    /// Runs `compute` on what one configuration's signals for one query come from, and
    /// says how the configuration used HyDE for it.
    fn with_signal_sources<R>(
        &self,
        query: &Query,
        expansion: &QueryExpansion,
        configuration: &Configuration,
        plan: Plan,
        compute: impl FnOnce(SignalSources<'_>) -> R,
    ) -> (R, HydeOutcome) {
        let inputs = signal_inputs(query, expansion, configuration, plan);
        let result = compute(SignalSources {
            keywords: inputs.keywords.as_deref(),
            searches: inputs.searches(),
            query_text: &query.text,
            params: &configuration.params,
            lexical: &self.corpus.lexical,
            temporal: self.temporal(configuration),
        });
        (result, inputs.hyde)
    }

    /// The temporal score of every fact at `configuration`'s half-life.
    fn temporal(&self, configuration: &Configuration) -> &[f64] {
        &self.temporal_by_half_life[&configuration.params.half_life_days.to_bits()]
    }
}

/// Counts how a configuration's queries used HyDE.
fn account(outcomes: impl Iterator<Item = HydeOutcome>) -> HydeAccounting {
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

/// What one configuration searches with for one query: its keywords, the hits of its
/// search vectors, and how it used HyDE.
struct SignalInputs<'e> {
    keywords: Option<Vec<String>>,
    hits: Vec<&'e [(FactIndex, f64)]>,
    /// Every search vector is zero (or there is none).
    all_zero: bool,
    hyde: HydeOutcome,
}

impl SignalInputs<'_> {
    fn searches(&self) -> Searches<'_> {
        Searches {
            hits: &self.hits,
            all_zero: self.all_zero,
        }
    }
}

/// One configuration's inputs for one query, expanded per its plan.
fn signal_inputs<'e>(
    query: &Query,
    expansion: &'e QueryExpansion,
    configuration: &Configuration,
    plan: Plan,
) -> SignalInputs<'e> {
    let params = &configuration.params;
    let (hypotheses, search_vectors, hyde) = configuration_inputs(query, expansion, params, plan);
    let keywords: Option<Vec<String>> = plan.keywords.map(|source| match source {
        KeywordSource::Query => expansion.keywords.clone(),
        KeywordSource::QueryAndHypothesis if !hypotheses.is_empty() => {
            let take = params
                .hyde_keywords
                .min(expansion.first_hypothesis_keywords.len());
            merge_keywords(
                &expansion.keywords,
                &expansion.first_hypothesis_keywords[..take],
            )
        }
        KeywordSource::QueryAndHypothesis => expansion.keywords.clone(),
    });
    SignalInputs {
        keywords,
        hits: search_vectors
            .iter()
            .map(|vector| expansion.hits(vector))
            .collect(),
        all_zero: search_vectors.iter().all(|vector| is_zero(vector)),
        hyde,
    }
}

/// The hypotheses one configuration uses for one query (after the skip heuristics and
/// fallbacks), the vectors it searches, and how it used HyDE.
fn configuration_inputs<'e>(
    query: &Query,
    expansion: &'e QueryExpansion,
    params: &Params,
    plan: Plan,
) -> (&'e [String], Vec<Vec<f32>>, HydeOutcome) {
    let (hypotheses, hypothesis_vectors, hyde): (&[String], &[Vec<f32>], HydeOutcome) =
        if !plan.uses_hypotheses() {
            (&[], &[], HydeOutcome::NotApplicable)
        } else if let Some(reason) = skip_reason(&query.text, params) {
            (&[], &[], HydeOutcome::Skipped(reason))
        } else {
            let vectors_missing = plan
                .vector
                .is_some_and(|vector| vector != SearchVector::Query)
                && expansion.query_vector.is_some()
                && expansion.hypothesis_embedding_failure.is_some();
            match &expansion.hypotheses {
                Ok(texts) if !texts.is_empty() && !vectors_missing => {
                    let count = texts.len().min(params.num_hypotheses);
                    // Hypothesis vectors exist only when some configuration searches vectors.
                    let vectors = &expansion.hypothesis_vectors
                        [..count.min(expansion.hypothesis_vectors.len())];
                    (&texts[..count], vectors, HydeOutcome::Used)
                }
                _ => (&[], &[], HydeOutcome::Fallback),
            }
        };
    let search_vectors: Vec<Vec<f32>> = match (plan.vector, &expansion.query_vector) {
        (None, _) | (_, None) => Vec::new(),
        (Some(_), Some(query_vector)) if hypothesis_vectors.is_empty() => {
            vec![query_vector.clone()]
        }
        (Some(SearchVector::Query), Some(query_vector)) => vec![query_vector.clone()],
        (Some(SearchVector::FirstHypothesis), _) => vec![hypothesis_vectors[0].clone()],
        (Some(SearchVector::MeanOfQueryAndHypotheses), Some(query_vector)) => {
            vec![mean_of_unit_vectors(
                std::iter::once(query_vector).chain(hypothesis_vectors),
            )]
        }
        (Some(SearchVector::EachHypothesis), _) => hypothesis_vectors.to_vec(),
    };

    (hypotheses, search_vectors, hyde)
}

/// The f32 bits of a search vector: the key of its precomputed hits.
fn vector_key(vector: &[f32]) -> VectorKey {
    vector.iter().map(|value| value.to_bits()).collect()
}

/// Mean of the L2-normalized inputs, so each text weighs the same whatever its norm.
fn mean_of_unit_vectors<'v>(vectors: impl Iterator<Item = &'v Vec<f32>>) -> Vec<f32> {
    let mut sum: Vec<f64> = Vec::new();
    let mut count = 0usize;
    for vector in vectors {
        if sum.is_empty() {
            sum = vec![0.0; vector.len()];
        }
        let norm = vector
            .iter()
            .map(|&v| f64::from(v) * f64::from(v))
            .sum::<f64>()
            .sqrt();
        if norm > 0.0 {
            for (total, &value) in sum.iter_mut().zip(vector) {
                *total += f64::from(value) / norm;
            }
        }
        count += 1;
    }
    sum.into_iter()
        .map(|total| (total / count.max(1) as f64) as f32)
        .collect()
}

fn is_zero(vector: &[f32]) -> bool {
    vector.iter().all(|&value| value == 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_mentions() {
        for query in [
            "why does `go vet` fail",
            "where is parse_config defined",
            "what does getUserName return",
            "std::mem::take semantics",
            "who calls init()",
            "edit main.go",
        ] {
            assert!(mentions_code(query), "{query}");
        }
        for query in [
            "how do we deploy to staging",
            "what is the cache policy?",
            "e.g. the usual setup",
        ] {
            assert!(!mentions_code(query), "{query}");
        }
    }
}
