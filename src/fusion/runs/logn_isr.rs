//! logn_ISR (Mourão, Martins and Magalhães 2015; ranx `logn_isr`): the sum of a
//! document's `1 / rank²` over the lists that hold it, times `ln(count + sigma)` with
//! `count` the number of those lists and sigma in [0, 1] (ranx's default 0.01), so a
//! document only one list holds keeps a small score. Ranks only.

use std::collections::BTreeMap;

use super::isr::inverse_square_ranks;

/// ranx's default sigma.
pub const DEFAULT_SIGMA: f64 = 0.01;

/// The logn_ISR score of every document of `lists` (each in rank order).
pub fn fuse<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>], sigma: f64) -> BTreeMap<Id, f64> {
    inverse_square_ranks(lists)
        .into_iter()
        .map(|(id, (sum, count))| (id, sum * (count as f64 + sigma).ln()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logn_isr_worked_by_hand() {
        let lists = vec![vec![("a", 3.0), ("b", 2.0)], vec![("c", 9.0), ("a", 1.0)]];
        let totals = fuse(&lists, 0.5);
        assert_eq!(totals["a"], 1.25 * 2.5f64.ln());
        assert_eq!(totals["b"], 0.25 * 1.5f64.ln());
        assert_eq!(totals["c"], 1.5f64.ln());
    }
}
