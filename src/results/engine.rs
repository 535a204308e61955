//! The part of the results document a run served by a search engine adds
//! (`run --engine NAME`): which engine, where each configuration's signals came from,
//! what its approximate index cost against the exact in-process index on the same
//! vectors (ANN recall@k of the vector searches, and every macro metric beside the
//! exact index's), so a user can say "HNSW at ef_search 40 costs 0.012 nDCG@10".

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The engine a run's candidates came from, and what it cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineRun {
    /// The `[engines.NAME]` table.
    pub name: String,
    /// `chroma` or `pgvector`.
    pub kind: String,
    /// The server and collection (never a secret).
    pub served_by: String,
    /// What the vector searches ran on, as the engine reports it (its catalog, plans or
    /// collection configuration, never the config file): `hnsw (m 4, ef_construction 8,
    /// ef_search 40)`, `exact scan, index not used (...)`, `exact scan (no vector index)`.
    pub index: String,
    pub configurations: Vec<EngineConfiguration>,
}

/// One configuration on the engine beside the exact in-process index.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineConfiguration {
    pub name: String,
    /// Each signal the configuration reads and what computed it (`engine` or
    /// `in-process`).
    pub signals: Map<String, Value>,
    /// Vector searches measured (0 for a configuration that searches no vectors).
    pub vector_searches: usize,
    /// Facts asked of the engine per vector search (the configuration's search depth).
    #[serde(default)]
    pub search_depth: usize,
    /// The largest metric cut-off: the depth the metrics read.
    #[serde(default)]
    pub evaluated_depth: usize,
    /// Searches whose engine ranking differs from the exact one beyond ties (a cosine
    /// at some rank off by more than 1e-6, or fewer facts) within the search depth.
    pub differing_searches: usize,
    /// The same within the evaluated depth.
    #[serde(default)]
    pub differing_searches_at_evaluated_depth: usize,
    /// Searches the engine returned fewer facts for than the search depth (and the
    /// corpus) hold: truncated, as pgvector's HNSW scan is at `ef_search`.
    #[serde(default)]
    pub truncated_searches: usize,
    /// The fewest facts a truncated search returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortest_truncated: Option<usize>,
    /// Mean |engine top k ∩ exact top k| / |exact top k| over the vector searches, per
    /// metric cut-off (`ann_recall@10`).
    pub ann_recall: Map<String, Value>,
    /// The configuration's macro metrics on the exact in-process index.
    pub exact_macro: Map<String, Value>,
    /// The engine's macro metrics minus the exact index's.
    pub delta: Map<String, Value>,
}

/// Differences in a shown metric smaller than this are no move (they print as ±0.0000).
pub const MOVE_SHOWN: f64 = 5e-5;

impl EngineRun {
    /// The deepest evaluated depth of its configurations (0 when none records one): the
    /// depth a report names beside "searches differing".
    pub fn evaluated_depth(&self) -> usize {
        self.configurations
            .iter()
            .map(|configuration| configuration.evaluated_depth)
            .max()
            .unwrap_or(0)
    }
}

impl EngineConfiguration {
    /// The metrics among `shown` (every metric when empty) whose engine value differs
    /// from the exact index's by at least [`MOVE_SHOWN`], with the difference, in the
    /// results' metric order.
    pub fn moved_metrics(&self, shown: &[String]) -> Vec<(&str, f64)> {
        self.delta
            .iter()
            .filter(|(name, _)| shown.is_empty() || shown.contains(name))
            .filter_map(|(name, delta)| {
                delta
                    .as_f64()
                    .filter(|delta| delta.abs() >= MOVE_SHOWN)
                    .map(|delta| (name.as_str(), delta))
            })
            .collect()
    }

    /// `dense: 3 of 90 vector searches truncated below the search depth 100 (as few as
    /// 1 fact); metrics that moved: ndcg@10 -0.0123, ...` (among `shown`, every metric
    /// when empty): `None` when no search was truncated.
    pub fn truncation_note(&self, shown: &[String]) -> Option<String> {
        if self.truncated_searches == 0 {
            return None;
        }
        let moved = self.moved_metrics(shown);
        let moved = if moved.is_empty() {
            "no metric moved".to_owned()
        } else {
            format!(
                "metrics that moved: {}",
                moved
                    .iter()
                    .map(|(name, delta)| format!("{name} {delta:+.4}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let shortest = self
            .shortest_truncated
            .map(|facts| {
                format!(
                    " (as few as {facts} fact{})",
                    if facts == 1 { "" } else { "s" }
                )
            })
            .unwrap_or_default();
        Some(format!(
            "{}: {} of {} vector searches truncated below the search depth {}{shortest}; {moved}",
            self.name, self.truncated_searches, self.vector_searches, self.search_depth
        ))
    }
}

/// Engine minus exact, metric by metric (null where either is null).
pub fn metric_deltas(
    engine: &Map<String, Value>,
    exact: &Map<String, Value>,
) -> Map<String, Value> {
    engine
        .iter()
        .map(|(name, value)| {
            let delta = match (value.as_f64(), exact.get(name).and_then(Value::as_f64)) {
                (Some(engine), Some(exact)) => {
                    serde_json::Number::from_f64(engine - exact).map_or(Value::Null, Value::Number)
                }
                _ => Value::Null,
            };
            (name.clone(), delta)
        })
        .collect()
}
