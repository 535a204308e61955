//! chatcli's keyword-only ranking (`keyword`, `hyde-3a`; chatcli facts.go `Search`):
//! the facts with keyword relevance > 0, scored temporal × relevance; a query without
//! keywords ranks every fact by its temporal score.
//!
//! Owns its candidates (the keyword matches, straight off the lexical accumulators), its
//! score and the parameters it reads. It searches no vector. In `run` it scores the
//! matches a relevance group at a time, from the highest, and stops once no fact of the
//! next group can reach the top `depth`: a fact scores at most the largest temporal score
//! of any match times its relevance (see [`super::keyword_groups`]).
//!
//! Like every method it sees one query at a time through `SignalSources`: it must not
//! import the pipeline or anything above it, nor keep state between queries.

use super::keyword_groups::top_of_groups;
use super::{
    Candidate, CandidateConsumer, FusionMethod, LexicalCandidates, MethodSpec, Scorer,
    SignalSources,
};
use crate::configuration::Params;
use crate::index::FactIndex;

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

    fn pruned_ranking(&self, sources: SignalSources<'_>) -> Option<Vec<(FactIndex, f64)>> {
        let keywords = sources.keywords.filter(|keywords| !keywords.is_empty())?;
        let groups = sources
            .lexical_memo?
            .groups(sources.lexical, keywords, sources.temporal);
        let temporal = sources.temporal;
        let (smallest, largest) = groups.temporal_range(temporal)?;
        // The bound needs scores that do not decrease with the relevance: temporal
        // scores are never negative.
        if smallest < 0.0 {
            return None;
        }
        let score = |fact: FactIndex, relevance: f64, temporal: f64| {
            TemporalTimesRelevance
                .score(&Candidate {
                    fact,
                    semantic: 0.0,
                    lexical: relevance,
                    temporal,
                })
                .expect("temporal × relevance scores every candidate")
        };
        Some(top_of_groups(
            groups.groups(),
            &[],
            Vec::new(),
            sources.params.depth,
            |fact, relevance| score(fact, relevance, temporal[fact as usize]),
            |relevance| score(0, relevance, largest),
        ))
    }
}
