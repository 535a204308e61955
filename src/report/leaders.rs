//! Which configurations lead a column of a report: the best value, and every
//! configuration that is not significantly below it. Two configurations 0.001 apart on
//! 90 queries are tied, not a winner and a loser, so tables and bar charts mark them
//! alike ([`MARK`] on a terminal, bold in Markdown, blue in the HTML report and the
//! charts).
//!
//! Each configuration is compared with the column's best on their per-query values by
//! the paired randomization test the gate and `compare` use (10,000 sign flips, seed
//! 42), and the p-values of a column are Holm-corrected together (one comparison per
//! configuration other than the best). A configuration leads when its corrected p is at
//! least 0.05, or when its value prints as the best's. `judged@k` measures how complete
//! the judgments are, not how good a ranking is, so it never leads.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use crate::dataset::QueryId;
use crate::results::by_tag::tag_metric;
use crate::results::scored::ScoredConfiguration;
use crate::results::Results;
use crate::stats::{
    adjust, randomization_test, Correction, DEFAULT_ALPHA, DEFAULT_ITERATIONS, DEFAULT_SEED,
};

/// The terminal's mark of a leading value (significance keeps `*` and `**`).
pub const MARK: char = '▲';

/// Whether `metric` ranks configurations: every metric but `judged@k`, which measures
/// the judgments.
pub fn ranks_configurations(metric: &str) -> bool {
    !metric.starts_with("judged@")
}

/// One configuration in a column: its value as the table shows it and its per-query
/// values.
pub struct Entry<'a> {
    pub value: f64,
    pub per_query: Vec<(&'a QueryId, f64)>,
}

/// For each entry, in order, whether it leads its column (see the module's
/// documentation); none leads when the column has fewer than two entries.
pub fn leading(entries: &[Entry<'_>]) -> Vec<bool> {
    let count = entries.len();
    if count < 2 {
        return vec![false; count];
    }
    let top = (0..count)
        .reduce(|best, index| {
            if entries[index].value > entries[best].value {
                index
            } else {
                best
            }
        })
        .unwrap_or(0);
    let shown = |value: f64| format!("{value:.4}");
    let best = shown(entries[top].value);
    let top_values: HashMap<&QueryId, f64> = entries[top].per_query.iter().copied().collect();
    let others: Vec<usize> = (0..count).filter(|&index| index != top).collect();
    let p_values: Vec<f64> = others
        .par_iter()
        .map(|&index| {
            let (mut best_values, mut values) = (Vec::new(), Vec::new());
            for (query, value) in &entries[index].per_query {
                if let Some(&top_value) = top_values.get(query) {
                    best_values.push(top_value);
                    values.push(*value);
                }
            }
            if values.is_empty() {
                // Nothing to pair: no evidence of a tie.
                0.0
            } else {
                randomization_test(&best_values, &values, DEFAULT_ITERATIONS, DEFAULT_SEED)
            }
        })
        .collect();
    let mut leads = vec![false; count];
    leads[top] = true;
    for (&index, adjusted) in others.iter().zip(adjust(&p_values, Correction::Holm)) {
        leads[index] = adjusted >= DEFAULT_ALPHA || shown(entries[index].value) == best;
    }
    leads
}

/// Which of `configurations` lead on `metric` over all their evaluated queries.
pub fn of_configurations<C: ScoredConfiguration>(configurations: &[C], metric: &str) -> Vec<bool> {
    if !ranks_configurations(metric) {
        return vec![false; configurations.len()];
    }
    let entries: Vec<Entry<'_>> = configurations
        .iter()
        .map(|configuration| Entry {
            value: configuration.macro_value(metric).unwrap_or(0.0),
            per_query: configuration
                .query_metrics()
                .filter_map(|(query, metrics)| metrics.get(metric).map(|value| (query, value)))
                .collect(),
        })
        .collect();
    leading(&entries)
}

/// Which configurations of `results` lead on `metric` over the evaluated queries tagged
/// `tag`.
pub fn of_tag(results: &Results, tag: &str, metric: &str) -> Vec<bool> {
    if !ranks_configurations(metric) {
        return vec![false; results.configurations.len()];
    }
    let tagged: HashSet<&QueryId> = results
        .queries
        .iter()
        .filter(|query| query.tags.iter().any(|own| own == tag))
        .map(|query| &query.id)
        .collect();
    let entries: Vec<Entry<'_>> = results
        .configurations
        .iter()
        .map(|configuration| Entry {
            value: tag_metric(configuration, tag, metric),
            per_query: configuration
                .query_metrics()
                .filter(|(query, _)| tagged.contains(query))
                .filter_map(|(query, metrics)| metrics.get(metric).map(|value| (query, value)))
                .collect(),
        })
        .collect();
    leading(&entries)
}

/// The legend of columns whose leaders carry `mark`, compared over `queries` (`the 90
/// evaluated queries`, `each tag's queries`) among `configurations`.
pub fn legend(mark: &str, queries: &str, configurations: usize) -> String {
    format!(
        "{mark} = best in column or tied with it: not significantly below it (paired randomization test over {queries}, Holm-corrected over the column's {} comparisons, p ≥ {DEFAULT_ALPHA})",
        configurations.saturating_sub(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(count: usize) -> Vec<QueryId> {
        (0..count)
            .map(|index| QueryId(format!("q{index}")))
            .collect()
    }

    fn entry<'a>(ids: &'a [QueryId], values: &[f64]) -> Entry<'a> {
        Entry {
            value: values.iter().sum::<f64>() / values.len() as f64,
            per_query: ids.iter().zip(values.iter().copied()).collect(),
        }
    }

    #[test]
    fn a_leader_by_a_hair_is_tied_and_a_clear_loser_is_not() {
        let ids = ids(20);
        // a: 1 on every query (mean 1.0). b: 0 on one query (mean 0.95): its one
        // non-zero difference gives |sum| = 1 under every sign flip, so p = 1. c: 0 on
        // every query: all 20 differences are 1, and only 2 of the 2^20 sign patterns
        // (all alike) reach |sum| 20, so p is about 1/10,001 (the observed arrangement
        // counts) and Holm's doubling leaves it far below 0.05.
        let a = entry(&ids, &[1.0; 20]);
        let mut one_miss = [1.0; 20];
        one_miss[7] = 0.0;
        let b = entry(&ids, &one_miss);
        let c = entry(&ids, &[0.0; 20]);
        assert_eq!(leading(&[c, a, b]), vec![false, true, true]);
    }

    #[test]
    fn equal_printed_values_lead_without_per_query_values() {
        let no_queries = |value| Entry {
            value,
            per_query: Vec::new(),
        };
        // 0.83341 and 0.83339 print as 0.8334; 0.8 has nothing to be paired with.
        let leads = leading(&[no_queries(0.8), no_queries(0.83341), no_queries(0.83339)]);
        assert_eq!(leads, vec![false, true, true]);
        // A single configuration leads nothing: there is nothing to compare.
        assert_eq!(leading(&[no_queries(0.5)]), vec![false]);
    }

    #[test]
    fn judged_at_k_never_leads() {
        assert!(!ranks_configurations("judged@10"));
        assert!(ranks_configurations("ndcg@10"));
        assert!(ranks_configurations("bpref"));
    }
}
