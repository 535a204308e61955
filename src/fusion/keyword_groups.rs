//! A query's chatcli keyword matches grouped by relevance, and the exact top-k cut that
//! grouping allows in the streaming route.
//!
//! chatcli's keyword relevance of a fact is its per-keyword credits (1 for content, 0.5
//! for tags) over the number of keywords, so a query's matches take only a few distinct
//! relevances: [`KeywordGroups`] lists them from the highest, each with its facts in fact
//! order. Every score that reads keyword relevance in `run` (temporal × relevance, and the
//! blend of the min-max scaled signals) is a non-decreasing function of the relevance and
//! the temporal score, computed with non-decreasing floating-point operations, so the
//! score a group's facts can reach is at most the same function of the group's relevance
//! and the largest temporal score of any match, computed the same way. [`top_of_groups`]
//! scores the groups from the highest relevance and stops before the first group whose
//! bound is below the k-th best score so far (strictly: a fact scoring equal to the k-th
//! may still enter by its id), which leaves the ranking exactly as scoring every match.
//!
//! A query's groups are found once per keyword list and shared by the configurations
//! that read it (see [`super::LexicalMemo`]).

use std::cell::RefCell;

use crate::index::{BoundedTop, FactIndex, LexicalIndex};

/// One query's keyword matches grouped by relevance.
pub struct KeywordGroups {
    /// The matches, a group after another, relevance descending; in fact order within
    /// a group.
    facts: Vec<FactIndex>,
    /// Per group, relevance descending: its relevance and where its facts end in `facts`.
    groups: Vec<(f64, usize)>,
    /// The smallest and largest temporal score of the matches, per temporal signal
    /// asked for (by its address and length: every signal outlives the memo).
    temporal_ranges: RefCell<Vec<TemporalRange>>,
}

/// A temporal signal's address and length, and its extremes over the matches.
type TemporalRange = ((usize, usize), Option<(f64, f64)>);

impl KeywordGroups {
    /// The groups of `keywords`' matches, and [`Self::temporal_range`] of `temporal`
    /// found as the matches are read in fact order (one sweep of `temporal` rather than
    /// one per group).
    pub(super) fn find(
        lexical: &LexicalIndex,
        keywords: &[String],
        temporal: &[f64],
    ) -> KeywordGroups {
        lexical.with_keyword_relevance(keywords, |matches| {
            // A sum of credits, in half-units, numbers its group; the group's relevance is
            // that sum over the divisor, as each match's relevance is. Counted in a first
            // pass, so each group's facts go straight to their place.
            let divisor = matches.divisor();
            let mut counts: Vec<usize> = Vec::new();
            for (_, halves) in matches.peek_sums() {
                let at = halves as usize;
                if at >= counts.len() {
                    counts.resize(at + 1, 0);
                }
                counts[at] += 1;
            }
            // Per sum, where its next fact goes; groups from the highest sum.
            let mut next = vec![0; counts.len()];
            let mut groups = Vec::new();
            let mut end = 0;
            for (at, &size) in counts.iter().enumerate().rev() {
                if size > 0 {
                    next[at] = end;
                    end += size;
                    groups.push((at as f64 / divisor, end));
                }
            }
            let mut facts = vec![0; end];
            let mut extremes = Extremes::default();
            for (fact, halves) in matches.take_sums() {
                let at = &mut next[halves as usize];
                facts[*at] = fact;
                *at += 1;
                extremes.add(temporal[fact as usize]);
            }
            KeywordGroups {
                facts,
                groups,
                temporal_ranges: RefCell::new(vec![(signal_key(temporal), extremes.range())]),
            }
        })
    }

    /// The number of matches.
    pub fn count(&self) -> usize {
        self.facts.len()
    }

    /// The groups, relevance descending: (relevance, its facts in fact order).
    pub fn groups(&self) -> impl Iterator<Item = (f64, &[FactIndex])> + '_ {
        let starts = std::iter::once(0).chain(self.groups.iter().map(|&(_, end)| end));
        self.groups
            .iter()
            .zip(starts)
            .map(|(&(relevance, end), start)| (relevance, &self.facts[start..end]))
    }

    /// The highest and lowest relevance of a match (`None` without matches).
    pub fn relevance_range(&self) -> Option<(f64, f64)> {
        Some((self.groups.first()?.0, self.groups.last()?.0))
    }

    /// The keyword relevance of `fact`: 0 when it matches no keyword.
    pub fn relevance_of(&self, fact: FactIndex) -> f64 {
        self.groups()
            .find(|(_, facts)| facts.binary_search(&fact).is_ok())
            .map_or(0.0, |(relevance, _)| relevance)
    }

    /// The smallest and largest of `temporal` over the matches; `None` when there are
    /// none or some match's temporal score is not finite.
    pub fn temporal_range(&self, temporal: &[f64]) -> Option<(f64, f64)> {
        let key = signal_key(temporal);
        if let Some(&(_, range)) = self
            .temporal_ranges
            .borrow()
            .iter()
            .find(|(known, _)| *known == key)
        {
            return range;
        }
        let mut extremes = Extremes::default();
        for &fact in &self.facts {
            extremes.add(temporal[fact as usize]);
        }
        let range = extremes.range();
        self.temporal_ranges.borrow_mut().push((key, range));
        range
    }
}

/// A temporal signal's address and length (every signal outlives the memo).
fn signal_key(temporal: &[f64]) -> (usize, usize) {
    (temporal.as_ptr() as usize, temporal.len())
}

/// The smallest and largest of some values, and whether all are finite.
struct Extremes {
    min: f64,
    max: f64,
    finite: bool,
    any: bool,
}

impl Default for Extremes {
    fn default() -> Self {
        Extremes {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            finite: true,
            any: false,
        }
    }
}

impl Extremes {
    #[inline]
    fn add(&mut self, value: f64) {
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.finite &= value.is_finite();
        self.any = true;
    }

    /// `None` without values, or when some value is not finite.
    fn range(&self) -> Option<(f64, f64)> {
        (self.any && self.finite).then_some((self.min, self.max))
    }
}

/// The best `limit` of `seeded` and of the facts of `groups` not in `skip` (sorted), in
/// score-then-id order, where a fact of a group of relevance `r` scores
/// `score(fact, r)`, and `bound(r)` is at least the score of any such fact. Groups are
/// scored from the first into a buffer of at most `2 * limit` pairs; whenever it fills,
/// only its best `limit` are kept, and pairs behind the last of those are not taken in.
/// Once `limit` pairs are held, a group whose bound is below the last kept score is not
/// scored, nor any after it (the bounds must not increase from one group to the next).
pub fn top_of_groups<'g>(
    groups: impl IntoIterator<Item = (f64, &'g [FactIndex])>,
    skip: &[FactIndex],
    kept: Vec<(FactIndex, f64)>,
    limit: usize,
    score: impl Fn(FactIndex, f64) -> f64,
    bound: impl Fn(f64) -> f64,
) -> Vec<(FactIndex, f64)> {
    if limit == 0 {
        return Vec::new();
    }
    let mut top = BoundedTop::new(limit, kept, 0);
    for (relevance, facts) in groups {
        if top
            .last_kept()
            .is_some_and(|(_, last)| bound(relevance).total_cmp(&last).is_lt())
        {
            break;
        }
        // Both in fact order: the skipped facts are walked beside the group's.
        let mut skipped = skip.iter().copied().peekable();
        for &fact in facts {
            while skipped.next_if(|&skipped| skipped < fact).is_some() {}
            if skipped.next_if_eq(&fact).is_none() {
                top.offer((fact, score(fact, relevance)));
            }
        }
    }
    top.into_sorted()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn groups_and_temporal_extremes_are_those_of_the_matches() {
        use crate::dataset::collection::plain_fact;
        use crate::dataset::Fact;
        use crate::index::LexicalNeeds;
        let contents = [
            "alpha beta",
            "gamma",
            "alpha",
            "beta delta",
            "alphabet beta",
            "delta",
        ];
        let facts: Vec<Fact> = contents
            .iter()
            .enumerate()
            .map(|(index, content)| Fact {
                tags: if index == 5 {
                    vec!["beta".into()]
                } else {
                    Vec::new()
                },
                ..plain_fact(format!("f{index}"), content.to_string())
            })
            .collect();
        let lexical = LexicalIndex::build(
            &facts.iter().collect::<Vec<_>>(),
            &LexicalNeeds {
                keywords: true,
                bm25_analyzers: Vec::new(),
            },
        );
        // "alph" matches facts 0, 2 and 4 (content +1); "beta" facts 0, 3 and 4
        // (content +1) and 5 (tag +0.5). Sums over 2 keywords: 0 and 4 score 1, 2 and 3
        // score 0.5, 5 scores 0.25; fact 1 matches nothing.
        let keywords = vec!["alph".to_string(), "beta".to_string()];
        let first = [0.9, 0.0, 0.4, 0.7, 0.2, 0.6];
        let second = [0.1, 5.0, 0.3, 0.8, 0.5, 0.05];
        let groups = KeywordGroups::find(&lexical, &keywords, &first);
        let found: Vec<(f64, Vec<FactIndex>)> = groups
            .groups()
            .map(|(relevance, facts)| (relevance, facts.to_vec()))
            .collect();
        assert_eq!(
            found,
            vec![(1.0, vec![0, 4]), (0.5, vec![2, 3]), (0.25, vec![5])]
        );
        // Fact 1's 0.0 and 5.0 are not a match's.
        assert_eq!(groups.temporal_range(&first), Some((0.2, 0.9)));
        assert_eq!(groups.temporal_range(&second), Some((0.05, 0.8)));
        let infinite = [0.5, 0.5, f64::INFINITY, 0.5, 0.5, 0.5];
        assert_eq!(groups.temporal_range(&infinite), None);
        assert_eq!(
            KeywordGroups::find(&lexical, &keywords, &infinite).temporal_range(&infinite),
            None
        );
    }

    #[test]
    fn groups_below_the_last_kept_score_are_not_scored() {
        // Relevance 1 for facts 0-4, 0.5 for facts 5-999; the score is the relevance
        // alone, so after the first group the bound 0.5 is below the third best, 1.
        let (first, second): (Vec<FactIndex>, Vec<FactIndex>) =
            ((0..5).collect(), (5..1000).collect());
        let groups = [(1.0, first.as_slice()), (0.5, second.as_slice())];
        let scored = Cell::new(0);
        let top = top_of_groups(
            groups,
            &[2],
            vec![(7, 0.75)],
            3,
            |_, relevance| {
                scored.set(scored.get() + 1);
                relevance
            },
            |relevance| relevance,
        );
        assert_eq!(top, vec![(0, 1.0), (1, 1.0), (3, 1.0)]);
        // Fact 2 is skipped (scored by the caller); the second group is never scored.
        assert_eq!(scored.get(), 4);
    }

    #[test]
    fn a_group_whose_bound_ties_the_last_kept_score_is_scored() {
        // Facts 0 and 1 score 2, seeded fact 9 scores 1: the second group's bound ties
        // the third best, so it is scored, and its fact 3 wins the tie on its id.
        let groups = [(2.0, &[0, 1][..]), (1.0, &[3, 5][..])];
        let top = top_of_groups(
            groups,
            &[],
            vec![(9, 1.0)],
            3,
            |_, relevance| relevance,
            |relevance| relevance,
        );
        assert_eq!(top, vec![(0, 2.0), (1, 2.0), (3, 1.0)]);
    }
}
