//! Which of hyde-eval's JSON documents a file holds, told by its top-level keys, so that
//! a document passed where another belongs is named for what it is (`report --sweep
//! results.json`: "a results.json, not a sweep.json") instead of failing on the first
//! field the expected document lacks. Read only once a document failed to load as the
//! one expected.

use std::path::Path;

use crate::error::Problem;

/// One of the JSON documents hyde-eval writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    Results,
    Sweep,
    Compare,
    Gate,
    Shard,
    Eval,
    DatasetStats,
    Timings,
}

impl DocumentKind {
    /// The kind of the JSON document `bytes`, when they hold one of hyde-eval's.
    pub fn of(bytes: &[u8]) -> Option<DocumentKind> {
        let document: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(bytes).ok()?;
        let has = |keys: &[&str]| keys.iter().all(|key| document.contains_key(*key));
        [
            (DocumentKind::Sweep, &["sweep", "cross_validation"][..]),
            (DocumentKind::Shard, &["shard", "query_slice", "results"]),
            (DocumentKind::Gate, &["passed", "checks"]),
            (DocumentKind::Compare, &["runs", "rows", "reference"]),
            (DocumentKind::Eval, &["qrels", "relevance_level", "runs"]),
            (DocumentKind::DatasetStats, &["judged_queries", "grades"]),
            (DocumentKind::Timings, &["stages_ms"]),
            (
                DocumentKind::Results,
                &["run_name", "dataset", "evaluation", "configurations"],
            ),
        ]
        .into_iter()
        .find(|(_, keys)| has(keys))
        .map(|(kind, _)| kind)
    }

    /// The file's usual name and what writes it.
    pub fn describe(self) -> &'static str {
        match self {
            DocumentKind::Results => {
                "a results.json (written by `hyde-eval run` or `hyde-eval baseline update`)"
            }
            DocumentKind::Sweep => "a sweep.json (written by `hyde-eval sweep`)",
            DocumentKind::Compare => "a compare.json (written by `hyde-eval compare`)",
            DocumentKind::Gate => "a gate.json (the verdict of a gated run)",
            DocumentKind::Shard => "a shard.json (written by `hyde-eval run --shard`)",
            DocumentKind::Eval => "the JSON output of `hyde-eval eval`",
            DocumentKind::DatasetStats => "the JSON output of `hyde-eval dataset stats`",
            DocumentKind::Timings => "a timings.json (a run's stage times)",
        }
    }

    /// The name a message gives the document expected.
    pub fn file_name(self) -> &'static str {
        match self {
            DocumentKind::Results => "results.json",
            DocumentKind::Sweep => "sweep.json",
            DocumentKind::Compare => "compare.json",
            DocumentKind::Gate => "gate.json",
            DocumentKind::Shard => "shard.json",
            DocumentKind::Eval => "eval output",
            DocumentKind::DatasetStats => "dataset stats output",
            DocumentKind::Timings => "timings.json",
        }
    }
}

/// The problem of a file at `path` that holds another of hyde-eval's documents than the
/// `expected` one, with `hint`; `None` when it holds none of them or the expected one
/// (whose own defect is then the message).
pub fn wrong_document(
    path: &Path,
    bytes: &[u8],
    expected: DocumentKind,
    hint: impl FnOnce(DocumentKind) -> String,
) -> Option<Problem> {
    let found = DocumentKind::of(bytes).filter(|found| *found != expected)?;
    Some(
        Problem::new(
            path,
            None,
            format!("is {}, not a {}", found.describe(), expected.file_name()),
        )
        .with_hint(hint(found)),
    )
}

#[cfg(test)]
mod tests {
    use super::DocumentKind;

    #[test]
    fn each_document_is_told_by_its_keys() {
        let cases = [
            (
                r#"{"schema_version":1,"tool":{},"run_name":"devmem","dataset":{},"evaluation":{},"configurations":[],"queries":[]}"#,
                Some(DocumentKind::Results),
            ),
            (
                r#"{"schema_version":1,"run_name":"s","dataset":{},"evaluation":{},"sweep":{},"cross_validation":{},"configurations":[]}"#,
                Some(DocumentKind::Sweep),
            ),
            (
                r#"{"shard":"1/2","query_slice":[],"results":{},"run_files":[]}"#,
                Some(DocumentKind::Shard),
            ),
            (
                r#"{"threads":2,"stages_ms":{}}"#,
                Some(DocumentKind::Timings),
            ),
            (r#"{"schema_version":1}"#, None),
            (r#"[1, 2]"#, None),
            ("not json", None),
        ];
        for (text, kind) in cases {
            assert_eq!(DocumentKind::of(text.as_bytes()), kind, "{text}");
        }
    }
}
