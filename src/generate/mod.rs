//! The hypothesis-generator seam: anything that writes hypothetical answers (HyDE) for a
//! query. Recorded hypotheses from the dataset implement it today; LLM backends plug in
//! behind the same trait.
//!
//! A generator that cannot produce a usable hypothesis returns a [`GenerationFailure`];
//! the pipeline then falls back the way the seeds do (3a: original keywords; 3b: direct
//! query embedding) and counts the fallback. A failure never aborts a run.

use std::collections::HashMap;

use serde::Serialize;

use crate::dataset::{Dataset, HypothesisSource, Query, QueryId};

/// Why a query got no hypothesis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenerationFailure {
    /// Nothing was recorded for this query.
    NotRecorded,
}

/// What produced the hypotheses of a run.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct GeneratorIdentity {
    pub kind: String,
    /// Distinct provenance records of the hypotheses, in first-seen query order.
    pub sources: Vec<HypothesisSource>,
}

/// Writes up to `n` hypothetical answers for a query.
pub trait HypothesisGenerator: Send + Sync {
    fn identity(&self) -> GeneratorIdentity;
    fn generate(&self, query: &Query, n: usize) -> Result<Vec<String>, GenerationFailure>;
}

/// Replays the hypotheses recorded in the dataset's `hypotheses.jsonl`.
pub struct RecordedGenerator {
    hypotheses: HashMap<QueryId, Vec<String>>,
    sources: Vec<HypothesisSource>,
}

impl RecordedGenerator {
    pub fn from_dataset(dataset: &Dataset) -> RecordedGenerator {
        let mut sources: Vec<HypothesisSource> = Vec::new();
        for query in &dataset.queries {
            if let Some(source) = dataset
                .hypotheses
                .get(&query.id)
                .and_then(|recorded| recorded.source.as_ref())
            {
                if !sources.contains(source) {
                    sources.push(source.clone());
                }
            }
        }
        RecordedGenerator {
            hypotheses: dataset
                .hypotheses
                .iter()
                .map(|(query, recorded)| (query.clone(), recorded.texts.clone()))
                .collect(),
            sources,
        }
    }
}

impl HypothesisGenerator for RecordedGenerator {
    fn identity(&self) -> GeneratorIdentity {
        GeneratorIdentity {
            kind: "recorded".into(),
            sources: self.sources.clone(),
        }
    }

    fn generate(&self, query: &Query, n: usize) -> Result<Vec<String>, GenerationFailure> {
        match self.hypotheses.get(&query.id) {
            Some(texts) if !texts.is_empty() => Ok(texts.iter().take(n).cloned().collect()),
            _ => Err(GenerationFailure::NotRecorded),
        }
    }
}
