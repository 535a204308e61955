//! The candidate table and fusion: the seam that makes weight sweeps cheap.
//!
//! Retrieval computes, per query, a table of candidate facts with their raw signals
//! (semantic, lexical, temporal). Fusion is a pure function of that table and a few
//! numbers, so re-fusing with other weights never recomputes a signal.

use crate::configuration::{Fusion, Params, Weights};
use crate::index::{select_top_by_score_then_id, FactIndex};

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
