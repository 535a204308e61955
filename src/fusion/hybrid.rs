//! Gimli's hybrid search (`hybrid`): `w_v × cosine + w_t / (1 + BM25 rank)` over the
//! union of the vector search's and BM25's first `limit × multiplier` facts, multiplied
//! by Gimli's recency factor when `recency_decay_days` is set; fused scores below
//! `hybrid_min_score` are dropped.
//!
//! Owns its fetch depth, its candidates (the union, in fact order), its score with the
//! min-score cut, the parameters it reads and its weight axes (vector, text). In `run`
//! its BM25 top comes from the query's [`super::LexicalMemo`], shared with `bm25`.
//!
//! Like every method it sees one query at a time through `SignalSources`: it must not
//! import the pipeline or anything above it, nor keep state between queries.

use rustc_hash::FxHashMap;

use super::bm25::bm25_params;
use super::{
    Candidate, CandidateConsumer, FusionMethod, LexicalMemo, MethodSpec, Scorer, SignalSources,
    WeightAxis,
};
use crate::configuration::Params;
use crate::index::FactIndex;

/// Axis names of the hybrid's weights, in grid order.
pub const HYBRID_AXES: [&str; 2] = ["hybrid_vector_weight", "hybrid_text_weight"];

/// Gimli's hybrid search.
pub struct Hybrid;

/// How many facts each of the hybrid's searches fetches.
fn fetch(params: &Params) -> usize {
    params
        .hybrid_limit
        .saturating_mul(params.hybrid_candidate_multiplier)
}

impl FusionMethod for Hybrid {
    type Scorer = HybridScorer;

    const SPEC: MethodSpec = MethodSpec {
        params: &[
            "bm25_k1",
            "bm25_b",
            "bm25_analyzer",
            "hybrid_vector_weight",
            "hybrid_text_weight",
            "hybrid_candidate_multiplier",
            "hybrid_min_score",
            "hybrid_limit",
            "recency_decay_days",
        ],
        weight_axes: &[
            WeightAxis {
                name: HYBRID_AXES[0],
                parameter: HYBRID_AXES[0],
                get: |params| params.hybrid_vector_weight,
                set: |params, weight| params.hybrid_vector_weight = weight,
            },
            WeightAxis {
                name: HYBRID_AXES[1],
                parameter: HYBRID_AXES[1],
                get: |params| params.hybrid_text_weight,
                set: |params, weight| params.hybrid_text_weight = weight,
            },
        ],
        keyword_relevance: false,
        bm25: true,
        text_ranking: true,
    };

    fn search_depth(&self, params: &Params) -> usize {
        fetch(params)
    }

    fn candidates<C: CandidateConsumer>(
        &self,
        sources: SignalSources<'_>,
        consumer: C,
    ) -> C::Output {
        let SignalSources {
            searches,
            query_text,
            params,
            lexical,
            temporal,
            text_hits,
            ..
        } = sources;
        let fetch = fetch(params);
        let mut by_fact: FxHashMap<FactIndex, Candidate> = FxHashMap::default();
        if !searches.hits.is_empty() {
            for (fact, cosine) in searches.top(0, fetch, f64::NEG_INFINITY) {
                by_fact.insert(
                    fact,
                    Candidate {
                        semantic: cosine,
                        ..Candidate::blank(fact, temporal)
                    },
                );
            }
        }
        let text_hits = match text_hits {
            Some(served) => served.iter().take(fetch).copied().collect(),
            None => {
                // The table route has no memo of the query's: a fresh one searches once.
                let own_memo = LexicalMemo::default();
                sources.lexical_memo.unwrap_or(&own_memo).bm25_top(
                    lexical,
                    query_text,
                    bm25_params(params),
                    params.bm25_analyzer,
                    fetch,
                )
            }
        };
        for (rank, (fact, _)) in text_hits.into_iter().enumerate() {
            by_fact
                .entry(fact)
                .or_insert_with(|| Candidate::blank(fact, temporal))
                .lexical = 1.0 / (1.0 + rank as f64);
        }
        consumer.signals(sorted_candidates(by_fact))
    }

    fn scorer(
        &self,
        params: &Params,
        _candidates: impl Iterator<Item = Candidate>,
    ) -> HybridScorer {
        HybridScorer {
            vector_weight: params.hybrid_vector_weight,
            text_weight: params.hybrid_text_weight,
            min_score: params.hybrid_min_score,
            recency: params.recency_decay_days > 0.0,
        }
    }
}

/// The hybrid's weighted sum and its min-score cut.
pub struct HybridScorer {
    vector_weight: f64,
    text_weight: f64,
    min_score: f64,
    /// Multiply by the candidate's temporal signal, Gimli's recency factor.
    recency: bool,
}

impl Scorer for HybridScorer {
    fn score(&self, candidate: &Candidate) -> Option<f64> {
        let mut score =
            self.vector_weight * candidate.semantic + self.text_weight * candidate.lexical;
        if self.recency {
            score *= candidate.temporal;
        }
        (score >= self.min_score).then_some(score)
    }
}

/// Candidates in fact order, so fusion input never depends on hash-map iteration.
fn sorted_candidates(by_fact: FxHashMap<FactIndex, Candidate>) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = by_fact.into_values().collect();
    candidates.sort_by_key(|candidate| candidate.fact);
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configuration::Fusion;
    use crate::fusion::tests::candidate;
    use crate::fusion::{fuse, CandidateTable, TableKind};

    #[test]
    fn ties_break_by_id_and_hybrid_applies_min_score() {
        let table = CandidateTable {
            kind: TableKind::Signals,
            candidates: vec![
                candidate(5, 0.5, 0.0, 0.0),
                candidate(3, 0.5, 0.0, 0.0),
                candidate(4, 0.1, 1.0, 0.0),
            ],
        };
        let cosine = fuse(&table, Fusion::Cosine, &Params::default());
        assert_eq!(
            cosine.iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![3, 5, 4]
        );
        // Hybrid: 0.7 x 0.5 = 0.35 passes the 0.35 floor; 0.07 + 0.3 = 0.37 passes too.
        let hybrid = fuse(&table, Fusion::Hybrid, &Params::default());
        assert_eq!(
            hybrid.iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![4, 3, 5]
        );
        let strict = Params {
            hybrid_min_score: 0.36,
            ..Params::default()
        };
        assert_eq!(fuse(&table, Fusion::Hybrid, &strict).len(), 1);
    }
}
