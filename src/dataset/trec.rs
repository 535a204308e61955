//! TREC-style collections: TREC qrels (`qid iteration docno grade`, whitespace-separated)
//! with the documents and topics as tab-separated files (`docno<TAB>text`,
//! `qid<TAB>text`), the layout of NFCorpus and of Anserini's topic files. File names
//! default to `docs.tsv`, `queries.tsv` and `qrels` inside the source directory.
//!
//! Negative grades mean "judged but unjudged" in trec_eval; they are imported as 0,
//! which every hyde-eval measure treats the same way, and counted in a note. Queries
//! without judgments are left out and counted.

use std::path::{Path, PathBuf};

use super::collection::{
    clamp_negative_grades, keep_judged_queries, plain_fact, plain_query, Collection, RawJudgment,
    Source,
};
use super::lines::split_lines;
use super::Dataset;
use crate::error::{Error, Problem, Problems};

/// Reads `ID<TAB>TEXT` lines.
fn read_tab_separated(
    collection: &mut Collection,
    relative: &Path,
    problems: &mut Problems,
) -> Result<Vec<(String, String, Source)>, Error> {
    let path = collection.root.join(relative);
    let bytes = collection.read(relative)?;
    let mut records = Vec::new();
    for line in split_lines(&path, &bytes, problems) {
        match line.text.split_once('\t') {
            Some((id, text)) => records.push((
                id.trim().to_owned(),
                text.trim().to_owned(),
                Source {
                    path: path.clone(),
                    line: Some(line.number),
                },
            )),
            None => problems.push(
                Problem::new(&path, Some(line.number), "expected ID<TAB>TEXT")
                    .with_hint("separate the id from the text with one TAB character"),
            ),
        }
    }
    Ok(records)
}

/// The files of a TREC-style collection, relative to its directory.
#[derive(Debug, Clone)]
pub struct TrecFiles {
    /// Documents (`docno<TAB>text`).
    pub docs: PathBuf,
    /// Topics (`qid<TAB>text`).
    pub queries: PathBuf,
    /// Judgments (`qid iteration docno grade`).
    pub qrels: PathBuf,
}

impl Default for TrecFiles {
    fn default() -> Self {
        TrecFiles {
            docs: "docs.tsv".into(),
            queries: "queries.tsv".into(),
            qrels: "qrels".into(),
        }
    }
}

pub(super) fn load(root: &Path, options: &TrecFiles) -> Result<Dataset, Error> {
    let mut collection =
        Collection::new(root, "TREC qrels with tab-separated documents and topics");
    let mut problems = Problems::default();
    for (id, text, source) in read_tab_separated(&mut collection, &options.docs, &mut problems)? {
        collection.facts.push((plain_fact(id, text), source));
    }
    for (id, text, source) in read_tab_separated(&mut collection, &options.queries, &mut problems)?
    {
        collection.queries.push((plain_query(id, text), source));
    }
    let qrels_path = root.join(&options.qrels);
    let bytes = collection.read(&options.qrels)?;
    let text = super::trec_lines::as_text(&qrels_path, &bytes)?;
    let mut judgments = Vec::new();
    super::trec_lines::for_each_judgment(
        &qrels_path,
        text,
        &mut problems,
        |line, query, document, grade| {
            judgments.push(RawJudgment {
                query: query.to_owned(),
                fact: document.to_owned(),
                grade,
                source: Source {
                    path: qrels_path.clone(),
                    line: Some(line),
                },
            });
            Ok(())
        },
    );
    collection.judgments = judgments;
    collection.problems = problems;
    clamp_negative_grades(&mut collection.judgments, &mut collection.notes);
    keep_judged_queries(&mut collection, "in the qrels");
    collection.into_dataset()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::QueryId;

    #[test]
    fn reads_tab_separated_documents_topics_and_trec_qrels() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        // No final newline and CRLF, as in NFCorpus and friends.
        std::fs::write(
            root.join("docs.tsv"),
            "MED-1\tstatins lower ldl\r\nMED-2\tvitamin d and bones",
        )
        .unwrap();
        std::fs::write(
            root.join("queries.tsv"),
            "PLAIN-1\tdo statins work\nPLAIN-2\tunjudged topic\n",
        )
        .unwrap();
        std::fs::write(
            root.join("qrels"),
            "PLAIN-1 0 MED-1 2\nPLAIN-1\t0\tMED-2\t-1\n",
        )
        .unwrap();
        let dataset = load(root, &TrecFiles::default()).unwrap();
        assert_eq!(dataset.facts.len(), 2);
        assert_eq!(dataset.facts[1].content, "vitamin d and bones");
        assert_eq!(dataset.queries.len(), 1);
        let grades: Vec<i32> = dataset.qrels[&QueryId("PLAIN-1".into())]
            .iter()
            .map(|judgment| judgment.grade)
            .collect();
        assert_eq!(grades, vec![2, 0]);
        assert_eq!(dataset.notes.len(), 2, "{:?}", dataset.notes);
    }

    #[test]
    fn defects_are_reported_together() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        std::fs::write(root.join("docs"), "d1 no tab here\nd2\ttext\n").unwrap();
        std::fs::write(root.join("topics"), "q1\ttext\n").unwrap();
        std::fs::write(root.join("judgments"), "q1 0 d2\nq1 0 d2 high\nq9 0 d2 1\n").unwrap();
        let options = TrecFiles {
            docs: "docs".into(),
            queries: "topics".into(),
            qrels: "judgments".into(),
        };
        let message = load(root, &options).unwrap_err().to_string();
        for expected in [
            "docs:1: expected ID<TAB>TEXT",
            "judgments:1: expected 4 fields",
            "judgments:2: grade \"high\" is not an integer",
            "judgments:3: unknown query id \"q9\"",
        ] {
            assert!(message.contains(expected), "{expected} not in {message}");
        }
    }
}
