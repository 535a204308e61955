//! Indexes over a prepared corpus: lexical (chatcli keyword relevance and BM25 on shared
//! vocabulary postings) and vector (a flat matrix of normalized fact vectors), plus the
//! temporal signal. Facts are addressed by their position in the corpus, which is sorted
//! by fact id, so "ties by id ascending" is "ties by position ascending" everywhere.

#[cfg(target_arch = "x86_64")]
mod avx512;
mod chunked;
mod lexical;
mod postings;
mod temporal;
mod terms;
mod vector;

pub use chunked::ChunkOwners;
pub use lexical::{Bm25Params, LexicalIndex, LexicalNeeds, ScoredFacts};
pub use temporal::{gimli_recency, temporal_score};
pub use vector::{BatchQuery, FlatIndex};

/// Position of a fact in the prepared corpus (sorted by fact id).
pub type FactIndex = u32;

/// Sorts `(fact, score)` pairs by score descending, then fact ascending (= id ascending).
/// Pairs that compare equal are identical (same fact, same score bits), so an unstable
/// sort gives the same order as a stable one.
pub fn sort_by_score_then_id(scored: &mut [(FactIndex, f64)]) {
    // Many pairs are sorted as one integer each, ordered as the pairs are (see
    // [`sort_key`]): comparing two integers costs less than comparing two pairs.
    if scored.len() < KEYED_SORT_LENGTH {
        scored.sort_unstable_by(score_then_id);
        return;
    }
    let mut keys = sort_keys(scored);
    keys.sort_unstable();
    for (pair, &key) in scored.iter_mut().zip(&keys) {
        *pair = from_sort_key(key);
    }
}

/// Pairs from which [`sort_by_score_then_id`] sorts integer keys.
const KEYED_SORT_LENGTH: usize = 64;

/// The sign bit of a double.
const SIGN: u64 = 1 << 63;

/// A key that orders pairs as [`score_then_id`] does: the score's bits in `total_cmp`'s
/// order (the bits of a negative score but its sign flipped, then the sign flipped), all
/// inverted for descending scores, above the fact.
fn sort_key(fact: FactIndex, score: f64) -> u128 {
    let bits = score.to_bits();
    let ordered = bits ^ ((((bits as i64) >> 63) as u64) >> 1) ^ SIGN;
    (u128::from(!ordered) << 32) | u128::from(fact)
}

/// The [`sort_key`] of each pair.
fn sort_keys(scored: &[(FactIndex, f64)]) -> Vec<u128> {
    scored
        .iter()
        .map(|&(fact, score)| sort_key(fact, score))
        .collect()
}

/// The pair [`sort_key`] made `key` of.
fn from_sort_key(key: u128) -> (FactIndex, f64) {
    let ordered = !((key >> 32) as u64) ^ SIGN;
    let bits = ordered ^ ((((ordered as i64) >> 63) as u64) >> 1);
    (key as FactIndex, f64::from_bits(bits))
}

fn score_then_id(a: &(FactIndex, f64), b: &(FactIndex, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Keeps the first `limit` of `scored` in [`sort_by_score_then_id`] order, sorted: they
/// are selected first, then only they are sorted (the order is total, so this equals
/// sorting everything and truncating).
pub fn top_by_score_then_id(scored: &mut Vec<(FactIndex, f64)>, limit: usize) {
    if scored.len() < KEYED_SORT_LENGTH {
        if scored.len() > limit && limit > 0 {
            scored.select_nth_unstable_by(limit - 1, score_then_id);
        }
        scored.truncate(limit);
        scored.sort_unstable_by(score_then_id);
        return;
    }
    // Selected and sorted as the integer keys of sort_by_score_then_id.
    let mut keys = sort_keys(scored);
    if keys.len() > limit && limit > 0 {
        keys.select_nth_unstable(limit - 1);
    }
    keys.truncate(limit);
    keys.sort_unstable();
    scored.clear();
    scored.extend(keys.into_iter().map(from_sort_key));
}

/// The best `limit` pairs offered so far in [`sort_by_score_then_id`] order, held in a
/// buffer of at most `2 * limit` pairs (or the seeded pairs, if more): whenever it
/// fills, only its best `limit` are kept, and pairs behind the last of those are not
/// taken in. The order is total, so the result equals collecting everything and calling
/// [`top_by_score_then_id`], without materializing every scored fact.
pub struct BoundedTop {
    kept: Vec<(FactIndex, f64)>,
    limit: usize,
    capacity: usize,
    /// The last pair kept at the latest pruning: nothing behind it can enter the top.
    cutoff: Option<(FactIndex, f64)>,
}

impl BoundedTop {
    /// A top of `limit` (at least 1) starting from `seeded`, with room reserved for
    /// `expected` pairs (up to the buffer's size).
    pub fn new(limit: usize, seeded: Vec<(FactIndex, f64)>, expected: usize) -> BoundedTop {
        let capacity = limit.saturating_mul(2).max(seeded.len());
        let mut kept = seeded;
        kept.reserve(expected.min(capacity).saturating_sub(kept.len()));
        BoundedTop {
            kept,
            limit,
            capacity,
            cutoff: None,
        }
    }

    /// Takes `pair` in, unless it ranks behind the last kept pair.
    #[inline]
    pub fn offer(&mut self, pair: (FactIndex, f64)) {
        use std::cmp::Ordering;
        if self
            .cutoff
            .is_some_and(|cutoff| score_then_id(&pair, &cutoff) != Ordering::Less)
        {
            return;
        }
        if self.kept.len() >= self.capacity {
            let last = self.prune();
            if score_then_id(&pair, &last) != Ordering::Less {
                return;
            }
        }
        self.kept.push(pair);
    }

    /// A score no pair can be kept below once `limit` pairs are held (the last kept
    /// pair's at the latest pruning, pruning now if there was none); `None` before.
    pub fn last_kept(&mut self) -> Option<(FactIndex, f64)> {
        if self.cutoff.is_none() && self.kept.len() >= self.limit {
            self.prune();
        }
        self.cutoff
    }

    /// Keeps the best `limit` and returns the last of them, the new cut-off.
    fn prune(&mut self) -> (FactIndex, f64) {
        let limit = self.limit;
        self.kept.select_nth_unstable_by(limit - 1, score_then_id);
        self.kept.truncate(limit);
        let last = self.kept[limit - 1];
        self.cutoff = Some(last);
        last
    }

    /// The best `limit` pairs offered, sorted.
    pub fn into_sorted(mut self) -> Vec<(FactIndex, f64)> {
        top_by_score_then_id(&mut self.kept, self.limit);
        self.kept
    }
}

/// The first `limit` of `scored` in [`sort_by_score_then_id`] order, sorted, through a
/// [`BoundedTop`]: equal to collecting everything and calling [`top_by_score_then_id`].
pub fn select_top_by_score_then_id(
    scored: impl IntoIterator<Item = (FactIndex, f64)>,
    limit: usize,
) -> Vec<(FactIndex, f64)> {
    if limit == 0 {
        return Vec::new();
    }
    let scored = scored.into_iter();
    let mut top = BoundedTop::new(limit, Vec::new(), scored.size_hint().0);
    for pair in scored {
        top.offer(pair);
    }
    top.into_sorted()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Streaming selection equals sorting everything and truncating, ties included
        /// (scores drawn from a few values so many tie and the id decides).
        #[test]
        fn streaming_selection_equals_full_sort(
            scores in proptest::collection::vec(0u8..6, 0..400),
            limit in 0usize..50,
        ) {
            let scored: Vec<(FactIndex, f64)> = scores
                .iter()
                .enumerate()
                .map(|(fact, &score)| (fact as FactIndex, f64::from(score) * 0.5))
                .rev()
                .collect();
            let mut expected = scored.clone();
            sort_by_score_then_id(&mut expected);
            expected.truncate(limit);
            prop_assert_eq!(select_top_by_score_then_id(scored, limit), expected);
        }
    }

    proptest! {
        /// Sorting and selecting the top by integer keys orders pairs as the pair
        /// comparison does, signed zeros, infinities and NaNs included, and gives every
        /// pair back bit for bit.
        #[test]
        fn keyed_sort_equals_pair_sort(
            limit in 0usize..320,
            scores in proptest::collection::vec(
                prop_oneof![
                    (0u8..8).prop_map(|score| f64::from(score) - 3.5),
                    Just(0.0),
                    Just(-0.0),
                    Just(f64::INFINITY),
                    Just(f64::NEG_INFINITY),
                    Just(f64::NAN),
                    Just(-f64::NAN),
                    any::<f64>(),
                ],
                0..300,
            ),
        ) {
            let scored: Vec<(FactIndex, f64)> = scores
                .iter()
                .enumerate()
                .map(|(fact, &score)| ((fact % 37) as FactIndex, score))
                .collect();
            let mut expected = scored.clone();
            expected.sort_by(score_then_id);
            let mut keyed = scored.clone();
            sort_by_score_then_id(&mut keyed);
            let bits = |pairs: &[(FactIndex, f64)]| -> Vec<(FactIndex, u64)> {
                pairs.iter().map(|&(fact, score)| (fact, score.to_bits())).collect()
            };
            prop_assert_eq!(bits(&keyed), bits(&expected));
            let mut top = scored;
            top_by_score_then_id(&mut top, limit);
            prop_assert_eq!(bits(&top), bits(&expected[..limit.min(expected.len())]));
        }
    }

    #[test]
    fn streaming_selection_keeps_everything_under_the_limit() {
        let scored = vec![(3, 0.5), (1, 0.5), (2, 0.9)];
        assert_eq!(
            select_top_by_score_then_id(scored, usize::MAX),
            vec![(2, 0.9), (1, 0.5), (3, 0.5)]
        );
    }
}
