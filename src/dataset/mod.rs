//! Labeled datasets: facts, queries, graded relevance judgments (qrels) and recorded
//! hypotheses, loaded and validated.
//!
//! One file per input format sits beside this module (`native` for hyde-eval's own
//! directory layout, `chatcli` for chatcli's `memory_index.json`, `manifest` for
//! `dataset.toml`; `beir`, `trec`, `csv_tables` and `smart` for imported collections,
//! assembled by `import`; `built_in` for the sets built into the binary). Every loader reports all defects with file and line and never drops
//! data silently. This module owns the in-memory model; it must not know about retrieval.

mod beir;
pub mod built_in;
mod chatcli;
pub mod collection;
mod csv_tables;
pub mod import;
mod lines;
pub mod manifest;
mod native;
mod records;
mod smart;
pub mod stats;
pub mod synth;
pub mod trec;
pub mod trec_lines;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::error::{Error, Problem};

pub use manifest::Manifest;
pub use native::{load_facts, HYPOTHESES_FILE, QRELS_FILE, QUERIES_FILE};

/// A fact's identifier, unique within a dataset. Shared, not copied: rankings hold a
/// fact's id once per configuration and query, and a clone is a reference count.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct FactId(pub std::sync::Arc<str>);

impl FactId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for FactId {
    fn from(id: String) -> FactId {
        FactId(id.into())
    }
}

impl From<&str> for FactId {
    fn from(id: &str) -> FactId {
        FactId(id.into())
    }
}

/// A query's identifier, unique within a dataset.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct QueryId(pub String);

/// A relevance grade: 0 = judged not relevant, higher = more relevant.
pub type Grade = i32;

impl fmt::Display for FactId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl fmt::Display for QueryId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// One remembered fact (a document, in IR terms).
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub id: FactId,
    pub content: String,
    pub tags: Vec<String>,
    pub category: Option<String>,
    pub created_at: Option<DateTime<Utc>>,
    pub last_accessed: Option<DateTime<Utc>>,
    pub access_count: u64,
    /// In (0, 1]; `None` when unset (chatcli treats it as 0.6).
    pub confidence: Option<f64>,
    /// Where the fact comes from (chatcli's `session`, ...); `None` counts as `memory`
    /// for the `sources` filter and `source_boost`.
    pub source: Option<String>,
}

impl Fact {
    /// When the fact was last used: `last_accessed`, else `created_at`.
    pub fn last_used(&self) -> Option<DateTime<Utc>> {
        self.last_accessed.or(self.created_at)
    }
}

/// One labeled query.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub id: QueryId,
    pub text: String,
    /// Free-form labels such as `synonym`, `exact`, `temporal`.
    pub tags: Vec<String>,
    /// The scenario the query belongs to, for per-scenario expectation reports.
    pub scenario: Option<String>,
    /// What every configuration's ranking for this query must satisfy.
    pub expectations: Vec<Expectation>,
}

/// A per-query expectation on a configuration's ranking (the retrieval-relevance
/// scenarios of the Gimli evaluation seed). Written in `queries.jsonl` as
/// `"expect": [{"kind": "in_top", "fact": "f1", "n": 3}, ...]`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Expectation {
    /// The fact is within the top `n`.
    InTop { fact: FactId, n: usize },
    /// Every listed fact is within the top `n` (multi-concept, cross-chunk).
    AllInTop { facts: Vec<FactId>, n: usize },
    /// `fact` is returned and ranked above `over` (or `over` is not returned).
    RankedAbove { fact: FactId, over: FactId },
    /// The configuration returns nothing (a question the memory cannot answer).
    Abstain,
    /// The fact is returned with a fused score above `value`.
    ScoreAbove { fact: FactId, value: f64 },
}

impl Expectation {
    /// Every fact the expectation names.
    pub fn facts(&self) -> Vec<&FactId> {
        match self {
            Expectation::InTop { fact, .. } | Expectation::ScoreAbove { fact, .. } => vec![fact],
            Expectation::AllInTop { facts, .. } => facts.iter().collect(),
            Expectation::RankedAbove { fact, over } => vec![fact, over],
            Expectation::Abstain => Vec::new(),
        }
    }
}

/// Where recorded hypotheses came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HypothesisSource {
    pub generator: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How long generating this query's hypotheses took, milliseconds (`record` writes
    /// the measured time of the queries it generated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_time_ms: Option<f64>,
}

/// Hypothetical answers recorded for one query.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedHypotheses {
    pub texts: Vec<String>,
    pub source: Option<HypothesisSource>,
}

/// One relevance judgment.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgment {
    pub fact: FactId,
    pub grade: Grade,
}

/// Judgments per query, in file order.
pub type Qrels = HashMap<QueryId, Vec<Judgment>>;

/// A loaded, validated dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub manifest: Manifest,
    pub root: PathBuf,
    pub facts: Vec<Fact>,
    pub queries: Vec<Query>,
    pub qrels: Qrels,
    pub hypotheses: HashMap<QueryId, RecordedHypotheses>,
    /// `sha256:` of every file that was read, in a fixed order.
    pub content_hash: String,
    /// The files read, relative to `root`, in hashing order.
    pub files: Vec<String>,
    /// Things that were accepted but deserve a mention (e.g. future timestamps).
    pub notes: Vec<String>,
    /// The `concept` provider's lexicon (path and text), when the manifest names one.
    pub concept_lexicon: Option<(PathBuf, String)>,
    /// The name of the set built into the binary this is, when it is one: it has no
    /// directory to write into (`root` is `built-in:NAME`).
    pub built_in: Option<&'static str>,
}

impl Dataset {
    /// Loads the dataset directory at `root` (hyde-eval's own layout, with either
    /// `facts.jsonl` or chatcli's `memory_index.json`).
    pub fn load(root: &Path) -> Result<Dataset, Error> {
        native::load(root)
    }

    /// Loads the set built into the binary as `built_in` (read exactly as its directory
    /// is: the same content hash, the same results).
    pub fn load_built_in(built_in: &'static built_in::BuiltIn) -> Result<Dataset, Error> {
        native::load_built_in(built_in)
    }

    /// Number of (query, fact) judgments.
    pub fn judgment_count(&self) -> usize {
        self.qrels.values().map(Vec::len).sum()
    }

    /// Refuses a dataset in which no query has a judgment of grade `relevance_level` or
    /// more: every metric would be a mean over no queries.
    pub fn check_evaluable(&self, relevance_level: Grade) -> Result<(), Error> {
        let evaluable = self.queries.iter().any(|query| {
            self.qrels.get(&query.id).is_some_and(|judgments| {
                judgments
                    .iter()
                    .any(|judgment| judgment.grade >= relevance_level)
            })
        });
        if evaluable {
            return Ok(());
        }
        Err(nothing_to_score(
            &self.root,
            relevance_level,
            (self.judgment_count(), self.queries.len()),
            "judge at least one relevant fact per query, or lower --relevance-level",
        ))
    }
}

/// The refusal of judgments (at `path`, `counts` = (judgments, queries)) in which no
/// query has a judgment of grade `relevance_level` or more: every metric would be a
/// mean over no queries, and a gate on them would check nothing. `run`, `eval` and
/// `compare --qrels` refuse such judgments alike.
pub fn nothing_to_score(
    path: &Path,
    relevance_level: Grade,
    (judgments, queries): (usize, usize),
    hint: &str,
) -> Error {
    Error::problem(
        Problem::new(
            path,
            None,
            format!(
                "no query has a judgment of grade {relevance_level} or more, so there is nothing to score ({judgments} judgments, {queries} queries)"
            ),
        )
        .with_hint(hint),
    )
}

/// Accumulates the bytes of every file read, for the dataset's content hash.
#[derive(Default)]
struct ContentHasher {
    hasher: sha2::Sha256,
    files: Vec<String>,
}

impl ContentHasher {
    fn add(&mut self, name: &str, bytes: &[u8]) {
        use sha2::Digest;
        self.hasher.update(name.as_bytes());
        self.hasher.update([0u8]);
        self.hasher.update((bytes.len() as u64).to_le_bytes());
        self.hasher.update(bytes);
        self.files.push(name.to_owned());
    }

    fn finish(self) -> (String, Vec<String>) {
        use sha2::Digest;
        let digest = self.hasher.finalize();
        let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        (format!("sha256:{hex}"), self.files)
    }
}

/// Parses an RFC 3339 timestamp. Go's zero time (year 1), which chatcli writes for unset
/// times, counts as unset.
fn parse_timestamp(text: &str) -> Result<Option<DateTime<Utc>>, String> {
    let parsed = DateTime::parse_from_rfc3339(text.trim()).map_err(|error| {
        format!("bad timestamp {text:?}: {error} (expected RFC 3339, e.g. 2026-03-04T10:12:00Z)")
    })?;
    let parsed = parsed.with_timezone(&Utc);
    if parsed.format("%Y").to_string() == "0001" {
        return Ok(None);
    }
    Ok(Some(parsed))
}

/// Parses a relevance grade as written in a judgments file: an optional `-` and decimal
/// digits (no `+`, spaces or fractions), within the range of [`Grade`].
pub fn parse_grade(text: &str) -> Result<Grade, String> {
    if let &[digit @ b'0'..=b'9'] = text.as_bytes() {
        return Ok(Grade::from(digit - b'0'));
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!("grade {text:?} is not an integer"));
    }
    text.parse::<Grade>().map_err(|_| {
        let bound = if text.starts_with('-') {
            format!("at least {}", Grade::MIN)
        } else {
            format!("at most {}", Grade::MAX)
        };
        format!("grade {text} is out of range ({bound})")
    })
}

/// Checks an identifier: non-empty, no whitespace (TREC run files split on whitespace),
/// no control character (NUL included: no TREC reader takes it back as text), and no
/// query id starting with `#` (a run line starting with it is a comment).
fn check_id(kind: &str, id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err(format!("{kind} id is empty"));
    }
    if id.chars().any(char::is_whitespace) {
        return Err(format!(
            "{kind} id {id:?} contains whitespace, which TREC run and qrels files cannot represent"
        ));
    }
    if let Some(control) = id.chars().find(|character| character.is_control()) {
        return Err(format!(
            "{kind} id {id:?} holds a control character (U+{:04X}), which TREC run and qrels files cannot represent",
            u32::from(control)
        ));
    }
    if kind == "query" && id.starts_with('#') {
        return Err(format!(
            "query id {id:?} starts with #, which would make its TREC run lines comments"
        ));
    }
    Ok(())
}

/// Why `text` cannot be one field of a TREC run or qrels line, if it cannot: it is
/// empty, holds whitespace (which would split it into two fields) or holds a control
/// character (NUL included).
pub fn trec_token_problem(text: &str) -> Option<String> {
    if text.is_empty() {
        Some("it is empty".into())
    } else if text.chars().any(char::is_whitespace) {
        Some("it holds whitespace, which would split it into two fields".into())
    } else {
        text.chars()
            .find(|character| character.is_control())
            .map(|control| {
                format!(
                    "it holds a control character (U+{:04X})",
                    u32::from(control)
                )
            })
    }
}
