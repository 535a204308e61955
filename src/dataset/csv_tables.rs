//! Spreadsheet exports: `facts.csv`, `queries.csv` and `qrels.csv`, each with a header
//! row naming its columns (any order; unknown columns are refused, as they are usually
//! typos).
//!
//! - `facts.csv`: `id`, `content`, and optionally `tags` (separated by `;`), `category`,
//!   `created_at`, `last_accessed`, `access_count`, `confidence` — validated exactly as
//!   `facts.jsonl` lines;
//! - `queries.csv`: `id`, `text`, optional `tags`;
//! - `qrels.csv`: `query_id`, `fact_id`, `grade` (an integer >= 0).

use std::collections::HashMap;
use std::path::Path;

use super::collection::{plain_query, Collection, RawJudgment, Source};
use super::records::{fact_from_record, FactRecord};
use super::Dataset;
use crate::error::{Error, Problem, Problems};

const FACT_COLUMNS: &[&str] = &[
    "id",
    "content",
    "tags",
    "category",
    "created_at",
    "last_accessed",
    "access_count",
    "confidence",
];
const QUERY_COLUMNS: &[&str] = &["id", "text", "tags"];
const QRELS_COLUMNS: &[&str] = &["query_id", "fact_id", "grade"];

/// One table's rows as column name -> value (empty cells absent), with line numbers.
struct Table {
    path: std::path::PathBuf,
    rows: Vec<(usize, HashMap<String, String>)>,
}

fn read_table(
    collection: &mut Collection,
    name: &str,
    allowed: &[&str],
    required: &[&str],
    problems: &mut Problems,
) -> Result<Table, Error> {
    let path = collection.root.join(name);
    let bytes = collection.read(Path::new(name))?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    // The CSV reader is lenient where RFC 4180 is not: it takes a quote that is never
    // closed as running to the end of the file (every later row one field), and reads
    // `"hello"world` and `x"y` as text. Each is refused where it is.
    let defects = quote_defects(bytes);
    if !defects.is_empty() {
        let mut quoting = Problems::default();
        for (offset, defect) in defects {
            let (line, column) = line_and_column(bytes, offset);
            quoting.push(
                Problem::new(
                    &path,
                    Some(line),
                    format!("{} (column {column})", defect.message()),
                )
                .with_hint(defect.hint()),
            );
        }
        quoting.into_result()?;
    }
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let headers: Vec<String> = match reader.headers() {
        Ok(headers) => headers.iter().map(str::to_owned).collect(),
        Err(error) => {
            return Err(Error::problem(Problem::new(
                &path,
                Some(1),
                error.to_string(),
            )))
        }
    };
    let mut header_problem = false;
    for (position, header) in headers.iter().enumerate() {
        if let Some(first) = headers[..position]
            .iter()
            .position(|earlier| earlier == header)
        {
            problems.push(
                Problem::new(
                    &path,
                    Some(1),
                    format!(
                        "column {header:?} appears twice (columns {} and {})",
                        first + 1,
                        position + 1
                    ),
                )
                .with_hint("keep one column of each name"),
            );
            header_problem = true;
        }
    }
    for header in &headers {
        if !allowed.contains(&header.as_str()) {
            problems.push(
                Problem::new(
                    &path,
                    Some(1),
                    format!(
                        "unknown column {header:?}{}",
                        crate::hints::suggestion(header, allowed)
                    ),
                )
                .with_hint(format!("columns: {}", allowed.join(", "))),
            );
            header_problem = true;
        }
    }
    for column in required {
        if !headers.iter().any(|header| header == column) {
            problems.push(
                Problem::new(&path, Some(1), format!("missing column {column:?}"))
                    .with_hint(format!("the header row must name {}", required.join(", "))),
            );
            header_problem = true;
        }
    }
    let mut rows = Vec::new();
    if header_problem {
        return Ok(Table { path, rows });
    }
    for record in reader.records() {
        match record {
            Ok(record) => {
                let line = record
                    .position()
                    .map_or(0, |position| position.line() as usize);
                let row = headers
                    .iter()
                    .zip(record.iter())
                    .filter(|(_, value)| !value.is_empty())
                    .map(|(header, value)| (header.clone(), value.to_owned()))
                    .collect();
                rows.push((line, row));
            }
            Err(error) => {
                let line = error.position().map(|position| position.line() as usize);
                problems.push(Problem::new(&path, line, error.to_string()));
            }
        }
    }
    Ok(Table { path, rows })
}

/// A quoting defect of a CSV file, as RFC 4180 defines the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuoteDefect {
    /// A quote opens a field and is never closed.
    Unclosed,
    /// Text follows the quote that closes a quoted field (`"hello"world`).
    TextAfterClosingQuote,
    /// A quote inside a field that does not start with one (`x"y`, ` "x"`).
    QuoteInUnquotedField,
}

impl QuoteDefect {
    fn message(self) -> &'static str {
        match self {
            QuoteDefect::Unclosed => "a quoted field opens on this line and is never closed, so the rest of the file would be read as one field",
            QuoteDefect::TextAfterClosingQuote => "text follows the closing quote of a quoted field; only a comma or the line's end may",
            QuoteDefect::QuoteInUnquotedField => "a quote inside a field that does not start with a quote",
        }
    }

    fn hint(self) -> &'static str {
        match self {
            QuoteDefect::Unclosed => "close the quote; a quote inside a quoted field is written twice (\"\")",
            QuoteDefect::TextAfterClosingQuote | QuoteDefect::QuoteInUnquotedField => {
                "a field that holds a quote is quoted whole, with no space before its opening quote, and each quote inside it is written twice: \"say \"\"hello\"\" world\""
            }
        }
    }
}

/// The quoting defects of CSV `bytes`, each at its byte offset (an unclosed quote at the
/// quote that opens it). A quote opens a field only as the field's first byte (as the CSV
/// reader takes it); inside a quoted field, `""` is an escaped quote.
fn quote_defects(bytes: &[u8]) -> Vec<(usize, QuoteDefect)> {
    enum State {
        FieldStart,
        Unquoted,
        Quoted {
            opened: usize,
        },
        QuoteInQuoted {
            opened: usize,
        },
        /// The rest of a field already reported.
        Reported,
    }
    let mut defects = Vec::new();
    let mut state = State::FieldStart;
    for (offset, &byte) in bytes.iter().enumerate() {
        let separator = matches!(byte, b',' | b'\n' | b'\r');
        let quote = byte == b'"';
        state = match state {
            State::FieldStart if quote => State::Quoted { opened: offset },
            State::FieldStart | State::Unquoted | State::Reported if separator => State::FieldStart,
            State::Unquoted if quote => {
                defects.push((offset, QuoteDefect::QuoteInUnquotedField));
                State::Reported
            }
            State::FieldStart | State::Unquoted => State::Unquoted,
            State::Reported => State::Reported,
            State::Quoted { opened } if !quote => State::Quoted { opened },
            State::Quoted { opened } => State::QuoteInQuoted { opened },
            State::QuoteInQuoted { opened } if quote => State::Quoted { opened },
            State::QuoteInQuoted { .. } if separator => State::FieldStart,
            State::QuoteInQuoted { .. } => {
                defects.push((offset, QuoteDefect::TextAfterClosingQuote));
                State::Reported
            }
        };
    }
    if let State::Quoted { opened } = state {
        defects.push((opened, QuoteDefect::Unclosed));
    }
    defects
}

/// The 1-based line and column (in characters) of byte `offset` of `bytes`.
fn line_and_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let line_start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |newline| newline + 1);
    let line = bytes[..line_start]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
        + 1;
    let column = String::from_utf8_lossy(&bytes[line_start..offset])
        .chars()
        .count()
        + 1;
    (line, column)
}

fn tags(row: &HashMap<String, String>) -> Vec<String> {
    row.get("tags")
        .map(|tags| {
            tags.split(';')
                .map(str::trim)
                .filter(|tag| !tag.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn load(root: &Path) -> Result<Dataset, Error> {
    let mut collection = Collection::new(root, "CSV tables");
    let mut problems = Problems::default();
    let facts = read_table(
        &mut collection,
        "facts.csv",
        FACT_COLUMNS,
        &["id", "content"],
        &mut problems,
    )?;
    let mut seen = HashMap::new();
    for (line, row) in facts.rows {
        let number = |name: &str| -> Result<Option<f64>, String> {
            row.get(name)
                .map(|value| {
                    value
                        .parse::<f64>()
                        .map_err(|_| format!("{name} {value:?} is not a number"))
                })
                .transpose()
        };
        let parsed = number("access_count").and_then(|count| {
            let count = match count {
                Some(count) if count < 0.0 || count.fract() != 0.0 => {
                    return Err(format!("access_count {count} is not an integer >= 0"))
                }
                other => other.map(|count| count as u64),
            };
            Ok((count, number("confidence")?))
        });
        let (access_count, confidence) = match parsed {
            Ok(values) => values,
            Err(message) => {
                problems.push(Problem::new(&facts.path, Some(line), message));
                continue;
            }
        };
        let record = FactRecord {
            id: row.get("id").cloned().unwrap_or_default(),
            content: row.get("content").cloned().unwrap_or_default(),
            tags: Some(tags(&row)),
            category: row.get("category").cloned(),
            created_at: row.get("created_at").cloned(),
            last_accessed: row.get("last_accessed").cloned(),
            access_count,
            confidence,
            _score: None,
            source: None,
            _source_project: None,
            _provenance: None,
        };
        if let Some(fact) =
            fact_from_record(&facts.path, Some(line), record, &mut seen, &mut problems)
        {
            collection.facts.push((
                fact,
                Source {
                    path: facts.path.clone(),
                    line: Some(line),
                },
            ));
        }
    }
    let queries = read_table(
        &mut collection,
        "queries.csv",
        QUERY_COLUMNS,
        &["id", "text"],
        &mut problems,
    )?;
    for (line, row) in queries.rows {
        let mut query = plain_query(
            row.get("id").cloned().unwrap_or_default(),
            row.get("text").cloned().unwrap_or_default(),
        );
        query.tags = tags(&row);
        collection.queries.push((
            query,
            Source {
                path: queries.path.clone(),
                line: Some(line),
            },
        ));
    }
    let qrels = read_table(
        &mut collection,
        "qrels.csv",
        QRELS_COLUMNS,
        QRELS_COLUMNS,
        &mut problems,
    )?;
    for (line, row) in qrels.rows {
        let text = row.get("grade").cloned().unwrap_or_default();
        match super::parse_grade(&text) {
            Ok(grade) if grade >= 0 => collection.judgments.push(RawJudgment {
                query: row.get("query_id").cloned().unwrap_or_default(),
                fact: row.get("fact_id").cloned().unwrap_or_default(),
                grade,
                source: Source {
                    path: qrels.path.clone(),
                    line: Some(line),
                },
            }),
            Ok(grade) => problems.push(
                Problem::new(
                    &qrels.path,
                    Some(line),
                    format!("grade {grade} is negative"),
                )
                .with_hint("grades: 0 = not relevant, 1 = related, 2 = answers the query"),
            ),
            Err(message) => problems.push(
                Problem::new(&qrels.path, Some(line), message)
                    .with_hint("grades: 0 = not relevant, 1 = related, 2 = answers the query"),
            ),
        }
    }
    collection.problems = problems;
    collection.into_dataset()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::QueryId;

    #[test]
    fn quoting_defects_are_found_where_they_are() {
        use QuoteDefect::*;
        assert_eq!(quote_defects(b"a,b\n1,\"x\"\"y\"\n"), []);
        assert_eq!(quote_defects(b"a,b\n1,\"two\nlines\"\r\n"), []);
        assert_eq!(quote_defects(b"a,b\n1,\"x\"\"\n2,y\n"), [(6, Unclosed)]);
        assert_eq!(quote_defects(b"a,b\n\"open,1\n"), [(4, Unclosed)]);
        // `"hello"world`: the w, byte 13, follows the closing quote; one report a field.
        assert_eq!(
            quote_defects(b"a,b\n1,\"hello\"world\"x\"\n"),
            [(13, TextAfterClosingQuote)]
        );
        // A quote inside an unquoted field, and after a space before a quoted field.
        assert_eq!(
            quote_defects(b"a,b\nx\"y, \"z\"\n"),
            [(5, QuoteInUnquotedField), (9, QuoteInUnquotedField)]
        );
    }

    #[test]
    fn columns_count_characters_from_the_line_start() {
        let bytes = "id,content\nf1,\"h\u{e9}llo\"w\n".as_bytes();
        // The w is the 11th character of line 2 (é is one character, two bytes).
        let offset = bytes.iter().position(|&byte| byte == b'w').unwrap();
        assert_eq!(line_and_column(bytes, offset), (2, 11));
        assert_eq!(line_and_column(bytes, 0), (1, 1));
    }

    #[test]
    fn named_columns_in_any_order_with_quotes_and_optional_fields() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        std::fs::write(
            root.join("facts.csv"),
            "\u{feff}content,id,tags,confidence,created_at\r\n\"Deploys run on Fridays, never Mondays\",f1,ops; ci,0.9,2026-01-02T03:04:05Z\r\nRedis is the cache,f2,,,\r\n",
        )
        .unwrap();
        std::fs::write(
            root.join("queries.csv"),
            "id,text\nq1,\"When do deploys run?\"\n",
        )
        .unwrap();
        std::fs::write(
            root.join("qrels.csv"),
            "query_id,fact_id,grade\nq1,f1,2\nq1,f2,0",
        )
        .unwrap();
        let dataset = load(root).unwrap();
        assert_eq!(
            dataset.facts[0].content,
            "Deploys run on Fridays, never Mondays"
        );
        assert_eq!(dataset.facts[0].tags, vec!["ops", "ci"]);
        assert_eq!(dataset.facts[0].confidence, Some(0.9));
        assert!(dataset.facts[0].created_at.is_some());
        assert_eq!(dataset.facts[1].confidence, None);
        assert_eq!(dataset.qrels[&QueryId("q1".into())].len(), 2);
    }

    #[test]
    fn header_typos_and_bad_cells_name_file_and_line() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        std::fs::write(root.join("facts.csv"), "id,content,confidance\nf1,x,0.5\n").unwrap();
        std::fs::write(root.join("queries.csv"), "id,text\nq1,hello\n").unwrap();
        std::fs::write(root.join("qrels.csv"), "query_id,fact_id,grade\nq1,f1,-1\n").unwrap();
        let message = load(root).unwrap_err().to_string();
        assert!(
            message.contains(
                "facts.csv:1: unknown column \"confidance\" (did you mean \"confidence\"?)"
            ),
            "{message}"
        );
        assert!(
            message.contains("qrels.csv:2: grade -1 is negative"),
            "{message}"
        );
        std::fs::write(root.join("facts.csv"), "id,content,confidence\nf1,x,1.5\n").unwrap();
        let message = load(root).unwrap_err().to_string();
        assert!(
            message.contains("facts.csv:2: confidence 1.5 is outside [0, 1]"),
            "{message}"
        );
    }
}
