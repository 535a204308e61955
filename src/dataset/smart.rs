//! The SMART-style test collections (Cranfield, CACM, ADI, NPL), detected by their file
//! names, with each one's quirks:
//!
//! - records start with `.I id`; field lines `.T` (title), `.A`, `.B`, `.W` (text), ...
//!   carry text on the following lines; a repeated field is appended. A document's
//!   content is its title and text; a query's is its `.W` text;
//! - **Cranfield** (`cran.all.1400`, `cran.qry`, `cranqrel`): `cranqrel` numbers the
//!   queries 1..225 by position, not by their `.I` numbers, so query ids are positions;
//!   its codes run 1 (complete answer) .. 4 (minimum interest), -1 = not relevant, and
//!   become grades 5 - code (4..1), with -1 -> 0;
//! - **CACM** (`cacm.all`, `query.text`, `qrels.text`): query ids are zero-padded in the
//!   qrels (`01`), so numeric ids are compared as numbers; the empty `.I 0` query at the
//!   end of `query.text` is left out (noted); every listed pair is relevant (grade 1);
//! - **ADI** (`ADI.ALL`, `ADI.QRY`, `ADI.REL`): `QID DOCID 0 0.000000`, all relevant;
//! - **NPL** (`doc-text`, `query-text`, `rlv-ass`): records are an id line, content
//!   lines and a `/` terminator line; `rlv-ass` lists each query's relevant documents.
//!
//! Numeric ids lose leading zeros. CRLF and LF endings, blank lines and a missing final
//! newline are accepted. Documents without any text (Cranfield 471 and 995) cannot be
//! retrieved; they and their judgments are left out and counted in a note.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::collection::{plain_fact, plain_query, Collection, RawJudgment, Source};
use super::lines::split_lines;
use super::Dataset;
use crate::error::{Error, Problem, Problems};

/// The supported collections and their files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cranfield,
    Cacm,
    Adi,
    Npl,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Cranfield, Kind::Cacm, Kind::Adi, Kind::Npl];

    /// Documents, queries and judgments files.
    fn files(self) -> [&'static str; 3] {
        match self {
            Kind::Cranfield => ["cran.all.1400", "cran.qry", "cranqrel"],
            Kind::Cacm => ["cacm.all", "query.text", "qrels.text"],
            Kind::Adi => ["ADI.ALL", "ADI.QRY", "ADI.REL"],
            Kind::Npl => ["doc-text", "query-text", "rlv-ass"],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Cranfield => "cranfield",
            Kind::Cacm => "cacm",
            Kind::Adi => "adi",
            Kind::Npl => "npl",
        }
    }
}

/// One `.I` record: its id, line and fields in order of appearance.
#[derive(Debug)]
struct Record {
    id: String,
    line: usize,
    fields: Vec<(char, String)>,
}

impl Record {
    /// The text of `letter` fields (repeated ones joined), trimmed.
    fn field(&self, letter: char) -> String {
        let parts: Vec<&str> = self
            .fields
            .iter()
            .filter(|(field, text)| *field == letter && !text.trim().is_empty())
            .map(|(_, text)| text.trim())
            .collect();
        parts.join("\n")
    }

    /// Non-empty fields `letters`, joined by newlines.
    fn joined(&self, letters: &[char]) -> String {
        letters
            .iter()
            .map(|&letter| self.field(letter))
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A numeric id without leading zeros; other ids unchanged.
fn normalize_id(id: &str) -> String {
    if !id.is_empty() && id.bytes().all(|byte| byte.is_ascii_digit()) {
        let trimmed = id.trim_start_matches('0');
        if trimmed.is_empty() {
            "0".to_owned()
        } else {
            trimmed.to_owned()
        }
    } else {
        id.to_owned()
    }
}

/// `.X` or `.X text` with X an ASCII capital: a field marker.
fn field_marker(line: &str) -> Option<(char, &str)> {
    let mut chars = line.chars();
    if chars.next() != Some('.') {
        return None;
    }
    let letter = chars.next().filter(char::is_ascii_uppercase)?;
    let rest = chars.as_str();
    if rest.is_empty() || rest.starts_with([' ', '\t']) {
        Some((letter, rest.trim()))
    } else {
        None
    }
}

/// Parses `.I`-style records.
fn parse_records(path: &Path, bytes: &[u8], problems: &mut Problems) -> Vec<Record> {
    let mut records: Vec<Record> = Vec::new();
    for line in split_lines(path, bytes, problems) {
        let text = line.text.trim_end();
        match field_marker(text) {
            Some(('I', id)) => {
                if id.is_empty() {
                    problems.push(Problem::new(path, Some(line.number), ".I without an id"));
                }
                records.push(Record {
                    id: normalize_id(id),
                    line: line.number,
                    fields: Vec::new(),
                });
            }
            Some((letter, rest)) => match records.last_mut() {
                Some(record) => record.fields.push((letter, rest.to_owned())),
                None => problems.push(Problem::new(
                    path,
                    Some(line.number),
                    format!(".{letter} before the first .I record"),
                )),
            },
            None => match records
                .last_mut()
                .and_then(|record| record.fields.last_mut())
            {
                Some((_, field_text)) => {
                    field_text.push('\n');
                    field_text.push_str(text);
                }
                None => problems.push(
                    Problem::new(path, Some(line.number), "text outside a field")
                        .with_hint("SMART records are `.I id` then field lines such as .T or .W"),
                ),
            },
        }
    }
    records
}

/// Parses NPL's layout: an id line, content lines, a `/` terminator line.
fn parse_slash_records(
    path: &Path,
    bytes: &[u8],
    problems: &mut Problems,
) -> Vec<(String, usize, String)> {
    let mut records = Vec::new();
    let mut current: Option<(String, usize, Vec<String>)> = None;
    for line in split_lines(path, bytes, problems) {
        let text = line.text.trim();
        if text == "/" {
            match current.take() {
                Some((id, number, lines)) => records.push((id, number, lines.join("\n"))),
                None => problems.push(Problem::new(
                    path,
                    Some(line.number),
                    "`/` without a record",
                )),
            }
            continue;
        }
        match &mut current {
            Some((_, _, lines)) => lines.push(text.to_owned()),
            None => current = Some((normalize_id(text), line.number, Vec::new())),
        }
    }
    if let Some((id, number, lines)) = current {
        // The last record of doc-text has no terminator (and no final newline).
        records.push((id, number, lines.join("\n")));
    }
    records
}

fn source(path: &Path, line: usize) -> Source {
    Source {
        path: path.to_path_buf(),
        line: Some(line),
    }
}

/// The SMART collection whose files `root` holds, by their names.
fn detect(root: &Path) -> Option<Kind> {
    Kind::ALL
        .into_iter()
        .find(|kind| kind.files().iter().all(|file| root.join(file).is_file()))
}

/// The files of the SMART collection `root` holds, when it holds one.
pub(super) fn files_held(root: &Path) -> Option<[&'static str; 3]> {
    detect(root).map(Kind::files)
}

pub(super) fn load(root: &Path) -> Result<Dataset, Error> {
    let kind = detect(root).ok_or_else(|| {
        let expected: Vec<String> = Kind::ALL
            .iter()
            .map(|kind| format!("{} ({})", kind.name(), kind.files().join(", ")))
            .collect();
        Error::problem(
            Problem::new(root, None, "no SMART collection found").with_hint(format!(
                "expected the files of one of: {}",
                expected.join("; ")
            )),
        )
    })?;
    let [docs_file, queries_file, judgments_file] = kind.files().map(PathBuf::from);
    let mut collection = Collection::new(root, format!("{} (SMART format)", kind.name()));
    collection.name = Some(kind.name().to_owned());
    let mut problems = Problems::default();
    let (docs_path, queries_path, judgments_path) = (
        root.join(&docs_file),
        root.join(&queries_file),
        root.join(&judgments_file),
    );
    let docs = collection.read(&docs_file)?;
    let queries = collection.read(&queries_file)?;
    let judgments = collection.read(&judgments_file)?;

    if kind == Kind::Npl {
        for (id, line, text) in parse_slash_records(&docs_path, &docs, &mut problems) {
            collection
                .facts
                .push((plain_fact(id, text), source(&docs_path, line)));
        }
        for (id, line, text) in parse_slash_records(&queries_path, &queries, &mut problems) {
            collection
                .queries
                .push((plain_query(id, text), source(&queries_path, line)));
        }
        for (query, line, text) in parse_slash_records(&judgments_path, &judgments, &mut problems) {
            for document in text.split_whitespace() {
                collection.judgments.push(RawJudgment {
                    query: query.clone(),
                    fact: normalize_id(document),
                    grade: 1,
                    source: source(&judgments_path, line),
                });
            }
        }
    } else {
        for record in parse_records(&docs_path, &docs, &mut problems) {
            let content = record.joined(&['T', 'W']);
            collection.facts.push((
                plain_fact(record.id, content),
                source(&docs_path, record.line),
            ));
        }
        let mut empty_queries = Vec::new();
        for (position, record) in parse_records(&queries_path, &queries, &mut problems)
            .into_iter()
            .enumerate()
        {
            let text = record.field('W');
            if text.is_empty() && kind == Kind::Cacm {
                empty_queries.push(record.id);
                continue;
            }
            let id = match kind {
                // cranqrel numbers queries by position.
                Kind::Cranfield => (position + 1).to_string(),
                _ => record.id,
            };
            collection
                .queries
                .push((plain_query(id, text), source(&queries_path, record.line)));
        }
        if !empty_queries.is_empty() {
            collection.notes.push(format!(
                "{}: {} empty query record(s) left out (.I {})",
                queries_path.display(),
                empty_queries.len(),
                empty_queries.join(", .I ")
            ));
        }
        if kind == Kind::Cranfield {
            collection.notes.push(
                "cranfield: query ids are positions 1..225 in cran.qry (as cranqrel numbers them), not the .I numbers; grades are 5 - code (code 1 = complete answer -> 4), code -1 -> 0".into(),
            );
        }
        for line in split_lines(&judgments_path, &judgments, &mut problems) {
            let fields: Vec<&str> = line.text.split_whitespace().collect();
            let expected = if kind == Kind::Cranfield { 3 } else { 4 };
            if fields.len() != expected {
                problems.push(Problem::new(
                    &judgments_path,
                    Some(line.number),
                    format!(
                        "expected {expected} fields (query, document, ...), found {}",
                        fields.len()
                    ),
                ));
                continue;
            }
            let grade = match kind {
                Kind::Cranfield => match fields[2] {
                    "1" => 4,
                    "2" => 3,
                    "3" => 2,
                    "4" => 1,
                    "-1" => 0,
                    other => {
                        problems.push(
                            Problem::new(&judgments_path, Some(line.number), format!("unknown relevance code {other:?}"))
                                .with_hint("Cranfield codes are 1 (complete answer) to 4 (minimum interest) and -1 (not relevant)"),
                        );
                        continue;
                    }
                },
                _ => 1,
            };
            collection.judgments.push(RawJudgment {
                query: normalize_id(fields[0]),
                fact: normalize_id(fields[1]),
                grade,
                source: source(&judgments_path, line.number),
            });
        }
    }
    leave_out_empty_documents(&mut collection);
    collection.problems = problems;
    collection.into_dataset()
}

/// Documents without text can never be retrieved by their words: they are left out with
/// their judgments, and both are counted in a note.
fn leave_out_empty_documents(collection: &mut Collection) {
    let empty: Vec<String> = collection
        .facts
        .iter()
        .filter(|(fact, _)| fact.content.trim().is_empty())
        .map(|(fact, _)| fact.id.as_str().to_owned())
        .collect();
    if empty.is_empty() {
        return;
    }
    let empty_set: HashSet<&str> = empty.iter().map(String::as_str).collect();
    collection
        .facts
        .retain(|(fact, _)| !empty_set.contains(fact.id.as_str()));
    let before = collection.judgments.len();
    collection
        .judgments
        .retain(|judgment| !empty_set.contains(judgment.fact.as_str()));
    collection.notes.push(format!(
        "{} document(s) without any text left out ({}), with {} judgment(s) of them",
        empty.len(),
        empty.join(", "),
        before - collection.judgments.len()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::QueryId;

    fn grades(dataset: &Dataset, query: &str) -> Vec<(String, i32)> {
        dataset.qrels[&QueryId(query.into())]
            .iter()
            .map(|judgment| (judgment.fact.as_str().to_owned(), judgment.grade))
            .collect()
    }

    #[test]
    fn cranfield_positional_queries_inverted_codes_and_empty_documents() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        std::fs::write(
            root.join("cran.all.1400"),
            ".I 1\n.T\nboundary layers\n.A\nsmith\n.B\nj. ae. 1958\n.W\nboundary layer\ntransition .\n.I 2\n.T\n.A\n.B\n.W\n.I 3\n.T\nshock waves\n.W\nfirst part\n.W\nsecond part\n",
        )
        .unwrap();
        // CRLF, ids with gaps, and a final line without newline in the qrels.
        std::fs::write(
            root.join("cran.qry"),
            ".I 001\r\n.W\r\nwhat is a boundary layer .\r\n.I 004\r\n.W\r\nshock waves ?\r\n",
        )
        .unwrap();
        std::fs::write(root.join("cranqrel"), "1 1 1\n1 2 3\n1 3 -1\n2 3 4").unwrap();
        let dataset = load(root).unwrap();
        assert_eq!(dataset.manifest.name, "cranfield");
        assert_eq!(dataset.facts.len(), 2, "the empty document 2 is left out");
        assert_eq!(
            dataset.facts[0].content,
            "boundary layers\nboundary layer\ntransition ."
        );
        assert_eq!(
            dataset.facts[1].content,
            "shock waves\nfirst part\nsecond part"
        );
        let ids: Vec<&str> = dataset
            .queries
            .iter()
            .map(|query| query.id.0.as_str())
            .collect();
        assert_eq!(ids, vec!["1", "2"], "positions, not .I 001 / .I 004");
        assert_eq!(
            grades(&dataset, "1"),
            vec![("1".into(), 4), ("3".into(), 0)]
        );
        assert_eq!(grades(&dataset, "2"), vec![("3".into(), 1)]);
        assert!(dataset
            .notes
            .iter()
            .any(|note| note
                .contains("1 document(s) without any text left out (2), with 1 judgment(s)")));
    }

    #[test]
    fn cacm_zero_padded_ids_and_the_empty_last_query() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        std::fs::write(
            root.join("cacm.all"),
            ".I 1\n.T\nPreliminary Report-International Algebraic Language\n.B\nCACM December, 1958\n.A\nPerlis, A. J.\n.N\nCA581203 JB March 22, 1978\n.X\n100\t5\t1\n.I 2\n.T\nExtraction of Roots by Repeated Subtractions\n.W\nA method for roots.\n",
        )
        .unwrap();
        std::fs::write(
            root.join("query.text"),
            ".I 1\n.W\n articles about algebraic languages\n.N\n 1. someone\n.I 2\n.W\n roots\n.A\nPerlis\n.I 0\n",
        )
        .unwrap();
        std::fs::write(root.join("qrels.text"), "01 0001  0 0\n02 2 0 0\n").unwrap();
        let dataset = load(root).unwrap();
        assert_eq!(
            dataset.facts[0].content,
            "Preliminary Report-International Algebraic Language"
        );
        assert_eq!(
            dataset.facts[1].content,
            "Extraction of Roots by Repeated Subtractions\nA method for roots."
        );
        assert_eq!(dataset.queries.len(), 2);
        assert_eq!(dataset.queries[1].text, "roots");
        assert_eq!(grades(&dataset, "1"), vec![("1".into(), 1)]);
        assert!(dataset
            .notes
            .iter()
            .any(|note| note.contains("1 empty query record(s) left out (.I 0)")));
    }

    #[test]
    fn adi_repeated_title_and_crlf() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        std::fs::write(root.join("ADI.ALL"), ".I 1\r\n.T\r\nfirst title\r\n.T\r\nsecond title\r\n.A\r\nsomeone\r\n.W\r\nabstract text\r\n").unwrap();
        std::fs::write(
            root.join("ADI.QRY"),
            ".I 1\r\n.W\r\ntitles of articles?\r\n",
        )
        .unwrap();
        std::fs::write(root.join("ADI.REL"), "1   1   0   0.000000   \r\n").unwrap();
        let dataset = load(root).unwrap();
        assert_eq!(
            dataset.facts[0].content,
            "first title\nsecond title\nabstract text"
        );
        assert_eq!(grades(&dataset, "1"), vec![("1".into(), 1)]);
    }

    #[test]
    fn npl_slash_terminated_records_without_final_newline() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        std::fs::write(
            root.join("doc-text"),
            "1\ncompact memories\nhave capacities\n   /\n2\nanalogue computer",
        )
        .unwrap();
        std::fs::write(root.join("query-text"), "1\nMEASUREMENT OF MEMORIES\n/\n").unwrap();
        std::fs::write(root.join("rlv-ass"), "1\n 1  2\n   /\n").unwrap();
        let dataset = load(root).unwrap();
        assert_eq!(dataset.facts.len(), 2);
        assert_eq!(
            dataset.facts[0].content,
            "compact memories\nhave capacities"
        );
        assert_eq!(dataset.facts[1].content, "analogue computer");
        assert_eq!(
            grades(&dataset, "1"),
            vec![("1".into(), 1), ("2".into(), 1)]
        );
    }

    #[test]
    fn unknown_layout_and_bad_codes_are_explained() {
        let directory = tempfile::tempdir().unwrap();
        let message = load(directory.path()).unwrap_err().to_string();
        assert!(message.contains("no SMART collection found"), "{message}");
        assert!(
            message.contains("cranfield (cran.all.1400, cran.qry, cranqrel)"),
            "{message}"
        );
        let root = directory.path();
        std::fs::write(root.join("cran.all.1400"), ".I 1\n.W\ntext\n").unwrap();
        std::fs::write(root.join("cran.qry"), ".I 1\n.W\nq\n").unwrap();
        std::fs::write(root.join("cranqrel"), "1 1 7\n1 9 1\n").unwrap();
        let message = load(root).unwrap_err().to_string();
        assert!(
            message.contains("cranqrel:1: unknown relevance code \"7\""),
            "{message}"
        );
        assert!(
            message.contains("cranqrel:2: unknown document id \"9\""),
            "{message}"
        );
    }
}
