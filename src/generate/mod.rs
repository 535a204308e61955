//! The hypothesis-generator seam: anything that writes hypothetical answers (HyDE) for a
//! query: the dataset's recorded hypotheses, or an LLM behind an OpenAI-compatible chat
//! endpoint or Amazon Bedrock's Converse API ([`openai_chat`], [`bedrock_converse`],
//! with the prompt templates of [`prompts`]).
//!
//! A generator that cannot produce a usable hypothesis returns a [`GenerationFailure`];
//! the pipeline then falls back the way the seeds do (3a: original keywords; 3b: direct
//! query embedding) and counts the fallback. Such a failure never aborts a run; only
//! rejected credentials and `--offline` cache misses do (as errors).

pub mod bedrock_converse;
pub mod choice;
pub mod draft;
pub mod openai_chat;
pub mod prompts;

use std::collections::HashMap;

use serde::Serialize;

use crate::dataset::{Dataset, HypothesisSource, Query, QueryId, RecordedHypotheses};
use crate::error::Error;

pub use openai_chat::{ChatApi, ChatGenerator, ChatSettings};
pub use prompts::PromptTemplate;

/// Why a query got no hypothesis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenerationFailure {
    /// Nothing was recorded for this query.
    NotRecorded,
    /// The generator failed (error after retries, timeout, empty text); the reason.
    Failed(String),
}

impl std::fmt::Display for GenerationFailure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenerationFailure::NotRecorded => formatter.write_str("no hypothesis recorded"),
            GenerationFailure::Failed(reason) => formatter.write_str(reason),
        }
    }
}

/// What generating one query's hypotheses cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct GenerationCost {
    /// Requests made for this query (retries are the client's).
    pub requests: u64,
    pub hypotheses_generated: u64,
    pub hypotheses_from_cache: u64,
    /// Hypotheses replayed from the dataset's recorded file.
    pub hypotheses_recorded: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub corrupt_entries_ignored: u64,
    /// Wall time of the requests, when any were made; for recorded hypotheses, the
    /// generation time their provenance states, when it states one.
    pub latency_ms: Option<f64>,
}

impl std::ops::AddAssign<&GenerationCost> for GenerationCost {
    /// Sums the counts; the latency becomes the latest one (callers collect latencies
    /// separately for percentiles).
    fn add_assign(&mut self, other: &GenerationCost) {
        self.requests += other.requests;
        self.hypotheses_generated += other.hypotheses_generated;
        self.hypotheses_from_cache += other.hypotheses_from_cache;
        self.hypotheses_recorded += other.hypotheses_recorded;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.corrupt_entries_ignored += other.corrupt_entries_ignored;
        self.latency_ms = other.latency_ms.or(self.latency_ms);
    }
}

/// One query's hypotheses (or why there are none) and their cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    pub hypotheses: Result<Vec<String>, GenerationFailure>,
    pub cost: GenerationCost,
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
    /// Hypotheses for one query; `Err` only for failures no fallback may hide.
    fn generate(&self, query: &Query, n: usize) -> Result<Generation, Error>;
    /// Hypotheses for every query, in order (HTTP generators run queries concurrently).
    fn generate_all(&self, queries: &[Query], n: usize) -> Result<Vec<Generation>, Error> {
        queries
            .iter()
            .map(|query| self.generate(query, n))
            .collect()
    }
    /// HTTP requests and retries so far.
    fn requests(&self) -> (u64, u64) {
        (0, 0)
    }
}

/// Replays the hypotheses recorded in the dataset's `hypotheses.jsonl` (borrowed, not
/// copied: a large set's texts are held once).
pub struct RecordedGenerator<'a> {
    hypotheses: &'a HashMap<QueryId, RecordedHypotheses>,
    sources: Vec<HypothesisSource>,
}

impl<'a> RecordedGenerator<'a> {
    /// The recorded `hypotheses` of `queries` (a dataset's two fields). The identity
    /// lists their distinct provenance records without the per-query generation times.
    pub fn new(
        queries: &[Query],
        hypotheses: &'a HashMap<QueryId, RecordedHypotheses>,
    ) -> RecordedGenerator<'a> {
        let mut sources: Vec<HypothesisSource> = Vec::new();
        for query in queries {
            if let Some(source) = hypotheses
                .get(&query.id)
                .and_then(|recorded| recorded.source.as_ref())
            {
                let source = HypothesisSource {
                    generation_time_ms: None,
                    ..source.clone()
                };
                if !sources.contains(&source) {
                    sources.push(source);
                }
            }
        }
        RecordedGenerator {
            hypotheses,
            sources,
        }
    }

    /// The recorded hypotheses of `dataset`.
    pub fn from_dataset(dataset: &'a Dataset) -> RecordedGenerator<'a> {
        RecordedGenerator::new(&dataset.queries, &dataset.hypotheses)
    }
}

impl HypothesisGenerator for RecordedGenerator<'_> {
    fn identity(&self) -> GeneratorIdentity {
        GeneratorIdentity {
            kind: "recorded".into(),
            sources: self.sources.clone(),
        }
    }

    fn generate(&self, query: &Query, n: usize) -> Result<Generation, Error> {
        let recorded = self.hypotheses.get(&query.id);
        let hypotheses: Result<Vec<String>, GenerationFailure> = match recorded {
            Some(recorded) if !recorded.texts.is_empty() => {
                Ok(recorded.texts.iter().take(n).cloned().collect())
            }
            _ => Err(GenerationFailure::NotRecorded),
        };
        let cost = GenerationCost {
            hypotheses_recorded: hypotheses.as_ref().map_or(0, |texts| texts.len() as u64),
            latency_ms: recorded
                .and_then(|recorded| recorded.source.as_ref())
                .and_then(|source| source.generation_time_ms),
            ..GenerationCost::default()
        };
        Ok(Generation { hypotheses, cost })
    }
}
