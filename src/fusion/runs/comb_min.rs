//! CombMIN (Fox and Shaw 1993; ranx `comb_min`): a document's lowest score over the
//! lists, a list that does not hold it counting as 1e9 (ranx's stand-in for missing),
//! so in practice the lowest score of the lists that hold it.

use std::collections::BTreeMap;

use super::held_scores;

/// ranx's score of a document a list does not hold, under CombMIN.
pub const MISSING: f64 = 1e9;

/// The CombMIN score of every document of `lists`.
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>]) -> BTreeMap<Id, f64> {
    held_scores(lists)
        .into_iter()
        .map(|(id, scores)| {
            let missing = if scores.len() < lists.len() {
                MISSING
            } else {
                f64::INFINITY
            };
            (id, scores.into_iter().fold(missing, f64::min))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowest_score_and_missing_as_1e9() {
        let lists = vec![vec![("a", 0.5), ("b", 3e9)], vec![("a", 0.25)]];
        let totals = fuse(&lists);
        assert_eq!(totals["a"], 0.25);
        assert_eq!(totals["b"], MISSING);
    }
}
