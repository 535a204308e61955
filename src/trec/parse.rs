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

use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::score::{parse_score, parse_score_window};
pub use crate::dataset::trec_lines::{as_text, for_each_judgment, judged_twice, lines_naming};
use crate::dataset::trec_lines::{
    control_character_problem, first_fields, next_line, same_field, split_fields, FieldBounds,
};
use crate::dataset::Grade;
use crate::error::{Error, Problem, Problems};

/// The judgments of one query: a stretch of one part of its [`QrelsData`], read with
/// [`QrelsData::grades`].
#[derive(Debug)]
pub struct QueryJudgments<'a> {
    pub query: &'a str,
    part: usize,
    range: Range<usize>,
}

/// Parsed qrels.
#[derive(Debug)]
pub struct QrelsData<'a> {
    /// Sorted by id in byte order (trec_eval's order).
    pub queries: Vec<QueryJudgments<'a>>,
    /// Every (docno, grade) pair, a few large lists rather than one per query: the
    /// lines of each piece of the file read in parallel, and the judgments of the
    /// queries whose lines are in several pieces, joined.
    parts: Vec<Judgments<'a>>,
}

impl<'a> QrelsData<'a> {
    /// Qrels of `queries`, stretches of `parts`, in trec_eval's order.
    fn new(mut queries: Vec<QueryJudgments<'a>>, parts: Vec<Judgments<'a>>) -> QrelsData<'a> {
        queries.sort_unstable_by(|a, b| a.query.cmp(b.query));
        QrelsData { queries, parts }
    }

    /// Qrels holding `judgments` (query, and (docno, grade) pairs in file order).
    fn from_queries(judgments: Vec<(&'a str, Judgments<'a>)>) -> QrelsData<'a> {
        let mut queries = Vec::with_capacity(judgments.len());
        let mut parts = Vec::with_capacity(judgments.len());
        for (part, (query, grades)) in judgments.into_iter().enumerate() {
            queries.push(QueryJudgments {
                query,
                part,
                range: 0..grades.len(),
            });
            parts.push(grades);
        }
        QrelsData::new(queries, parts)
    }

    /// Every judged document of `query` and its grade, in file order (no document
    /// twice).
    pub fn grades(&self, query: &QueryJudgments<'a>) -> &[(&'a str, Grade)] {
        &self.parts[query.part][query.range.clone()]
    }

    /// Refuses qrels (read from `path`) in which no judgment has a grade of
    /// `relevance_level` or more, as `run` refuses such a dataset.
    pub fn check_scorable(&self, path: &Path, relevance_level: Grade) -> Result<(), Error> {
        let scorable = self.queries.iter().any(|query| {
            self.grades(query)
                .iter()
                .any(|&(_, grade)| grade >= relevance_level)
        });
        if scorable {
            return Ok(());
        }
        let judgments = self.queries.iter().map(|query| query.range.len()).sum();
        Err(crate::dataset::nothing_to_score(
            path,
            relevance_level,
            (judgments, self.queries.len()),
            "judge at least one document relevant, or lower -l",
        ))
    }
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
    let mut queries: Vec<(&'a str, Judgments<'a>)> = Vec::new();
    let mut judged: FxHashSet<(&str, &str)> = FxHashSet::default();
    let mut current: Option<(&str, usize)> = None;
    for_each_judgment(path, text, &mut problems, |_, query, document, grade| {
        let slot = match current {
            Some((id, slot)) if same_field(id, query) => slot,
            _ => {
                let slot = *slot_of.entry(query).or_insert_with(|| {
                    queries.push((query, Vec::new()));
                    queries.len() - 1
                });
                current = Some((query, slot));
                slot
            }
        };
        if !judged.insert((query, document)) {
            return Err(judged_twice(text, query, document));
        }
        queries[slot].1.push((document, grade));
        Ok(())
    });
    if queries.is_empty() && problems.is_empty() {
        problems.push(
            Problem::new(path, None, "no judgments")
                .with_hint("a qrels file has one `qid iteration docno grade` line per judgment"),
        );
    }
    problems.into_result()?;
    Ok(QrelsData::from_queries(queries))
}

/// Judgments of one query, (docno, grade) in file order.
type Judgments<'a> = Vec<(&'a str, Grade)>;

/// The judgments of one piece of a qrels file, in file order, and each query's
/// stretches of consecutive lines among them.
type PieceJudgments<'a> = (Judgments<'a>, Vec<(&'a str, Range<usize>)>);

/// Where some judgments of a query are: a part of [`QrelsData`] and a range of it.
type Stretch = (usize, Range<usize>);

/// [`parse_qrels`] on the current rayon pool: the judgment lines are read in line-aligned
/// pieces, then each query's judgments are gathered in file order and checked for
/// duplicates. The same queries and grades as the line-by-line reading; `None` when a
/// line is malformed, a document is judged twice or there is no judgment, for that
/// reading to report.
fn parse_qrels_in_parallel<'a>(path: &Path, text: &'a str) -> Option<QrelsData<'a>> {
    let layout = crate::dataset::trec_lines::qrels_layout(text);
    let body = crate::dataset::trec_lines::judgment_lines(text, layout);
    let pieces = line_aligned_chunks(body.as_bytes(), rayon::current_num_threads() * 4);
    let read: Vec<Option<PieceJudgments<'a>>> = pieces
        .par_iter()
        .map(|piece| {
            let start = piece.as_ptr() as usize - body.as_ptr() as usize;
            // Pieces end after a newline, so both ends sit on character boundaries.
            let lines = &body[start..start + piece.len()];
            let mut problems = Problems::default();
            // A judgment line takes at least 8 bytes; most take 16 or more.
            let mut judgments = Vec::with_capacity(lines.len() / 16);
            let mut blocks: Vec<(&'a str, Range<usize>)> = Vec::new();
            crate::dataset::trec_lines::for_each_judgment_in(
                path,
                lines,
                layout,
                1,
                &mut problems,
                |_, query, document, grade| {
                    match blocks.last_mut() {
                        Some((current, range)) if same_field(current, query) => range.end += 1,
                        _ => blocks.push((query, judgments.len()..judgments.len() + 1)),
                    }
                    judgments.push((document, grade));
                    Ok(())
                },
            );
            problems.is_empty().then_some((judgments, blocks))
        })
        .collect();
    let mut parts = Vec::with_capacity(read.len() + 1);
    let mut slot_of: FxHashMap<&str, usize> = FxHashMap::default();
    // Each query's stretches: (part, range of the part).
    let mut gathered: Vec<(&'a str, Vec<Stretch>)> = Vec::new();
    for (part, piece) in read.into_iter().enumerate() {
        let (judgments, blocks) = piece?;
        parts.push(judgments);
        for (query, range) in blocks {
            match slot_of.get(query) {
                Some(&slot) => gathered[slot].1.push((part, range)),
                None => {
                    slot_of.insert(query, gathered.len());
                    gathered.push((query, vec![(part, range)]));
                }
            }
        }
    }
    if gathered.is_empty() {
        return None;
    }
    // A query whose lines are in several pieces gets its judgments joined, in file
    // order, in a last part.
    let mut joined = Vec::new();
    let queries: Vec<QueryJudgments<'a>> = gathered
        .into_iter()
        .map(|(query, stretches)| match &stretches[..] {
            [(part, range)] => QueryJudgments {
                query,
                part: *part,
                range: range.clone(),
            },
            _ => {
                let start = joined.len();
                for (part, range) in stretches {
                    joined.extend_from_slice(&parts[part][range]);
                }
                QueryJudgments {
                    query,
                    part: parts.len(),
                    range: start..joined.len(),
                }
            }
        })
        .collect();
    parts.push(joined);
    let qrels = QrelsData::new(queries, parts);
    let judged_once = qrels
        .queries
        .par_iter()
        .map_init(FxHashSet::default, |documents, query| {
            documents.clear();
            qrels
                .grades(query)
                .iter()
                .all(|&(document, _)| documents.insert(document))
        })
        .all(|once| once);
    judged_once.then_some(qrels)
}

/// What one chunk of a run file holds: consecutive-query blocks and the last tag.
struct Chunk<'a> {
    blocks: Vec<QueryResults<'a>>,
    run_id: Option<&'a str>,
}

/// A defect in a chunk of a run: line number within the chunk (0-based), message and hint.
pub type ChunkProblem = (usize, String, &'static str);

/// The fields of a run line, by position, for errors.
const RUN_FIELDS: [&str; 6] = ["query id", "Q0 field", "docno", "rank", "score", "tag"];

/// Calls `visit(query, document, score)` for every result line of `chunk` (a piece of a
/// run file that ends at a line end) in file order and returns the last line's tag; the
/// first malformed line stops the reading. The one run line reader: [`parse_run`] and
/// `eval`'s streaming evaluation use it.
pub fn for_each_result<'a>(
    chunk: &'a [u8],
    mut visit: impl FnMut(&'a str, &'a str, f64),
) -> Result<Option<&'a str>, ChunkProblem> {
    let mut last_line = None;
    let (mut start, mut next_index) = (0, 0);
    while start < chunk.len() {
        let (end, bounds) = next_line(chunk, start);
        let index = next_index;
        let bytes = &chunk[start..end];
        (start, next_index) = (end + 1, next_index + 1);
        // Each line is checked to be UTF-8 and free of control characters before it is
        // read: a line whose masks show only printable ASCII and separators is; the
        // others are checked character by character (below, unless a comment).
        let plain = bounds.is_some_and(FieldBounds::plain);
        let line = if plain {
            // SAFETY: ASCII bytes are UTF-8.
            unsafe { std::str::from_utf8_unchecked(bytes) }
        } else {
            std::str::from_utf8(bytes)
                .map_err(|_| (index, "invalid UTF-8".to_owned(), "save the file as UTF-8"))?
        };
        // The first five fields of a line with six or more.
        let (fields, count) = match bounds {
            Some(bounds) if bounds.more_than(5) => (bounds.fields::<5>(line), 6),
            _ => first_fields::<5>(line),
        };
        if count == 0 || fields[0].starts_with('#') {
            continue;
        }
        if !plain {
            if let Some(problem) = control_character_problem(line, &RUN_FIELDS) {
                return Err((
                    index,
                    problem,
                    "ids, tags and numbers are text without control characters",
                ));
            }
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
        // The 16 bytes from the score's start, when the chunk holds them.
        let score_start = score_text.as_ptr().addr() - chunk.as_ptr().addr();
        let parsed = match chunk.get(score_start..score_start + 16) {
            Some(window) => parse_score_window(score_text, window.try_into().expect("16 bytes")),
            None => parse_score(score_text),
        };
        let score = match parsed {
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
        Some(block) if same_field(block.query, query) => block.results.push((document, score)),
        previous => {
            // Queries of one run tend to have the same depth: reserve that much.
            let mut results = Vec::with_capacity(previous.map_or(16, |block| block.results.len()));
            results.push((document, score));
            blocks.push(QueryResults { query, results });
        }
    })?;
    Ok(Chunk { blocks, run_id })
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
    use crate::dataset::trec_lines::{lines, scrambled_lines};

    /// The grade of `document` for the `query`-th query of `qrels`.
    fn grade(qrels: &QrelsData<'_>, query: usize, document: &str) -> Grade {
        let grades = qrels.grades(&qrels.queries[query]);
        grades.iter().find(|judged| judged.0 == document).unwrap().1
    }

    #[test]
    fn run_lines_that_are_not_utf8_are_named() {
        let mut sound = String::new();
        for line in 0..20_000 {
            sound.push_str(&format!(
                "q{} Q0 d\u{e9}{line} 1 {line}.5 tag\n",
                line / 100
            ));
        }
        let run = parse_run(Path::new("r"), sound.as_bytes()).unwrap();
        assert_eq!(run.queries.len(), 200);
        assert_eq!(run.queries[3].results[1], ("d\u{e9}301", 301.5));
        // Past the first chunk: a lone lead byte, and a character cut by the line's end.
        for bad in [
            &b"q7 Q0 d\xc3 1 2 tag\n"[..],
            b"q7 Q0 e 1 2 t\xe2\x82\nq7 Q0 f 1 2 t\n",
        ] {
            let bytes = [sound.as_bytes(), bad].concat();
            assert!(run_chunks(&bytes).len() > 1);
            let message = parse_run(Path::new("r"), &bytes).unwrap_err().to_string();
            assert!(message.contains("r:20001: invalid UTF-8"), "{message}");
        }
    }

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

    /// The lines of `text` split the plain way: [`lines`], then [`first_fields`].
    fn scanned_lines(text: &str) -> Vec<(&str, ([&str; 5], usize))> {
        lines(text)
            .map(|line| (line, first_fields::<5>(line)))
            .collect()
    }

    /// The lines of `text` as [`for_each_result`] reads them, with [`next_line`].
    fn lines_with_fields(text: &str) -> Vec<(&str, Option<[&str; 5]>)> {
        let mut lines = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let (end, bounds) = next_line(text.as_bytes(), start);
            let line = &text[start..end];
            let fields = bounds
                .filter(|bounds| bounds.more_than(5))
                .map(|bounds| bounds.fields::<5>(line));
            lines.push((line, fields));
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
        // lines and a last line without newline.
        let text = scrambled_lines(200_000);
        assert!(check_masked_lines(&text) > 1000);
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
        assert_eq!(grade(&qrels, 0, "d2"), 2);
        assert_eq!(grade(&qrels, 0, "d3"), 0);
        assert_eq!(grade(&qrels, 1, "d1"), 1);
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
                    assert_eq!((a.query, parallel.grades(a)), (b.query, serial.grades(b)));
                }
                assert_eq!(parallel.queries[0].query, "q0");
                assert_eq!(grade(&parallel, 0, "d6300"), -1);
                assert_eq!(grade(&parallel, 0, "d6302"), 1);
                assert_eq!(parallel.grades(&parallel.queries[0]).len(), 35);
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
        assert_eq!(grade(&qrels, 0, "d2"), -1);
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
