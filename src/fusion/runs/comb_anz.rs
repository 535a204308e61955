//! CombANZ (Fox and Shaw 1993; ranx `comb_anz`): CombSUM divided by the number of lists
//! that hold the document, that is the mean of its scores in those lists.

use std::collections::BTreeMap;

use super::held_scores;

/// The CombANZ score of every document of `lists`.
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>]) -> BTreeMap<Id, f64> {
    held_scores(lists)
        .into_iter()
        .map(|(id, scores)| (id, scores.iter().sum::<f64>() / scores.len() as f64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_of_the_held_scores() {
        let lists = vec![vec![("a", 0.5), ("b", 1.0)], vec![("a", 0.25)]];
        let totals = fuse(&lists);
        assert_eq!(totals["a"], 0.375);
        assert_eq!(totals["b"], 1.0);
    }
}
