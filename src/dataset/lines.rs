//! Reading text files line by line with exact line numbers.
//!
//! Accepts what real files contain: a UTF-8 byte-order mark, CRLF or LF line endings and
//! a missing final newline. Invalid UTF-8 is reported with its line number rather than
//! replaced, so no data is silently altered.

use std::path::Path;

use crate::error::{Problem, Problems};

/// One non-blank line of a file, with its 1-based number.
pub struct Line<'a> {
    pub number: usize,
    pub text: &'a str,
}

/// Splits `bytes` into non-blank lines (blank and whitespace-only lines are skipped: they
/// carry no data). Lines that are not valid UTF-8 are recorded in `problems`.
pub fn split_lines<'a>(path: &Path, bytes: &'a [u8], problems: &mut Problems) -> Vec<Line<'a>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut lines = Vec::new();
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
    for (index, end) in ends.enumerate() {
        let raw = &bytes[start..end];
        start = end + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        match std::str::from_utf8(raw) {
            Ok(text) if text.trim().is_empty() => {}
            Ok(text) => lines.push(Line {
                number: index + 1,
                text,
            }),
            Err(error) => problems.push(
                Problem::new(
                    path,
                    Some(index + 1),
                    format!(
                        "invalid UTF-8 at byte {} of the line",
                        error.valid_up_to() + 1
                    ),
                )
                .with_hint("save the file as UTF-8"),
            ),
        }
    }
    lines
}

/// The 1-based line on which byte `offset` of `text` sits.
pub fn line_of_offset(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_bom_crlf_blank_lines_and_missing_final_newline() {
        let mut problems = Problems::default();
        let bytes = b"\xEF\xBB\xBFfirst\r\n\r\n  \nsecond\r\nthird";
        let lines = split_lines(Path::new("f"), bytes, &mut problems);
        let seen: Vec<(usize, &str)> = lines.iter().map(|line| (line.number, line.text)).collect();
        assert_eq!(seen, vec![(1, "first"), (4, "second"), (5, "third")]);
        assert!(problems.is_empty());
    }

    #[test]
    fn reports_invalid_utf8_with_line_number() {
        let mut problems = Problems::default();
        let lines = split_lines(Path::new("f.jsonl"), b"ok\nbad \xFF here\n", &mut problems);
        assert_eq!(lines.len(), 1);
        let message = problems.into_result().unwrap_err().to_string();
        assert!(
            message.contains("f.jsonl:2: invalid UTF-8 at byte 5"),
            "{message}"
        );
    }
}
