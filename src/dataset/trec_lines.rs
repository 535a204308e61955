//! trec_eval's line and field rules, and the one qrels line reader.
//!
//! trec_eval splits lines on C's `isspace` (ASCII whitespace plus vertical tab and form
//! feed). These primitives are shared by the run reader ([`crate::trec::parse`]), `eval`,
//! the TREC importer ([`super::trec`]) and fusion of external runs.
//!
//! Qrels lines are `qid iteration docno grade` (whitespace-separated; the iteration is
//! ignored), or BEIR's TSV: a `query-id corpus-id score` header line, then
//! `qid docno grade` lines. A negative grade marks a document as judged but unjudged
//! (trec_eval's `RELVALUE_UNJUDGED`). Blank lines, CRLF line endings, a UTF-8 byte-order
//! mark and a missing final newline are accepted. Every defect is reported with file and
//! line.

use std::path::Path;

use super::{parse_grade, Grade};
use crate::error::{Error, Problem, Problems};

/// Strips a UTF-8 byte-order mark and checks the text is UTF-8, naming the first bad line.
pub fn as_text<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, Error> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|error| {
        let line = bytes[..error.valid_up_to()]
            .iter()
            .filter(|&&byte| byte == b'\n')
            .count()
            + 1;
        Error::problem(
            Problem::new(path, Some(line), "invalid UTF-8").with_hint("save the file as UTF-8"),
        )
    })
}

/// Lines of `text` (a final line without newline included), found with memchr.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes());
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = ends.next().unwrap_or(text.len());
        let line = &text[start..end];
        start = end + 1;
        Some(line)
    })
}

/// Lines of `text` with their 1-based numbers.
fn numbered_lines(text: &str, first_number: usize) -> impl Iterator<Item = (usize, &str)> {
    lines(text)
        .enumerate()
        .map(move |(index, line)| (first_number + index, line))
}

/// C's `isspace`, which trec_eval splits on (ASCII whitespace plus vertical tab), as a
/// lookup table: field splitting is the innermost loop of run parsing.
const SEPARATORS: [bool; 256] = {
    let mut table = [false; 256];
    table[b' ' as usize] = true;
    table[b'\t' as usize] = true;
    table[b'\n' as usize] = true;
    table[b'\r' as usize] = true;
    table[0x0b] = true;
    table[0x0c] = true;
    table
};

pub fn is_separator(byte: u8) -> bool {
    SEPARATORS[byte as usize]
}

/// Position of the first separator at or after `from`, or `bytes.len()`. Scans eight
/// bytes at a time: the bit trick flags exactly the bytes below 0x21 (adding the high bit
/// first keeps borrows inside each byte; UTF-8 bytes, >= 0x80, are never flagged), and
/// the flagged byte is a separator unless it is a rare control character.
#[inline]
pub fn separator_from(bytes: &[u8], mut from: usize) -> usize {
    while from + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[from..from + 8]);
        let word = u64::from_le_bytes(word);
        let below_0x21 = !((word | HIGH_BITS).wrapping_sub(ONES * 0x21)) & !word & HIGH_BITS;
        if below_0x21 == 0 {
            from += 8;
            continue;
        }
        from += (below_0x21.trailing_zeros() / 8) as usize;
        if is_separator(bytes[from]) {
            return from;
        }
        from += 1;
    }
    while from < bytes.len() && !is_separator(bytes[from]) {
        from += 1;
    }
    from
}

pub const ONES: u64 = 0x0101_0101_0101_0101;
pub const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The whitespace-separated fields of one line, borrowed.
pub struct Fields<'a> {
    line: &'a str,
    position: usize,
}

pub fn split_fields(line: &str) -> Fields<'_> {
    Fields { line, position: 0 }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.line.as_bytes();
        let mut start = self.position;
        while start < bytes.len() && is_separator(bytes[start]) {
            start += 1;
        }
        if start == bytes.len() {
            self.position = start;
            return None;
        }
        let end = separator_from(bytes, start + 1);
        self.position = end;
        // Separators are ASCII, so both ends sit on character boundaries.
        Some(&self.line[start..end])
    }
}

/// A qrels layout: how many fields a judgment line holds, where the document is, and
/// how a malformed line is reported.
pub struct QrelsLayout {
    /// Lines before the first judgment (BEIR's header).
    header_lines: usize,
    fields: usize,
    document_field: usize,
    expected: &'static str,
    hint: &'static str,
}

/// `qid iteration docno grade`, trec_eval's layout.
const TREC_QRELS: QrelsLayout = QrelsLayout {
    header_lines: 0,
    fields: 4,
    document_field: 2,
    expected: "expected 4 fields (qid iteration docno grade)",
    hint: "TREC qrels lines look like `301 0 FBIS3-10082 1`",
};

/// `query-id corpus-id score` after BEIR's header line.
const BEIR_QRELS: QrelsLayout = QrelsLayout {
    header_lines: 1,
    fields: 3,
    document_field: 1,
    expected: "expected 3 fields (query-id corpus-id score) after the BEIR header",
    hint: "BEIR qrels lines look like `1\tdoc7\t1`",
};

/// The layout of qrels `text`: BEIR's when its first line is BEIR's header.
pub fn qrels_layout(text: &str) -> &'static QrelsLayout {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = lines(text).next().unwrap_or_default();
    if split_fields(first).eq(["query-id", "corpus-id", "score"]) {
        &BEIR_QRELS
    } else {
        &TREC_QRELS
    }
}

/// Calls `visit(line, query, document, grade)` for every judgment of qrels `text`;
/// malformed lines, and lines `visit` rejects with a message, go to `problems`. The one
/// qrels line reader: `eval`, [`crate::trec`] and the TREC importer all use it.
pub fn for_each_judgment<'a>(
    path: &Path,
    text: &'a str,
    problems: &mut Problems,
    visit: impl FnMut(usize, &'a str, &'a str, Grade) -> Result<(), String>,
) {
    let layout = qrels_layout(text);
    let body = judgment_lines(text, layout);
    for_each_judgment_in(path, body, layout, layout.header_lines + 1, problems, visit);
}

/// The part of qrels `text` after the header lines of its `layout` (BEIR's header).
pub fn judgment_lines<'a>(text: &'a str, layout: &QrelsLayout) -> &'a str {
    let mut body = text;
    for _ in 0..layout.header_lines {
        body = memchr::memchr(b'\n', body.as_bytes()).map_or("", |end| &body[end + 1..]);
    }
    body
}

/// [`for_each_judgment`] over `lines`, judgment lines of a qrels file of the given
/// `layout` (no header among them) whose first is line `first_number` of the file: a
/// piece of [`judgment_lines`] cut at line ends can be read on its own.
pub fn for_each_judgment_in<'a>(
    path: &Path,
    lines: &'a str,
    layout: &QrelsLayout,
    first_number: usize,
    problems: &mut Problems,
    mut visit: impl FnMut(usize, &'a str, &'a str, Grade) -> Result<(), String>,
) {
    for (number, line) in numbered_lines(lines, first_number) {
        // The first four fields, and how many there are in all.
        let mut found = [""; 4];
        let mut count = 0;
        for field in split_fields(line) {
            if let Some(slot) = found.get_mut(count) {
                *slot = field;
            }
            count += 1;
        }
        if count == 0 {
            continue;
        }
        if count != layout.fields {
            problems.push(
                Problem::new(
                    path,
                    Some(number),
                    format!("{}, found {count}", layout.expected),
                )
                .with_hint(layout.hint),
            );
            continue;
        }
        judge(
            path,
            problems,
            number,
            (found[0], found[layout.document_field]),
            found[layout.fields - 1],
            &mut visit,
        );
    }
}

/// Parses one judgment's grade and hands it to `visit`; defects go to `problems`.
fn judge<'a>(
    path: &Path,
    problems: &mut Problems,
    number: usize,
    (query, document): (&'a str, &'a str),
    grade_text: &str,
    visit: &mut impl FnMut(usize, &'a str, &'a str, Grade) -> Result<(), String>,
) {
    let grade = match parse_grade(grade_text) {
        Ok(grade) => grade,
        Err(message) => {
            problems.push(
                Problem::new(path, Some(number), message)
                    .with_hint("grades are integers; negative means judged but unjudged"),
            );
            return;
        }
    };
    if let Err(message) = visit(number, query, document, grade) {
        problems.push(Problem::new(path, Some(number), message));
    }
}

/// The message for a (query, document) pair judged twice, naming the first line.
pub fn judged_twice(text: &str, query: &str, document: &str) -> String {
    let first = lines_naming(text, query, document)[0];
    format!("document {document} is judged twice for query {query} (first on line {first})")
}

/// Lines of a run or qrels `text` that name `document` for `query` (the docno is the
/// third field of both), for duplicate reports.
pub fn lines_naming(text: &str, query: &str, document: &str) -> Vec<usize> {
    // BEIR's TSV qrels name the document in the second field.
    let document_field = qrels_layout(text).document_field;
    numbered_lines(text, 1)
        .filter(|(_, line)| {
            let mut fields = split_fields(line);
            fields.next() == Some(query) && fields.nth(document_field - 1) == Some(document)
        })
        .map(|(number, _)| number)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_split_on_c_isspace_only() {
        // Long fields cross the 8-byte fast path; \x01 is not a separator, \x0b is;
        // UTF-8 bytes never are.
        let line = "q\x01longer-than-eight\x0bd\u{e9}j\u{e0}-vu-\u{2003}-wide\t\r 7";
        let fields: Vec<&str> = split_fields(line).collect();
        assert_eq!(
            fields,
            vec![
                "q\x01longer-than-eight",
                "d\u{e9}j\u{e0}-vu-\u{2003}-wide",
                "7"
            ]
        );
        for end in 0..=20 {
            let word = "x".repeat(end);
            assert_eq!(separator_from(format!("{word} tail").as_bytes(), 0), end);
            assert_eq!(separator_from(word.as_bytes(), 0), end);
        }
    }
}
