//! The one shared pipeline every configuration runs through:
//! prepare (corpus sorted by id, lexical postings, fact vectors) → expand (keywords,
//! hypotheses, query/hypothesis vectors, once per query) → signals (a candidate table
//! per configuration) → fuse → ranking.
//!
//! Configurations differ only in their [`Plan`] and [`Params`]; there is no per-
//! configuration code path. Queries run in parallel; outputs are collected in query
//! order, so results do not depend on the thread count.

pub mod candidates;
pub mod config;

use std::collections::HashMap;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use crate::dataset::{Dataset, Fact, FactId, Query};
use crate::embed::{embed_checked, EmbeddingProvider, TextKind};
use crate::error::Error;
use crate::generate::{GenerationFailure, HypothesisGenerator};
use crate::index::{
    sort_by_score_then_id, temporal_score, Bm25Params, FactIndex, FlatIndex, LexicalIndex,
};
use crate::run::QueryRanking;
use crate::text::{extract_keywords, merge_keywords};
use candidates::{fuse, Candidate, CandidateTable, TableKind};
use config::{Configuration, Fusion, KeywordSource, Params, Plan, SearchVector};

/// What the pipeline needs besides the dataset.
pub struct PipelineInputs<'a> {
    pub dataset: &'a Dataset,
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

/// What one configuration produced.
#[derive(Debug, Clone)]
pub struct ConfigurationOutput {
    pub configuration: Configuration,
    /// One ranking per dataset query, in dataset order.
    pub rankings: Vec<QueryRanking>,
    /// Whether each query used a hypothesis, in dataset order.
    pub used_hypotheses: Vec<bool>,
    pub accounting: HydeAccounting,
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
}

/// The shared stages of a run, computed once for all its configurations.
pub struct Prepared<'a> {
    queries: &'a [Query],
    configurations: &'a [Configuration],
    plans: Vec<Plan>,
    corpus: Corpus<'a>,
    expansions: Vec<QueryExpansion>,
    /// Temporal score of every fact, per distinct half-life (keyed by its bits).
    temporal_by_half_life: HashMap<u64, Vec<f64>>,
    timings: StageTimings,
    progress: bool,
}

/// The corpus sorted by fact id, with its indexes.
struct Corpus<'a> {
    facts: Vec<&'a Fact>,
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

/// Prepares the shared stages for every configuration of `inputs`: the corpus and its
/// indexes, fact vectors, query expansions and temporal scores.
pub fn prepare<'a>(inputs: &PipelineInputs<'a>) -> Result<Prepared<'a>, Error> {
    let dataset = inputs.dataset;
    let plans: Vec<Plan> = inputs
        .configurations
        .iter()
        .map(Configuration::plan)
        .collect();
    let needs_vectors = plans.iter().any(|plan| plan.vector.is_some());
    let max_hypotheses = inputs
        .configurations
        .iter()
        .filter(|configuration| configuration.plan().uses_hypotheses())
        .map(|configuration| configuration.params.num_hypotheses)
        .max()
        .unwrap_or(0);
    let embedder = match (needs_vectors, inputs.embedder) {
        (true, None) => {
            return Err(Error::Usage(
                "a configuration needs embeddings but no embedder is set".into(),
            ))
        }
        (true, Some(embedder)) => Some(embedder),
        (false, _) => None,
    };
    let mut timings = StageTimings::default();

    let started = Instant::now();
    let mut facts: Vec<&Fact> = dataset.facts.iter().collect();
    facts.sort_by(|a, b| a.id.cmp(&b.id));
    let analyzers: Vec<_> = inputs
        .configurations
        .iter()
        .map(|configuration| configuration.params.bm25_analyzer)
        .collect();
    let lexical = LexicalIndex::build(&facts, &analyzers);
    timings.index_ms = elapsed_ms(started);

    let started = Instant::now();
    let vectors = match embedder {
        Some(embedder) => {
            let texts: Vec<&str> = facts.iter().map(|fact| fact.content.as_str()).collect();
            let bar = progress_bar(
                inputs.progress && texts.len() > 2000,
                texts.len(),
                "embedding",
            );
            let mut fact_vectors = Vec::with_capacity(texts.len());
            for chunk in texts.chunks(256) {
                fact_vectors.extend(embed_checked(embedder, chunk, TextKind::Document)?);
                bar.inc(chunk.len() as u64);
            }
            bar.finish_and_clear();
            Some(FlatIndex::build(
                embedder.identity().dimension,
                &fact_vectors,
            ))
        }
        None => None,
    };
    timings.embed_facts_ms = elapsed_ms(started);
    let corpus = Corpus {
        facts,
        lexical,
        vectors,
    };

    let started = Instant::now();
    let expansions = expand_queries(&dataset.queries, inputs.generator, embedder, max_hypotheses)?;
    timings.expand_queries_ms = elapsed_ms(started);

    // Temporal scores depend only on the half-life; compute once per distinct value.
    let mut temporal_by_half_life: HashMap<u64, Vec<f64>> = HashMap::new();
    for configuration in inputs.configurations {
        let half_life = configuration.params.half_life_days;
        temporal_by_half_life
            .entry(half_life.to_bits())
            .or_insert_with(|| {
                corpus
                    .facts
                    .iter()
                    .map(|fact| temporal_score(fact, dataset.manifest.now, half_life))
                    .collect()
            });
    }

    Ok(Prepared {
        queries: &dataset.queries,
        configurations: inputs.configurations,
        plans,
        corpus,
        expansions,
        temporal_by_half_life,
        timings,
        progress: inputs.progress,
    })
}

/// Runs every configuration on the dataset.
pub fn run(inputs: &PipelineInputs<'_>) -> Result<PipelineOutput, Error> {
    let prepared = prepare(inputs)?;
    let dataset = inputs.dataset;
    let plans = &prepared.plans;
    let mut timings = prepared.timings.clone();
    let started = Instant::now();
    let bar = progress_bar(
        inputs.progress && dataset.queries.len() * inputs.configurations.len() > 5000,
        dataset.queries.len(),
        "retrieving",
    );
    let per_query: Vec<Vec<QueryOutcome>> = dataset
        .queries
        .par_iter()
        .zip(prepared.expansions.par_iter())
        .map(|(query, expansion)| {
            let outcomes = inputs
                .configurations
                .iter()
                .zip(plans)
                .map(|(configuration, plan)| {
                    let started = Instant::now();
                    let signals = prepared.query_signals(query, expansion, configuration, *plan);
                    QueryOutcome {
                        ranking: fuse(&signals.table, plan.fusion, &configuration.params),
                        hyde: signals.hyde,
                        elapsed_ms: elapsed_ms(started),
                    }
                })
                .collect();
            bar.inc(1);
            outcomes
        })
        .collect();
    bar.finish_and_clear();
    timings.retrieve_ms = elapsed_ms(started);

    let configurations = inputs
        .configurations
        .iter()
        .enumerate()
        .map(|(index, configuration)| {
            let accounting = account(per_query.iter().map(|outcomes| outcomes[index].hyde));
            let mut rankings = Vec::with_capacity(dataset.queries.len());
            let mut used_hypotheses = Vec::with_capacity(dataset.queries.len());
            let mut retrieval_ms = 0.0;
            for (query, outcomes) in dataset.queries.iter().zip(&per_query) {
                let outcome = &outcomes[index];
                used_hypotheses.push(outcome.hyde == HydeOutcome::Used);
                retrieval_ms += outcome.elapsed_ms;
                rankings.push(QueryRanking {
                    query: query.id.clone(),
                    results: outcome
                        .ranking
                        .iter()
                        .map(|&(fact, score)| (prepared.fact_id(fact).clone(), score))
                        .collect(),
                });
            }
            ConfigurationOutput {
                configuration: configuration.clone(),
                rankings,
                used_hypotheses,
                accounting,
                retrieval_ms,
            }
        })
        .collect();
    let embedded_texts = if prepared.corpus.vectors.is_some() {
        prepared.corpus.facts.len()
            + prepared.expansions.len()
            + prepared
                .expansions
                .iter()
                .map(|expansion| expansion.hypothesis_vectors.len())
                .sum::<usize>()
    } else {
        0
    };
    Ok(PipelineOutput {
        configurations,
        timings,
        embedded_texts,
    })
}

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// Extracts keywords, fetches hypotheses and embeds queries and hypotheses, once per
/// query for all configurations.
fn expand_queries(
    queries: &[Query],
    generator: &dyn HypothesisGenerator,
    embedder: Option<&dyn EmbeddingProvider>,
    max_hypotheses: usize,
) -> Result<Vec<QueryExpansion>, Error> {
    let mut expansions: Vec<QueryExpansion> = queries
        .iter()
        .map(|query| {
            let hypotheses = if max_hypotheses == 0 {
                Err(GenerationFailure::NotRecorded)
            } else {
                generator.generate(query, max_hypotheses)
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
            }
        })
        .collect();
    let Some(embedder) = embedder else {
        return Ok(expansions);
    };
    let query_texts: Vec<&str> = queries.iter().map(|query| query.text.as_str()).collect();
    let query_vectors = embed_checked(embedder, &query_texts, TextKind::Query)?;
    // Hypotheses are document-like text: embedded as documents (the backend plan seed).
    let hypothesis_texts: Vec<&str> = expansions
        .iter()
        .flat_map(|expansion| {
            expansion
                .hypotheses
                .as_deref()
                .unwrap_or(&[])
                .iter()
                .map(String::as_str)
        })
        .collect();
    let mut hypothesis_vectors =
        embed_checked(embedder, &hypothesis_texts, TextKind::Document)?.into_iter();
    for (expansion, query_vector) in expansions.iter_mut().zip(query_vectors) {
        expansion.query_vector = Some(query_vector);
        let count = expansion.hypotheses.as_ref().map(Vec::len).unwrap_or(0);
        expansion.hypothesis_vectors = hypothesis_vectors.by_ref().take(count).collect();
    }
    Ok(expansions)
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
    ranking: Vec<(FactIndex, f64)>,
    hyde: HydeOutcome,
    elapsed_ms: f64,
}

/// One configuration's unfused candidate table for one query.
struct QuerySignals {
    table: CandidateTable,
    hyde: HydeOutcome,
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
    /// The id of the fact at `index` in the prepared corpus.
    pub fn fact_id(&self, index: FactIndex) -> &FactId {
        &self.corpus.facts[index as usize].id
    }

    /// The ids of the corpus facts, by position.
    pub fn fact_ids(&self) -> Vec<&FactId> {
        self.corpus.facts.iter().map(|fact| &fact.id).collect()
    }

    /// The candidate table of every configuration for every query, without fusing,
    /// configurations in input order. Sweeps re-fuse these
    /// tables per parameter point instead of recomputing signals.
    pub fn candidate_tables(&self) -> Vec<ConfigurationTables> {
        let bar = progress_bar(
            self.progress && self.queries.len() * self.configurations.len() > 5000,
            self.queries.len(),
            "signals",
        );
        let per_query: Vec<Vec<QuerySignals>> = self
            .queries
            .par_iter()
            .zip(self.expansions.par_iter())
            .map(|(query, expansion)| {
                let signals = self
                    .configurations
                    .iter()
                    .zip(&self.plans)
                    .map(|(configuration, plan)| {
                        self.query_signals(query, expansion, configuration, *plan)
                    })
                    .collect();
                bar.inc(1);
                signals
            })
            .collect();
        bar.finish_and_clear();
        let mut tables: Vec<ConfigurationTables> = self
            .configurations
            .iter()
            .map(|configuration| ConfigurationTables {
                configuration: configuration.clone(),
                tables: Vec::with_capacity(self.queries.len()),
            })
            .collect();
        for signals in per_query {
            for (configuration, query_signals) in tables.iter_mut().zip(signals) {
                configuration.tables.push(query_signals.table);
            }
        }
        tables
    }

    /// The candidate table of one configuration for one query, and how it used HyDE.
    fn query_signals(
        &self,
        query: &Query,
        expansion: &QueryExpansion,
        configuration: &Configuration,
        plan: Plan,
    ) -> QuerySignals {
        let temporal = &self.temporal_by_half_life[&configuration.params.half_life_days.to_bits()];
        build_signals(
            query,
            expansion,
            configuration,
            plan,
            &self.corpus,
            temporal,
        )
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

/// Builds one configuration's candidate table for one query (expansion per its plan,
/// then signals); fusion is left to the caller.
fn build_signals(
    query: &Query,
    expansion: &QueryExpansion,
    configuration: &Configuration,
    plan: Plan,
    corpus: &Corpus<'_>,
    temporal: &[f64],
) -> QuerySignals {
    let params = &configuration.params;
    let (hypotheses, hypothesis_vectors, hyde): (&[String], &[Vec<f32>], HydeOutcome) =
        if !plan.uses_hypotheses() {
            (&[], &[], HydeOutcome::NotApplicable)
        } else if let Some(reason) = skip_reason(&query.text, params) {
            (&[], &[], HydeOutcome::Skipped(reason))
        } else {
            match &expansion.hypotheses {
                Ok(texts) if !texts.is_empty() => {
                    let count = texts.len().min(params.num_hypotheses);
                    // Hypothesis vectors exist only when some configuration searches vectors.
                    let vectors = &expansion.hypothesis_vectors
                        [..count.min(expansion.hypothesis_vectors.len())];
                    (&texts[..count], vectors, HydeOutcome::Used)
                }
                _ => (&[], &[], HydeOutcome::Fallback),
            }
        };

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

    let table = candidate_table(
        plan.fusion,
        keywords.as_deref(),
        &search_vectors,
        &query.text,
        params,
        corpus,
        temporal,
    );
    QuerySignals { table, hyde }
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

/// Vector hits for a blend: top-K over every search vector with the floor (stepping the
/// floor down when multi-hyde's adaptive floor is on); a fact hit by several vectors
/// keeps its highest cosine.
fn vector_hits(vectors: &[Vec<f32>], index: &FlatIndex, params: &Params) -> Vec<(FactIndex, f64)> {
    let search = |floor: f64| {
        let mut best: HashMap<FactIndex, f64> = HashMap::new();
        for vector in vectors {
            for (fact, score) in index.search(vector, params.vector_top_k, floor) {
                let slot = best.entry(fact).or_insert(score);
                *slot = slot.max(score);
            }
        }
        let mut hits: Vec<(FactIndex, f64)> = best.into_iter().collect();
        sort_by_score_then_id(&mut hits);
        hits
    };
    if params.adaptive_floor_start > params.min_cosine {
        let mut floor = params.adaptive_floor_start;
        loop {
            let hits = search(floor);
            if !hits.is_empty() || floor <= params.min_cosine {
                return hits;
            }
            floor = (floor - params.adaptive_floor_step).max(params.min_cosine);
        }
    }
    search(params.min_cosine)
}

/// Builds the candidate table of one configuration for one query.
fn candidate_table(
    fusion: Fusion,
    keywords: Option<&[String]>,
    search_vectors: &[Vec<f32>],
    query_text: &str,
    params: &Params,
    corpus: &Corpus<'_>,
    temporal: &[f64],
) -> CandidateTable {
    // A candidate with only its temporal signal; callers fill in the others.
    let blank = |fact: FactIndex| Candidate {
        fact,
        semantic: 0.0,
        lexical: 0.0,
        temporal: temporal[fact as usize],
    };
    let signals = |candidates: Vec<Candidate>| CandidateTable {
        kind: TableKind::Signals,
        candidates,
    };
    let vectors = || {
        corpus
            .vectors
            .as_ref()
            .expect("vectors are built when a plan needs them")
    };
    let keywords = keywords.unwrap_or(&[]);
    let bm25 = Bm25Params {
        k1: params.bm25_k1,
        b: params.bm25_b,
    };
    match fusion {
        Fusion::KeywordTimesTemporal if keywords.is_empty() => CandidateTable {
            kind: TableKind::AllByTemporal,
            candidates: (0..corpus.facts.len() as FactIndex).map(blank).collect(),
        },
        Fusion::KeywordTimesTemporal => signals(
            corpus
                .lexical
                .keyword_relevance(keywords)
                .into_iter()
                .map(|(fact, relevance)| Candidate {
                    lexical: relevance,
                    ..blank(fact)
                })
                .collect(),
        ),
        Fusion::Bm25 => signals(
            corpus
                .lexical
                .bm25(query_text, bm25, params.bm25_analyzer)
                .into_iter()
                .map(|(fact, score)| Candidate {
                    lexical: score,
                    ..blank(fact)
                })
                .collect(),
        ),
        Fusion::Cosine => {
            let cosines = search_vectors
                .first()
                .map(|vector| vectors().cosine_all(vector))
                .unwrap_or_else(|| vec![0.0; corpus.facts.len()]);
            signals(
                cosines
                    .into_iter()
                    .enumerate()
                    .map(|(fact, cosine)| Candidate {
                        semantic: cosine,
                        ..blank(fact as FactIndex)
                    })
                    .collect(),
            )
        }
        Fusion::Blend => {
            let mut by_fact: HashMap<FactIndex, Candidate> = HashMap::new();
            for (fact, relevance) in corpus.lexical.keyword_relevance(keywords) {
                by_fact.insert(
                    fact,
                    Candidate {
                        lexical: relevance,
                        ..blank(fact)
                    },
                );
            }
            for (fact, cosine) in vector_hits(search_vectors, vectors(), params) {
                by_fact.entry(fact).or_insert_with(|| blank(fact)).semantic = cosine;
            }
            let inputs_empty =
                keywords.is_empty() && search_vectors.iter().all(|vector| is_zero(vector));
            if by_fact.is_empty() && inputs_empty {
                // chatcli: nothing to search with -> every fact by temporal score.
                return CandidateTable {
                    kind: TableKind::AllByTemporal,
                    candidates: (0..corpus.facts.len() as FactIndex).map(blank).collect(),
                };
            }
            signals(sorted_candidates(by_fact))
        }
        Fusion::Hybrid => {
            let fetch = params.hybrid_limit * params.hybrid_candidate_multiplier;
            let mut by_fact: HashMap<FactIndex, Candidate> = HashMap::new();
            if let Some(vector) = search_vectors.first() {
                for (fact, cosine) in vectors().search(vector, fetch, f64::NEG_INFINITY) {
                    by_fact.insert(
                        fact,
                        Candidate {
                            semantic: cosine,
                            ..blank(fact)
                        },
                    );
                }
            }
            let mut text_hits = corpus.lexical.bm25(query_text, bm25, params.bm25_analyzer);
            sort_by_score_then_id(&mut text_hits);
            for (rank, (fact, _)) in text_hits.into_iter().take(fetch).enumerate() {
                by_fact.entry(fact).or_insert_with(|| blank(fact)).lexical =
                    1.0 / (1.0 + rank as f64);
            }
            signals(sorted_candidates(by_fact))
        }
    }
}

/// Candidates in fact order, so fusion input never depends on hash-map iteration.
fn sorted_candidates(by_fact: HashMap<FactIndex, Candidate>) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = by_fact.into_values().collect();
    candidates.sort_by_key(|candidate| candidate.fact);
    candidates
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
