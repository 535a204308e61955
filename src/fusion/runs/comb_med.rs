//! CombMED (Fox and Shaw 1993; ranx `comb_med`): the median of a document's scores in
//! the lists that hold it (numpy's median: the mean of the two middle scores of an
//! even count); a list that does not hold it is left out.

use std::collections::BTreeMap;

use super::held_scores;

/// The CombMED score of every document of `lists`.
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>]) -> BTreeMap<Id, f64> {
    held_scores(lists)
        .into_iter()
        .map(|(id, mut scores)| {
            scores.sort_by(f64::total_cmp);
            let middle = scores.len() / 2;
            let median = if scores.len() % 2 == 1 {
                scores[middle]
            } else {
                (scores[middle - 1] + scores[middle]) / 2.0
            };
            (id, median)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_the_held_scores() {
        let lists = vec![
            vec![("a", 0.5), ("b", 1.0)],
            vec![("a", 0.25), ("b", 0.0)],
            vec![("a", 0.75)],
        ];
        let totals = fuse(&lists);
        assert_eq!(totals["a"], 0.5);
        assert_eq!(totals["b"], 0.5);
    }
}
