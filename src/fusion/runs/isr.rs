//! ISR, inverse square rank (Mourão, Martins and Magalhães 2015; ranx `isr`): a document
//! earns `1 / rank²` from each list that holds it, ranks counted from 1, and the sum is
//! multiplied by the number of those lists (CombMNZ of the `1 / rank²` scores); the
//! scores themselves are not read. [`inverse_square_ranks`] is shared with
//! [`super::log_isr`] and [`super::logn_isr`].

use std::collections::BTreeMap;

/// Per document of `lists` (each in rank order): the sum of its `1 / rank²` and the
/// number of lists that hold it.
pub fn inverse_square_ranks<Id: Ord + Clone>(
    lists: &[Vec<(Id, f64)>],
) -> BTreeMap<Id, (f64, usize)> {
    let mut sums: BTreeMap<Id, (f64, usize)> = BTreeMap::new();
    for list in lists {
        for (position, (id, _)) in list.iter().enumerate() {
            let rank = position as f64 + 1.0;
            let (sum, count) = sums.entry(id.clone()).or_insert((0.0, 0));
            *sum += 1.0 / (rank * rank);
            *count += 1;
        }
    }
    sums
}

/// The ISR score of every document of `lists` (each in rank order).
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>]) -> BTreeMap<Id, f64> {
    inverse_square_ranks(lists)
        .into_iter()
        .map(|(id, (sum, count))| (id, sum * count as f64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isr_worked_by_hand() {
        // a: (1 + 1/4) x 2; b: 1/4; c: 1.
        let lists = vec![vec![("a", 3.0), ("b", 2.0)], vec![("c", 9.0), ("a", 1.0)]];
        let totals = fuse(&lists);
        assert_eq!(totals["a"], 2.5);
        assert_eq!(totals["b"], 0.25);
        assert_eq!(totals["c"], 1.0);
    }
}
