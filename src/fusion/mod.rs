//! The candidate table and fusion: the seam that makes weight sweeps cheap.
//!
//! Retrieval computes, per query, a table of candidate facts with their raw signals
//! (semantic, lexical, temporal). Fusion is a pure function of that table and a few
//! numbers, so re-fusing with other weights never recomputes a signal.

use rustc_hash::FxHashMap;

use crate::configuration::{Fusion, Params, Plan, Weights};
use crate::index::{select_top_by_score_then_id, Bm25Params, FactIndex, LexicalIndex};

/// chatcli: a signal whose span over the candidates is at most this is zero for all.
pub const MIN_NORMALIZATION_SPAN: f64 = 1e-12;

/// One candidate fact and its raw signals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub fact: FactIndex,
    pub semantic: f64,
    pub lexical: f64,
    pub temporal: f64,
}

/// How a table ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// Fuse the candidates' signals.
    Signals,
    /// chatcli's empty-input rule: every fact, by temporal score.
    AllByTemporal,
}

/// A query's candidates for one configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateTable {
    pub kind: TableKind,
    pub candidates: Vec<Candidate>,
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

/// chatcli's blend over one set of candidates: each signal min-max scaled over the set,
/// then weighted. Found in one pass over the set, so a ranking can be blended from
/// candidates streamed twice without ever being stored (see `pipeline`'s retrieval).
#[derive(Clone, Copy)]
pub struct Blend {
    semantic: MinMax,
    lexical: MinMax,
    temporal: MinMax,
    weights: Weights,
}

impl Blend {
    /// The blend over `candidates`.
    pub fn over(candidates: impl Iterator<Item = Candidate>, weights: Weights) -> Blend {
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
        Blend {
            semantic: scaling(semantic),
            lexical: scaling(lexical),
            temporal: scaling(temporal),
            weights,
        }
    }

    /// The blended score of one candidate of the set.
    pub fn score(&self, candidate: &Candidate) -> f64 {
        self.weights.semantic * self.semantic.scale(candidate.semantic)
            + self.weights.lexical * self.lexical.scale(candidate.lexical)
            + self.weights.temporal * self.temporal.scale(candidate.temporal)
    }
}

/// chatcli's blended score of every candidate: min-max per signal, weighted sum. The
/// scalings are found first, so no normalized column is ever stored.
pub fn blend_scores(candidates: &[Candidate], weights: Weights) -> impl Iterator<Item = f64> + '_ {
    let blend = Blend::over(candidates.iter().copied(), weights);
    candidates
        .iter()
        .map(move |candidate| blend.score(candidate))
}

/// Fuses `table` into a ranking: score descending, fact id ascending, at most
/// `params.depth` entries.
pub fn fuse(table: &CandidateTable, fusion: Fusion, params: &Params) -> Vec<(FactIndex, f64)> {
    let candidates = &table.candidates;
    let depth = params.depth;
    match (table.kind, fusion) {
        (TableKind::AllByTemporal, _) => {
            select_top_by_score_then_id(candidates.iter().map(|c| (c.fact, c.temporal)), depth)
        }
        (TableKind::Signals, Fusion::KeywordTimesTemporal) => select_top_by_score_then_id(
            candidates.iter().map(|c| (c.fact, c.temporal * c.lexical)),
            depth,
        ),
        (TableKind::Signals, Fusion::Bm25) => {
            select_top_by_score_then_id(candidates.iter().map(|c| (c.fact, c.lexical)), depth)
        }
        (TableKind::Signals, Fusion::Cosine) => {
            select_top_by_score_then_id(candidates.iter().map(|c| (c.fact, c.semantic)), depth)
        }
        (TableKind::Signals, Fusion::Blend) => select_top_by_score_then_id(
            candidates
                .iter()
                .zip(blend_scores(candidates, params.weights))
                .map(|(c, score)| (c.fact, score)),
            depth,
        ),
        (TableKind::Signals, Fusion::Hybrid) => select_top_by_score_then_id(
            candidates
                .iter()
                .map(|c| {
                    (
                        c.fact,
                        params.hybrid_vector_weight * c.semantic
                            + params.hybrid_text_weight * c.lexical,
                    )
                })
                .filter(|&(_, score)| score >= params.hybrid_min_score),
            depth,
        ),
    }
}

/// The largest `depth` a sweep re-fuses a candidate table to.
pub const MAX_SWEEP_DEPTH: usize = 1000;

/// What one configuration's signals for one query are computed from.
#[derive(Clone, Copy)]
pub struct SignalSources<'a> {
    pub keywords: Option<&'a [String]>,
    pub searches: Searches<'a>,
    pub query_text: &'a str,
    pub params: &'a Params,
    /// The lexical index of the corpus.
    pub lexical: &'a LexicalIndex,
    /// The temporal score of every fact, by position.
    pub temporal: &'a [f64],
}

/// How many nearest facts a plan reads per search vector (sweeps of `depth` re-fuse
/// up to [`MAX_SWEEP_DEPTH`], so a cosine table holds at least that many).
pub fn search_limit(plan: Plan, params: &Params) -> usize {
    match plan.fusion {
        Fusion::Cosine => params.depth.max(MAX_SWEEP_DEPTH),
        Fusion::Blend => params.vector_top_k,
        Fusion::Hybrid => params
            .hybrid_limit
            .saturating_mul(params.hybrid_candidate_multiplier),
        Fusion::KeywordTimesTemporal | Fusion::Bm25 => 0,
    }
}

/// The vector searches of one configuration for one query: each search vector's nearest
/// facts (score descending, id ascending, no floor), precomputed in one batch.
#[derive(Clone, Copy)]
pub struct Searches<'a> {
    pub hits: &'a [&'a [(FactIndex, f64)]],
    /// Every search vector is zero (or there is none).
    pub all_zero: bool,
}

impl Searches<'_> {
    /// What [`FlatIndex::search`] returns for search vector `position`: the first `limit`
    /// hits with cosine >= `floor`.
    pub fn top(
        &self,
        position: usize,
        limit: usize,
        floor: f64,
    ) -> impl Iterator<Item = (FactIndex, f64)> + '_ {
        self.hits[position]
            .iter()
            .take(limit)
            .take_while(move |&&(_, score)| score >= floor)
            .copied()
    }
}

/// Vector hits for a blend, in fact order (to merge with the keyword matches): top-K
/// over every search vector with the floor (stepping the floor down when multi-hyde's
/// adaptive floor is on); a fact hit by several vectors keeps its highest cosine.
fn vector_hits(searches: Searches<'_>, params: &Params) -> Vec<(FactIndex, f64)> {
    let search = |floor: f64| {
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

/// BM25's parameters among `params`.
fn bm25_params(params: &Params) -> Bm25Params {
    Bm25Params {
        k1: params.bm25_k1,
        b: params.bm25_b,
    }
}

/// Builds the candidate table of one configuration for one query.
pub fn candidate_table(fusion: Fusion, sources: SignalSources<'_>) -> CandidateTable {
    let SignalSources {
        keywords,
        searches,
        query_text,
        params,
        lexical,
        temporal,
    } = sources;
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
    let keywords = keywords.unwrap_or(&[]);
    let bm25 = bm25_params(params);
    match fusion {
        Fusion::KeywordTimesTemporal if keywords.is_empty() => CandidateTable {
            kind: TableKind::AllByTemporal,
            candidates: (0..temporal.len() as FactIndex).map(blank).collect(),
        },
        Fusion::KeywordTimesTemporal => {
            signals(lexical.with_keyword_relevance(keywords, |matches| {
                matches
                    .map(|(fact, relevance)| Candidate {
                        lexical: relevance,
                        ..blank(fact)
                    })
                    .collect()
            }))
        }
        Fusion::Bm25 => {
            signals(
                lexical.with_bm25(query_text, bm25, params.bm25_analyzer, |scores| {
                    scores
                        .map(|(fact, score)| Candidate {
                            lexical: score,
                            ..blank(fact)
                        })
                        .collect()
                }),
            )
        }
        Fusion::Cosine => match searches.hits.first() {
            // The nearest facts are enough: the ranking keeps `depth` of them.
            Some(_) => signals(
                searches
                    .top(0, usize::MAX, f64::NEG_INFINITY)
                    .map(|(fact, cosine)| Candidate {
                        semantic: cosine,
                        ..blank(fact)
                    })
                    .collect(),
            ),
            None => signals((0..temporal.len() as FactIndex).map(blank).collect()),
        },
        Fusion::Blend => {
            let semantic = vector_hits(searches, params);
            let inputs_empty = keywords.is_empty() && searches.all_zero;
            lexical.with_keyword_relevance(keywords, |keyword_matches| {
                if keyword_matches.len() == 0 && semantic.is_empty() && inputs_empty {
                    // chatcli: nothing to search with -> every fact by temporal score.
                    return CandidateTable {
                        kind: TableKind::AllByTemporal,
                        candidates: (0..temporal.len() as FactIndex).map(blank).collect(),
                    };
                }
                let mut candidates = Vec::with_capacity(keyword_matches.len() + semantic.len());
                candidates.extend(blend_candidates(keyword_matches, &semantic, temporal));
                signals(candidates)
            })
        }
        Fusion::Hybrid => {
            let fetch = params
                .hybrid_limit
                .saturating_mul(params.hybrid_candidate_multiplier);
            let mut by_fact: FxHashMap<FactIndex, Candidate> = FxHashMap::default();
            if !searches.hits.is_empty() {
                for (fact, cosine) in searches.top(0, fetch, f64::NEG_INFINITY) {
                    by_fact.insert(
                        fact,
                        Candidate {
                            semantic: cosine,
                            ..blank(fact)
                        },
                    );
                }
            }
            let text_hits = lexical.with_bm25(query_text, bm25, params.bm25_analyzer, |scores| {
                select_top_by_score_then_id(scores, fetch)
            });
            for (rank, (fact, _)) in text_hits.into_iter().enumerate() {
                by_fact.entry(fact).or_insert_with(|| blank(fact)).lexical =
                    1.0 / (1.0 + rank as f64);
            }
            signals(sorted_candidates(by_fact))
        }
    }
}

/// What [`fuse`] gives for the table [`candidate_table`] builds, computed without the
/// table where that is large: keyword relevance times temporal, BM25 and the blend
/// read the scores straight off the lexical accumulators (the blend in two passes:
/// its scalings, then its scores), and every-fact-by-temporal is read off the
/// temporal scores. A keyword match table holds most of a million-fact corpus (32
/// bytes a fact); the tables of vector hits (cosine, hybrid) are small and still built.
pub fn fused_ranking(fusion: Fusion, sources: SignalSources<'_>) -> Vec<(FactIndex, f64)> {
    let (params, lexical, temporal) = (sources.params, sources.lexical, sources.temporal);
    let depth = params.depth;
    let by_temporal = || {
        select_top_by_score_then_id(
            (0..temporal.len() as FactIndex).map(|fact| (fact, temporal[fact as usize])),
            depth,
        )
    };
    let words = sources.keywords.unwrap_or(&[]);
    match fusion {
        Fusion::KeywordTimesTemporal if words.is_empty() => by_temporal(),
        Fusion::KeywordTimesTemporal => lexical.with_keyword_relevance(words, |matches| {
            select_top_by_score_then_id(
                matches.map(|(fact, relevance)| (fact, temporal[fact as usize] * relevance)),
                depth,
            )
        }),
        Fusion::Bm25 => lexical.with_bm25(
            sources.query_text,
            bm25_params(params),
            params.bm25_analyzer,
            |scores| select_top_by_score_then_id(scores, depth),
        ),
        Fusion::Blend => {
            let semantic = vector_hits(sources.searches, params);
            let inputs_empty = words.is_empty() && sources.searches.all_zero;
            lexical.with_keyword_relevance(words, |keyword_matches| {
                if keyword_matches.len() == 0 && semantic.is_empty() && inputs_empty {
                    return by_temporal();
                }
                let blend = Blend::over(
                    blend_candidates(keyword_matches.peek(), &semantic, temporal),
                    params.weights,
                );
                select_top_by_score_then_id(
                    blend_candidates(keyword_matches, &semantic, temporal)
                        .map(|candidate| (candidate.fact, blend.score(&candidate))),
                    depth,
                )
            })
        }
        Fusion::Cosine | Fusion::Hybrid => fuse(&candidate_table(fusion, sources), fusion, params),
    }
}

/// A blend's candidates in fact order: the keyword matches (in fact order) merged with
/// the vector hits (`hits`, in fact order), a fact in both once with both signals.
fn blend_candidates<'a>(
    keyword_matches: impl Iterator<Item = (FactIndex, f64)> + 'a,
    hits: &'a [(FactIndex, f64)],
    temporal: &'a [f64],
) -> impl Iterator<Item = Candidate> + 'a {
    let mut keyword_matches = keyword_matches.peekable();
    let mut hits = hits.iter().copied().peekable();
    std::iter::from_fn(move || {
        let blank = |fact: FactIndex| Candidate {
            fact,
            semantic: 0.0,
            lexical: 0.0,
            temporal: temporal[fact as usize],
        };
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
                ..blank(fact)
            })
        } else {
            let (hit, cosine) = hits.next()?;
            Some(Candidate {
                semantic: cosine,
                ..blank(hit)
            })
        }
    })
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
    use crate::configuration::CHATCLI_WEIGHTS;

    fn candidate(fact: FactIndex, semantic: f64, lexical: f64, temporal: f64) -> Candidate {
        Candidate {
            fact,
            semantic,
            lexical,
            temporal,
        }
    }

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
