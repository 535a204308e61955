//! Runs and qrels in other evaluation tools' formats, rewritten as TREC text so that one
//! parser ([`crate::trec::parse`]) reads everything. Detected by content, whatever the
//! file's name:
//!
//! - a JSON object of objects is a ranx run (`{"q1": {"d1": 1.5, ...}}`) or ranx qrels
//!   (`{"q1": {"d1": 1}}`, integer grades);
//! - JSON lines with `query_id` and `doc_id` are ir_measures / ir_datasets records: runs
//!   carry `score` (ScoredDoc), qrels `relevance` (Qrel); the line numbers of the
//!   rewritten text are those of the file;
//! - anything else is TREC text (BEIR's `query-id corpus-id score` TSV qrels are read by
//!   the TREC qrels reader itself).
//!
//! Ids holding whitespace cannot be written as TREC fields and are refused; so is a
//! document listed twice for a query (a JSON object's repeated key included), never
//! silently dropped.

use std::collections::HashSet;
use std::fmt::{self, Write};
use std::path::Path;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::error::{Error, Problem, Problems};

/// What a run or qrels file holds, by its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Trec,
    /// One JSON object: ranx.
    RanxJson,
    /// One JSON object per line: ir_measures / ir_datasets records.
    JsonLines,
}

fn shape_of(bytes: &[u8]) -> Shape {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = bytes.iter().position(|byte| !byte.is_ascii_whitespace());
    if start.is_none_or(|start| bytes[start] != b'{') {
        return Shape::Trec;
    }
    let first_line = bytes[start.unwrap_or(0)..]
        .split(|&byte| byte == b'\n')
        .next()
        .unwrap_or_default();
    match serde_json::from_slice::<serde_json::Value>(first_line) {
        Ok(value) if value.get("query_id").is_some() => Shape::JsonLines,
        _ => Shape::RanxJson,
    }
}

/// A JSON object's entries in file order, repeated keys kept (so they can be reported).
struct Entries<V>(Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Entries<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for EntriesVisitor<V> {
            type Value = Entries<V>;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<V>, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

/// Refuses an id TREC text cannot hold.
fn field(path: &Path, line: Option<usize>, what: &str, id: &str) -> Result<(), Problem> {
    match crate::dataset::trec_token_problem(id) {
        Some(problem) => Err(Problem::new(
            path,
            line,
            format!("{what} {id:?} cannot be a TREC id: {problem}"),
        )),
        None => Ok(()),
    }
}

/// Rewrites a ranx JSON object of objects as TREC lines, `line(query, document, value)`
/// each.
fn ranx_as_trec<V: for<'de> Deserialize<'de>>(
    path: &Path,
    bytes: &[u8],
    what: &str,
    mut line: impl FnMut(&mut String, &str, &str, &V),
) -> Result<Vec<u8>, Error> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Entries(queries) =
        serde_json::from_slice::<Entries<Entries<V>>>(bytes).map_err(|error| {
            Error::problem(
                Problem::new(
                    path,
                    Some(error.line()),
                    format!("not a ranx {what} ({{\"query\": {{\"document\": value}}}}): {error}"),
                )
                .with_hint("runs and qrels are TREC text, ranx JSON or ir_measures JSON lines; see docs/metrics-and-eval.md"),
            )
        })?;
    let mut text = String::new();
    let mut seen_queries = HashSet::new();
    let mut problems = Problems::default();
    for (query, Entries(documents)) in &queries {
        if !seen_queries.insert(query.as_str()) {
            problems.push(Problem::new(
                path,
                None,
                format!("query {query} appears twice"),
            ));
            continue;
        }
        if let Err(problem) = field(path, None, "query id", query) {
            problems.push(problem);
            continue;
        }
        let mut seen = HashSet::new();
        for (document, value) in documents {
            if let Err(problem) = field(path, None, "document id", document) {
                problems.push(problem);
            } else if !seen.insert(document.as_str()) {
                problems.push(Problem::new(
                    path,
                    None,
                    format!("document {document} appears twice for query {query}"),
                ));
            } else {
                line(&mut text, query, document, value);
            }
        }
    }
    problems.into_result()?;
    Ok(text.into_bytes())
}

/// One ir_measures / ir_datasets record: a ScoredDoc or a Qrel.
#[derive(Deserialize)]
struct Record {
    query_id: serde_json::Value,
    doc_id: serde_json::Value,
    score: Option<f64>,
    relevance: Option<i64>,
}

/// An id written as a JSON string or integer.
fn id_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(text) => Some(text.clone()),
        serde_json::Value::Number(number) if number.is_i64() || number.is_u64() => {
            Some(number.to_string())
        }
        _ => None,
    }
}

/// Rewrites JSON lines as TREC lines, one for one (blank lines stay blank), so that the
/// TREC parser's line numbers are the file's.
fn json_lines_as_trec(
    path: &Path,
    bytes: &[u8],
    what: &str,
    field_name: &str,
    line: impl Fn(&str, &str, &Record) -> Option<String>,
) -> Result<Vec<u8>, Error> {
    let text = super::parse::as_text(path, bytes)?;
    let mut out = String::with_capacity(text.len());
    let mut problems = Problems::default();
    for (index, source) in text.split_terminator('\n').enumerate() {
        let number = index + 1;
        let source = source.trim_end_matches('\r');
        if source.trim().is_empty() {
            out.push('\n');
            continue;
        }
        let converted = serde_json::from_str::<Record>(source)
            .map_err(|error| format!("not an ir_measures {what} record: {error}"))
            .and_then(|record| {
                let ids = id_text(&record.query_id).zip(id_text(&record.doc_id));
                let (query, document) =
                    ids.ok_or("query_id and doc_id must be strings or integers")?;
                field(path, Some(number), "query id", &query)
                    .and_then(|()| field(path, Some(number), "document id", &document))
                    .map_err(|problem| problem.message)?;
                line(&query, &document, &record)
                    .ok_or_else(|| format!("missing numeric {field_name:?}"))
            });
        match converted {
            Ok(converted) => {
                out.push_str(&converted);
                out.push('\n');
            }
            Err(message) => {
                problems.push(Problem::new(path, Some(number), message).with_hint(format!(
                    "each line is {{\"query_id\": ..., \"doc_id\": ..., \"{field_name}\": ...}}"
                )));
                out.push('\n');
            }
        }
    }
    problems.into_result()?;
    Ok(out.into_bytes())
}

/// The run's tag for rewritten runs: the file's stem (`bm25` for `bm25.json`).
fn tag_of(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .trim_end_matches(".gz")
        .trim_end_matches(".jsonl")
        .trim_end_matches(".json")
        .to_owned();
    if stem == "-" || crate::dataset::trec_token_problem(&stem).is_some() {
        "run".to_owned()
    } else {
        stem
    }
}

/// A run file's bytes as TREC text: `None` when they already are, else the rewritten
/// ranx JSON or ir_measures JSON lines.
pub fn run_as_trec(path: &Path, bytes: &[u8]) -> Result<Option<Vec<u8>>, Error> {
    let tag = tag_of(path);
    match shape_of(bytes) {
        Shape::Trec => Ok(None),
        Shape::RanxJson => {
            ranx_as_trec(path, bytes, "run", |text, query, document, score: &f64| {
                let _ = writeln!(text, "{query} Q0 {document} 0 {score:?} {tag}");
            })
            .map(Some)
        }
        Shape::JsonLines => {
            json_lines_as_trec(path, bytes, "run", "score", |query, document, record| {
                record
                    .score
                    .filter(|score| score.is_finite())
                    .map(|score| format!("{query} Q0 {document} 0 {score:?} {tag}"))
            })
            .map(Some)
        }
    }
}

/// A qrels file's bytes as TREC text: `None` when they already are (TREC or BEIR TSV),
/// else the rewritten ranx JSON or ir_measures JSON lines.
pub fn qrels_as_trec(path: &Path, bytes: &[u8]) -> Result<Option<Vec<u8>>, Error> {
    match shape_of(bytes) {
        Shape::Trec => Ok(None),
        Shape::RanxJson => ranx_as_trec(
            path,
            bytes,
            "qrels",
            |text, query, document, grade: &i32| {
                let _ = writeln!(text, "{query} 0 {document} {grade}");
            },
        )
        .map(Some),
        Shape::JsonLines => json_lines_as_trec(
            path,
            bytes,
            "qrels",
            "relevance",
            |query, document, record| {
                record
                    .relevance
                    .and_then(|grade| i32::try_from(grade).ok())
                    .map(|grade| format!("{query} 0 {document} {grade}"))
            },
        )
        .map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: Option<Vec<u8>>) -> String {
        String::from_utf8(bytes.expect("rewritten")).unwrap()
    }

    #[test]
    fn ranx_runs_and_qrels_become_trec_lines() {
        let run = br#"{"q1": {"d1": 1.5, "d2": 0.25}, "q2": {"d3": 1e-7}}"#;
        assert_eq!(
            text(run_as_trec(Path::new("dir/bm25.json"), run).unwrap()),
            "q1 Q0 d1 0 1.5 bm25\nq1 Q0 d2 0 0.25 bm25\nq2 Q0 d3 0 1e-7 bm25\n"
        );
        let qrels = br#"{"q1": {"d1": 2, "d2": 0}}"#;
        assert_eq!(
            text(qrels_as_trec(Path::new("q.json"), qrels).unwrap()),
            "q1 0 d1 2\nq1 0 d2 0\n"
        );
        assert_eq!(
            run_as_trec(Path::new("r"), b"q1 Q0 d1 1 2 t\n").unwrap(),
            None
        );
        assert_eq!(
            qrels_as_trec(Path::new("q"), b"query-id\tcorpus-id\tscore\nq1\td1\t1\n").unwrap(),
            None
        );
    }

    #[test]
    fn ir_measures_records_keep_their_line_numbers() {
        let run = "{\"query_id\": \"1\", \"doc_id\": \"a\", \"score\": 3}\n\n{\"query_id\": 2, \"doc_id\": \"b\", \"score\": -0.5}\n";
        assert_eq!(
            text(run_as_trec(Path::new("run.jsonl"), run.as_bytes()).unwrap()),
            "1 Q0 a 0 3.0 run\n\n2 Q0 b 0 -0.5 run\n"
        );
        let qrels =
            "{\"query_id\": \"1\", \"doc_id\": \"a\", \"relevance\": 1, \"iteration\": \"0\"}\n";
        assert_eq!(
            text(qrels_as_trec(Path::new("q.jsonl"), qrels.as_bytes()).unwrap()),
            "1 0 a 1\n"
        );
        let bad = "{\"query_id\": \"1\", \"doc_id\": \"a\", \"score\": 3}\n{\"query_id\": \"1\", \"doc_id\": \"b\"}\n";
        let message = run_as_trec(Path::new("run.jsonl"), bad.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("run.jsonl:2: missing numeric \"score\""),
            "{message}"
        );
    }

    #[test]
    fn duplicates_and_untrec_ids_are_refused() {
        let message = run_as_trec(Path::new("r.json"), br#"{"q1": {"d1": 1, "d1": 2}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("document d1 appears twice for query q1"),
            "{message}"
        );
        let message = run_as_trec(Path::new("r.json"), br#"{"q 1": {"d1": 1}}"#)
            .unwrap_err()
            .to_string();
        assert!(message.contains("holds whitespace"), "{message}");
        let message = run_as_trec(Path::new("r.json"), br#"{"q1": [1, 2]}"#)
            .unwrap_err()
            .to_string();
        assert!(message.contains("r.json:1: not a ranx run"), "{message}");
    }
}
