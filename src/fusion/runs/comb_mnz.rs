//! CombMNZ (Fox and Shaw 1993; ranx `comb_mnz`): CombSUM times the number of lists that
//! hold the document (whatever its score there, 0 included).

use std::collections::BTreeMap;

/// The CombMNZ score of every document of `lists`.
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>]) -> BTreeMap<Id, f64> {
    let mut sums: BTreeMap<Id, (f64, usize)> = BTreeMap::new();
    for list in lists {
        for (id, score) in list {
            let (sum, count) = sums.entry(id.clone()).or_insert((0.0, 0));
            *sum += score;
            *count += 1;
        }
    }
    sums.into_iter()
        .map(|(id, (sum, count))| (id, sum * count as f64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_score_still_counts() {
        let lists = vec![vec![("a", 0.5), ("b", 0.0)], vec![("b", 0.25)]];
        let totals = fuse(&lists);
        assert_eq!(totals["a"], 0.5);
        assert_eq!(totals["b"], 0.5);
    }
}
