//! A judging session: the pool's pairs, the grades given so far, and the one event
//! handler that both the terminal UI and the scripted-input mode drive. Every grade is
//! written at once, atomically (a temporary file renamed over the old one), to the
//! dataset's `qrels.tsv` (the judgments it held, then the session's) and to
//! `judgments.jsonl` (each grade with the LLM's proposal, for `judge --agreement`);
//! a session killed at any point loses no grade it was given, and a new session skips
//! the pairs `qrels.tsv` already judges.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::pool::PoolPair;
use crate::dataset::{Dataset, Grade, QRELS_FILE};
use crate::error::{Error, Problem};
use crate::report::files::write_file_atomically;

/// The judging log beside `qrels.tsv`.
pub const LOG_FILE: &str = "judgments.jsonl";

/// A key, as the UI and the scripted mode name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// Grade 0, 1 or 2.
    Grade(Grade),
    /// Leave the pair for later.
    Skip,
    /// Back to the previous pair (its grade can be changed).
    Back,
    Quit,
}

impl Key {
    /// The scripted-mode names: `0 1 2`, `s` (skip), `b` (back), `q` (quit).
    pub fn parse(token: &str) -> Option<Key> {
        match token {
            "0" => Some(Key::Grade(0)),
            "1" => Some(Key::Grade(1)),
            "2" => Some(Key::Grade(2)),
            "s" | "skip" => Some(Key::Skip),
            "b" | "back" => Some(Key::Back),
            "q" | "quit" => Some(Key::Quit),
            _ => None,
        }
    }
}

/// What the session does after a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// Every pair is graded.
    Done,
    Quit,
}

/// One line of `judgments.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedGrade {
    pub query: String,
    pub fact: String,
    pub grade: Grade,
    /// The LLM's proposal shown beside the pair (`--assist`), if any.
    #[serde(default)]
    pub proposed: Option<Grade>,
}

/// The state of a judging session.
pub struct Session<'d> {
    pub dataset: &'d Dataset,
    pub pairs: Vec<PoolPair>,
    pub position: usize,
    pub grades: Vec<Option<Grade>>,
    pub proposals: Vec<Option<Grade>>,
    /// `qrels.tsv` as it was when the session started.
    original_qrels: Vec<u8>,
    qrels_path: PathBuf,
    log_path: PathBuf,
    log: Vec<LoggedGrade>,
}

impl<'d> Session<'d> {
    /// A session over `pairs` (unjudged, from [`super::pool::pool`]) of `dataset`.
    pub fn new(dataset: &'d Dataset, pairs: Vec<PoolPair>) -> Result<Session<'d>, Error> {
        let qrels_path = dataset.root.join(QRELS_FILE);
        let mut original_qrels = crate::input::read(&qrels_path)?;
        if !original_qrels.is_empty() && !original_qrels.ends_with(b"\n") {
            original_qrels.push(b'\n');
        }
        let log_path = dataset.root.join(LOG_FILE);
        let log = read_log(&log_path)?;
        let count = pairs.len();
        Ok(Session {
            dataset,
            pairs,
            position: 0,
            grades: vec![None; count],
            proposals: vec![None; count],
            original_qrels,
            qrels_path,
            log_path,
            log,
        })
    }

    /// Pairs not graded in this session.
    pub fn left(&self) -> usize {
        self.grades.iter().filter(|grade| grade.is_none()).count()
    }

    pub fn finished(&self) -> bool {
        self.left() == 0
    }

    /// The ids of the current pair.
    pub fn current_ids(&self) -> Option<(&str, &str)> {
        let pair = self.pairs.get(self.position)?;
        Some((
            self.dataset.queries[pair.query].id.0.as_str(),
            self.dataset.facts[pair.fact].id.as_str(),
        ))
    }

    /// The one event handler: what a key does to the session.
    pub fn handle(&mut self, key: Key) -> Result<Flow, Error> {
        if self.pairs.is_empty() {
            return Ok(Flow::Done);
        }
        match key {
            Key::Quit => return Ok(Flow::Quit),
            Key::Back => self.position = self.position.saturating_sub(1),
            Key::Skip => self.advance(),
            Key::Grade(grade) => {
                self.grades[self.position] = Some(grade);
                self.save(grade)?;
                if self.finished() {
                    return Ok(Flow::Done);
                }
                self.advance();
            }
        }
        Ok(Flow::Continue)
    }

    /// To the next ungraded pair after the current one, wrapping around; stays put
    /// when none is left.
    fn advance(&mut self) {
        let count = self.pairs.len();
        for step in 1..=count {
            let next = (self.position + step) % count;
            if self.grades[next].is_none() {
                self.position = next;
                return;
            }
        }
    }

    /// Writes `qrels.tsv` and `judgments.jsonl` with the grade just given.
    fn save(&mut self, grade: Grade) -> Result<(), Error> {
        let mut qrels = self.original_qrels.clone();
        for (pair, given) in self.pairs.iter().zip(&self.grades) {
            if let Some(given) = given {
                qrels.extend_from_slice(
                    format!(
                        "{}\t{}\t{}\n",
                        self.dataset.queries[pair.query].id.0,
                        self.dataset.facts[pair.fact].id.as_str(),
                        given
                    )
                    .as_bytes(),
                );
            }
        }
        write_file_atomically(&self.qrels_path, &qrels)?;
        let (query, fact) = self.current_ids().expect("a current pair");
        self.log.push(LoggedGrade {
            query: query.to_owned(),
            fact: fact.to_owned(),
            grade,
            proposed: self.proposals[self.position],
        });
        let mut text = String::new();
        for entry in &self.log {
            text.push_str(&serde_json::to_string(entry).expect("serializes"));
            text.push('\n');
        }
        write_file_atomically(&self.log_path, text.as_bytes())
    }
}

/// The judging log of a dataset (empty when there is none yet).
pub fn read_log(path: &std::path::Path) -> Result<Vec<LoggedGrade>, Error> {
    let Some(bytes) = crate::input::read_optional(path, crate::input::SMALL_FILE_LIMIT)? else {
        return Ok(Vec::new());
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::problem(Problem::new(path, None, "not valid UTF-8")))?;
    let mut log = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(line).map_err(|error| {
            Error::problem(
                Problem::new(path, Some(index + 1), format!("not a judging log line: {error}"))
                    .with_hint("each line is {\"query\", \"fact\", \"grade\", \"proposed\"} as `hyde-eval judge` writes it"),
            )
        })?;
        log.push(entry);
    }
    Ok(log)
}
