//! Weighted sum (ranx `wsum`): `Σ weight_i × score_i` over the lists, a list that does
//! not hold the document adding 0. The weights are used as given (not rescaled).

use std::collections::BTreeMap;

use super::add;

/// The weighted sum of every document of `lists`; `weights` has one weight per list.
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>], weights: &[f64]) -> BTreeMap<Id, f64> {
    let mut totals = BTreeMap::new();
    for (list, weight) in lists.iter().zip(weights) {
        for (id, score) in list {
            add(&mut totals, id, weight * score);
        }
    }
    totals
}
