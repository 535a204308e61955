//! Errors that reach the user, and the exit code each maps to.
//!
//! Input problems are collected as [`Problem`]s that name the file, the line and what is
//! wrong (plus a hint when there is an obvious fix), so a bad dataset reports every defect
//! at once instead of one per run. `main` prints the error and exits with
//! [`Error::exit_code`]; nothing else in the crate exits the process.

use std::fmt;
use std::path::{Path, PathBuf};

/// Exit codes, documented in `--help`, the README and docs/metrics-and-eval.md.
pub mod exit_code {
    /// Success (and, with a baseline, the gate passed).
    pub const OK: u8 = 0;
    /// The regression gate failed.
    pub const REGRESSION: u8 = 1;
    /// Bad command line, bad configuration file or invalid dataset.
    pub const INPUT: u8 = 2;
    /// An embedding provider or hypothesis generator failed.
    pub const BACKEND: u8 = 3;
    /// Results could not be written.
    pub const OUTPUT: u8 = 4;
}

/// At most this many problems are reported from one load; the rest are counted.
pub const MAX_REPORTED_PROBLEMS: usize = 50;

/// One defect in an input file.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub path: PathBuf,
    /// 1-based line number, when the defect sits on one line.
    pub line: Option<usize>,
    pub message: String,
    pub hint: Option<String>,
}

impl Problem {
    pub fn new(path: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        Problem {
            path: path.to_path_buf(),
            line,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(
                formatter,
                "{}:{}: {}",
                self.path.display(),
                line,
                self.message
            )?,
            None => write!(formatter, "{}: {}", self.path.display(), self.message)?,
        }
        if let Some(hint) = &self.hint {
            write!(formatter, "\n    hint: {hint}")?;
        }
        Ok(())
    }
}

/// Collects problems while a file is validated, keeping the first
/// [`MAX_REPORTED_PROBLEMS`] and counting the rest.
#[derive(Debug, Default)]
pub struct Problems {
    reported: Vec<Problem>,
    omitted: usize,
}

impl Problems {
    pub fn push(&mut self, problem: Problem) {
        if self.reported.len() < MAX_REPORTED_PROBLEMS {
            self.reported.push(problem);
        } else {
            self.omitted += 1;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.reported.is_empty()
    }

    /// Orders the reported problems by line (stably; problems without a line first),
    /// for a file whose checks ran in more than one pass.
    pub fn sort_by_line(&mut self) {
        self.reported.sort_by_key(|problem| problem.line);
    }

    /// Appends `later`'s problems after these.
    pub fn append(&mut self, later: Problems) {
        for problem in later.reported {
            self.push(problem);
        }
        self.omitted += later.omitted;
    }

    /// `Ok(())` when nothing was recorded, else the collected problems as an error.
    pub fn into_result(self) -> Result<(), Error> {
        if self.reported.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid(InvalidInput {
                problems: self.reported,
                omitted: self.omitted,
            }))
        }
    }
}

/// Every problem found in one input, reported together.
#[derive(Debug)]
pub struct InvalidInput {
    pub problems: Vec<Problem>,
    pub omitted: usize,
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.problems.len() + self.omitted;
        let noun = if total == 1 { "problem" } else { "problems" };
        write!(formatter, "invalid input ({total} {noun}):")?;
        for problem in &self.problems {
            write!(formatter, "\n  {problem}")?;
        }
        if self.omitted > 0 {
            write!(formatter, "\n  ... and {} more", self.omitted)?;
        }
        Ok(())
    }
}

/// Every error hyde-eval reports to the user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A dataset or configuration file is malformed; all defects are listed.
    #[error("{0}")]
    Invalid(InvalidInput),
    /// A command-line value or combination of options is not usable.
    #[error("{0}")]
    Usage(String),
    /// An output the write policy refuses to write (one of the command's inputs, a file
    /// or directory hyde-eval did not write, results it would drop), named with the way
    /// out.
    #[error("{0}")]
    Refused(Problem),
    /// An input file could not be read at all.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// An embedding provider or hypothesis generator failed. Hypothesis work that fails
    /// this way falls back (see [`crate::generate`]); everything else stops the run.
    #[error("{0}")]
    Backend(String),
    /// A backend failure that no fallback may hide: rejected credentials, or a cache miss
    /// under `--offline`.
    #[error("{0}")]
    BackendFatal(String),
    /// A report or run file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Error {
    /// A single problem in one input file.
    pub fn problem(problem: Problem) -> Self {
        Error::Invalid(InvalidInput {
            problems: vec![problem],
            omitted: 0,
        })
    }

    /// The documented process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Invalid(_) | Error::Usage(_) | Error::Refused(_) | Error::Read { .. } => {
                exit_code::INPUT
            }
            Error::Backend(_) | Error::BackendFatal(_) => exit_code::BACKEND,
            Error::Write { .. } => exit_code::OUTPUT,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
