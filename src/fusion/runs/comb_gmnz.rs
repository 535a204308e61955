//! CombGMNZ (Lee 1997; ranx `comb_gmnz`): CombSUM times the number of lists that hold
//! the document raised to gamma (gamma 1 is CombMNZ, gamma 0 CombSUM). ranx gives gamma
//! no default, and neither does `hyde-eval fuse` (`--gamma`).

use std::collections::BTreeMap;

use super::held_scores;

/// The CombGMNZ score of every document of `lists`.
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>], gamma: f64) -> BTreeMap<Id, f64> {
    held_scores(lists)
        .into_iter()
        .map(|(id, scores)| {
            let count = scores.len() as f64;
            (id, scores.iter().sum::<f64>() * count.powf(gamma))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_times_the_count_to_gamma() {
        let lists = vec![vec![("a", 0.5), ("b", 1.0)], vec![("a", 0.25)]];
        let totals = fuse(&lists, 2.0);
        assert_eq!(totals["a"], 3.0);
        assert_eq!(totals["b"], 1.0);
    }
}
