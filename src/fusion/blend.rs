//! chatcli's blended ranker (`blend`, `hyde-3b`, `hyde-3b-hyp`, `hyde-mean`,
//! `multi-hyde`; chatcli ranking.go): the keyword matches and the vector hits, each
//! signal min-max scaled over those candidates, then weighted (semantic, lexical,
//! temporal). With nothing to search with, every fact ranks by temporal score.
//!
//! Owns the blend's vector hits (top-K per search vector, the `min_cosine` floor and
//! multi-hyde's adaptive floor), the merge of hits and keyword matches, the min-max
//! scalings (the scorer's state over the whole set of candidates), the parameters it
//! reads and its weight axes. The streaming route never scores every keyword match: the
//! scalings need only the hits and the extremes of the matches' signals (their
//! relevance groups give the lexical extremes, one pass over their temporal scores the
//! temporal ones, and the semantic signal of a match that is not a hit is 0), and the
//! matches are then scored a relevance group at a time, from the highest, until no fact
//! of the next group can reach the top `depth` (see [`super::keyword_groups`]).
//!
//! Like every method it sees one query at a time through `SignalSources`: it must not
//! import the pipeline or anything above it, nor keep state between queries.

use rustc_hash::FxHashMap;

use super::keyword_groups::top_of_groups;
use super::{
    weighted_sum, Candidate, CandidateConsumer, CandidateSet, FusionMethod, MethodSpec, Scorer,
    Searches, SignalSources, WeightAxis,
};
use crate::configuration::{Params, Weights};
use crate::index::{FactIndex, ScoredFacts};

/// chatcli: a signal whose span over the candidates is at most this is zero for all.
pub const MIN_NORMALIZATION_SPAN: f64 = 1e-12;

/// Axis names of chatcli's blend weights, in grid order.
pub const BLEND_AXES: [&str; 3] = ["semantic", "lexical", "temporal"];

/// chatcli's blended ranker.
pub struct Blend;

impl FusionMethod for Blend {
    type Scorer = BlendScorer;

    const SPEC: MethodSpec = MethodSpec {
        // Only the blend searches vectors with top-K, a floor and the adaptive floor.
        params: &[
            "weights",
            "vector_top_k",
            "min_cosine",
            "adaptive_floor_start",
            "adaptive_floor_step",
            "half_life_days",
            "recency_decay_days",
        ],
        weight_axes: &[
            WeightAxis {
                name: BLEND_AXES[0],
                parameter: "weights",
                get: |params| params.weights.semantic,
                set: |params, weight| params.weights.semantic = weight,
            },
            WeightAxis {
                name: BLEND_AXES[1],
                parameter: "weights",
                get: |params| params.weights.lexical,
                set: |params, weight| params.weights.lexical = weight,
            },
            WeightAxis {
                name: BLEND_AXES[2],
                parameter: "weights",
                get: |params| params.weights.temporal,
                set: |params, weight| params.weights.temporal = weight,
            },
        ],
        keyword_relevance: true,
        bm25: false,
        text_ranking: false,
    };

    fn search_depth(&self, params: &Params) -> usize {
        params.vector_top_k
    }

    fn candidates<C: CandidateConsumer>(
        &self,
        sources: SignalSources<'_>,
        consumer: C,
    ) -> C::Output {
        let keywords = sources.keywords.unwrap_or(&[]);
        let semantic = vector_hits(sources.searches, sources.params);
        let inputs_empty = keywords.is_empty() && sources.searches.all_zero;
        sources
            .lexical
            .with_keyword_relevance(keywords, |keyword_matches| {
                if keyword_matches.len() == 0 && semantic.is_empty() && inputs_empty {
                    // chatcli: nothing to search with -> every fact by temporal score.
                    return consumer.all_by_temporal();
                }
                consumer.signals(BlendCandidates {
                    keyword_matches,
                    hits: semantic,
                    temporal: sources.temporal,
                })
            })
    }

    fn scorer(&self, params: &Params, candidates: impl Iterator<Item = Candidate>) -> BlendScorer {
        BlendScorer::over(candidates, params.weights)
    }

    fn adaptive_floor(&self, sources: SignalSources<'_>) -> Option<f64> {
        adaptive_floor_on(sources.params).then(|| settled_floor(sources.searches, sources.params))
    }

    /// The adaptive floor's start and step are read only while it is on: a start above
    /// `min_cosine` (a start of 0 says "off" and is always accepted).
    fn unread_at(&self, params: &Params, name: &str) -> Option<String> {
        let off = !adaptive_floor_on(params);
        match name {
            "adaptive_floor_step" if off => Some(format!(
                "the step is read only while the adaptive floor is on, with adaptive_floor_start above min_cosine (here {} and {})",
                params.adaptive_floor_start, params.min_cosine
            )),
            "adaptive_floor_start" if off && params.adaptive_floor_start > 0.0 => Some(format!(
                "adaptive_floor_start {} is not above min_cosine {}, so the adaptive floor stays off (0 turns it off)",
                params.adaptive_floor_start, params.min_cosine
            )),
            _ => None,
        }
    }

    /// The scaled signals: the scalings are found over the candidates, whatever the
    /// weights.
    fn weighted_terms(&self, candidates: &[Candidate]) -> Option<Vec<Vec<f64>>> {
        let scalings = BlendScalings::over(candidates.iter().copied());
        let mut columns = vec![Vec::with_capacity(candidates.len()); BLEND_AXES.len()];
        for candidate in candidates {
            for (column, term) in columns.iter_mut().zip(scalings.terms(candidate)) {
                column.push(term);
            }
        }
        Some(columns)
    }

    fn pruned_ranking(&self, sources: SignalSources<'_>) -> Option<Vec<(FactIndex, f64)>> {
        let keywords = sources.keywords.filter(|keywords| !keywords.is_empty())?;
        let weights = sources.params.weights;
        // The bound needs scores that do not decrease with any signal.
        if ![weights.semantic, weights.lexical, weights.temporal]
            .iter()
            .all(|weight| weight.is_finite() && *weight >= 0.0)
        {
            return None;
        }
        let groups = sources
            .lexical_memo?
            .groups(sources.lexical, keywords, sources.temporal);
        let temporal = sources.temporal;
        let (smallest, largest) = groups.temporal_range(temporal)?;
        let hits = vector_hits(sources.searches, sources.params);
        // A cosine of 0 would leave the sign of a zero scaled term to the order the
        // minimum is found in.
        if hits
            .iter()
            .any(|&(_, cosine)| cosine == 0.0 || !cosine.is_finite())
        {
            return None;
        }
        let hit_candidates: Vec<Candidate> = hits
            .iter()
            .map(|&(fact, cosine)| Candidate {
                semantic: cosine,
                lexical: groups.relevance_of(fact),
                ..Candidate::blank(fact, temporal)
            })
            .collect();
        let matched_hits = hit_candidates
            .iter()
            .filter(|candidate| candidate.lexical != 0.0)
            .count();
        if matched_hits == groups.count() {
            // Every match is a hit: the few candidates are all scored.
            return None;
        }
        // Some match is not a hit, so its semantic signal 0 is among the candidates',
        // and each signal's extremes over the candidates are those of the hits and of
        // these two (every value of theirs belongs to some match).
        let (highest, lowest) = groups.relevance_range()?;
        let extremes =
            [(highest, largest), (lowest, smallest)].map(|(lexical, temporal)| Candidate {
                fact: 0,
                semantic: 0.0,
                lexical,
                temporal,
            });
        let scorer = BlendScorer::over(
            extremes.into_iter().chain(hit_candidates.iter().copied()),
            weights,
        );
        let score = |candidate: &Candidate| {
            scorer
                .score(candidate)
                .expect("the blend scores every candidate")
        };
        let keyword_only = |fact: FactIndex, relevance: f64, temporal: f64| Candidate {
            fact,
            semantic: 0.0,
            lexical: relevance,
            temporal,
        };
        let seeded = hit_candidates
            .iter()
            .map(|candidate| (candidate.fact, score(candidate)))
            .collect();
        let hit_facts: Vec<FactIndex> = hits.iter().map(|&(fact, _)| fact).collect();
        Some(top_of_groups(
            groups.groups(),
            &hit_facts,
            seeded,
            sources.params.depth,
            |fact, relevance| score(&keyword_only(fact, relevance, temporal[fact as usize])),
            |relevance| score(&keyword_only(0, relevance, largest)),
        ))
    }
}

/// The min-max scaling of one signal (chatcli: a span <= 1e-12 makes every value 0).
#[derive(Clone, Copy)]
struct MinMax {
    min: f64,
    span: f64,
}

impl MinMax {
    fn of(values: impl Iterator<Item = f64>) -> MinMax {
        let (min, max) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(min, max), value| {
            (min.min(value), max.max(value))
        });
        MinMax {
            min,
            span: max - min,
        }
    }

    fn scale(self, value: f64) -> f64 {
        if self.span <= MIN_NORMALIZATION_SPAN {
            0.0
        } else {
            (value - self.min) / self.span
        }
    }
}

/// Min-max normalizes `values` in place (chatcli: span <= 1e-12 makes all 0).
pub fn min_max_normalize(values: &mut [f64]) {
    let scaling = MinMax::of(values.iter().copied());
    for value in values.iter_mut() {
        *value = scaling.scale(*value);
    }
}

/// The min-max scalings of a blend's three signals over one set of candidates: what
/// the blend finds over the whole set before it scores any candidate. They do not
/// depend on the weights.
#[derive(Clone, Copy)]
struct BlendScalings {
    semantic: MinMax,
    lexical: MinMax,
    temporal: MinMax,
}

impl BlendScalings {
    fn over(candidates: impl Iterator<Item = Candidate>) -> BlendScalings {
        let start = (f64::INFINITY, f64::NEG_INFINITY);
        let widen = |(min, max): (f64, f64), value: f64| (min.min(value), max.max(value));
        let (semantic, lexical, temporal) =
            candidates.fold((start, start, start), |(semantic, lexical, temporal), c| {
                (
                    widen(semantic, c.semantic),
                    widen(lexical, c.lexical),
                    widen(temporal, c.temporal),
                )
            });
        let scaling = |(min, max): (f64, f64)| MinMax {
            min,
            span: max - min,
        };
        BlendScalings {
            semantic: scaling(semantic),
            lexical: scaling(lexical),
            temporal: scaling(temporal),
        }
    }

    /// A candidate's scaled signals, in weight-axis order (semantic, lexical, temporal).
    fn terms(&self, candidate: &Candidate) -> [f64; 3] {
        [
            self.semantic.scale(candidate.semantic),
            self.lexical.scale(candidate.lexical),
            self.temporal.scale(candidate.temporal),
        ]
    }
}

/// chatcli's blend over one set of candidates: each signal min-max scaled over the set,
/// then weighted. Found in one pass over the set, so a ranking can be blended from
/// candidates streamed twice without ever being stored.
#[derive(Clone, Copy)]
pub struct BlendScorer {
    scalings: BlendScalings,
    /// In weight-axis order (semantic, lexical, temporal).
    weights: [f64; 3],
}

impl BlendScorer {
    /// The blend over `candidates`.
    pub fn over(candidates: impl Iterator<Item = Candidate>, weights: Weights) -> BlendScorer {
        BlendScorer {
            scalings: BlendScalings::over(candidates),
            weights: [weights.semantic, weights.lexical, weights.temporal],
        }
    }
}

impl Scorer for BlendScorer {
    /// The blended score of one candidate of the set.
    fn score(&self, candidate: &Candidate) -> Option<f64> {
        Some(weighted_sum(&self.weights, &self.scalings.terms(candidate)))
    }
}

/// Vector hits for a blend, in fact order (to merge with the keyword matches): top-K
/// over every search vector at the floor the query settles on ([`settled_floor`]); a
/// fact hit by several vectors keeps its highest cosine.
fn vector_hits(searches: Searches<'_>, params: &Params) -> Vec<(FactIndex, f64)> {
    let floor = settled_floor(searches, params);
    let mut best: FxHashMap<FactIndex, f64> = FxHashMap::default();
    for position in 0..searches.hits.len() {
        for (fact, score) in searches.top(position, params.vector_top_k, floor) {
            let slot = best.entry(fact).or_insert(score);
            *slot = slot.max(score);
        }
    }
    let mut hits: Vec<(FactIndex, f64)> = best.into_iter().collect();
    hits.sort_unstable_by_key(|&(fact, _)| fact);
    hits
}

/// True when `params` turn the adaptive floor on (`adaptive_floor_start` above
/// `min_cosine`).
pub fn adaptive_floor_on(params: &Params) -> bool {
    params.adaptive_floor_start > params.min_cosine
}

/// The cosine floor of a query's vector hits: `min_cosine`, or with the adaptive floor on,
/// the first of `adaptive_floor_start`, one `adaptive_floor_step` lower, and so on
/// (never below `min_cosine`, where it stops) at which some search vector has a hit
/// within its top-K: the TypeScript retriever's adaptive thresholding.
pub fn settled_floor(searches: Searches<'_>, params: &Params) -> f64 {
    if !adaptive_floor_on(params) {
        return params.min_cosine;
    }
    let has_hits = |floor: f64| {
        (0..searches.hits.len()).any(|position| {
            searches
                .top(position, params.vector_top_k, floor)
                .next()
                .is_some()
        })
    };
    let mut floor = params.adaptive_floor_start;
    while !has_hits(floor) && floor > params.min_cosine {
        floor = (floor - params.adaptive_floor_step).max(params.min_cosine);
    }
    floor
}

/// A blend's candidates: the keyword matches, still on the lexical accumulators, and the
/// vector hits, merged in fact order as they are walked.
struct BlendCandidates<'s, 'a> {
    keyword_matches: &'s mut ScoredFacts<'a>,
    /// In fact order.
    hits: Vec<(FactIndex, f64)>,
    temporal: &'s [f64],
}

impl CandidateSet for BlendCandidates<'_, '_> {
    fn size_bound(&self) -> usize {
        self.keyword_matches.len() + self.hits.len()
    }

    fn peek(&self) -> impl Iterator<Item = Candidate> + '_ {
        blend_candidates(
            self.keyword_matches.peek(),
            self.hits.iter().copied(),
            self.temporal,
        )
    }

    fn take(self) -> impl Iterator<Item = Candidate> {
        blend_candidates(self.keyword_matches, self.hits.into_iter(), self.temporal)
    }
}

/// A blend's candidates in fact order: the keyword matches (in fact order) merged with
/// the vector hits (`hits`, in fact order), a fact in both once with both signals.
fn blend_candidates<'a>(
    keyword_matches: impl Iterator<Item = (FactIndex, f64)> + 'a,
    hits: impl Iterator<Item = (FactIndex, f64)> + 'a,
    temporal: &'a [f64],
) -> impl Iterator<Item = Candidate> + 'a {
    let mut keyword_matches = keyword_matches.peekable();
    let mut hits = hits.peekable();
    std::iter::from_fn(move || {
        let match_first = match (keyword_matches.peek(), hits.peek()) {
            (Some(&(fact, _)), Some(&(hit, _))) => fact <= hit,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if match_first {
            let (fact, relevance) = keyword_matches.next()?;
            let cosine = hits
                .next_if(|&(hit, _)| hit == fact)
                .map_or(0.0, |(_, cosine)| cosine);
            Some(Candidate {
                semantic: cosine,
                lexical: relevance,
                ..Candidate::blank(fact, temporal)
            })
        } else {
            let (hit, cosine) = hits.next()?;
            Some(Candidate {
                semantic: cosine,
                ..Candidate::blank(hit, temporal)
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configuration::{Fusion, CHATCLI_WEIGHTS};
    use crate::fusion::tests::candidate;
    use crate::fusion::{fuse, CandidateTable, Fuser, TableKind};

    #[test]
    fn min_max_of_constant_signal_is_zero() {
        let mut values = vec![0.7, 0.7 + 1e-13, 0.7];
        min_max_normalize(&mut values);
        assert_eq!(values, vec![0.0, 0.0, 0.0]);
        let mut values = vec![2.0, 4.0, 3.0];
        min_max_normalize(&mut values);
        assert_eq!(values, vec![0.0, 1.0, 0.5]);
    }

    #[test]
    fn blend_worked_by_hand() {
        // semantic 0.9/0.3/0.6 -> 1, 0, 0.5; lexical 0/1/0.5 -> 0, 1, 0.5; temporal constant -> 0.
        let table = CandidateTable {
            kind: TableKind::Signals,
            candidates: vec![
                candidate(2, 0.9, 0.0, 1.0),
                candidate(0, 0.3, 1.0, 1.0),
                candidate(1, 0.6, 0.5, 1.0),
            ],
        };
        let params = Params {
            weights: CHATCLI_WEIGHTS,
            ..Params::default()
        };
        let ranking = fuse(&table, Fusion::Blend, &params);
        assert_eq!(
            ranking.iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![2, 1, 0]
        );
        assert!((ranking[0].1 - 0.55).abs() < 1e-12);
        assert!((ranking[1].1 - 0.425).abs() < 1e-12);
        assert!((ranking[2].1 - 0.30).abs() < 1e-12);
    }

    #[test]
    fn weighted_columns_score_as_the_blend_does_to_the_bit() {
        // Signals whose scalings are not exact in binary (thirds, tenths), so a
        // different order of operations would show in the last bits.
        let table = CandidateTable {
            kind: TableKind::Signals,
            candidates: vec![
                candidate(0, 0.1, 1.0 / 3.0, 0.7),
                candidate(4, 0.3, 0.0, 0.2),
                candidate(5, 0.7, 2.0 / 3.0, 0.9),
                candidate(9, 0.2, 1.0, 0.1),
            ],
        };
        let columns = Blend
            .weighted_columns(&table)
            .expect("the blend has columns");
        assert_eq!(columns.facts, vec![0, 4, 5, 9]);
        // Semantic min 0.1, span 0.6: fact 4 scales to (0.3 - 0.1) / 0.6.
        assert_eq!(columns.terms[0][1], (0.3 - 0.1) / (0.7 - 0.1));
        let mut scores = Vec::new();
        for weights in [
            CHATCLI_WEIGHTS,
            Weights {
                semantic: 0.1,
                lexical: 0.7,
                temporal: 0.2,
            },
        ] {
            let params = Params {
                weights,
                ..Params::default()
            };
            columns.scores(
                &[weights.semantic, weights.lexical, weights.temporal],
                &mut scores,
            );
            let ranking = fuse(&table, Fusion::Blend, &params);
            assert_eq!(ranking.len(), 4);
            for (fact, score) in ranking {
                let position = columns.facts.iter().position(|&f| f == fact).unwrap();
                assert_eq!(scores[position].to_bits(), score.to_bits(), "fact {fact}");
            }
        }
        let every_fact = CandidateTable {
            kind: TableKind::AllByTemporal,
            candidates: table.candidates.clone(),
        };
        assert_eq!(Blend.weighted_columns(&every_fact), None);
    }

    #[test]
    fn hits_and_keyword_matches_merge_in_fact_order() {
        let temporal = [0.1, 0.2, 0.3, 0.4];
        let merged: Vec<Candidate> = blend_candidates(
            [(0, 1.0), (2, 0.5)].into_iter(),
            [(1, 0.8), (2, 0.6), (3, 0.4)].into_iter(),
            &temporal,
        )
        .collect();
        assert_eq!(
            merged,
            vec![
                candidate(0, 0.0, 1.0, 0.1),
                candidate(1, 0.8, 0.0, 0.2),
                candidate(2, 0.6, 0.5, 0.3),
                candidate(3, 0.4, 0.0, 0.4),
            ]
        );
    }

    /// hyde-systems.md, section A (the TypeScript HyDE retriever): "Adaptive
    /// thresholding: search starts at an initial similarity threshold and steps down until
    /// results are found or a minimum threshold is reached; the effective threshold is
    /// part of the result." Floors here are multiples of 1/8, exact in binary, so each
    /// step lands on the value worked by hand.
    #[test]
    fn adaptive_floor_steps_down_until_hits() {
        // Two search vectors, top-K 2: the first's third hit (fact 0) is never read.
        let first: &[(FactIndex, f64)] = &[(3, 0.45), (1, 0.40), (0, 0.30)];
        let second: &[(FactIndex, f64)] = &[(2, 0.44), (1, 0.42)];
        let hits = [first, second];
        let searches = Searches {
            hits: &hits,
            all_zero: false,
        };
        let params = Params {
            vector_top_k: 2,
            min_cosine: 0.25,
            adaptive_floor_start: 0.75,
            adaptive_floor_step: 0.125,
            ..Params::default()
        };
        // 0.75, 0.625 and 0.5 are above the best cosine (0.45): no hits. Three steps
        // down, 0.375 admits 0.45, 0.44, 0.42 and 0.40; fact 1 keeps its higher cosine.
        assert_eq!(settled_floor(searches, &params), 0.375);
        assert_eq!(
            vector_hits(searches, &params),
            vec![(1, 0.42), (2, 0.44), (3, 0.45)]
        );
        // One step from 0.5 already reaches 0.375.
        let from_half = Params {
            adaptive_floor_start: 0.5,
            ..params.clone()
        };
        assert_eq!(settled_floor(searches, &from_half), 0.375);
        // A start at the best cosine needs no step (kept when score >= floor).
        let at_best = Params {
            adaptive_floor_start: 0.45,
            ..params.clone()
        };
        assert_eq!(settled_floor(searches, &at_best), 0.45);
        assert_eq!(vector_hits(searches, &at_best), vec![(3, 0.45)]);
    }

    /// The same rule at its other end: with no hit above the minimum, the floor steps
    /// 0.75 -> 0.5 -> 0.25 and stops at the minimum (0.25, not 0.75 - 3 x 0.25 = 0)
    /// with no hits; without an adaptive floor it is `min_cosine` and nothing is stepped.
    #[test]
    fn adaptive_floor_stops_at_the_minimum() {
        let only: &[(FactIndex, f64)] = &[(4, 0.2), (5, 0.1)];
        let hits = [only];
        let searches = Searches {
            hits: &hits,
            all_zero: false,
        };
        let params = Params {
            vector_top_k: 10,
            min_cosine: 0.25,
            adaptive_floor_start: 0.75,
            adaptive_floor_step: 0.25,
            ..Params::default()
        };
        assert_eq!(settled_floor(searches, &params), 0.25);
        assert!(vector_hits(searches, &params).is_empty());
        let clamped = Params {
            adaptive_floor_step: 0.375,
            ..params.clone()
        };
        // 0.75 -> 0.375 -> max(0.0, 0.25) = 0.25.
        assert_eq!(settled_floor(searches, &clamped), 0.25);
        let off = Params {
            min_cosine: 0.15,
            adaptive_floor_start: 0.0,
            ..params
        };
        assert!(!adaptive_floor_on(&off));
        assert_eq!(settled_floor(searches, &off), 0.15);
        assert_eq!(vector_hits(searches, &off), vec![(4, 0.2)]);
    }
}
