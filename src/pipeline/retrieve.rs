//! Retrieve: queries in chunks. Each chunk's vectors are read back (when they wait on
//! disk) and every vector some configuration searches is searched in one batch, as deep
//! as the deepest configuration reads it; then its queries are mapped in parallel, a
//! few at a time, each query's vectors and hits dropped once it is mapped. Also what one configuration searches with for one query
//! (its hypotheses after the skip heuristics and fallbacks, its keywords, its search
//! vectors' hits): the [`crate::fusion::SignalSources`] its fusion method reads.
//!
//! It ranks nothing itself (`fuse.rs` hands the sources to the fusion methods).

use std::collections::BTreeMap;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::embed::{mean_of_unit_vectors, norm};
use super::expand::{skip_reason, HydeOutcome};
use super::expand::{QueryExpansion, VectorKey};
use super::served::{positions, AnnTally};
use super::state::Prepared;
use crate::configuration::{Configuration, KeywordSource, Params, Plan, SearchVector};
use crate::dataset::Query;
use crate::error::Error;
use crate::fusion::{self, LexicalMemo, Searches, SignalSources};
use crate::index::{BatchQuery, FactIndex};
use crate::text::merge_keywords;

/// Queries retrieved together: their vector searches run as one batch, and their hits
/// are all dropped before the next chunk starts, which bounds the memory they hold
/// whatever the number of queries; 128 queries still fill both query blocks of a
/// two-thread batch search.
const CHUNK_QUERIES: usize = 128;

/// Queries of a chunk mapped together: their rankings are handed on before the next
/// ones are mapped. Rankings take about 24 bytes per entry per configuration (7.7 MB
/// for 32 queries and ten configurations at depth 1,000, a quarter of a whole chunk's).
const MAP_QUERIES: usize = 32;

impl Prepared<'_> {
    /// Runs `per_query` on every query, [`CHUNK_QUERIES`] at a time: a chunk's vectors
    /// (read back first when they wait on disk) are searched in one batch, then its
    /// queries are mapped in parallel [`MAP_QUERIES`] at a time (each query's vectors
    /// and search hits dropped once it is mapped), and `consume` takes each such run of
    /// queries and their results, in order, while the next run is mapped: at most two
    /// runs' results are held at once.
    pub(super) fn in_chunks<T: Send>(
        &mut self,
        per_query: impl Fn(&Self, &Query, &mut QueryExpansion) -> T + Sync,
        mut consume: impl FnMut(&[Query], Vec<T>) -> Result<(), Error> + Send,
    ) -> Result<(), Error> {
        // Taken out so each chunk's expansions can take and drop their search hits.
        let mut expansions = std::mem::take(&mut self.expansions);
        let mut ann = std::mem::take(&mut self.ann);
        let shared = &*self;
        let query_count = shared.queries.len();
        let map = |queries: &[Query], expansions: &mut [QueryExpansion]| -> Vec<T> {
            queries
                .par_iter()
                .zip(expansions.par_iter_mut())
                .map(|(query, expansion)| {
                    let result = per_query(shared, query, expansion);
                    expansion.query_vector = None;
                    expansion.hypothesis_vectors = Vec::new();
                    expansion.search_hits = FxHashMap::default();
                    expansion.text_hits = None;
                    result
                })
                .collect()
        };
        // The run mapped last, which `consume` takes while the next one is mapped.
        let mut pending: Option<(&[Query], Vec<T>)> = None;
        let mut consume_run = |run: Option<(&[Query], Vec<T>)>| match run {
            Some((queries, results)) => consume(queries, results),
            None => Ok(()),
        };
        let outcome = (0..query_count)
            .step_by(CHUNK_QUERIES)
            .try_for_each(|first| {
                let queries = &shared.queries[first..(first + CHUNK_QUERIES).min(query_count)];
                let chunk = &mut expansions[first..first + queries.len()];
                if let Some(spilled) = &shared.spilled_vectors {
                    spilled.restore(first, chunk)?;
                }
                shared.search(queries, chunk, &mut ann)?;
                queries
                    .chunks(MAP_QUERIES)
                    .zip(chunk.chunks_mut(MAP_QUERIES))
                    .try_for_each(|(queries, expansions)| {
                        let previous = pending.take();
                        let (results, consumed) =
                            rayon::join(|| map(queries, expansions), || consume_run(previous));
                        pending = Some((queries, results));
                        consumed
                    })
            })
            .and_then(|()| consume_run(pending.take()));
        self.expansions = expansions;
        self.ann = ann;
        outcome
    }

    /// Searches, in one batch, every vector that some configuration searches for
    /// `queries`, storing the hits in their `expansions` (aligned with `queries`): in the
    /// in-process index (a fact scoring as its best chunk when the facts were chunked),
    /// or, when an engine serves the run, in the engine (with the exact
    /// index beside it for `ann`) and the engine's text rankings too.
    fn search(
        &self,
        queries: &[Query],
        expansions: &mut [QueryExpansion],
        ann: &mut [AnnTally],
    ) -> Result<(), Error> {
        let Some(index) = &self.corpus.vectors else {
            return self.search_text(queries, expansions);
        };
        let wanted = wanted_searches(queries, expansions, self.configurations, &self.plans);
        let Some(served) = &self.served else {
            if let Some(owners) = &self.corpus.chunk_owners {
                for (limit, searches) in by_limit(wanted) {
                    let vectors: Vec<&[f32]> = searches
                        .iter()
                        .map(|(_, _, vector)| vector.as_slice())
                        .collect();
                    let results = owners.search_batch(index, &vectors, limit);
                    for ((position, key, _), hits) in searches.into_iter().zip(results) {
                        expansions[position].search_hits.insert(key, hits);
                    }
                }
                return Ok(());
            }
            // Every vector in one batch, each as deep as it is read; a mean of vectors
            // searched beside it has its screen derived from theirs.
            let batch: Vec<BatchQuery> = wanted
                .iter()
                .map(|search| BatchQuery {
                    vector: &search.vector,
                    limit: search.limit,
                    sum_of: &search.sum_of,
                })
                .collect();
            let results = index.search_queries(&batch, f64::NEG_INFINITY);
            drop(batch);
            for (search, hits) in wanted.into_iter().zip(results) {
                expansions[search.position]
                    .search_hits
                    .insert(search.key, hits);
            }
            return Ok(());
        };
        let mut exact: Vec<FxHashMap<VectorKey, Vec<(FactIndex, f64)>>> =
            vec![FxHashMap::default(); queries.len()];
        for (limit, searches) in by_limit(wanted) {
            // A zero vector has no cosine neighbours: the in-process index answers it
            // (every fact scores 0) and it is not measured.
            let (zero, nonzero): (Vec<_>, Vec<_>) = searches
                .into_iter()
                .partition(|(_, _, vector)| is_zero(vector));
            for (position, key, vector) in zero {
                let hits = index.search(&vector, limit, f64::NEG_INFINITY);
                expansions[position].search_hits.insert(key, hits);
            }
            let vectors: Vec<&[f32]> = nonzero
                .iter()
                .map(|(_, _, vector)| vector.as_slice())
                .collect();
            let exact_hits = index.search_batch(&vectors, limit, f64::NEG_INFINITY);
            let engine_hits = served.engine.vector_search(&vectors, limit)?;
            for (((position, key, _), engine), exact_one) in
                nonzero.into_iter().zip(engine_hits).zip(exact_hits)
            {
                let engine = positions(&served.label, &self.corpus.ids, engine)?;
                exact[position].insert(key.clone(), exact_one);
                expansions[position].search_hits.insert(key, engine);
            }
        }
        for (position, (query, expansion)) in queries.iter().zip(expansions.iter()).enumerate() {
            for ((configuration, plan), tally) in self
                .configurations
                .iter()
                .zip(&self.plans)
                .zip(ann.iter_mut())
            {
                if plan.vector.is_none() {
                    continue;
                }
                let depth = fusion::method(plan.fusion).search_depth(&configuration.params);
                let (_, vectors, _) =
                    configuration_inputs(query, expansion, &configuration.params, *plan);
                for SearchWith { vector, .. } in vectors {
                    let key = vector_key(&vector);
                    let Some(exact_hits) = exact[position].get(&key) else {
                        continue;
                    };
                    let engine_hits = expansion.hits(&vector);
                    tally.add(
                        &served.cutoffs,
                        &engine_hits[..depth.min(engine_hits.len())],
                        &exact_hits[..depth.min(exact_hits.len())],
                    );
                }
            }
        }
        self.search_text(queries, expansions)
    }

    /// The engine's text ranking of each of `queries`, when the run's engine ranks text
    /// and some configuration reads a text ranking, as deep as the deepest reads it.
    fn search_text(
        &self,
        queries: &[Query],
        expansions: &mut [QueryExpansion],
    ) -> Result<(), Error> {
        let Some(served) = self
            .served
            .as_ref()
            .filter(|served| served.engine.ranks_text())
        else {
            return Ok(());
        };
        let depth = self
            .configurations
            .iter()
            .zip(&self.plans)
            .filter(|(_, plan)| fusion::method(plan.fusion).spec().text_ranking)
            .map(|(configuration, plan)| {
                fusion::method(plan.fusion).search_depth(&configuration.params)
            })
            .max();
        let Some(depth) = depth else {
            return Ok(());
        };
        let texts: Vec<&str> = queries.iter().map(|query| query.text.as_str()).collect();
        let rankings = served.engine.text_search(&texts, depth)?;
        for (expansion, ranking) in expansions.iter_mut().zip(rankings) {
            expansion.text_hits = Some(positions(&served.label, &self.corpus.ids, ranking)?);
        }
        Ok(())
    }

    /// Runs `compute` on what one configuration's signals for one query come from, and
    /// says how the configuration used HyDE for it. `lexical_memo` holds the query's
    /// shared lexical results for the streaming route (see [`SignalSources::lexical_memo`]).
    pub(super) fn with_signal_sources<R>(
        &self,
        query: &Query,
        expansion: &QueryExpansion,
        configuration: &Configuration,
        plan: Plan,
        lexical_memo: Option<&LexicalMemo>,
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
            text_hits: expansion.text_hits.as_deref(),
            lexical_memo,
        });
        (result, inputs.hyde)
    }

    /// The temporal score of every fact under `configuration`'s half-life or Gimli decay.
    fn temporal(&self, configuration: &Configuration) -> &[f64] {
        &self.temporal_by_setting[&super::state::temporal_key(&configuration.params)]
    }
}

/// A vector some configuration searches for one query of a chunk.
struct WantedSearch {
    /// The query's position in the chunk.
    position: usize,
    key: VectorKey,
    vector: Vec<f32>,
    /// As deep as the deepest configuration that searches it reads.
    limit: usize,
    /// For a mean of unit vectors that are all searched too: their places in the list
    /// and their weights in the mean (see [`BatchQuery::sum_of`]); empty otherwise.
    sum_of: Vec<(usize, f64)>,
}

/// Every vector any configuration searches for any of `queries`, each once per query,
/// as deep as the deepest configuration that searches it reads.
fn wanted_searches(
    queries: &[Query],
    expansions: &[QueryExpansion],
    configurations: &[Configuration],
    plans: &[Plan],
) -> Vec<WantedSearch> {
    let mut wanted: Vec<WantedSearch> = Vec::new();
    for (position, (query, expansion)) in queries.iter().zip(expansions).enumerate() {
        // This query's searches by key (their places in `wanted`), and its means' parts.
        let mut place_of: FxHashMap<VectorKey, usize> = FxHashMap::default();
        let mut means: Vec<(usize, Vec<&[f32]>)> = Vec::new();
        for (configuration, plan) in configurations.iter().zip(plans) {
            if plan.vector.is_none() {
                continue;
            }
            let limit = fusion::method(plan.fusion).search_depth(&configuration.params);
            let (_, vectors, _) =
                configuration_inputs(query, expansion, &configuration.params, *plan);
            for SearchWith { vector, mean_of } in vectors {
                let key = vector_key(&vector);
                let place = *place_of.entry(key.clone()).or_insert_with(|| {
                    wanted.push(WantedSearch {
                        position,
                        key,
                        vector,
                        limit,
                        sum_of: Vec::new(),
                    });
                    wanted.len() - 1
                });
                wanted[place].limit = wanted[place].limit.max(limit);
                if !mean_of.is_empty() {
                    means.push((place, mean_of));
                }
            }
        }
        // mean_of_unit_vectors' sum: each nonzero part over the number of parts and its
        // norm (zero parts add nothing).
        for (place, parts) in means {
            let count = parts.len() as f64;
            let sum_of: Option<Vec<(usize, f64)>> = parts
                .iter()
                .map(|part| (part, norm(part)))
                .filter(|&(_, norm)| norm > 0.0)
                .map(|(part, norm)| {
                    let place = *place_of.get(&vector_key(part))?;
                    Some((place, 1.0 / (count * norm)))
                })
                .collect();
            wanted[place].sum_of = sum_of.unwrap_or_default();
        }
    }
    wanted
}

/// `wanted` by depth: (query position, key, vector) of each search.
fn by_limit(wanted: Vec<WantedSearch>) -> BTreeMap<usize, Vec<(usize, VectorKey, Vec<f32>)>> {
    let mut by_limit: BTreeMap<usize, Vec<(usize, VectorKey, Vec<f32>)>> = BTreeMap::new();
    for search in wanted {
        by_limit.entry(search.limit).or_default().push((
            search.position,
            search.key,
            search.vector,
        ));
    }
    by_limit
}

/// The f32 bits of a search vector: the key of its precomputed hits.
fn vector_key(vector: &[f32]) -> VectorKey {
    vector.iter().map(|value| value.to_bits()).collect()
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
            .map(|search| expansion.hits(&search.vector))
            .collect(),
        all_zero: search_vectors.iter().all(|search| is_zero(&search.vector)),
        hyde,
    }
}

/// A vector one configuration searches with for one query.
struct SearchWith<'e> {
    vector: Vec<f32>,
    /// For the mean of unit vectors (`hyde-mean`), the vectors it is the mean of; empty
    /// for the others.
    mean_of: Vec<&'e [f32]>,
}

impl SearchWith<'_> {
    fn plain(vector: &[f32]) -> SearchWith<'static> {
        SearchWith {
            vector: vector.to_vec(),
            mean_of: Vec::new(),
        }
    }
}

/// The hypotheses one configuration uses for one query (after the skip heuristics and
/// fallbacks), the vectors it searches, and how it used HyDE.
fn configuration_inputs<'e>(
    query: &Query,
    expansion: &'e QueryExpansion,
    params: &Params,
    plan: Plan,
) -> (&'e [String], Vec<SearchWith<'e>>, HydeOutcome) {
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
    let mean = |parts: Vec<&'e Vec<f32>>| SearchWith {
        vector: mean_of_unit_vectors(parts.iter().copied()),
        mean_of: parts.into_iter().map(Vec::as_slice).collect(),
    };
    let search_vectors: Vec<SearchWith> = match (plan.vector, &expansion.query_vector) {
        (None, _) | (_, None) => Vec::new(),
        (Some(_), Some(query_vector)) if hypothesis_vectors.is_empty() => {
            vec![SearchWith::plain(query_vector)]
        }
        (Some(SearchVector::Query), Some(query_vector)) => vec![SearchWith::plain(query_vector)],
        (Some(SearchVector::FirstHypothesis), _) => {
            vec![SearchWith::plain(&hypothesis_vectors[0])]
        }
        (Some(SearchVector::MeanOfQueryAndHypotheses), Some(query_vector)) => vec![mean(
            std::iter::once(query_vector)
                .chain(hypothesis_vectors)
                .collect(),
        )],
        (Some(SearchVector::EachHypothesis), _) => hypothesis_vectors
            .iter()
            .map(|vector| SearchWith::plain(vector))
            .collect(),
        (Some(SearchVector::MeanOfHypotheses), _) => {
            vec![mean(hypothesis_vectors.iter().collect())]
        }
    };

    (hypotheses, search_vectors, hyde)
}

fn is_zero(vector: &[f32]) -> bool {
    vector.iter().all(|&value| value == 0.0)
}
