//! Run fusion: several ranked lists of one query (the runs of `hyde-eval fuse`, or a
//! configuration's vector and BM25 rankings) combined into one, by ranx's definitions
//! (`ranx.fusion`, `ranx.normalization`, ranx 0.3), which `scripts/fusion_reference.py`
//! checks to 1e-9. One file per method ([`rrf`], [`comb_sum`], [`comb_mnz`], [`wsum`],
//! [`borda`], [`comb_max`], [`comb_min`], [`comb_med`], [`comb_anz`], [`comb_gmnz`],
//! [`isr`], [`log_isr`], [`logn_isr`]) and one for the normalizations ([`normalization`]); this file holds what
//! they share: putting each list in rank order and the final ranking.
//!
//! A list's ranks are its order by score descending, then id ascending (ranx takes a
//! run's order as given; the reference script hands it the lists in this order). The
//! fused ranking is by score descending, then id ascending, as every hyde-eval ranking.
//!
//! Pure computation over ids that order: it knows neither files nor facts.

pub mod borda;
pub mod comb_anz;
pub mod comb_gmnz;
pub mod comb_max;
pub mod comb_med;
pub mod comb_min;
pub mod comb_mnz;
pub mod comb_sum;
pub mod isr;
pub mod log_isr;
pub mod logn_isr;
pub mod normalization;
pub mod rrf;
pub mod wsum;

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::configuration::{ListMethod, Normalization};

/// How ranked lists are fused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunFusion<'w> {
    pub method: ListMethod,
    /// Applied to each list before a score-based method (RRF and Borda read ranks only).
    pub normalization: Normalization,
    /// RRF's k.
    pub rrf_k: usize,
    /// The weighted sum's weights, one per list in list order.
    pub weights: &'w [f64],
    /// CombGMNZ's gamma, finite (read by no other method).
    pub gamma: f64,
    /// logn_ISR's sigma, in [0, 1] as ranx asserts (read by no other method).
    pub sigma: f64,
}

impl RunFusion<'_> {
    /// Checks the fusion can combine `list_count` lists: the weighted sum needs one
    /// finite weight >= 0 per list, not all zero. (A negative weight would rank a
    /// document below those no run returned for being returned: that is no fusion of
    /// evidence. Weights all zero give every document the score 0.)
    pub fn check(&self, list_count: usize) -> Result<(), String> {
        if self.method == ListMethod::Wsum {
            if self.weights.len() != list_count {
                return Err(format!(
                    "wsum needs one weight per run: {} runs, {} weights",
                    list_count,
                    self.weights.len()
                ));
            }
            if let Some(weight) = self
                .weights
                .iter()
                .find(|weight| !weight.is_finite() || **weight < 0.0)
            {
                return Err(format!(
                    "wsum weights must be finite and >= 0, got {weight}"
                ));
            }
            if self.weights.iter().all(|weight| *weight == 0.0) {
                return Err(
                    "wsum weights are all zero, which scores every document 0; give at least one run weight"
                        .into(),
                );
            }
        }
        Ok(())
    }
}

/// Score descending, then id ascending: the order of every list and of the result.
fn by_score_then_id<Id: Ord>(a: &(Id, f64), b: &(Id, f64)) -> Ordering {
    b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0))
}

/// `list` in rank order (score descending, then id ascending).
pub fn in_rank_order<Id: Ord + Clone>(list: &[(Id, f64)]) -> Vec<(Id, f64)> {
    let mut ranked = list.to_vec();
    ranked.sort_by(by_score_then_id);
    ranked
}

/// The fused score of every document in any of `lists` (each a query's list of
/// (id, score), an id at most once per list). `fusion` must pass [`RunFusion::check`]
/// for `lists.len()`.
pub fn fused_scores<Id: Ord + Clone>(
    lists: &[Vec<(Id, f64)>],
    fusion: &RunFusion<'_>,
) -> BTreeMap<Id, f64> {
    let mut ranked: Vec<Vec<(Id, f64)>> = lists.iter().map(|list| in_rank_order(list)).collect();
    if !fusion.method.reads_ranks_only() {
        normalization::normalize_lists(&mut ranked, fusion.normalization);
    }
    match fusion.method {
        ListMethod::Rrf => rrf::fuse(&ranked, fusion.rrf_k),
        ListMethod::Combsum => comb_sum::fuse(&ranked),
        ListMethod::Combmnz => comb_mnz::fuse(&ranked),
        ListMethod::Wsum => wsum::fuse(&ranked, fusion.weights),
        ListMethod::Borda => borda::fuse(&ranked),
        ListMethod::Max => comb_max::fuse(&ranked),
        ListMethod::Min => comb_min::fuse(&ranked),
        ListMethod::Med => comb_med::fuse(&ranked),
        ListMethod::Anz => comb_anz::fuse(&ranked),
        ListMethod::Gmnz => comb_gmnz::fuse(&ranked, fusion.gamma),
        ListMethod::Isr => isr::fuse(&ranked),
        ListMethod::LogIsr => log_isr::fuse(&ranked),
        ListMethod::LognIsr => logn_isr::fuse(&ranked, fusion.sigma),
    }
}

/// `lists` fused into one ranking: score descending, then id ascending, at most `depth`
/// entries. `fusion` must pass [`RunFusion::check`] for `lists.len()`.
pub fn fuse<Id: Ord + Clone>(
    lists: &[Vec<(Id, f64)>],
    fusion: &RunFusion<'_>,
    depth: usize,
) -> Vec<(Id, f64)> {
    let mut ranking: Vec<(Id, f64)> = fused_scores(lists, fusion).into_iter().collect();
    ranking.sort_by(by_score_then_id);
    ranking.truncate(depth);
    ranking
}

/// Adds `points` to `id`'s total (a new id starts at 0, as ranx's sums do).
fn add<Id: Ord + Clone>(totals: &mut BTreeMap<Id, f64>, id: &Id, points: f64) {
    *totals.entry(id.clone()).or_insert(0.0) += points;
}

/// Per document of `lists`: its scores in the lists that hold it, in list order.
fn held_scores<Id: Ord + Clone>(lists: &[Vec<(Id, f64)>]) -> BTreeMap<Id, Vec<f64>> {
    let mut held: BTreeMap<Id, Vec<f64>> = BTreeMap::new();
    for list in lists {
        for (id, score) in list {
            held.entry(id.clone()).or_default().push(*score);
        }
    }
    held
}
