//! Candidates served by a search engine (`run --engine NAME`): the vector searches of a
//! chunk of queries sent to the engine instead of the in-process index, its hits mapped
//! back to corpus positions, and, where the engine ranks text, each query's text
//! ranking for the methods that rank text. The exact in-process index answers the same
//! searches beside it, so what the engine's approximate index costs is measured as the
//! overlap of its top k with the exact top k (ANN recall@k), per configuration, with
//! the searches whose ranking differs beyond ties (at the evaluated depth and at the
//! search depth) and those the engine cut short of the search depth.
//!
//! It checks, before anything is retrieved, that the engine holds this corpus embedded
//! by this embedder ([`check_loaded`]). It never writes to the engine.

use crate::configuration::Configuration;
use crate::dataset::FactId;
use crate::embed::ProviderIdentity;
use crate::engine::{EngineHit, EngineSpec, LoadStamp, LoadState, SearchEngine};
use crate::error::Error;
use crate::index::FactIndex;

/// Cosines closer than this are ties: engines and the in-process index round the same
/// cosine differently (f32 sums in other orders), by well under this.
pub const TIE_TOLERANCE: f64 = 1e-6;

/// A run's engine and what it measures against the exact index.
pub struct ServedBy<'e> {
    pub engine: &'e dyn SearchEngine,
    /// `engine 'NAME' (...)`, for messages.
    pub label: String,
    /// The metric cut-offs: ANN recall is measured at each.
    pub cutoffs: Vec<usize>,
}

/// Sums of ANN recall over one configuration's searches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnnTally {
    /// Per cut-off (aligned with [`ServedBy::cutoffs`]): the sum over searches of
    /// |engine top k ∩ exact top k| / |exact top k|.
    pub recall_sums: Vec<f64>,
    /// Vector searches measured.
    pub searches: usize,
    /// Searches whose engine ranking differs from the exact one beyond ties within the
    /// search depth: some rank's cosine differs from the exact cosine at that rank by
    /// more than [`TIE_TOLERANCE`], or the engine returned fewer facts.
    pub differing: usize,
    /// The same within the evaluated depth (the largest metric cut-off).
    pub differing_at_evaluated_depth: usize,
    /// Searches for which the engine returned fewer facts than the exact index holds
    /// within the search depth (pgvector's HNSW scan returns at most `ef_search`).
    pub truncated: usize,
    /// The fewest facts a truncated search returned.
    pub shortest_truncated: Option<usize>,
}

impl AnnTally {
    pub fn new(cutoffs: usize) -> AnnTally {
        AnnTally {
            recall_sums: vec![0.0; cutoffs],
            searches: 0,
            differing: 0,
            differing_at_evaluated_depth: 0,
            truncated: 0,
            shortest_truncated: None,
        }
    }

    /// Adds one search: the engine's hits and the exact ones, both best first and cut at
    /// the search depth. A hit counts as found at k when its cosine is at least the exact
    /// k-th best less [`TIE_TOLERANCE`] (ann-benchmarks' rule), so facts tied with the
    /// k-th in exact arithmetic, which float rounding orders either way, count as found.
    /// The evaluated depth is the largest of `cutoffs`.
    pub fn add(
        &mut self,
        cutoffs: &[usize],
        engine: &[(FactIndex, f64)],
        exact: &[(FactIndex, f64)],
    ) {
        for (sum, &k) in self.recall_sums.iter_mut().zip(cutoffs) {
            let wanted = k.min(exact.len());
            if wanted == 0 {
                *sum += 1.0;
                continue;
            }
            let threshold = exact[wanted - 1].1 - TIE_TOLERANCE;
            let found = engine
                .iter()
                .take(wanted)
                .filter(|&&(_, score)| score >= threshold)
                .count();
            *sum += found as f64 / wanted as f64;
        }
        self.searches += 1;
        let same = |engine: &[(FactIndex, f64)], exact: &[(FactIndex, f64)]| {
            engine.len() == exact.len()
                && engine
                    .iter()
                    .zip(exact)
                    .all(|((_, served), (_, expected))| (served - expected).abs() <= TIE_TOLERANCE)
        };
        if !same(engine, exact) {
            self.differing += 1;
        }
        let evaluated = cutoffs.iter().copied().max().unwrap_or(0);
        if !same(
            &engine[..evaluated.min(engine.len())],
            &exact[..evaluated.min(exact.len())],
        ) {
            self.differing_at_evaluated_depth += 1;
        }
        if engine.len() < exact.len() {
            self.truncated += 1;
            self.shortest_truncated = Some(
                self.shortest_truncated
                    .map_or(engine.len(), |shortest| shortest.min(engine.len())),
            );
        }
    }

    /// Mean ANN recall at each cut-off (1 for a configuration that searched nothing).
    pub fn means(&self) -> Vec<f64> {
        self.recall_sums
            .iter()
            .map(|sum| {
                if self.searches == 0 {
                    1.0
                } else {
                    sum / self.searches as f64
                }
            })
            .collect()
    }
}

/// Refuses an engine for a run none of whose `configurations` searches vectors: the
/// engine would serve nothing (its text ranking too is read only beside vector
/// searches), and the run would be the in-process one under the engine's name.
pub fn check_engine_serves(
    spec: &EngineSpec,
    configurations: &[Configuration],
) -> Result<(), Error> {
    if configurations
        .iter()
        .any(|configuration| configuration.plan().vector.is_some())
    {
        return Ok(());
    }
    let names: Vec<&str> = configurations
        .iter()
        .map(|configuration| configuration.name.as_str())
        .collect();
    Err(Error::Usage(format!(
        "engine '{}': none of this run's configurations ({}) searches vectors, so the engine \
         would serve nothing\n    hint: add a configuration that searches vectors (dense, \
         hybrid, a HyDE preset) with --configurations, or run without --engine (and without \
         the config file's engine = \"{}\")",
        spec.name,
        names.join(", "),
        spec.name
    )))
}

/// How a load stamp names an embedder: its kind and model (the dimension is stamped
/// apart).
pub fn embedder_stamp(identity: &ProviderIdentity) -> String {
    format!("{}:{}", identity.kind, identity.model)
}

/// The load stamp a run expects: this corpus, this embedder.
pub fn expected_stamp(
    dataset_hash: &str,
    embedder: &str,
    dimension: usize,
    facts: usize,
) -> LoadStamp {
    LoadStamp {
        dataset_hash: dataset_hash.to_owned(),
        embedder: embedder.to_owned(),
        dimension,
        facts,
    }
}

/// Refuses an engine that does not hold exactly `expected` (missing, partly loaded,
/// loaded from other data or by another embedder), naming what differs.
pub fn check_loaded(
    label: &str,
    engine: &dyn SearchEngine,
    expected: &LoadStamp,
) -> Result<(), Error> {
    let load = "run `hyde-eval engine load` with the same dataset and embedder";
    match engine.state()? {
        LoadState::Missing => Err(Error::BackendFatal(format!(
            "{}: the collection does not exist; {load}",
            label
        ))),
        LoadState::Partial { loaded, stamp } => Err(Error::BackendFatal(format!(
            "{label}: the load is unfinished ({loaded} of {} facts); {load} to resume it",
            stamp.facts
        ))),
        LoadState::Complete { stamp, loaded } => {
            let differences = stamp_differences(&stamp, expected);
            if !differences.is_empty() {
                return Err(Error::BackendFatal(format!(
                    "{label}: it holds other data than this run evaluates ({}); {load}, after `hyde-eval engine drop`",
                    differences.join("; ")
                )));
            }
            if loaded != expected.facts {
                return Err(Error::BackendFatal(format!(
                    "{label}: it holds {loaded} facts where its load recorded {}; drop and load it again",
                    expected.facts
                )));
            }
            Ok(())
        }
    }
}

/// What differs between a stored stamp and the expected one, in words.
pub fn stamp_differences(stored: &LoadStamp, expected: &LoadStamp) -> Vec<String> {
    let mut differences = Vec::new();
    if stored.dataset_hash != expected.dataset_hash {
        differences.push(format!(
            "dataset {} there, {} here",
            stored.dataset_hash, expected.dataset_hash
        ));
    }
    if stored.embedder != expected.embedder {
        differences.push(format!(
            "embedder {} there, {} here",
            stored.embedder, expected.embedder
        ));
    }
    if stored.dimension != expected.dimension {
        differences.push(format!(
            "dimension {} there, {} here",
            stored.dimension, expected.dimension
        ));
    }
    if stored.facts != expected.facts {
        differences.push(format!(
            "{} facts there, {} here",
            stored.facts, expected.facts
        ));
    }
    differences
}

/// The engine's hits as corpus positions, best first with ties by id (the tool's order,
/// whatever order the engine gave equal scores in). `ids` is the corpus' sorted ids.
pub fn positions(
    label: &str,
    ids: &[FactId],
    hits: Vec<EngineHit>,
) -> Result<Vec<(FactIndex, f64)>, Error> {
    let mut positions = hits
        .into_iter()
        .map(|hit| {
            ids.binary_search_by(|id| id.0.as_ref().cmp(hit.id.as_str()))
                .map(|position| (position as FactIndex, hit.score))
                .map_err(|_| {
                    Error::BackendFatal(format!(
                        "{label}: it returned fact '{}', which the dataset does not have",
                        hit.id
                    ))
                })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    positions.sort_by(|left, right| right.1.total_cmp(&left.1).then(left.0.cmp(&right.0)));
    Ok(positions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ann_recall_counts_the_exact_top_k_the_engine_found() {
        let cutoffs = [1, 2, 4];
        let mut tally = AnnTally::new(cutoffs.len());
        // Exact order 0, 1, 2, 3; the engine misses 1 and returns 5 instead.
        let exact = [(0, 0.9), (1, 0.8), (2, 0.7), (3, 0.6)];
        let engine = [(0, 0.9), (2, 0.7), (3, 0.6), (5, 0.5)];
        tally.add(&cutoffs, &engine, &exact);
        // k=1: 0.9 >= 0.9 found. k=2: threshold 0.8: 0.9 found, 0.7 not: 1 of 2.
        // k=4: threshold 0.6: 0.9, 0.7, 0.6 found, 0.5 not: 3 of 4.
        assert_eq!(tally.means(), vec![1.0, 0.5, 0.75]);
        tally.add(&cutoffs, &exact, &exact);
        assert_eq!(tally.means(), vec![1.0, 0.75, 0.875]);
        assert_eq!((tally.searches, tally.differing), (2, 1));
        // Fact 1 is missing from the top 4 (the evaluated depth), so it differs there too.
        assert_eq!(tally.differing_at_evaluated_depth, 1);
        assert_eq!((tally.truncated, tally.shortest_truncated), (0, None));
    }

    #[test]
    fn a_difference_past_the_evaluated_depth_counts_only_at_the_full_depth() {
        let cutoffs = [1, 2];
        let mut tally = AnnTally::new(cutoffs.len());
        // The top 2 agree; rank 3 differs (0.5 where the exact index has 0.7).
        let exact = [(0, 0.9), (1, 0.8), (2, 0.7), (3, 0.6)];
        let engine = [(0, 0.9), (1, 0.8), (4, 0.5), (3, 0.6)];
        tally.add(&cutoffs, &engine, &exact);
        assert_eq!(tally.differing, 1);
        assert_eq!(tally.differing_at_evaluated_depth, 0);
        assert_eq!(tally.truncated, 0);
    }

    #[test]
    fn rankings_cut_short_of_the_search_depth_are_truncated() {
        let cutoffs = [1, 2];
        let mut tally = AnnTally::new(cutoffs.len());
        let exact = [(0, 0.9), (1, 0.8), (2, 0.7), (3, 0.6)];
        // As pgvector's HNSW scan with ef_search 3, then 1: the best facts, cut short.
        tally.add(&cutoffs, &exact[..3], &exact);
        tally.add(&cutoffs, &exact[..1], &exact);
        tally.add(&cutoffs, &exact, &exact);
        assert_eq!(tally.truncated, 2);
        assert_eq!(tally.shortest_truncated, Some(1));
        // Three facts hold the top 2 whole; one does not.
        assert_eq!(tally.differing_at_evaluated_depth, 1);
        assert_eq!(tally.differing, 2);
        // Recall@2: 1, 1/2, 1 over three searches.
        assert_eq!(tally.means(), vec![1.0, 2.5 / 3.0]);
    }

    #[test]
    fn facts_tied_at_the_cut_off_count_as_found_whichever_the_engine_returned() {
        let cutoffs = [1, 2];
        let mut tally = AnnTally::new(cutoffs.len());
        // Facts 1 and 2 tie (to rounding) for second place; the engine returns 2 first.
        let exact = [(0, 0.9), (1, 0.8), (2, 0.8 - 1e-8)];
        let engine = [(0, 0.9), (2, 0.8 - 2e-8), (1, 0.8)];
        tally.add(&cutoffs, &engine, &exact);
        assert_eq!(tally.means(), vec![1.0, 1.0]);
        assert_eq!(tally.differing, 0);
    }

    #[test]
    fn stamps_name_each_difference() {
        let stored = expected_stamp("sha256:a", "hash:hash-256", 256, 10);
        let expected = expected_stamp("sha256:b", "hash:hash-256", 128, 10);
        assert_eq!(
            stamp_differences(&stored, &expected),
            vec![
                "dataset sha256:a there, sha256:b here".to_owned(),
                "dimension 256 there, 128 here".to_owned()
            ]
        );
        assert!(stamp_differences(&stored, &stored).is_empty());
    }
}
