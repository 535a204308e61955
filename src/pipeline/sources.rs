//! Where facts come from, in ranking: the config file's `sources` (only facts of these
//! sources are returned) and `source_boost` (a source's facts have their fused score
//! multiplied), as Gimli filters memory files from sessions and recommends that memory
//! come first. A fact without a `source` counts as [`DEFAULT_SOURCE`].
//!
//! Applied to every configuration's fused ranking (its `depth` results), which is then
//! sorted again by score, ties by id; it computes no signal.

use std::collections::BTreeMap;

use crate::dataset::Fact;
use crate::error::Error;
use crate::index::{sort_by_score_then_id, FactIndex};

/// The source of a fact that names none: chatcli's memory file.
pub const DEFAULT_SOURCE: &str = "memory";

/// Which sources a run returns, and how much each weighs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourcePolicy {
    /// Only facts of these sources are returned; empty: every source.
    pub only: Vec<String>,
    /// A source's facts have their fused score multiplied by this (others by 1).
    pub boost: BTreeMap<String, f64>,
}

impl SourcePolicy {
    /// A policy, its boosts checked (positive and finite).
    pub fn new(only: Vec<String>, boost: BTreeMap<String, f64>) -> Result<SourcePolicy, Error> {
        if let Some((source, factor)) = boost
            .iter()
            .find(|(_, factor)| !(factor.is_finite() && **factor > 0.0))
        {
            return Err(Error::Usage(format!(
                "source_boost.{source} = {factor}: a boost must be a positive finite number"
            )));
        }
        Ok(SourcePolicy { only, boost })
    }

    /// Each fact's weight, in the order of `facts`: 0 when its source is filtered out,
    /// else its source's boost (1 without one).
    pub fn weights<'f>(&self, facts: impl Iterator<Item = &'f Fact>) -> Vec<f64> {
        facts
            .map(|fact| {
                let source = fact.source.as_deref().unwrap_or(DEFAULT_SOURCE);
                if !self.only.is_empty() && !self.only.iter().any(|only| only == source) {
                    0.0
                } else {
                    self.boost.get(source).copied().unwrap_or(1.0)
                }
            })
            .collect()
    }
}

/// Drops the facts of `ranking` whose weight is 0, multiplies the others' scores by
/// their weight and sorts again by score descending, ties by fact ascending.
pub fn apply_weights(ranking: &mut Vec<(FactIndex, f64)>, weights: &[f64]) {
    ranking.retain(|&(fact, _)| weights[fact as usize] != 0.0);
    for (fact, score) in ranking.iter_mut() {
        *score *= weights[*fact as usize];
    }
    sort_by_score_then_id(ranking);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::collection::plain_fact;

    fn fact(id: &str, source: Option<&str>) -> Fact {
        let mut fact = plain_fact(id.into(), String::new());
        fact.source = source.map(str::to_owned);
        fact
    }

    #[test]
    fn memory_is_boosted_above_a_closer_session_fact() {
        let facts = [
            fact("a", Some("session")),
            fact("b", None),
            fact("c", Some("docs")),
        ];
        let policy =
            SourcePolicy::new(Vec::new(), BTreeMap::from([("memory".into(), 1.2)])).unwrap();
        let weights = policy.weights(facts.iter());
        assert_eq!(weights, vec![1.0, 1.2, 1.0]);
        // Session 0.8 vs memory 0.7: 0.7 x 1.2 = 0.84 goes first.
        let mut ranking = vec![(0, 0.8), (1, 0.7), (2, 0.1)];
        apply_weights(&mut ranking, &weights);
        assert_eq!(ranking[0].0, 1);
        assert!((ranking[0].1 - 0.84).abs() < 1e-12);
        assert_eq!(ranking[1], (0, 0.8));
        assert_eq!(ranking[2], (2, 0.1));
    }

    #[test]
    fn a_filter_keeps_only_the_named_sources() {
        let facts = [
            fact("a", Some("session")),
            fact("b", None),
            fact("c", Some("docs")),
        ];
        let policy =
            SourcePolicy::new(vec!["memory".into(), "docs".into()], BTreeMap::new()).unwrap();
        let weights = policy.weights(facts.iter());
        assert_eq!(weights, vec![0.0, 1.0, 1.0]);
        let mut ranking = vec![(0, 0.9), (2, 0.5), (1, 0.5)];
        apply_weights(&mut ranking, &weights);
        assert_eq!(ranking, vec![(1, 0.5), (2, 0.5)]);
        for bad in [0.0, -1.0, f64::NAN] {
            let error = SourcePolicy::new(Vec::new(), BTreeMap::from([("x".into(), bad)]));
            assert!(error.unwrap_err().to_string().contains("source_boost.x"));
        }
    }
}
