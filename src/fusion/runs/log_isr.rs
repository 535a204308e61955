//! log_ISR (Mourão, Martins and Magalhães 2015; ranx `log_isr`): the sum of a
//! document's `1 / rank²` over the lists that hold it, times the natural log of the
//! number of those lists; a document only one list holds scores 0. Ranks only.

use std::collections::BTreeMap;

use super::isr::inverse_square_ranks;

/// The log_ISR score of every document of `lists` (each in rank order).
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>]) -> BTreeMap<Id, f64> {
    inverse_square_ranks(lists)
        .into_iter()
        .map(|(id, (sum, count))| (id, sum * (count as f64).ln()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_isr_worked_by_hand() {
        let lists = vec![vec![("a", 3.0), ("b", 2.0)], vec![("c", 9.0), ("a", 1.0)]];
        let totals = fuse(&lists);
        assert_eq!(totals["a"], 1.25 * 2f64.ln());
        assert_eq!(totals["b"], 0.0);
        assert_eq!(totals["c"], 0.0);
    }
}
