//! CombSUM (Fox and Shaw 1993; ranx `comb_sum`): the sum of a document's scores over
//! the lists, a list that does not hold it adding 0.

use std::collections::BTreeMap;

use super::add;

/// The CombSUM score of every document of `lists`.
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>]) -> BTreeMap<Id, f64> {
    let mut totals = BTreeMap::new();
    for list in lists {
        for (id, score) in list {
            add(&mut totals, id, *score);
        }
    }
    totals
}
