//! Ranked-list fusion (`bm25-dense-rrf`, `bm25-dense-wsum` and any configuration with
//! their plan): the query vector's nearest `depth` facts and BM25's best `depth` facts,
//! two ranked lists fused by a run-fusion method of [`super::runs`] (RRF, CombSUM,
//! CombMNZ, weighted sum, Borda; the `fusion`, `normalization`, `rrf_k`,
//! `fusion_vector_weight` and `fusion_text_weight` parameters).
//!
//! Owns its candidates (the union of the two lists, in fact order; a signal of −∞ marks
//! a fact absent from that list), its scorer (the fusion over the whole candidate set),
//! the parameters it reads and its weight axes (vector, text; they move rankings under
//! `wsum` only). A zero query vector searches nothing: the vector list is then empty.
//!
//! Like every method it sees one query at a time through `SignalSources`: it must not
//! import the pipeline or anything above it, nor keep state between queries.

use rustc_hash::FxHashMap;

use super::bm25::bm25_params;
use super::cosine::MAX_SWEEP_DEPTH;
use super::runs::{fused_scores, RunFusion};
use super::{
    Candidate, CandidateConsumer, FusionMethod, MethodSpec, Scorer, SignalSources, WeightAxis,
};
use crate::configuration::{ListFusion, ListMethod, Params};
use crate::index::{select_top_by_score_then_id, FactIndex};

/// Axis names of the list fusion's weights, in grid order.
pub const LIST_AXES: [&str; 2] = ["fusion_vector_weight", "fusion_text_weight"];

/// Marks a fact absent from one of the two lists.
const ABSENT: f64 = f64::NEG_INFINITY;

/// The vector search's and BM25's rankings, fused.
pub struct RankedLists;

/// How deep each list reads: `depth`, and at least what a depth sweep re-fuses to.
fn list_depth(params: &Params) -> usize {
    params.depth.max(MAX_SWEEP_DEPTH)
}

/// The list fusion of `params` (its defaults when the preset set none).
fn list_fusion(params: &Params) -> ListFusion {
    params.lists.unwrap_or_default()
}

impl FusionMethod for RankedLists {
    type Scorer = ListScorer;

    const SPEC: MethodSpec = MethodSpec {
        params: &[
            "bm25_k1",
            "bm25_b",
            "bm25_analyzer",
            "fusion",
            "normalization",
            "rrf_k",
            "fusion_vector_weight",
            "fusion_text_weight",
        ],
        weight_axes: &[
            WeightAxis {
                name: LIST_AXES[0],
                parameter: LIST_AXES[0],
                get: |params| list_fusion(params).vector_weight,
                set: |params, weight| {
                    params
                        .lists
                        .get_or_insert_with(ListFusion::default)
                        .vector_weight = weight
                },
            },
            WeightAxis {
                name: LIST_AXES[1],
                parameter: LIST_AXES[1],
                get: |params| list_fusion(params).text_weight,
                set: |params, weight| {
                    params
                        .lists
                        .get_or_insert_with(ListFusion::default)
                        .text_weight = weight
                },
            },
        ],
        keyword_relevance: false,
        bm25: true,
        text_ranking: false,
    };

    fn search_depth(&self, params: &Params) -> usize {
        list_depth(params)
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
            ..
        } = sources;
        let depth = list_depth(params);
        let mut by_fact: FxHashMap<FactIndex, Candidate> = FxHashMap::default();
        let absent = |fact: FactIndex| Candidate {
            semantic: ABSENT,
            lexical: ABSENT,
            ..Candidate::blank(fact, temporal)
        };
        if !searches.hits.is_empty() && !searches.all_zero {
            for (fact, cosine) in searches.top(0, depth, f64::NEG_INFINITY) {
                by_fact.entry(fact).or_insert_with(|| absent(fact)).semantic = cosine;
            }
        }
        let text_hits = lexical.with_bm25(
            query_text,
            bm25_params(params),
            params.bm25_analyzer,
            |scores| select_top_by_score_then_id(scores, depth),
        );
        for (fact, score) in text_hits {
            by_fact.entry(fact).or_insert_with(|| absent(fact)).lexical = score;
        }
        let mut candidates: Vec<Candidate> = by_fact.into_values().collect();
        candidates.sort_by_key(|candidate| candidate.fact);
        consumer.signals(candidates)
    }

    /// A run-fusion method reads only its own parameters: RRF its k, the weighted sum its
    /// weights, the score-based methods a normalization.
    fn unread_at(&self, params: &Params, name: &str) -> Option<String> {
        let method = list_fusion(params).method;
        let reader = match name {
            "normalization" if method.reads_ranks_only() => {
                return Some(format!(
                    "fusion {} reads ranks only, so no normalization applies",
                    method.name()
                ))
            }
            "rrf_k" => ListMethod::Rrf,
            "fusion_vector_weight" | "fusion_text_weight" => ListMethod::Wsum,
            _ => return None,
        };
        (method != reader).then(|| {
            format!(
                "only fusion {} reads it; this configuration fuses with {}",
                reader.name(),
                method.name()
            )
        })
    }

    fn scorer(&self, params: &Params, candidates: impl Iterator<Item = Candidate>) -> ListScorer {
        let fusion = list_fusion(params);
        let mut vector = Vec::new();
        let mut text = Vec::new();
        for candidate in candidates {
            if candidate.semantic != ABSENT {
                vector.push((candidate.fact, candidate.semantic));
            }
            if candidate.lexical != ABSENT {
                text.push((candidate.fact, candidate.lexical));
            }
        }
        let weights = [fusion.vector_weight, fusion.text_weight];
        let run_fusion = RunFusion {
            method: fusion.method,
            normalization: fusion.normalization,
            rrf_k: fusion.rrf_k,
            weights: &weights,
            // A configuration cannot name gmnz (ListMethod::Gmnz is not deserialized).
            gamma: 1.0,
            sigma: crate::fusion::runs::logn_isr::DEFAULT_SIGMA,
        };
        ListScorer {
            scores: fused_scores(&[vector, text], &run_fusion)
                .into_iter()
                .collect(),
        }
    }
}

/// The fused score of every candidate of one set.
pub struct ListScorer {
    scores: FxHashMap<FactIndex, f64>,
}

impl Scorer for ListScorer {
    fn score(&self, candidate: &Candidate) -> Option<f64> {
        self.scores.get(&candidate.fact).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configuration::{Fusion, ListMethod, Normalization};
    use crate::fusion::tests::candidate;
    use crate::fusion::{fuse, CandidateTable, TableKind};

    fn table() -> CandidateTable {
        // Vector list: 3 (0.9), 1 (0.5). Text list: 1 (7.0), 2 (3.0), 5 (3.0).
        CandidateTable {
            kind: TableKind::Signals,
            candidates: vec![
                candidate(1, 0.5, 7.0, 0.0),
                candidate(2, ABSENT, 3.0, 0.0),
                candidate(3, 0.9, ABSENT, 0.0),
                candidate(5, ABSENT, 3.0, 0.0),
            ],
        }
    }

    fn params(method: ListMethod) -> Params {
        Params {
            lists: Some(ListFusion {
                method,
                ..ListFusion::default()
            }),
            ..Params::default()
        }
    }

    #[test]
    fn rrf_of_the_two_lists_worked_by_hand() {
        let ranking = fuse(&table(), Fusion::RankedLists, &params(ListMethod::Rrf));
        // 1: 1/62 + 1/61; 3: 1/61; 2: 1/62 (rank 2 of the text list: tie with 5, id 2 first);
        // 5: 1/63.
        assert_eq!(
            ranking.iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![1, 3, 2, 5]
        );
        assert_eq!(ranking[0].1, 1.0 / 62.0 + 1.0 / 61.0);
        assert_eq!(ranking[3].1, 1.0 / 63.0);
    }

    #[test]
    fn wsum_under_min_max_worked_by_hand() {
        let mut params = params(ListMethod::Wsum);
        params.lists.as_mut().unwrap().normalization = Normalization::MinMax;
        // Vector min-max: 3 -> 1, 1 -> 0. Text: 1 -> 1, 2 and 5 -> 0. Weights 0.5/0.5.
        let ranking = fuse(&table(), Fusion::RankedLists, &params);
        assert_eq!(ranking, vec![(1, 0.5), (3, 0.5), (2, 0.0), (5, 0.0)]);
    }
}
