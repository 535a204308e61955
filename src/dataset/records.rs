//! The fact record that `facts.jsonl` lines, chatcli's `memory_index.json` elements
//! and `facts.csv` rows share, and its validation into a [`Fact`]; plus the shape of
//! JSON error messages every reader reports.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::{check_id, parse_timestamp, Fact, FactId};
use crate::error::{Problem, Problems};

/// One line of `facts.jsonl` (also one element of chatcli's `memory_index.json`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FactRecord {
    pub id: String,
    pub content: String,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub last_accessed: Option<String>,
    #[serde(default)]
    pub access_count: Option<u64>,
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Where the fact comes from (chatcli: `session`), for `sources` and `source_boost`.
    #[serde(default)]
    pub source: Option<String>,
    // chatcli fields that ranking never reads; accepted so its files load unchanged.
    #[serde(default, rename = "score")]
    pub _score: Option<serde_json::Value>,
    #[serde(default, rename = "source_project")]
    pub _source_project: Option<serde_json::Value>,
    #[serde(default, rename = "provenance")]
    pub _provenance: Option<serde_json::Value>,
}

/// Validates one fact record; `seen` maps ids to where they were first defined.
pub(super) fn fact_from_record(
    path: &Path,
    line: Option<usize>,
    record: FactRecord,
    seen: &mut HashMap<String, Option<usize>>,
    problems: &mut Problems,
) -> Option<Fact> {
    let mut messages: Vec<String> = Vec::new();
    if let Err(message) = check_id("fact", &record.id) {
        messages.push(message);
    } else if let Some(first) = seen.get(&record.id) {
        let at = first
            .map(|line| format!(" (first defined on line {line})"))
            .unwrap_or_default();
        messages.push(format!("duplicate fact id {:?}{at}", record.id));
    } else {
        seen.insert(record.id.clone(), line);
    }
    if record.content.trim().is_empty() {
        messages.push(format!("fact {:?} has empty content", record.id));
    }
    let mut timestamp =
        |field: &str, value: &Option<String>| match value.as_deref().map(parse_timestamp) {
            None => None,
            Some(Ok(time)) => time,
            Some(Err(message)) => {
                messages.push(format!("{field}: {message}"));
                None
            }
        };
    let created_at = timestamp("created_at", &record.created_at);
    let last_accessed = timestamp("last_accessed", &record.last_accessed);
    let confidence = match record.confidence {
        Some(value) if !(0.0..=1.0).contains(&value) => {
            messages.push(format!("confidence {value} is outside [0, 1]"));
            None
        }
        Some(0.0) => None,
        other => other,
    };
    if !messages.is_empty() {
        for message in messages {
            problems.push(Problem::new(path, line, message));
        }
        return None;
    }
    Some(Fact {
        id: FactId::from(record.id),
        content: record.content,
        tags: record.tags.unwrap_or_default(),
        category: record.category,
        created_at,
        last_accessed,
        access_count: record.access_count.unwrap_or(0),
        confidence,
        source: record.source,
    })
}

/// serde_json appends " at line L column C" to its messages; the caller reports the
/// position itself, in file terms.
pub(super) fn strip_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_owned(),
        None => message,
    }
}
