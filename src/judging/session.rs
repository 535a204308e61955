//! A judging session: the pool's pairs, the grades given so far, and the one event
//! handler that both the terminal UI and the scripted-input mode drive. Every grade is
//! written at once to the dataset's `qrels.tsv` and to `judgments.jsonl` (each grade with
//! the LLM's proposal, for `judge --agreement`), each edited in place under the write
//! policy (`write_policy::edit_in_place`): under a lock, the file as it is now is read,
//! the grade is put on its pair's line (or appended), and the result is renamed over it.
//! So a session killed at any point loses no grade it was given; lines edited by hand
//! while it runs, and the grades of another session judging the same dataset, are kept
//! (for a pair both grade, the later grade is on its line, and the journal holds both);
//! a symlinked `qrels.tsv` stays a symlink. A new session skips the pairs `qrels.tsv`
//! already judges.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::pool::PoolPair;
use crate::dataset::{Dataset, Grade, QRELS_FILE};
use crate::error::{Error, Problem};
use crate::write_policy::edit_in_place;

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
    qrels_path: PathBuf,
    log_path: PathBuf,
}

impl<'d> Session<'d> {
    /// A session over `pairs` (unjudged, from [`super::pool::pool`]) of `dataset`.
    pub fn new(dataset: &'d Dataset, pairs: Vec<PoolPair>) -> Result<Session<'d>, Error> {
        let qrels_path = dataset.root.join(QRELS_FILE);
        let log_path = dataset.root.join(LOG_FILE);
        // A log this session could not extend is refused before any grade is given.
        read_log(&log_path)?;
        let count = pairs.len();
        Ok(Session {
            dataset,
            pairs,
            position: 0,
            grades: vec![None; count],
            proposals: vec![None; count],
            qrels_path,
            log_path,
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

    /// Writes the grade just given into `qrels.tsv` (on its pair's line, or appended) and
    /// appends it to `judgments.jsonl`, each file as it is on disk now.
    fn save(&mut self, grade: Grade) -> Result<(), Error> {
        let (query, fact) = self.current_ids().expect("a current pair");
        edit_in_place(&self.qrels_path, &|current| {
            with_grade(current, query, fact, grade)
        })?;
        let mut entry = serde_json::to_string(&LoggedGrade {
            query: query.to_owned(),
            fact: fact.to_owned(),
            grade,
            proposed: self.proposals[self.position],
        })
        .expect("serializes");
        entry.push('\n');
        edit_in_place(&self.log_path, &|current| {
            let mut log = current.to_vec();
            if !log.is_empty() && !log.ends_with(b"\n") {
                log.push(b'\n');
            }
            log.extend_from_slice(entry.as_bytes());
            log
        })
    }
}

/// `qrels` (the text of a `qrels.tsv`) with `query`'s judgment of `fact` set to `grade`:
/// the grade of the pair's line replaced (every other byte kept), or the line appended.
fn with_grade(qrels: &[u8], query: &str, fact: &str, grade: Grade) -> Vec<u8> {
    let mut edited = Vec::with_capacity(qrels.len() + query.len() + fact.len() + 8);
    let mut found = false;
    for line in qrels.split_inclusive(|&byte| byte == b'\n') {
        let text = String::from_utf8_lossy(line);
        let mut fields = text.trim_end_matches(['\n', '\r']).split('\t');
        if !found && fields.next() == Some(query) && fields.next() == Some(fact) {
            found = true;
            let ending = &text[text.trim_end_matches(['\n', '\r']).len()..];
            edited.extend_from_slice(format!("{query}\t{fact}\t{grade}{ending}").as_bytes());
        } else {
            edited.extend_from_slice(line);
        }
    }
    if !found {
        if !edited.is_empty() && !edited.ends_with(b"\n") {
            edited.push(b'\n');
        }
        edited.extend_from_slice(format!("{query}\t{fact}\t{grade}\n").as_bytes());
    }
    edited
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
