//! Embed: the fact vectors (a chunk of texts at a time, straight into the flat index),
//! then, after the queries are expanded, every query's and hypothesis' vector (one call
//! each, so one batch plan and one cache pass), large sets of them set aside on disk as
//! soon as they are made ([`super::vector_spill`]). Also the mean of unit vectors that
//! `hyde-mean` and `hyde-mean-dense` search with.
//!
//! It searches nothing and decides no configuration's inputs (`retrieve.rs` does).

use std::time::Instant;

use super::accounting::StageUsage;
use super::chunks::ChunkedTexts;
use super::expand::expand_queries;
use super::expand::QueryExpansion;
use super::state::{elapsed_ms, progress_bar, Corpus, IndexedCorpus, Prepared};
use super::vector_spill::{SpilledVectors, VectorSpillWriter};
use crate::dataset::Query;
use crate::embed::{embed_checked, CorpusTexts, EmbeddingProvider, EmbeddingUsage, TextKind};
use crate::error::Error;
use crate::http::map_in_parallel;
use crate::index::FlatIndex;

impl<'a> IndexedCorpus<'a> {
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
            temporal_by_setting,
            mut timings,
            vector_spill_min_bytes,
            chunking,
            source_weights,
        } = self;
        assert_eq!(texts.len(), ids.len(), "one text per fact of the corpus");
        let started = Instant::now();
        let usage_before = embedder.and_then(|embedder| embedder.usage());
        let chunked = match (chunking, embedder) {
            (Some(spec), Some(_)) => Some(ChunkedTexts::new(texts, spec)?),
            _ => None,
        };
        let (texts, chunk_owners): (&dyn CorpusTexts, _) = match chunked {
            Some((ref chunks, owners)) => (chunks, Some(owners)),
            None => (texts, None),
        };
        let vectors = match embedder {
            Some(embedder) => {
                let what = match &chunk_owners {
                    Some(_) => format!("embedding {} chunks of {} facts", texts.len(), ids.len()),
                    None => format!("embedding {} facts", texts.len()),
                };
                crate::progress::stage(progress, &what);
                let bar = progress_bar(progress, texts.len() > 2000, texts.len(), "embedding");
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
            chunk_owners,
        };

        let started = Instant::now();
        crate::progress::stage(
            progress,
            &format!(
                "expanding {} queries (keywords, hypotheses, vectors)",
                queries.len()
            ),
        );
        let mut expansions = expand_queries(queries, generator, max_hypotheses)?;
        let QueryVectors {
            spilled,
            hypothesis_vectors,
            usage: query_usage,
        } = embed_queries(queries, &mut expansions, embedder, vector_spill_min_bytes)?;
        timings.expand_queries_ms = elapsed_ms(started);
        let embedding_usage = match (usage_before, usage_after_facts) {
            (Some(before), Some(after)) => Some(StageUsage {
                facts: after - before,
                queries: query_usage.0,
                hypotheses: query_usage.1,
            }),
            _ => None,
        };
        let embedded_texts = if let Some(vectors) = &corpus.vectors {
            vectors.len() + expansions.len() + hypothesis_vectors
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
            temporal_by_setting,
            timings,
            embedding_usage,
            generator_requests: generator.requests(),
            generator_live: generator.identity().kind != "recorded",
            progress,
            served: None,
            ann: Vec::new(),
            source_weights,
        })
    }
}

/// Queries whose hypotheses are embedded at once when a batch of them failed.
const QUERY_RETRY_WORKERS: usize = 16;

/// What [`embed_queries`] makes besides the vectors it puts in the expansions.
struct QueryVectors {
    /// The expansions' vectors, when they were set aside on disk.
    spilled: Option<SpilledVectors>,
    /// Hypothesis vectors made.
    hypothesis_vectors: usize,
    /// The embedder's spend on queries and on hypotheses.
    usage: (EmbeddingUsage, EmbeddingUsage),
}

/// Embeds every query and every hypothesis of `expansions` (aligned with `queries`), once
/// for all configurations. When the vectors will total `spill_min_bytes` or more, each
/// kind goes to disk as soon as it is made (see [`super::vector_spill`]).
fn embed_queries(
    queries: &[Query],
    expansions: &mut [QueryExpansion],
    embedder: Option<&dyn EmbeddingProvider>,
    spill_min_bytes: Option<usize>,
) -> Result<QueryVectors, Error> {
    let Some(embedder) = embedder else {
        return Ok(QueryVectors {
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
            writer.take_query_vectors(expansions)?;
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
            for expansion in expansions.iter_mut() {
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
            writer.take_hypothesis_vectors(expansions)?;
            Some(writer.finish()?)
        }
        None => None,
    };
    Ok(QueryVectors {
        spilled,
        hypothesis_vectors,
        usage: (after_queries - before, after_hypotheses - after_queries),
    })
}

/// The L2 norm of `vector`, in f64, summed in order: the norm each part of
/// [`mean_of_unit_vectors`] is divided by.
pub(super) fn norm(vector: &[f32]) -> f64 {
    vector
        .iter()
        .map(|&value| f64::from(value) * f64::from(value))
        .sum::<f64>()
        .sqrt()
}

/// Mean of the L2-normalized inputs, so each text weighs the same whatever its norm.
pub(super) fn mean_of_unit_vectors<'v>(vectors: impl Iterator<Item = &'v Vec<f32>>) -> Vec<f32> {
    let mut sum: Vec<f64> = Vec::new();
    let mut count = 0usize;
    for vector in vectors {
        if sum.is_empty() {
            sum = vec![0.0; vector.len()];
        }
        let norm = norm(vector);
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
