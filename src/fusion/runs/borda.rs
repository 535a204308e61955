//! BordaFuse (Aslam and Montague 2001; ranx `bordafuse`): with `n` candidates (the
//! documents of any list), a list gives `n - position` points to its document at
//! position 0, 1, ..., and `(n - length + 1) / 2` to each candidate it does not hold;
//! a document's score is its points summed over the lists.

use std::collections::{BTreeMap, BTreeSet};

use super::add;

/// The Borda score of every document of `lists` (each in rank order).
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>]) -> BTreeMap<Id, f64> {
    let candidates: BTreeSet<&Id> = lists.iter().flatten().map(|(id, _)| id).collect();
    let count = candidates.len() as f64;
    let mut totals = BTreeMap::new();
    for list in lists {
        let held: BTreeSet<&Id> = list.iter().map(|(id, _)| id).collect();
        for (position, (id, _)) in list.iter().enumerate() {
            add(&mut totals, id, count - position as f64);
        }
        let unranked = (count - list.len() as f64 + 1.0) / 2.0;
        for id in candidates.iter().filter(|id| !held.contains(*id)) {
            add(&mut totals, id, unranked);
        }
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borda_worked_by_hand() {
        // Candidates a, b, c (n = 3). List 1 ranks a, b: a 3, b 2, c (3 - 2 + 1) / 2 = 1.
        // List 2 ranks c: c 3, a and b (3 - 1 + 1) / 2 = 1.5 each.
        let lists = vec![vec![("a", 0.9), ("b", 0.1)], vec![("c", 5.0)]];
        let totals = fuse(&lists);
        assert_eq!(totals["a"], 4.5);
        assert_eq!(totals["b"], 3.5);
        assert_eq!(totals["c"], 4.0);
    }
}
