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
    /// `hnsw (ef_search 40)`, `exact scan`, ...
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
    /// Searches whose engine top list differs from the exact one (facts or order).
    pub differing_searches: usize,
    /// Mean |engine top k ∩ exact top k| / |exact top k| over the vector searches, per
    /// metric cut-off (`ann_recall@10`).
    pub ann_recall: Map<String, Value>,
    /// The configuration's macro metrics on the exact in-process index.
    pub exact_macro: Map<String, Value>,
    /// The engine's macro metrics minus the exact index's.
    pub delta: Map<String, Value>,
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
