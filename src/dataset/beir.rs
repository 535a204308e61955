//! BEIR collections: `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl` (`_id`,
//! `text`) and `qrels/SPLIT.tsv` (a `query-id corpus-id score` header, then one
//! judgment per line). A document's content is its title and text (as Anserini indexes
//! BEIR), separated by a newline. Only queries judged in the chosen split are kept; the
//! others are counted in a note. `metadata` and any other field are ignored, as BEIR does.

use std::borrow::Cow;
use std::path::Path;

use rayon::prelude::*;
use serde::Deserialize;

use super::collection::{
    clamp_negative_grades, keep_judged_queries, plain_fact, plain_query, Collection, RawJudgment,
    Source,
};
use super::lines::split_lines;
use super::Dataset;
use crate::error::{Error, Problem, Problems};

/// A corpus line's fields, borrowed from the line where they hold no escapes.
#[derive(Deserialize)]
struct CorpusRecord<'a> {
    #[serde(rename = "_id", borrow)]
    id: Cow<'a, str>,
    #[serde(default, borrow)]
    title: Cow<'a, str>,
    #[serde(default, borrow)]
    text: Cow<'a, str>,
}

impl CorpusRecord<'_> {
    /// The document's content: its title and text, trimmed, on two lines (either alone
    /// when the other is blank).
    fn content(&self) -> String {
        match (self.title.trim(), self.text.trim()) {
            ("", text) => text.to_owned(),
            (title, "") => title.to_owned(),
            (title, text) => {
                let mut content = String::with_capacity(title.len() + 1 + text.len());
                content.push_str(title);
                content.push('\n');
                content.push_str(text);
                content
            }
        }
    }
}

#[derive(Deserialize)]
struct QueryRecord {
    #[serde(rename = "_id")]
    id: String,
    text: String,
}

/// Loads a BEIR directory with the qrels of `split`.
pub(super) fn load(root: &Path, split: &str) -> Result<Dataset, Error> {
    let mut collection = Collection::new(root, format!("BEIR collection, {split} split"));
    collection.name = root
        .file_name()
        .map(|name| name.to_string_lossy().into_owned());
    let qrels_relative = Path::new("qrels").join(format!("{split}.tsv"));
    if !crate::input::or_gzipped(&root.join(&qrels_relative)).is_file() {
        let available: Vec<String> = std::fs::read_dir(root.join("qrels"))
            .map(|entries| {
                entries
                    .filter_map(|entry| entry.ok())
                    .filter_map(|entry| {
                        entry
                            .file_name()
                            .to_string_lossy()
                            .trim_end_matches(".gz")
                            .strip_suffix(".tsv")
                            .map(str::to_owned)
                    })
                    .collect()
            })
            .unwrap_or_default();
        return Err(Error::problem(
            Problem::new(&root.join(&qrels_relative), None, "missing").with_hint(format!(
                "choose a split with --split; this collection has: {}",
                if available.is_empty() {
                    "none".to_owned()
                } else {
                    available.join(", ")
                }
            )),
        ));
    }
    let mut problems = Problems::default();

    let corpus_path = crate::input::or_gzipped(&root.join("corpus.jsonl"));
    // The documents are parsed in parallel, then taken in file order.
    let documents = collection.read_parsing(Path::new("corpus.jsonl"), |corpus| {
        split_lines(&corpus_path, corpus, &mut problems)
            .par_iter()
            .map(|line| {
                let document = serde_json::from_str::<CorpusRecord>(line.text).map(|record| {
                    let content = record.content();
                    plain_fact(record.id.into_owned(), content)
                });
                (line.number, document)
            })
            .collect::<Vec<_>>()
    })?;
    for (number, document) in documents {
        match document {
            Ok(fact) => collection.facts.push((
                fact,
                Source {
                    path: corpus_path.clone(),
                    line: Some(number),
                },
            )),
            Err(error) => problems.push(json_problem(&corpus_path, number, &error)),
        }
    }

    let queries_path = crate::input::or_gzipped(&root.join("queries.jsonl"));
    let queries = collection.read(Path::new("queries.jsonl"))?;
    for line in split_lines(&queries_path, &queries, &mut problems) {
        match serde_json::from_str::<QueryRecord>(line.text) {
            Ok(record) => collection.queries.push((
                plain_query(record.id, record.text),
                Source {
                    path: queries_path.clone(),
                    line: Some(line.number),
                },
            )),
            Err(error) => problems.push(json_problem(&queries_path, line.number, &error)),
        }
    }

    let qrels_path = crate::input::or_gzipped(&root.join(&qrels_relative));
    let qrels = collection.read(&qrels_relative)?;
    for (position, line) in split_lines(&qrels_path, &qrels, &mut problems)
        .into_iter()
        .enumerate()
    {
        let fields: Vec<&str> = line.text.split('\t').map(str::trim).collect();
        if position == 0 && fields.first() == Some(&"query-id") {
            continue;
        }
        let grade = match fields.as_slice() {
            [_, _, score] => {
                super::parse_grade(score).map_err(|message| message.replacen("grade", "score", 1))
            }
            _ => Err(format!(
                "expected 3 TAB-separated fields (query-id, corpus-id, score), found {}",
                fields.len()
            )),
        };
        match grade {
            Ok(grade) => collection.judgments.push(RawJudgment {
                query: fields[0].to_owned(),
                fact: fields[1].to_owned(),
                grade,
                source: Source {
                    path: qrels_path.clone(),
                    line: Some(line.number),
                },
            }),
            Err(message) => problems.push(Problem::new(&qrels_path, Some(line.number), message)),
        }
    }
    collection.problems = problems;
    clamp_negative_grades(&mut collection.judgments, &mut collection.notes);
    keep_judged_queries(&mut collection, &format!("in split {split}"));
    collection.into_dataset()
}

fn json_problem(path: &Path, line: usize, error: &serde_json::Error) -> Problem {
    Problem::new(
        path,
        Some(line),
        format!(
            "{} (column {})",
            super::records::strip_position(error),
            error.column()
        ),
    )
    .with_hint("each line must be one JSON object with \"_id\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::QueryId;

    fn write(root: &Path, name: &str, text: &str) {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn fixture() -> tempfile::TempDir {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        write(
            root,
            "corpus.jsonl",
            "{\"_id\": \"d1\", \"title\": \"Aspirin\", \"text\": \"lowers fever\", \"metadata\": {}}\n\
             {\"_id\": \"d2\", \"title\": \"\", \"text\": \"statins and muscles\", \"metadata\": {}}\n",
        );
        write(
            root,
            "queries.jsonl",
            "{\"_id\": \"1\", \"text\": \"does aspirin lower fever\", \"metadata\": {\"x\": 1}}\n\
             {\"_id\": \"2\", \"text\": \"statin side effects\"}\n\
             {\"_id\": \"3\", \"text\": \"train only\"}",
        );
        // CRLF, as BEIR's csv.writer writes it; a negative score.
        write(
            root,
            "qrels/test.tsv",
            "query-id\tcorpus-id\tscore\r\n1\td1\t1\r\n2\td2\t2\r\n2\td1\t-1\r\n",
        );
        write(
            root,
            "qrels/train.tsv",
            "query-id\tcorpus-id\tscore\n3\td2\t1\n",
        );
        directory
    }

    #[test]
    fn reads_title_text_split_and_negative_scores() {
        let directory = fixture();
        let dataset = load(directory.path(), "test").unwrap();
        assert_eq!(dataset.facts.len(), 2);
        assert_eq!(dataset.facts[0].content, "Aspirin\nlowers fever");
        assert_eq!(dataset.facts[1].content, "statins and muscles");
        let ids: Vec<&str> = dataset.queries.iter().map(|q| q.id.0.as_str()).collect();
        assert_eq!(ids, vec!["1", "2"], "query 3 is judged in train only");
        let grades: Vec<i32> = dataset.qrels[&QueryId("2".into())]
            .iter()
            .map(|judgment| judgment.grade)
            .collect();
        assert_eq!(grades, vec![2, 0]);
        assert!(dataset
            .notes
            .iter()
            .any(|note| note.contains("1 of 3 queries")));
        assert!(dataset
            .notes
            .iter()
            .any(|note| note.contains("1 judgment(s) with a negative grade")));
        let train = load(directory.path(), "train").unwrap();
        assert_eq!(train.queries.len(), 1);
    }

    #[test]
    fn missing_split_lists_the_available_ones_and_bad_lines_are_named() {
        let directory = fixture();
        let message = load(directory.path(), "dev").unwrap_err().to_string();
        assert!(message.contains("qrels/dev.tsv: missing"), "{message}");
        assert!(
            message.contains("test") && message.contains("train"),
            "{message}"
        );
        write(
            directory.path(),
            "qrels/test.tsv",
            "query-id\tcorpus-id\tscore\n1\td9\t1\n1\td1\tx\n",
        );
        let message = load(directory.path(), "test").unwrap_err().to_string();
        assert!(
            message.contains("test.tsv:2: unknown document id \"d9\""),
            "{message}"
        );
        assert!(
            message.contains("test.tsv:3: score \"x\" is not an integer"),
            "{message}"
        );
    }
}
