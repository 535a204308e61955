//! BM25 alone (`bm25`): every fact that shares a term with the query, scored by its
//! BM25 score (Lucene idf; k1, b and the analyzer are parameters).
//!
//! Owns its candidates (straight off the lexical accumulators), its score, the
//! parameters it reads and [`bm25_params`], which the hybrid shares. It searches no
//! vector and reads no keywords. In `run` its ranking is the query's BM25 top from the
//! query's [`super::LexicalMemo`], which the hybrid reads too.
//!
//! Like every method it sees one query at a time through `SignalSources`: it must not
//! import the pipeline or anything above it, nor keep state between queries.

use super::{
    Candidate, CandidateConsumer, FusionMethod, LexicalCandidates, MethodSpec, Scorer,
    SignalSources,
};
use crate::configuration::Params;
use crate::index::{Bm25Params, FactIndex};

/// The parameters BM25 scoring reads (the hybrid reads them too).
pub const BM25_PARAMS: [&str; 3] = ["bm25_k1", "bm25_b", "bm25_analyzer"];

/// BM25's parameters among `params`.
pub fn bm25_params(params: &Params) -> Bm25Params {
    Bm25Params {
        k1: params.bm25_k1,
        b: params.bm25_b,
    }
}

/// The BM25 score alone.
pub struct Bm25;

/// Scores a candidate by its lexical signal, the BM25 score.
pub struct LexicalScore;

impl Scorer for LexicalScore {
    fn score(&self, candidate: &Candidate) -> Option<f64> {
        Some(candidate.lexical)
    }
}

impl FusionMethod for Bm25 {
    type Scorer = LexicalScore;

    const SPEC: MethodSpec = MethodSpec {
        params: &BM25_PARAMS,
        weight_axes: &[],
        keyword_relevance: false,
        bm25: true,
        text_ranking: false,
    };

    fn candidates<C: CandidateConsumer>(
        &self,
        sources: SignalSources<'_>,
        consumer: C,
    ) -> C::Output {
        let params = sources.params;
        sources.lexical.with_bm25(
            sources.query_text,
            bm25_params(params),
            params.bm25_analyzer,
            |scores| consumer.signals(LexicalCandidates::new(scores, sources.temporal)),
        )
    }

    fn scorer(
        &self,
        _params: &Params,
        _candidates: impl Iterator<Item = Candidate>,
    ) -> LexicalScore {
        LexicalScore
    }

    /// The query's BM25 top, shared with the hybrid (its score is the BM25 score, so
    /// the ranking is the top itself).
    fn pruned_ranking(&self, sources: SignalSources<'_>) -> Option<Vec<(FactIndex, f64)>> {
        let params = sources.params;
        Some(sources.lexical_memo?.bm25_top(
            sources.lexical,
            sources.query_text,
            bm25_params(params),
            params.bm25_analyzer,
            params.depth,
        ))
    }
}
