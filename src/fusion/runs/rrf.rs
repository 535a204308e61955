//! Reciprocal rank fusion (Cormack, Clarke and Büttcher 2009; ranx `rrf`): a document
//! earns `1 / (k + rank)` from each list that holds it, ranks counted from 1; the
//! scores themselves are not read.

use std::collections::BTreeMap;

use super::add;

/// The RRF score of every document of `lists` (each in rank order).
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>], k: usize) -> BTreeMap<Id, f64> {
    let mut totals = BTreeMap::new();
    for list in lists {
        for (position, (id, _)) in list.iter().enumerate() {
            add(&mut totals, id, 1.0 / (k as f64 + position as f64 + 1.0));
        }
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_worked_by_hand() {
        // a: 1/61 + 1/62; b: 1/62; c: 1/61.
        let lists = vec![vec![("a", 3.0), ("b", 2.0)], vec![("c", 9.0), ("a", 1.0)]];
        let totals = fuse(&lists, 60);
        assert!((totals["a"] - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-15);
        assert_eq!(totals["b"], 1.0 / 62.0);
        assert_eq!(totals["c"], 1.0 / 61.0);
    }
}
