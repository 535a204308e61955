//! Dense retrieval (`dense`, and the vector-only HyDE presets `hyde-dense`,
//! `multi-hyde-dense`, `hyde-mean-dense`): the search vector's nearest facts, scored by
//! cosine; with several search vectors, their union keeping each fact's highest cosine.
//! Without a search vector every fact is a candidate at 0.
//!
//! Owns how deep it reads its vector search ([`MAX_SWEEP_DEPTH`]), its candidates and its
//! score. It reads no keywords and no BM25.
//!
//! Like every method it sees one query at a time through `SignalSources`: it must not
//! import the pipeline or anything above it, nor keep state between queries.

use std::collections::BTreeMap;

use super::{Candidate, CandidateConsumer, FusionMethod, MethodSpec, Scorer, SignalSources};
use crate::configuration::Params;
use crate::index::FactIndex;

/// The largest `depth` a sweep re-fuses a candidate table to.
pub const MAX_SWEEP_DEPTH: usize = 1000;

/// Cosine against every fact.
pub struct Cosine;

/// Scores a candidate by its semantic signal, the cosine.
pub struct CosineScore;

impl Scorer for CosineScore {
    fn score(&self, candidate: &Candidate) -> Option<f64> {
        Some(candidate.semantic)
    }
}

impl FusionMethod for Cosine {
    type Scorer = CosineScore;

    const SPEC: MethodSpec = MethodSpec {
        params: &[],
        weight_axes: &[],
        keyword_relevance: false,
        bm25: false,
        text_ranking: false,
    };

    /// Sweeps of `depth` re-fuse up to [`MAX_SWEEP_DEPTH`], so a cosine table holds at
    /// least that many.
    fn search_depth(&self, params: &Params) -> usize {
        params.depth.max(MAX_SWEEP_DEPTH)
    }

    fn candidates<C: CandidateConsumer>(
        &self,
        sources: SignalSources<'_>,
        consumer: C,
    ) -> C::Output {
        let searches = sources.searches;
        let candidates: Vec<Candidate> = match searches.hits {
            [] => sources.every_fact().collect(),
            // The nearest facts are enough: the ranking keeps `depth` of them.
            [_] => searches
                .top(0, usize::MAX, f64::NEG_INFINITY)
                .map(|(fact, cosine)| Candidate {
                    semantic: cosine,
                    ..Candidate::blank(fact, sources.temporal)
                })
                .collect(),
            // Several search vectors (`multi-hyde-dense`): the union of their nearest
            // facts, each keeping its highest cosine, in fact order. A fact of the best
            // `depth` by highest cosine is among the nearest `depth` of the vector that
            // gives it that cosine, so searching each as deep suffices.
            _ => {
                let mut best: BTreeMap<FactIndex, f64> = BTreeMap::new();
                for position in 0..searches.hits.len() {
                    for (fact, cosine) in searches.top(position, usize::MAX, f64::NEG_INFINITY) {
                        let slot = best.entry(fact).or_insert(cosine);
                        *slot = slot.max(cosine);
                    }
                }
                best.into_iter()
                    .map(|(fact, cosine)| Candidate {
                        semantic: cosine,
                        ..Candidate::blank(fact, sources.temporal)
                    })
                    .collect()
            }
        };
        consumer.signals(candidates)
    }

    fn scorer(
        &self,
        _params: &Params,
        _candidates: impl Iterator<Item = Candidate>,
    ) -> CosineScore {
        CosineScore
    }
}
