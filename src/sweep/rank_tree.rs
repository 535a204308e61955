//! Ranks of a few judged candidates at many weight points, without scoring every
//! candidate at every point.
//!
//! A query's candidates are points in term space (one coordinate per weight axis, see
//! [`WeightedColumns`]), and a candidate's score at weights `w` is
//! [`weighted_sum`]`(w, terms)`. With weights >= 0 and finite terms, that sum is
//! monotone in every term even as rounded (IEEE rounding never reverses an order), so
//! the candidates inside a box of term space all score between the box's lowest and
//! highest corner. The candidates are laid out once as a bounding-box tree (each node
//! a contiguous run of candidates, split at the median of its widest axis); at each
//! point a walk down the tree counts a whole box as ahead of a judged fact when its
//! lowest corner outscores it, skips it when its highest corner scores below it, and
//! compares candidates one by one only in the leaves that straddle a judged score (a
//! leaf whose candidates share their terms, so their score, counts its lower facts by
//! binary search).
//! The rank of a judged fact is then exactly what counting every candidate gives:
//! score descending in `f64::total_cmp` order, then fact ascending.

use crate::fusion::{weighted_sum, WeightedColumns};
use crate::index::FactIndex;

/// Candidates per leaf: compared one by one when a judged score falls in the leaf.
const LEAF: usize = 32;

/// The most weight axes a tree ranks along (the blend's three).
pub const MAX_AXES: usize = 3;

/// Terms and weights above this magnitude are not ranked by the tree (their products
/// could overflow, where monotonicity would still hold but `inf - inf` would not).
const LARGEST_MAGNITUDE: f64 = 1e100;

/// A candidate's terms, padded with zeros past the tree's axes.
type Terms = [f64; MAX_AXES];

/// One node: candidates `start..end` of the tree order, within the box `lowest` to
/// `highest`.
#[derive(Clone, Copy)]
struct Node {
    lowest: Terms,
    highest: Terms,
    start: u32,
    end: u32,
    /// The second child (the first is the next node); 0 for a leaf.
    second: u32,
    /// A leaf whose candidates all have the same terms, in fact order.
    uniform: bool,
}

/// A query's candidates laid out for counting the ranks of its judged candidates at
/// many weight points.
pub struct RankTree {
    axes: usize,
    /// Candidates' terms and facts, in tree order.
    candidates: Vec<(Terms, FactIndex)>,
    nodes: Vec<Node>,
    /// The judged candidates' terms and facts, in the order [`RankTree::new`] took them.
    judged: Vec<(Terms, FactIndex)>,
}

/// Buffers reused from point to point.
#[derive(Default)]
pub struct RankScratch {
    /// The judged candidates' scores at the point.
    scores: Vec<f64>,
    /// The judged candidates, best first.
    order: Vec<usize>,
    /// Differences of the counts of candidates ahead, along `order`.
    ahead: Vec<isize>,
    /// Nodes to visit, each with the range of `order` it can still change.
    stack: Vec<(usize, usize, usize)>,
}

/// [`weighted_sum`] of the first `weights.len()` terms: the same products added in the
/// same order, so the same bits.
fn score(weights: &[f64], terms: &Terms) -> f64 {
    match *weights {
        [a, b, c] => a * terms[0] + b * terms[1] + c * terms[2],
        [a, b] => a * terms[0] + b * terms[1],
        _ => weighted_sum(weights, terms),
    }
}

impl RankTree {
    /// The tree over `columns`' candidates, ranking those at `judged` (positions in the
    /// columns); `None` with more than [`MAX_AXES`] axes, or when a term is not finite or
    /// too large for the bounds to hold.
    pub fn new(columns: &WeightedColumns, judged: impl Iterator<Item = usize>) -> Option<RankTree> {
        let axes = columns.terms.len();
        let usable = |term: &f64| term.abs() <= LARGEST_MAGNITUDE;
        if !(1..=MAX_AXES).contains(&axes) || !columns.terms.iter().flatten().all(usable) {
            return None;
        }
        let candidate = |position: usize| {
            let mut terms = [0.0; MAX_AXES];
            for (term, column) in terms.iter_mut().zip(&columns.terms) {
                *term = column[position];
            }
            (terms, columns.facts[position])
        };
        let mut candidates: Vec<(Terms, FactIndex)> =
            (0..columns.facts.len()).map(candidate).collect();
        let judged = judged.map(candidate).collect();
        let mut nodes = Vec::new();
        // Preorder: a node, then its first subtree, then its second. Each entry is a
        // range of `candidates` and the node whose second child it is, if any.
        let mut pending = vec![(0, candidates.len(), None)];
        while let Some((start, end, parent)) = pending.pop() {
            let node = nodes.len();
            if let Some(parent) = parent {
                let parent: &mut Node = &mut nodes[parent];
                parent.second = node as u32;
            }
            let range = &mut candidates[start..end];
            let (mut lowest, mut highest) =
                ([f64::INFINITY; MAX_AXES], [f64::NEG_INFINITY; MAX_AXES]);
            for (terms, _) in range.iter() {
                for axis in 0..MAX_AXES {
                    lowest[axis] = lowest[axis].min(terms[axis]);
                    highest[axis] = highest[axis].max(terms[axis]);
                }
            }
            let (axis, width) = (0..axes)
                .map(|axis| (axis, highest[axis] - lowest[axis]))
                .fold(
                    (0, 0.0),
                    |widest, axis| if axis.1 > widest.1 { axis } else { widest },
                );
            // A leaf when small, or when every candidate has the same terms, bit for bit
            // (-0.0 and +0.0 score apart in `total_cmp` order).
            let uniform = width == 0.0
                && range.iter().all(|(terms, _)| {
                    terms
                        .iter()
                        .zip(&range[0].0)
                        .all(|(a, b)| a.to_bits() == b.to_bits())
                });
            if uniform {
                range.sort_unstable_by_key(|&(_, fact)| fact);
            }
            nodes.push(Node {
                lowest,
                highest,
                start: start as u32,
                end: end as u32,
                second: 0,
                uniform,
            });
            if range.len() <= LEAF || uniform {
                continue;
            }
            let middle = range.len() / 2;
            range.select_nth_unstable_by(middle, |a, b| a.0[axis].total_cmp(&b.0[axis]));
            // The second subtree is pushed first, so that the first is laid out next.
            pending.push((start + middle, end, Some(node)));
            pending.push((start, start + middle, None));
        }
        Some(RankTree {
            axes,
            candidates,
            nodes,
            judged,
        })
    }

    /// Whether the tree ranks at `weights`: one per axis, every one >= 0 and not too
    /// large.
    pub fn accepts(&self, weights: &[f64]) -> bool {
        weights.len() == self.axes
            && weights
                .iter()
                .all(|weight| (0.0..=LARGEST_MAGNITUDE).contains(weight))
    }

    /// The 0-based rank at `weights` (which the tree [`accepts`](RankTree::accepts)) of
    /// each judged candidate, in the order [`RankTree::new`] took them, into `ranks`:
    /// how many candidates score higher in `f64::total_cmp` order, or as high with a
    /// lower fact.
    pub fn ranks(&self, weights: &[f64], scratch: &mut RankScratch, ranks: &mut Vec<usize>) {
        let RankScratch {
            scores,
            order,
            ahead,
            stack,
        } = scratch;
        let judged = &self.judged;
        scores.clear();
        scores.extend(judged.iter().map(|(terms, _)| score(weights, terms)));
        // Best first: score descending, then fact ascending. A candidate is ahead of a
        // judged one when it would come first in this order, so the judged candidates it
        // is ahead of are a tail of `order`.
        order.clear();
        order.extend(0..scores.len());
        order.sort_unstable_by(|&a, &b| {
            scores[b]
                .total_cmp(&scores[a])
                .then(judged[a].1.cmp(&judged[b].1))
        });
        ahead.clear();
        ahead.resize(order.len() + 1, 0);
        stack.clear();
        stack.push((0, 0, order.len()));
        while let Some((node, first, last)) = stack.pop() {
            let Node {
                lowest,
                highest,
                start,
                end,
                second,
                uniform,
            } = self.nodes[node];
            // Every candidate of the box scores from `lowest` to `highest`: none is ahead
            // of a judged score above that, all are ahead of one below it.
            let highest = score(weights, &highest);
            let lowest = score(weights, &lowest);
            let from = first + order[first..last].partition_point(|&j| scores[j] > highest);
            let to = from + order[from..last].partition_point(|&j| scores[j] >= lowest);
            if to < last {
                let count = (end - start) as isize;
                ahead[to] += count;
                ahead[last] -= count;
            }
            if from == to {
                continue;
            }
            if second != 0 {
                stack.push((second as usize, from, to));
                stack.push((node + 1, from, to));
                continue;
            }
            let leaf = &self.candidates[start as usize..end as usize];
            if uniform {
                // One score for all: ahead of the judged scores below it, and of an equal
                // one when the fact is lower (facts are in order here).
                let score = score(weights, &leaf[0].0);
                for (index, &j) in order.iter().enumerate().take(to).skip(from) {
                    let count = match score.total_cmp(&scores[j]) {
                        std::cmp::Ordering::Greater => leaf.len(),
                        std::cmp::Ordering::Less => 0,
                        std::cmp::Ordering::Equal => {
                            leaf.partition_point(|&(_, fact)| fact < judged[j].1)
                        }
                    };
                    ahead[index] += count as isize;
                    ahead[index + 1] -= count as isize;
                }
                continue;
            }
            for (terms, fact) in leaf {
                let score = score(weights, terms);
                let behind = order[from..to].partition_point(|&j| {
                    score
                        .total_cmp(&scores[j])
                        .then(judged[j].1.cmp(fact))
                        .is_le()
                });
                ahead[from + behind] += 1;
                ahead[to] -= 1;
            }
        }
        ranks.clear();
        ranks.resize(order.len(), 0);
        let mut running = 0isize;
        for (&judged, difference) in order.iter().zip(ahead.iter()) {
            running += difference;
            ranks[judged] = running as usize;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every candidate scored and compared with every judged one.
    fn counted_ranks(columns: &WeightedColumns, weights: &[f64], judged: &[usize]) -> Vec<usize> {
        let score = |position: usize| {
            let terms: Vec<f64> = columns.terms.iter().map(|terms| terms[position]).collect();
            weighted_sum(weights, &terms)
        };
        judged
            .iter()
            .map(|&j| {
                (0..columns.facts.len())
                    .filter(|&other| {
                        score(other)
                            .total_cmp(&score(j))
                            .then(columns.facts[j].cmp(&columns.facts[other]))
                            .is_gt()
                    })
                    .count()
            })
            .collect()
    }

    proptest! {
        /// The tree's ranks are those of counting every candidate: terms from a few
        /// values (negative ones and -0.0 among them, whose ties `total_cmp` breaks),
        /// zero weights, facts in any order, any number of axes.
        #[test]
        fn tree_ranks_are_counted_ranks(
            axes in 1usize..4,
            candidates in proptest::collection::vec(proptest::collection::vec(0usize..6, 3), 0..200),
            weights in proptest::collection::vec(0usize..4, 3),
            judged in proptest::collection::vec(any::<proptest::sample::Index>(), 0..20),
            fact_seed in any::<u64>(),
        ) {
            let values = [0.0, -0.0, 0.25, 1.0 / 3.0, -0.5, 0.1];
            let mut facts: Vec<FactIndex> = (0..candidates.len() as FactIndex).collect();
            // Facts in a scrambled order, as a table's candidates need not be sorted.
            facts.sort_by_key(|&fact| (u64::from(fact) ^ fact_seed).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let columns = WeightedColumns {
                facts,
                terms: (0..axes)
                    .map(|axis| candidates.iter().map(|terms| values[terms[axis]]).collect())
                    .collect(),
            };
            let weights: Vec<f64> = weights[..axes].iter().map(|&w| [0.0, 0.2, 0.5, 1.0][w]).collect();
            let mut judged: Vec<usize> = if candidates.is_empty() {
                Vec::new()
            } else {
                judged.iter().map(|index| index.index(candidates.len())).collect()
            };
            judged.sort_unstable();
            judged.dedup();
            let tree = RankTree::new(&columns, judged.iter().copied()).expect("finite terms");
            prop_assert!(tree.accepts(&weights));
            let mut ranks = Vec::new();
            tree.ranks(&weights, &mut RankScratch::default(), &mut ranks);
            prop_assert_eq!(ranks, counted_ranks(&columns, &weights, &judged));
        }
    }

    #[test]
    fn signed_zeros_are_not_one_score() {
        // More candidates than a leaf holds, all at +0.0 or -0.0: their boxes have no
        // width, yet `total_cmp` puts every -0.0 behind every +0.0.
        let columns = WeightedColumns {
            facts: (0..3 * LEAF as FactIndex).rev().collect(),
            terms: vec![(0..3 * LEAF)
                .map(|index| if index % 3 == 0 { -0.0 } else { 0.0 })
                .collect()],
        };
        let judged = [0, 1, 2, 3 * LEAF - 1];
        let tree = RankTree::new(&columns, judged.iter().copied()).expect("finite terms");
        let mut ranks = Vec::new();
        tree.ranks(&[1.0], &mut RankScratch::default(), &mut ranks);
        assert_eq!(ranks, counted_ranks(&columns, &[1.0], &judged));
        assert_eq!(
            ranks[0],
            3 * LEAF - 1,
            "the -0.0 with the highest fact is last"
        );
    }

    #[test]
    fn trees_refuse_what_they_cannot_bound() {
        let columns = |value: f64| WeightedColumns {
            facts: vec![0, 1],
            terms: vec![vec![0.5, value]],
        };
        assert!(RankTree::new(&columns(f64::NAN), std::iter::empty()).is_none());
        assert!(RankTree::new(&columns(f64::INFINITY), std::iter::empty()).is_none());
        let tree = RankTree::new(&columns(0.25), std::iter::empty()).expect("finite terms");
        assert!(!tree.accepts(&[-0.25]));
        assert!(!tree.accepts(&[f64::NAN]));
        assert!(!tree.accepts(&[0.5, 0.5]), "one weight per axis");
        assert!(tree.accepts(&[-0.0]));
        let four_axes = WeightedColumns {
            facts: vec![0],
            terms: vec![vec![0.5]; 4],
        };
        assert!(RankTree::new(&four_axes, std::iter::empty()).is_none());
    }
}
