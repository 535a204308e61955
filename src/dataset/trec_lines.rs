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

/// A control character that is no separator (NUL to 0x08, 0x0e to 0x1f, DEL and the C1
/// controls U+0080 to U+009F): no TREC id, tag or number holds one, and a file that did
/// would not read back as it was meant.
pub fn is_control_character(character: char) -> bool {
    character.is_control() && !(character.is_ascii() && is_separator(character as u8))
}

/// What is wrong with a TREC `line` holding a control character, if it holds one: the
/// field that holds it, named by `field_names` (by position; `field N` past them).
pub fn control_character_problem(line: &str, field_names: &[&str]) -> Option<String> {
    let (offset, control) = line
        .char_indices()
        .find(|&(_, character)| is_control_character(character))?;
    let position = split_fields(&line[..offset]).count()
        - usize::from(offset > 0 && !is_separator(line.as_bytes()[offset - 1]));
    let field = split_fields(line).nth(position).unwrap_or_default();
    let name = field_names.get(position).map_or_else(
        || format!("field {}", position + 1),
        |name| (*name).to_owned(),
    );
    Some(format!(
        "{name} {field:?} holds a control character (U+{:04X}), which TREC files cannot hold",
        u32::from(control)
    ))
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

/// The high bits of the bytes of `word` that are separators, and of those that are
/// control characters but no separators (NUL to 0x08, 0x0e to 0x1f), exactly: bytes
/// below a bound `c` are found by subtracting `c` from each byte with its high bit set
/// (no borrow crosses bytes).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn separator_and_control_bits(word: u64) -> (u64, u64) {
    let high = word | HIGH_BITS;
    let ascii = !word & HIGH_BITS;
    let below = |bound: u64| !high.wrapping_sub(ONES * bound) & ascii;
    let controls = below(0x09) | (below(0x20) & !below(0x0e));
    (below(0x21) & !controls, controls)
}

/// The high bit of each byte of `word` that equals `byte`, exactly.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn equal_bits(word: u64, byte: u8) -> u64 {
    let differs = word ^ (ONES * u64::from(byte));
    !(((differs & !HIGH_BITS) + !HIGH_BITS) | differs) & HIGH_BITS
}

/// [`block_masks`] eight bytes at a time, without SIMD instructions (SWAR).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn block_masks_swar(block: &[u8; 64]) -> BlockMasks {
    // Gathers the eight high bits of a word into one byte (the products never overlap).
    let pack = |bits: u64| ((bits >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
    let mut masks = BlockMasks::default();
    for (index, word) in block.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let (separators, controls) = separator_and_control_bits(word);
        let unusual = word & HIGH_BITS | controls | equal_bits(word, 0x7f);
        masks.separators |= pack(separators) << (8 * index);
        masks.newlines |= pack(equal_bits(word, b'\n')) << (8 * index);
        masks.unusual |= pack(unusual) << (8 * index);
    }
    masks
}

/// [`block_masks`] sixteen bytes at a time with SSE2 (every x86-64 processor has it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_masks_sse2(block: &[u8; 64]) -> BlockMasks {
    use std::arch::x86_64::{
        _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8, _mm_sub_epi8,
    };
    let mut masks = BlockMasks::default();
    for (index, lane) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of x86-64 (the compiler enables it for every x86-64
        // target), and the load reads the 16 bytes of `lane`, with no alignment needed.
        let (separator, newline, unusual) = unsafe {
            let bytes = _mm_loadu_si128(lane.as_ptr().cast());
            // Tab, newline, vertical tab, form feed and carriage return are 0x09 to 0x0d:
            // after subtracting 0x09 (wrapping), exactly those bytes are at most 4.
            let shifted = _mm_sub_epi8(bytes, _mm_set1_epi8(0x09));
            let control = _mm_cmpeq_epi8(_mm_min_epu8(shifted, _mm_set1_epi8(4)), shifted);
            let space = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b' ' as i8));
            let newline = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\n' as i8));
            // The control characters that are no separators: the bytes up to 0x1f that
            // are not 0x09 to 0x0d, and DEL.
            let up_to_0x1f = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
            let delete = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(0x7f));
            let other_control = _mm_or_si128(_mm_andnot_si128(control, up_to_0x1f), delete);
            (
                _mm_movemask_epi8(_mm_or_si128(control, space)) as u16,
                _mm_movemask_epi8(newline) as u16,
                // A byte's high bit is set for every byte outside ASCII.
                (_mm_movemask_epi8(bytes) | _mm_movemask_epi8(other_control)) as u16,
            )
        };
        masks.separators |= u64::from(separator) << (16 * index);
        masks.newlines |= u64::from(newline) << (16 * index);
        masks.unusual |= u64::from(unusual) << (16 * index);
    }
    masks
}

/// Three bit masks over 64 bytes (bit i: byte i).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct BlockMasks {
    /// The separators (C's `isspace`).
    separators: u64,
    newlines: u64,
    /// The bytes a plain line holds none of: from 0x80 on (parts of UTF-8 sequences, or
    /// invalid) and the control characters that are no separators (see
    /// [`is_control_character`]).
    unusual: u64,
}

/// The [`BlockMasks`] of 64 bytes. No branch depends on the bytes.
#[inline(always)]
fn block_masks(block: &[u8; 64]) -> BlockMasks {
    #[cfg(target_arch = "x86_64")]
    return block_masks_sse2(block);
    #[cfg(not(target_arch = "x86_64"))]
    return block_masks_swar(block);
}

/// Where the fields of a line of under 64 bytes start and end, as bit masks over the
/// line's bytes (bit i: byte i): a field starts where a separator is followed by another
/// byte and ends at the next separator.
#[derive(Clone, Copy)]
pub struct FieldBounds {
    starts: u64,
    ends: u64,
    /// Whether every byte of the line is printable ASCII or a separator.
    plain: bool,
}

impl FieldBounds {
    /// The bounds of a line of `length` bytes from the masks of the 64 bytes from its
    /// start.
    #[inline(always)]
    fn new(masks: BlockMasks, length: usize) -> Self {
        let beyond = !0 << length;
        let separators = masks.separators | beyond;
        FieldBounds {
            starts: !separators & ((separators << 1) | 1),
            ends: separators & !((separators << 1) | 1),
            plain: masks.unusual & !beyond == 0,
        }
    }

    /// Whether every byte of the line is printable ASCII or a separator: then the line
    /// is UTF-8 and holds no control character (the others are checked one by one).
    #[inline(always)]
    pub fn plain(self) -> bool {
        self.plain
    }

    /// Whether the line has more than `count` fields.
    #[inline(always)]
    pub fn more_than(self, count: usize) -> bool {
        let mut starts = self.starts;
        for _ in 0..count {
            starts &= starts.wrapping_sub(1);
        }
        starts != 0
    }

    /// How many fields the line has.
    #[inline(always)]
    pub fn count(self) -> usize {
        self.starts.count_ones() as usize
    }

    /// The first `N` fields (`""` past its last) of `line`, the line these bounds were
    /// found for.
    #[inline(always)]
    pub fn fields<const N: usize>(self, line: &str) -> [&str; N] {
        let (mut starts, mut ends) = (self.starts, self.ends);
        let mut fields = [""; N];
        for field in &mut fields {
            if starts == 0 {
                break;
            }
            let range = starts.trailing_zeros() as usize..ends.trailing_zeros() as usize;
            debug_assert!(line.get(range.clone()).is_some());
            // SAFETY: the fields lie within the line, for they end at or before its end
            // bit; a field starts at the line's start or after a separator, and ends at a
            // separator or at the line's end: ASCII bytes, so both ends are character
            // boundaries.
            *field = unsafe { line.get_unchecked(range) };
            starts &= starts - 1;
            ends &= ends - 1;
        }
        fields
    }
}

/// The end of the line of `bytes` that starts at `start` (the position of its newline,
/// or the end of `bytes`), and its fields' bounds when they were found from the bit masks
/// of the 64 bytes from its start: for a line of under 64 bytes that starts at least 64
/// bytes before the end of `bytes`. The others (`None`) are split by [`first_fields`].
/// The masks give the line's end, and whether it is ASCII, too, so that a line is read
/// once. Lines are cut as [`lines`] cuts them.
#[inline(always)]
pub fn next_line(bytes: &[u8], start: usize) -> (usize, Option<FieldBounds>) {
    if let Some(block) = bytes.get(start..start + 64) {
        let masks = block_masks(block.try_into().expect("64 bytes"));
        let length = masks.newlines.trailing_zeros() as usize;
        if length < 64 {
            return (start + length, Some(FieldBounds::new(masks, length)));
        }
    }
    let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |at| start + at);
    (end, None)
}

/// The first `N` fields of `line` and how many fields it has, counted up to `N + 1`
/// (the fields after that are not looked at, as in trec_eval). One pass, no iterator
/// state: this reads the lines that [`next_line`] cannot split by their masks.
#[inline]
pub fn first_fields<const N: usize>(line: &str) -> ([&str; N], usize) {
    let bytes = line.as_bytes();
    let mut fields = [""; N];
    let mut count = 0;
    let mut position = 0;
    loop {
        while position < bytes.len() && is_separator(bytes[position]) {
            position += 1;
        }
        if position == bytes.len() {
            break;
        }
        if count == N {
            count = N + 1;
            break;
        }
        let end = separator_from(bytes, position + 1);
        // Separators are ASCII, so both ends sit on character boundaries.
        fields[count] = &line[position..end];
        count += 1;
        position = end;
    }
    (fields, count)
}

/// Whether two fields hold the same bytes, compared inline: consecutive lines of a run
/// or qrels file mostly name the same query, and a library call per line to compare a
/// few bytes costs more than the comparison.
#[inline(always)]
pub fn same_field(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let length = a.len();
    if length != b.len() {
        return false;
    }
    // Two loads that overlap when the field is shorter than both together.
    let word = |bytes: &[u8], at: usize| {
        u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
    };
    let half = |bytes: &[u8], at: usize| {
        u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
    };
    match length {
        0..=3 => a == b,
        4..=7 => half(a, 0) == half(b, 0) && half(a, length - 4) == half(b, length - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, length - 8) == word(b, length - 8),
        _ => a == b,
    }
}

/// At least `length` bytes of lines from a fixed pseudo-random sequence, for the line
/// readers' tests: words of 1 to 8 letters, separators of every kind (C's `isspace`),
/// CRLF, blank lines, a byte outside ASCII and a control character that is no
/// separator, in lines of every length around 64 bytes; the last line may lack its
/// newline.
#[cfg(test)]
pub(crate) fn scrambled_lines(length: usize) -> String {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |below: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % below
    };
    let pieces = [
        " ", "\t", "\r", "\x0b", "\x0c", "  ", "\r\n", "\n", "\n\n", "x", "\u{e9}", "\x01",
    ];
    let mut text = String::new();
    while text.len() < length {
        match next(4) {
            0 => text.push_str(pieces[next(pieces.len() as u64) as usize]),
            _ => {
                let word_length = 1 + next(8) as usize;
                text.extend((0..word_length).map(|_| (b'a' + next(26) as u8) as char));
                text.push(' ');
            }
        }
        if next(10) == 0 {
            text.push('\n');
        }
    }
    text
}

/// A qrels layout: how many fields a judgment line holds, where the document is, and
/// how a malformed line is reported.
pub struct QrelsLayout {
    /// Lines before the first judgment (BEIR's header).
    header_lines: usize,
    fields: usize,
    document_field: usize,
    /// The fields of a line, by position, for errors.
    field_names: &'static [&'static str],
    expected: &'static str,
    hint: &'static str,
}

/// `qid iteration docno grade`, trec_eval's layout.
const TREC_QRELS: QrelsLayout = QrelsLayout {
    header_lines: 0,
    fields: 4,
    document_field: 2,
    field_names: &["query id", "iteration", "docno", "grade"],
    expected: "expected 4 fields (qid iteration docno grade)",
    hint: "TREC qrels lines look like `301 0 FBIS3-10082 1`",
};

/// `query-id corpus-id score` after BEIR's header line.
const BEIR_QRELS: QrelsLayout = QrelsLayout {
    header_lines: 1,
    fields: 3,
    document_field: 1,
    field_names: &["query-id", "corpus-id", "score"],
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
    let (mut start, mut number) = (0, first_number);
    while start < lines.len() {
        let (end, bounds) = next_line(lines.as_bytes(), start);
        let line = &lines[start..end];
        let line_number = number;
        (start, number) = (end + 1, number + 1);
        // The first four fields, and how many there are (up to five).
        let (found, count) = match bounds {
            Some(bounds) => (bounds.fields::<4>(line), bounds.count().min(5)),
            None => first_fields::<4>(line),
        };
        if count == 0 {
            continue;
        }
        if !bounds.is_some_and(FieldBounds::plain) {
            if let Some(problem) = control_character_problem(line, layout.field_names) {
                problems.push(
                    Problem::new(path, Some(line_number), problem)
                        .with_hint("ids and grades are text without control characters"),
                );
                continue;
            }
        }
        if count != layout.fields {
            let count = split_fields(line).count();
            problems.push(
                Problem::new(
                    path,
                    Some(line_number),
                    format!("{}, found {count}", layout.expected),
                )
                .with_hint(layout.hint),
            );
            continue;
        }
        judge(
            path,
            problems,
            line_number,
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

    /// Every line of [`scrambled_lines`], as [`next_line`] splits it (by masks where it
    /// can) and as [`lines`] and [`split_fields`] split it.
    #[test]
    fn masked_lines_equal_scanned_lines() {
        let text = scrambled_lines(100_000);
        let scanned: Vec<&str> = lines(&text).collect();
        let (mut start, mut index, mut by_mask) = (0, 0, 0);
        while start < text.len() {
            let (end, bounds) = next_line(text.as_bytes(), start);
            let line = &text[start..end];
            assert_eq!(line, scanned[index]);
            let fields: Vec<&str> = split_fields(line).collect();
            let mut first = [""; 4];
            for (slot, field) in first.iter_mut().zip(&fields) {
                *slot = field;
            }
            assert_eq!(
                first_fields::<4>(line),
                (first, fields.len().min(5)),
                "{line:?}"
            );
            if let Some(bounds) = bounds {
                by_mask += 1;
                assert_eq!(bounds.fields::<4>(line), first, "{line:?}");
                let plain = line.bytes().all(|byte| {
                    byte.is_ascii() && (!byte.is_ascii_control() || is_separator(byte))
                });
                assert_eq!(bounds.plain(), plain, "{line:?}");
                assert_eq!(bounds.count(), fields.len(), "{line:?}");
                for count in 0..8 {
                    assert_eq!(bounds.more_than(count), fields.len() > count, "{line:?}");
                }
            }
            (start, index) = (end + 1, index + 1);
        }
        assert_eq!(index, scanned.len());
        assert!(
            by_mask > scanned.len() / 2,
            "{by_mask} of {}",
            scanned.len()
        );
    }

    #[test]
    fn same_field_compares_every_byte() {
        let base = "abcdefghijklmnopqrstuvwxyz";
        for length in 0..=base.len() {
            let field = &base[..length];
            let copy = field.to_owned();
            assert!(same_field(field, &copy));
            for at in 0..length {
                let mut other = field.as_bytes().to_vec();
                other[at] = b'_';
                let other = String::from_utf8(other).unwrap();
                assert!(!same_field(field, &other), "{field} {other}");
            }
            assert!(!same_field(field, &base[..length.saturating_sub(1)]) || length == 0);
        }
    }

    #[test]
    fn block_masks_flag_exactly_separators_newlines_and_unusual_bytes() {
        for byte in 0..=255u8 {
            let mut block = [b'a'; 64];
            for (index, slot) in block.iter_mut().enumerate() {
                *slot = match index % 7 {
                    0 | 3 => byte,
                    1 => 0x80,
                    2 => b' ',
                    4 => 0xff,
                    5 => b'\n',
                    _ => b'a',
                };
            }
            let separators: u64 = (0..64)
                .filter(|&index| is_separator(block[index]))
                .map(|index| 1 << index)
                .sum();
            let newlines: u64 = (0..64)
                .filter(|&index| block[index] == b'\n')
                .map(|index| 1 << index)
                .sum();
            let unusual: u64 = (0..64)
                .filter(|&index| {
                    let byte = block[index];
                    !byte.is_ascii() || (byte.is_ascii_control() && !is_separator(byte))
                })
                .map(|index| 1 << index)
                .sum();
            let masks = BlockMasks {
                separators,
                newlines,
                unusual,
            };
            assert_eq!(block_masks_swar(&block), masks, "{byte:#x}");
            assert_eq!(block_masks(&block), masks, "{byte:#x}");
        }
    }

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
