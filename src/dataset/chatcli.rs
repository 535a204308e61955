//! chatcli's `memory_index.json`: a JSON array of facts (chatcli's fact model, `types.go`), accepted
//! in place of `facts.jsonl`. Each element is validated like a `facts.jsonl` line and
//! problems are reported with the line on which the element starts.

use std::collections::HashMap;
use std::path::Path;

use serde_json::value::RawValue;

use super::lines::line_of_offset;
use super::records::{fact_from_record, strip_position, FactRecord};
use super::Fact;
use crate::error::{Problem, Problems};

pub const MEMORY_INDEX_FILE: &str = "memory_index.json";

/// Parses the array, validating each element; bad elements are reported, never skipped
/// silently.
pub(super) fn parse_memory_index(path: &Path, bytes: &[u8], problems: &mut Problems) -> Vec<Fact> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Ok(text) = std::str::from_utf8(bytes) else {
        let valid = std::str::from_utf8(bytes).unwrap_err().valid_up_to();
        let line = line_of_offset(std::str::from_utf8(&bytes[..valid]).unwrap_or(""), valid);
        problems.push(
            Problem::new(path, Some(line), "invalid UTF-8").with_hint("save the file as UTF-8"),
        );
        return Vec::new();
    };
    let elements: Vec<&RawValue> = match serde_json::from_str(text) {
        Ok(elements) => elements,
        Err(error) => {
            problems.push(
                Problem::new(
                    path,
                    Some(error.line()),
                    format!("{} (column {})", strip_position(&error), error.column()),
                )
                .with_hint("memory_index.json must be a JSON array of fact objects"),
            );
            return Vec::new();
        }
    };
    let mut facts = Vec::with_capacity(elements.len());
    let mut seen = HashMap::new();
    for element in elements {
        let offset = element.get().as_ptr() as usize - text.as_ptr() as usize;
        let line = line_of_offset(text, offset);
        match serde_json::from_str::<FactRecord>(element.get()) {
            Ok(record) => {
                if let Some(fact) = fact_from_record(path, Some(line), record, &mut seen, problems)
                {
                    facts.push(fact);
                }
            }
            Err(error) => problems.push(Problem::new(path, Some(line), strip_position(&error))),
        }
    }
    if facts.is_empty() && problems.is_empty() {
        problems.push(Problem::new(path, None, "no facts"));
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_chatcli_fields_and_reports_element_lines() {
        let text = r#"[
  {"id": "a", "content": "Zap emits logs", "category": "pattern", "score": 0.9,
   "source": "session", "last_accessed": "0001-01-01T00:00:00Z", "access_count": 3},
  {"id": "a", "content": "dup"}
]"#;
        let mut problems = Problems::default();
        let facts = parse_memory_index(
            Path::new("memory_index.json"),
            text.as_bytes(),
            &mut problems,
        );
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].last_accessed, None, "Go's zero time means unset");
        assert_eq!(facts[0].access_count, 3);
        let message = problems.into_result().unwrap_err().to_string();
        assert!(
            message
                .contains("memory_index.json:4: duplicate fact id \"a\" (first defined on line 2)"),
            "{message}"
        );
    }
}
