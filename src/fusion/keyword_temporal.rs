//! chatcli's keyword-only ranking (`keyword`, `hyde-3a`; chatcli facts.go `Search`):
//! the facts with keyword relevance > 0, scored temporal × relevance; a query without
//! keywords ranks every fact by its temporal score.
//!
//! Owns its candidates (the keyword matches, straight off the lexical accumulators), its
//! score and the parameters it reads. It searches no vector.
//!
//! Like every method it sees one query at a time through `SignalSources`: it must not
//! import the pipeline or anything above it, nor keep state between queries.

use super::{
    Candidate, CandidateConsumer, FusionMethod, LexicalCandidates, MethodSpec, Scorer,
    SignalSources,
};
use crate::configuration::Params;

/// chatcli keyword relevance times temporal score.
pub struct KeywordTemporal;

/// Scores a keyword match: temporal × relevance.
pub struct TemporalTimesRelevance;

impl Scorer for TemporalTimesRelevance {
    fn score(&self, candidate: &Candidate) -> Option<f64> {
        Some(candidate.temporal * candidate.lexical)
    }
}

impl FusionMethod for KeywordTemporal {
    type Scorer = TemporalTimesRelevance;

    const SPEC: MethodSpec = MethodSpec {
        params: &["half_life_days", "recency_decay_days"],
        weight_axes: &[],
        keyword_relevance: true,
        bm25: false,
        text_ranking: false,
    };

    fn candidates<C: CandidateConsumer>(
        &self,
        sources: SignalSources<'_>,
        consumer: C,
    ) -> C::Output {
        let keywords = sources.keywords.unwrap_or(&[]);
        if keywords.is_empty() {
            return consumer.all_by_temporal();
        }
        sources.lexical.with_keyword_relevance(keywords, |matches| {
            consumer.signals(LexicalCandidates::new(matches, sources.temporal))
        })
    }

    fn scorer(
        &self,
        _params: &Params,
        _candidates: impl Iterator<Item = Candidate>,
    ) -> TemporalTimesRelevance {
        TemporalTimesRelevance
    }
}
