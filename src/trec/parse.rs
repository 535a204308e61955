//! Fast readers for TREC qrels and run files, as trec_eval reads them, borrowing every
//! field from the file's bytes: no allocation per line, runs parsed in parallel chunks.
//!
//! - Qrels: [`parse_qrels`] gathers the judgments that the one qrels line reader
//!   ([`crate::dataset::trec_lines`], shared with the TREC importer) yields, per query. A
//!   (query, document) pair judged twice is an error, as in trec_eval.
//! - Run lines: `qid Q0 docno rank score tag`; the rank column is ignored and fields
//!   after the tag are ignored (trec_eval's rules). Lines starting with `#` are comments.
//!   The run id is the tag of the last line, as trec_eval reports it.
//!
//! Blank lines, CRLF line endings, a UTF-8 byte-order mark and a missing final newline
//! are accepted. Every defect is reported with file and line.

use std::path::Path;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

pub use crate::dataset::trec_lines::{as_text, for_each_judgment, judged_twice, lines_naming};
use crate::dataset::trec_lines::{is_separator, separator_from, split_fields};
#[cfg(any(test, not(target_arch = "x86_64")))]
use crate::dataset::trec_lines::{HIGH_BITS, ONES};
use crate::dataset::Grade;
use crate::error::{Error, Problem, Problems};

/// The judgments of one query.
#[derive(Debug)]
pub struct QueryJudgments<'a> {
    pub query: &'a str,
    /// Grade of every judged document.
    pub grades: FxHashMap<&'a str, Grade>,
}

/// Parsed qrels, queries sorted by id in byte order (trec_eval's order).
#[derive(Debug)]
pub struct QrelsData<'a> {
    pub queries: Vec<QueryJudgments<'a>>,
}

/// One query's results in file order: (docno, score).
#[derive(Debug)]
pub struct QueryResults<'a> {
    pub query: &'a str,
    pub results: Vec<(&'a str, f64)>,
}

/// A parsed run: queries in first-seen order.
#[derive(Debug)]
pub struct RunData<'a> {
    /// The tag of the last line (trec_eval's `runid`).
    pub run_id: &'a str,
    pub queries: Vec<QueryResults<'a>>,
}

/// The high bit of each byte of `word` that is a separator, exactly: bytes below a bound
/// `c` are found by subtracting `c` from each byte with its high bit set (no borrow
/// crosses bytes), then the control characters that are not separators are removed.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn separator_bits(word: u64) -> u64 {
    let high = word | HIGH_BITS;
    let ascii = !word & HIGH_BITS;
    let below = |bound: u64| !high.wrapping_sub(ONES * bound) & ascii;
    let controls = below(0x09) | (below(0x20) & !below(0x0e));
    below(0x21) & !controls
}

/// The high bit of each byte of `word` that is a newline, exactly.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn newline_bits(word: u64) -> u64 {
    let differs = word ^ (ONES * u64::from(b'\n'));
    !(((differs & !HIGH_BITS) + !HIGH_BITS) | differs) & HIGH_BITS
}

/// [`block_masks`] eight bytes at a time, without SIMD instructions (SWAR).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn block_masks_swar(block: &[u8; 64]) -> (u64, u64) {
    // Gathers the eight high bits of a word into one byte (the products never overlap).
    let pack = |bits: u64| ((bits >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
    let (mut separators, mut newlines) = (0, 0);
    for (index, word) in block.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        separators |= pack(separator_bits(word)) << (8 * index);
        newlines |= pack(newline_bits(word)) << (8 * index);
    }
    (separators, newlines)
}

/// [`block_masks`] sixteen bytes at a time with SSE2 (every x86-64 processor has it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_masks_sse2(block: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_sub_epi8,
    };
    let (mut separators, mut newlines) = (0, 0);
    for (index, lane) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of x86-64 (the compiler enables it for every x86-64
        // target), and the load reads the 16 bytes of `lane`, with no alignment needed.
        let (separator, newline) = unsafe {
            let bytes = _mm_loadu_si128(lane.as_ptr().cast());
            // Tab, newline, vertical tab, form feed and carriage return are 0x09 to 0x0d:
            // after subtracting 0x09 (wrapping), exactly those bytes are at most 4.
            let shifted = _mm_sub_epi8(bytes, _mm_set1_epi8(0x09));
            let control = _mm_cmpeq_epi8(_mm_min_epu8(shifted, _mm_set1_epi8(4)), shifted);
            let space = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b' ' as i8));
            let newline = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\n' as i8));
            (
                _mm_movemask_epi8(_mm_or_si128(control, space)) as u16,
                _mm_movemask_epi8(newline) as u16,
            )
        };
        separators |= u64::from(separator) << (16 * index);
        newlines |= u64::from(newline) << (16 * index);
    }
    (separators, newlines)
}

/// The separators (C's `isspace`) and the newlines among 64 bytes, as two bit masks (bit
/// i: byte i). No branch depends on the bytes.
#[inline(always)]
fn block_masks(block: &[u8; 64]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    return block_masks_sse2(block);
    #[cfg(not(target_arch = "x86_64"))]
    return block_masks_swar(block);
}

/// The first five fields of a line of under 64 bytes starting at `text[start]`, from
/// `separators`, its separator mask with every bit from the line's end on set: the fields
/// start where a separator is followed by another byte and end at the next separator.
/// `None` when the line has fewer than six fields (left to [`first_five_fields`]).
#[inline(always)]
fn five_fields_by_mask(text: &str, start: usize, separators: u64) -> Option<[&str; 5]> {
    let starts = !separators & ((separators << 1) | 1);
    let ends = separators & !((separators << 1) | 1);
    // Without the first five starts, a sixth field is left.
    let mut sixth = starts;
    for _ in 0..5 {
        sixth &= sixth.wrapping_sub(1);
    }
    if sixth == 0 {
        return None;
    }
    let (mut starts, mut ends) = (starts, ends);
    let mut fields = [""; 5];
    for field in &mut fields {
        let (from, to) = (starts.trailing_zeros(), ends.trailing_zeros());
        let range = start + from as usize..start + to as usize;
        debug_assert!(text.get(range.clone()).is_some());
        // SAFETY: the line (its start, and under 64 bytes from it) lies within `text`,
        // and so do the fields, which end before the line's end bit; a field starts at
        // the line's start or after a separator, and ends at a separator or at the
        // line's end (a newline): ASCII bytes, so both ends are character boundaries.
        *field = unsafe { text.get_unchecked(range) };
        starts &= starts - 1;
        ends &= ends - 1;
    }
    Some(fields)
}

/// The end of the line of `text` that starts at `start` (the position of its newline,
/// or the end of `text`), and its first five fields when they were found from the bit
/// masks of the 64 bytes from its start: for a line of under 64 bytes, with six fields
/// or more, that starts at least 64 bytes before the end of `text`. For the others
/// (`None`), [`first_five_fields`] splits the line. The masks give the line's end too, so
/// that a line is read once. Lines are cut as [`crate::dataset::trec_lines::lines`] cuts
/// them.
#[inline(always)]
fn next_line(text: &str, start: usize) -> (usize, Option<[&str; 5]>) {
    let bytes = text.as_bytes();
    if let Some(block) = bytes.get(start..start + 64) {
        let (separators, newlines) = block_masks(block.try_into().expect("64 bytes"));
        let length = newlines.trailing_zeros() as usize;
        if length < 64 {
            let fields = five_fields_by_mask(text, start, separators | (!0 << length));
            return (start + length, fields);
        }
    }
    let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |at| start + at);
    (end, None)
}

/// The first five fields of a run line and how many fields there are, up to six (fields
/// after the sixth are not looked at, as in trec_eval). The sixth, the tag, is only
/// found, not read: the run id is the tag of the last line. One pass, no iterator state:
/// this is the innermost loop of run parsing.
#[inline]
fn first_five_fields(line: &str) -> ([&str; 5], usize) {
    let bytes = line.as_bytes();
    let mut fields = [""; 5];
    let mut count = 0;
    let mut position = 0;
    loop {
        while position < bytes.len() && is_separator(bytes[position]) {
            position += 1;
        }
        if position == bytes.len() {
            break;
        }
        if count == 5 {
            count = 6;
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

/// Reads qrels text for `eval`: in parallel pieces when the qrels are sound; otherwise
/// line by line, reporting every defect with its line.
pub fn parse_qrels<'a>(path: &Path, text: &'a str) -> Result<QrelsData<'a>, Error> {
    match parse_qrels_in_parallel(path, text) {
        Some(qrels) => Ok(qrels),
        None => parse_qrels_line_by_line(path, text),
    }
}

/// [`parse_qrels`] one line after the other, every defect reported.
fn parse_qrels_line_by_line<'a>(path: &Path, text: &'a str) -> Result<QrelsData<'a>, Error> {
    let mut problems = Problems::default();
    let mut slot_of: FxHashMap<&str, usize> = FxHashMap::default();
    let mut queries: Vec<QueryJudgments<'a>> = Vec::new();
    let mut current: Option<(&str, usize)> = None;
    for_each_judgment(path, text, &mut problems, |_, query, document, grade| {
        let slot = match current {
            Some((id, slot)) if id == query => slot,
            _ => {
                let slot = *slot_of.entry(query).or_insert_with(|| {
                    queries.push(QueryJudgments {
                        query,
                        grades: FxHashMap::default(),
                    });
                    queries.len() - 1
                });
                current = Some((query, slot));
                slot
            }
        };
        match queries[slot].grades.insert(document, grade) {
            Some(_) => Err(judged_twice(text, query, document)),
            None => Ok(()),
        }
    });
    if queries.is_empty() && problems.is_empty() {
        problems.push(
            Problem::new(path, None, "no judgments")
                .with_hint("a qrels file has one `qid iteration docno grade` line per judgment"),
        );
    }
    problems.into_result()?;
    queries.sort_unstable_by(|a, b| a.query.cmp(b.query));
    Ok(QrelsData { queries })
}

/// Judgments of one query, (docno, grade) in file order.
type Judgments<'a> = Vec<(&'a str, Grade)>;

/// A query's consecutive judgments in one piece of a qrels file.
type JudgmentBlock<'a> = (&'a str, Judgments<'a>);

/// [`parse_qrels`] on the current rayon pool: the judgment lines are read in line-aligned
/// pieces, then each query's judgments are gathered in file order and checked for
/// duplicates. The same queries and grades as the line-by-line reading; `None` when a
/// line is malformed, a document is judged twice or there is no judgment, for that
/// reading to report.
fn parse_qrels_in_parallel<'a>(path: &Path, text: &'a str) -> Option<QrelsData<'a>> {
    let layout = crate::dataset::trec_lines::qrels_layout(text);
    let body = crate::dataset::trec_lines::judgment_lines(text, layout);
    let pieces = line_aligned_chunks(body.as_bytes(), rayon::current_num_threads() * 4);
    let read: Vec<Option<Vec<JudgmentBlock<'a>>>> = pieces
        .par_iter()
        .map(|piece| {
            let start = piece.as_ptr() as usize - body.as_ptr() as usize;
            // Pieces end after a newline, so both ends sit on character boundaries.
            let lines = &body[start..start + piece.len()];
            let mut problems = Problems::default();
            let mut blocks: Vec<JudgmentBlock<'a>> = Vec::new();
            crate::dataset::trec_lines::for_each_judgment_in(
                path,
                lines,
                layout,
                1,
                &mut problems,
                |_, query, document, grade| {
                    match blocks.last_mut() {
                        Some((current, judgments)) if *current == query => {
                            judgments.push((document, grade))
                        }
                        previous => {
                            let depth = previous.map_or(16, |(_, judgments)| judgments.len());
                            let mut judgments = Vec::with_capacity(depth);
                            judgments.push((document, grade));
                            blocks.push((query, judgments));
                        }
                    }
                    Ok(())
                },
            );
            problems.is_empty().then_some(blocks)
        })
        .collect();
    let mut slot_of: FxHashMap<&str, usize> = FxHashMap::default();
    let mut gathered: Vec<(&'a str, Vec<Judgments<'a>>)> = Vec::new();
    for blocks in read {
        for (query, judgments) in blocks? {
            match slot_of.get(query) {
                Some(&slot) => gathered[slot].1.push(judgments),
                None => {
                    slot_of.insert(query, gathered.len());
                    gathered.push((query, vec![judgments]));
                }
            }
        }
    }
    if gathered.is_empty() {
        return None;
    }
    let mut queries = gathered
        .into_par_iter()
        .map(|(query, blocks)| {
            let count = blocks.iter().map(Vec::len).sum();
            let mut grades = FxHashMap::with_capacity_and_hasher(count, rustc_hash::FxBuildHasher);
            for (document, grade) in blocks.into_iter().flatten() {
                if grades.insert(document, grade).is_some() {
                    return None;
                }
            }
            Some(QueryJudgments { query, grades })
        })
        .collect::<Option<Vec<QueryJudgments<'a>>>>()?;
    queries.sort_unstable_by(|a, b| a.query.cmp(b.query));
    Some(QrelsData { queries })
}

/// What one chunk of a run file holds: consecutive-query blocks and the last tag.
struct Chunk<'a> {
    blocks: Vec<QueryResults<'a>>,
    run_id: Option<&'a str>,
}

/// A defect in a chunk of a run: line number within the chunk (0-based), message and hint.
pub type ChunkProblem = (usize, String, &'static str);

/// Calls `visit(query, document, score)` for every result line of `chunk` (a piece of a
/// run file that ends at a line end) in file order and returns the last line's tag; the
/// first malformed line stops the reading. The one run line reader: [`parse_run`] and
/// `eval`'s streaming evaluation use it.
pub fn for_each_result<'a>(
    chunk: &'a [u8],
    mut visit: impl FnMut(&'a str, &'a str, f64),
) -> Result<Option<&'a str>, ChunkProblem> {
    let text = std::str::from_utf8(chunk).map_err(|error| {
        let line = memchr::memchr_iter(b'\n', &chunk[..error.valid_up_to()]).count();
        (line, "invalid UTF-8".to_owned(), "save the file as UTF-8")
    })?;
    let mut last_line = None;
    let (mut start, mut next_index) = (0, 0);
    while start < text.len() {
        let (end, masked) = next_line(text, start);
        let line = &text[start..end];
        let index = next_index;
        (start, next_index) = (end + 1, next_index + 1);
        let (fields, count) = match masked {
            Some(fields) => (fields, 6),
            None => first_five_fields(line),
        };
        if count == 0 || fields[0].starts_with('#') {
            continue;
        }
        let [query, _q0, document, _rank, score_text] = fields;
        if count < 6 {
            return Err((
                index,
                format!(
                    "expected at least 6 fields (qid Q0 docno rank score tag), found {}",
                    split_fields(line).count()
                ),
                "TREC run lines look like `301 Q0 FBIS3-10082 1 12.5 myrun`",
            ));
        }
        let score = match parse_score(score_text) {
            Some(score) => score,
            _ => {
                return Err((
                    index,
                    format!("score {score_text:?} is not a number"),
                    "the fifth field is the retrieval score; higher ranks first",
                ))
            }
        };
        last_line = Some(line);
        visit(query, document, score);
    }
    Ok(last_line.and_then(|line| split_fields(line).nth(5)))
}

fn parse_run_chunk(bytes: &[u8]) -> Result<Chunk<'_>, ChunkProblem> {
    let mut blocks: Vec<QueryResults<'_>> = Vec::new();
    let run_id = for_each_result(bytes, |query, document, score| match blocks.last_mut() {
        Some(block) if block.query == query => block.results.push((document, score)),
        previous => {
            // Queries of one run tend to have the same depth: reserve that much.
            let mut results = Vec::with_capacity(previous.map_or(16, |block| block.results.len()));
            results.push((document, score));
            blocks.push(QueryResults { query, results });
        }
    })?;
    Ok(Chunk { blocks, run_id })
}

/// Powers of ten that are exact in an f64.
const EXACT_POWERS_OF_TEN: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Parses a score; `None` for anything that is not a number, and for NaN.
///
/// Scores are almost always plain decimals (`-12.345678`); for those with at most 15
/// digits the value is `digits / 10^fraction_digits`, one division of two exactly
/// represented numbers, which IEEE 754 rounds correctly: the same f64 as `str::parse`
/// and C's `atof` (Clinger's fast path). Everything else goes to `str::parse`.
#[inline(always)]
fn parse_score(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let (negative, digits) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let mut mantissa: u64 = 0;
    let mut digit_count = 0;
    let mut fraction_digits = None;
    for (position, &byte) in digits.iter().enumerate() {
        match byte {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(byte - b'0');
                digit_count += 1;
            }
            b'.' if fraction_digits.is_none() => {
                fraction_digits = Some(digits.len() - position - 1)
            }
            _ => {
                digit_count = usize::MAX;
                break;
            }
        }
        if digit_count > 15 {
            break;
        }
    }
    if digit_count == 0 || digit_count > 15 {
        return text.parse::<f64>().ok().filter(|score| !score.is_nan());
    }
    let value = mantissa as f64 / EXACT_POWERS_OF_TEN[fraction_digits.unwrap_or(0)];
    Some(if negative { -value } else { value })
}

/// Splits `bytes` into about `pieces` chunks that end at line ends.
fn line_aligned_chunks(bytes: &[u8], pieces: usize) -> Vec<&[u8]> {
    let target = (bytes.len() / pieces.max(1)).max(1 << 16);
    let mut chunks = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let mut end = (start + target).min(bytes.len());
        if end < bytes.len() {
            end = match memchr::memchr(b'\n', &bytes[end..]) {
                Some(offset) => end + offset + 1,
                None => bytes.len(),
            };
        }
        chunks.push(&bytes[start..end]);
        start = end;
    }
    chunks
}

/// A run file's bytes (a UTF-8 byte-order mark stripped) in line-aligned chunks, to be
/// read in parallel with [`for_each_result`]: a few per worker thread of the current
/// rayon pool, so that threads that finish early take another.
pub fn run_chunks(bytes: &[u8]) -> Vec<&[u8]> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    line_aligned_chunks(bytes, rayon::current_num_threads() * 4)
}

/// The error for `problem`, found in chunk `number` of `chunks`, naming its file line.
pub fn chunk_error(path: &Path, chunks: &[&[u8]], number: usize, problem: ChunkProblem) -> Error {
    let (index, message, hint) = problem;
    let lines_before: usize = chunks[..number]
        .iter()
        .map(|chunk| memchr::memchr_iter(b'\n', chunk).count())
        .sum();
    Error::problem(Problem::new(path, Some(lines_before + index + 1), message).with_hint(hint))
}

/// The run id (the tag of the last result line), or the error for a run without results.
pub fn run_id_or_error<'a>(path: &Path, run_id: Option<&'a str>) -> Result<&'a str, Error> {
    run_id.ok_or_else(|| {
        Error::problem(Problem::new(path, None, "no results").with_hint(
            "a TREC run has one `qid Q0 docno rank score tag` line per retrieved document",
        ))
    })
}

/// Reads a run from its bytes (UTF-8 is checked chunk by chunk, in parallel). Results
/// of a query may be spread over the file; they are gathered in file order.
pub fn parse_run<'a>(path: &Path, bytes: &'a [u8]) -> Result<RunData<'a>, Error> {
    let chunks = run_chunks(bytes);
    let parsed: Vec<Result<Chunk<'a>, ChunkProblem>> = chunks
        .par_iter()
        .map(|chunk| parse_run_chunk(chunk))
        .collect();
    let mut queries: Vec<QueryResults<'a>> = Vec::new();
    let mut slot_of: FxHashMap<&str, usize> = FxHashMap::default();
    let mut run_id = None;
    for (number, chunk) in parsed.into_iter().enumerate() {
        let chunk = chunk.map_err(|problem| chunk_error(path, &chunks, number, problem))?;
        run_id = chunk.run_id.or(run_id);
        for block in chunk.blocks {
            match slot_of.get(block.query) {
                Some(&slot) => queries[slot].results.extend(block.results),
                None => {
                    slot_of.insert(block.query, queries.len());
                    queries.push(block);
                }
            }
        }
    }
    let run_id = run_id_or_error(path, run_id)?;
    Ok(RunData { run_id, queries })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::trec_lines::lines;

    #[test]
    fn run_lines_follow_trec_eval_rules() {
        let text =
            "# comment\r\n1 Q0 a 1 0.5 first extra junk\r\n\r\n2 Q0 b 1 2 mid\n1 Q0 c 9 0.7 last";
        let run = parse_run(Path::new("r"), text.as_bytes()).unwrap();
        assert_eq!(run.run_id, "last");
        assert_eq!(run.queries.len(), 2);
        assert_eq!(run.queries[0].query, "1");
        assert_eq!(run.queries[0].results, vec![("a", 0.5), ("c", 0.7)]);
        assert_eq!(run.queries[1].results, vec![("b", 2.0)]);
    }

    /// The lines of `text` split the plain way: [`lines`], then [`first_five_fields`].
    fn scanned_lines(text: &str) -> Vec<(&str, ([&str; 5], usize))> {
        lines(text)
            .map(|line| (line, first_five_fields(line)))
            .collect()
    }

    /// The lines of `text` as [`for_each_result`] reads them, with [`next_line`].
    fn lines_with_fields(text: &str) -> Vec<(&str, Option<[&str; 5]>)> {
        let mut lines = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let (end, fields) = next_line(text, start);
            lines.push((&text[start..end], fields));
            start = end + 1;
        }
        lines
    }

    /// Checks [`lines_with_fields`] against [`scanned_lines`]; returns how many lines
    /// were split by their masks.
    fn check_masked_lines(text: &str) -> usize {
        let masked = lines_with_fields(text);
        let scanned = scanned_lines(text);
        assert_eq!(masked.len(), scanned.len(), "{text:?}");
        let mut by_mask = 0;
        for ((line, fields), (scanned_line, scanned_fields)) in masked.iter().zip(&scanned) {
            assert_eq!(line, scanned_line, "{text:?}");
            match fields {
                Some(fields) => {
                    by_mask += 1;
                    assert_eq!((*fields, 6), *scanned_fields, "{line:?}");
                }
                None => assert!(
                    scanned_fields.1 < 6
                        || line.len() >= 64
                        || offset(text, line) + 64 > text.len(),
                    "{line:?}"
                ),
            }
        }
        by_mask
    }

    fn offset(text: &str, line: &str) -> usize {
        line.as_ptr() as usize - text.as_ptr() as usize
    }

    #[test]
    fn masked_fields_equal_scanned_fields() {
        let padding = " ".repeat(64);
        for line in [
            "q1 Q0 doc7 1 2.5 tag",
            "  q1\tQ0  doc7 \x0b1\x0c2.5\r tag extra",
            "q\x01x Q0 d\u{e9}j\u{e0} 1 -3 t",
            "q1 Q0 doc7 1 2.5",
            "# a comment line with many fields in it",
            "",
            "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4",
            "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5",
        ] {
            check_masked_lines(&format!("{line}\n{padding}"));
            check_masked_lines(line);
        }
        // Lines of every length around 64 bytes, separators of every kind, CRLF, blank
        // lines and a last line without newline, from a fixed pseudo-random sequence.
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
        while text.len() < 200_000 {
            match next(4) {
                0 => text.push_str(pieces[next(pieces.len() as u64) as usize]),
                _ => {
                    let word_length = 1 + next(6) as usize;
                    text.extend((0..word_length).map(|_| (b'a' + next(26) as u8) as char));
                    text.push(' ');
                }
            }
            if next(10) == 0 {
                text.push('\n');
            }
        }
        assert!(check_masked_lines(&text) > 1000);
    }

    #[test]
    fn block_masks_flag_exactly_separators_and_newlines() {
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
            assert_eq!(
                block_masks_swar(&block),
                (separators, newlines),
                "{byte:#x}"
            );
            assert_eq!(block_masks(&block), (separators, newlines), "{byte:#x}");
        }
    }

    #[test]
    fn fast_score_parsing_equals_the_standard_library() {
        for text in [
            "2.129133",
            "-0.5",
            "+3",
            "0",
            "-0",
            "1.",
            ".5",
            "123456789012345",
            "0.000000000000001",
            "1234567890123456",
            "1e5",
            "-1.5E-3",
            "inf",
            "-infinity",
            "12.345678901234567",
            "0.30000000000000004",
            "9007199254740993",
        ] {
            let expected: f64 = text.parse().unwrap();
            let parsed = parse_score(text).unwrap();
            assert_eq!(parsed.to_bits(), expected.to_bits(), "{text}");
        }
        for text in ["", "-", ".", "1.2.3", "1,5", "nan", "NaN", "0x10", "--1"] {
            assert_eq!(parse_score(text), None, "{text}");
        }
    }

    #[test]
    fn run_errors_name_the_line() {
        let error = parse_run(Path::new("r.run"), b"1 Q0 a 1 0.5 t\n\n1 Q0 b 2 high t\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("r.run:3: score \"high\" is not a number"),
            "{error}"
        );
        let error = parse_run(Path::new("r.run"), b"1 Q0 a 1 0.5\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("r.run:1: expected at least 6 fields"),
            "{error}"
        );
        let error = parse_run(Path::new("r.run"), b"\n# only a comment\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("r.run: no results"), "{error}");
    }

    #[test]
    fn chunked_parsing_matches_line_numbers_across_chunks() {
        // Enough lines for several chunks; a bad line near the end.
        let mut text = String::new();
        for index in 0..20_000 {
            text.push_str(&format!("q{} Q0 d{index} 1 {index} tag\n", index % 7));
        }
        text.push_str("q1 Q0 bad 1 x tag\n");
        let error = parse_run(Path::new("big"), text.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(error.contains("big:20001: score \"x\""), "{error}");
        text.truncate(text.len() - "q1 Q0 bad 1 x tag\n".len());
        let run = parse_run(Path::new("big"), text.as_bytes()).unwrap();
        assert_eq!(run.queries.len(), 7);
        let total: usize = run.queries.iter().map(|query| query.results.len()).sum();
        assert_eq!(total, 20_000);
        // File order within a query survives chunking.
        let q0 = &run.queries[0].results;
        assert!(q0.windows(2).all(|pair| pair[0].1 < pair[1].1));
    }

    #[test]
    fn beir_tsv_qrels_are_read_after_their_header() {
        let text = "query-id\tcorpus-id\tscore\r\nq2\td1\t1\r\nq1\td2\t2\nq1\td3\t0\n";
        let qrels = parse_qrels(Path::new("test.tsv"), text).unwrap();
        let queries: Vec<&str> = qrels.queries.iter().map(|q| q.query).collect();
        assert_eq!(queries, vec!["q1", "q2"]);
        assert_eq!(qrels.queries[0].grades["d2"], 2);
        assert_eq!(qrels.queries[0].grades["d3"], 0);
        assert_eq!(qrels.queries[1].grades["d1"], 1);
        let message = parse_qrels(
            Path::new("test.tsv"),
            "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t2\nq2 0 d1 1\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            message
                .contains("test.tsv:3: document d1 is judged twice for query q1 (first on line 2)"),
            "{message}"
        );
        assert!(
            message.contains("test.tsv:4: expected 3 fields (query-id corpus-id score)"),
            "{message}"
        );
    }

    #[test]
    fn qrels_read_in_parallel_equal_qrels_read_line_by_line() {
        let mut text = String::new();
        for line in 0..30_000 {
            // Queries come back in later pieces; grades from -1 to 3.
            let query = (line / 7) % 900;
            text.push_str(&format!("q{query} 0 d{line} {}\n", line as i64 % 5 - 1));
        }
        let beir = format!("query-id\tcorpus-id\tscore\n{}", text.replace(" 0 ", "\t"));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        pool.install(|| {
            for text in [&text, &beir] {
                assert!(line_aligned_chunks(text.as_bytes(), 12).len() > 5);
                let parallel = parse_qrels_in_parallel(Path::new("q"), text).unwrap();
                let serial = parse_qrels_line_by_line(Path::new("q"), text).unwrap();
                assert_eq!(parallel.queries.len(), 900);
                assert_eq!(parallel.queries.len(), serial.queries.len());
                for (a, b) in parallel.queries.iter().zip(&serial.queries) {
                    assert_eq!((a.query, &a.grades), (b.query, &b.grades));
                }
                assert_eq!(parallel.queries[0].query, "q0");
                assert_eq!(parallel.queries[0].grades["d6300"], -1);
                assert_eq!(parallel.queries[0].grades["d6302"], 1);
                assert_eq!(parallel.queries[0].grades.len(), 35);
            }
            // A duplicate far from its first line, and a malformed line: reported by the
            // line-by-line reading.
            let defective = format!("{text}q3 0 d21 2\nq4 0 d9\n");
            assert!(parse_qrels_in_parallel(Path::new("q"), &defective).is_none());
            let message = parse_qrels(Path::new("q"), &defective)
                .unwrap_err()
                .to_string();
            assert!(
                message.contains(
                    "q:30001: document d21 is judged twice for query q3 (first on line 22)"
                ),
                "{message}"
            );
            assert!(message.contains("q:30002: expected 4 fields"), "{message}");
        });
    }

    #[test]
    fn qrels_sorted_by_query_with_duplicates_reported() {
        let qrels = parse_qrels(Path::new("q"), "b 0 d1 1\na 0 d2 -1\nb 0 d3 0").unwrap();
        let ids: Vec<&str> = qrels.queries.iter().map(|query| query.query).collect();
        assert_eq!(ids, vec!["a", "b"]);
        assert_eq!(qrels.queries[0].grades["d2"], -1);
        let error = parse_qrels(Path::new("q"), "a 0 d 1\na 0 d 2\na 0 e one\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("q:2: document d is judged twice for query a (first on line 1)"),
            "{error}"
        );
        assert!(
            error.contains("q:3: grade \"one\" is not an integer"),
            "{error}"
        );
    }
}
