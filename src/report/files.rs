//! Writes a run's report directory (`results.json`, `per_query.csv`, `timings.json`,
//! `qrels.trec`, `runs/<configuration>.run`), a shard's directory (`shard.json` in place
//! of the first two) and other output directories.
//! Run files are written while the pipeline runs, into a [`RunSpool`] beside the report,
//! and moved in with the rest.
//!
//! Every directory is written under the write policy (`crate::write_policy`): built in a
//! scratch directory beside its destination and swapped in whole, replacing only a
//! directory hyde-eval wrote (or any with `--force`) that holds none of the command's
//! inputs. On top of it, a run refuses to replace a report whose results it would not
//! write again ([`check_report_replacement`]).
//! Timings live in their own file so that `results.json` stays byte-identical for
//! identical inputs.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::dataset::{Dataset, Grade, Judgment, Qrels, QueryId};
use crate::error::{Error, Problem};
use crate::interrupt::critical;
use crate::pipeline::{ConfigurationOutput, StageTimings};
use crate::results::shard::{ShardResults, SHARD_FILE};
use crate::results::Results;
use crate::trec::write_trec_qrels;
use crate::write_policy::FileVersion;
use crate::write_policy::{self, DirectoryBuild, DirectoryKind, Policy, Scratch};

pub use crate::write_policy::OWNER_MARKER;

fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    std::fs::write(path, bytes).map_err(write_error(path))
}

/// Writes a file's content into `writer` as it is produced.
pub type StreamedContent<'a> = Box<dyn FnOnce(&mut dyn Write) -> std::io::Result<()> + 'a>;

/// The content of one file of an output directory.
pub enum ReportFile<'a> {
    Bytes(Vec<u8>),
    /// A finished file on the same file system, moved into place.
    Moved(PathBuf),
    /// Content written straight to the file, never held whole in memory.
    Streamed(StreamedContent<'a>),
}

impl From<Vec<u8>> for ReportFile<'_> {
    fn from(bytes: Vec<u8>) -> Self {
        ReportFile::Bytes(bytes)
    }
}

/// Pretty JSON with a final newline, streamed.
fn json_streamed<'a>(value: &'a (impl Serialize + ?Sized)) -> ReportFile<'a> {
    ReportFile::Streamed(Box::new(move |writer| {
        serde_json::to_writer_pretty(&mut *writer, value).map_err(std::io::Error::other)?;
        writer.write_all(b"\n")
    }))
}

/// The directory beside a report where its run files are written while the rankings
/// stream out of the pipeline (see [`super::digest`]); [`write_report`] moves them into
/// the report. A scratch directory (see `write_policy`): removed when dropped, or by the
/// interrupt handler.
pub struct RunSpool {
    scratch: Scratch,
}

impl RunSpool {
    /// Creates the spool for the report `output_dir/run_name`, after checking that the
    /// report may be written there (see [`check_destination`]), so a run that could not
    /// write its report fails before it starts.
    pub fn create(output_dir: &Path, run_name: &str, policy: Policy) -> Result<RunSpool, Error> {
        check_destination(output_dir, run_name, policy)?;
        Ok(RunSpool {
            scratch: Scratch::create(output_dir)?,
        })
    }

    /// The directory the run files are spooled into (`NAME.run` each).
    pub fn directory(&self) -> &Path {
        self.scratch.path()
    }

    /// Where the run file of `configuration` is spooled.
    pub fn run_file(&self, configuration: &str) -> PathBuf {
        self.scratch.path().join(format!("{configuration}.run"))
    }
}

/// Refuses a name that would leave `output_dir` or could not be a directory name.
pub fn check_output_name(kind: &str, name: &str) -> Result<(), Error> {
    let problem = if name.is_empty() {
        Some("it is empty")
    } else if name == "." || name == ".." || name.contains(['/', '\\']) {
        Some("it would be written outside its directory")
    } else if name.starts_with('.') {
        Some("it would be hidden")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else if name.len() > 200 {
        Some("it is longer than 200 bytes")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(Error::Usage(format!(
            "{kind} {name:?} must be a plain directory name: {problem} (no /, \\, leading dot or control characters)"
        ))),
        None => Ok(()),
    }
}

/// Checks that `output_dir/name` may be (re)written: a plain name, and a destination the
/// write policy lets this command replace (see `write_policy::check_directory`).
/// Anything else is refused (exit code 2) and left untouched.
pub fn check_destination(output_dir: &Path, name: &str, policy: Policy) -> Result<(), Error> {
    check_output_name("output name", name)?;
    write_policy::check_directory(output_dir, name, policy, DirectoryKind::Output)
}

/// What [`check_report_replacement`] reads of a stored `results.json`.
struct StoredIdentity {
    dataset: StoredDatasetName,
    configurations: Vec<StoredConfigurationName>,
}

impl StoredIdentity {
    /// The dataset and configurations of the `results.json` that `reader` reads, from
    /// its head: `results.json` holds them before the queries and facts, which are most
    /// of a large report, and reading stops once both are read. `None` when they cannot
    /// be.
    fn read(reader: impl std::io::Read) -> Option<StoredIdentity> {
        let mut found = None;
        let mut deserializer = serde_json::Deserializer::from_reader(reader);
        // serde_json reports the rest of the object, left unread, as an error once the
        // visitor returns; what the visitor found is what counts.
        let _ = serde::Deserializer::deserialize_map(
            &mut deserializer,
            IdentityVisitor { found: &mut found },
        );
        found
    }
}

/// Reads a `results.json` object's entries until it has its dataset and configurations.
struct IdentityVisitor<'a> {
    found: &'a mut Option<StoredIdentity>,
}

impl<'de> serde::de::Visitor<'de> for IdentityVisitor<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a results.json object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (mut dataset, mut configurations) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "dataset" => dataset = Some(map.next_value()?),
                "configurations" => configurations = Some(map.next_value()?),
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            if dataset.is_some() && configurations.is_some() {
                break;
            }
        }
        *self.found = dataset
            .zip(configurations)
            .map(|(dataset, configurations)| StoredIdentity {
                dataset,
                configurations,
            });
        Ok(())
    }
}

#[derive(Deserialize)]
struct StoredDatasetName {
    name: String,
}

#[derive(Deserialize)]
struct StoredConfigurationName {
    name: String,
}

/// Refuses to replace the report `output_dir/name` when its `results.json` holds
/// results this run would not write again: those of another dataset, or of a
/// configuration missing from `configurations`. A run of the same configurations (or
/// more) replaces it, as a CI job rerunning one command expects; a narrower run (such as
/// `--configurations bm25` after a full run) is refused (exit code 2) with the way out:
/// another `--run-name`, or `--force` to replace it anyway. A report without a readable
/// `results.json` has nothing to lose and is not refused here ([`check_destination`]
/// still guards what may be replaced at all).
pub fn check_report_replacement(
    output_dir: &Path,
    name: &str,
    dataset: &str,
    configurations: &[String],
) -> Result<(), Error> {
    check_results_replacement(
        &output_dir.join(name).join("results.json"),
        dataset,
        configurations,
        &format!(
            "keep both by naming this run (--run-name {name}-NAME), or pass --force to replace {}",
            output_dir.join(name).display()
        ),
    )
}

/// Refuses to replace the results document at `stored_path` (a report's `results.json`,
/// a baseline) when it holds results of another dataset, or of a configuration missing
/// from `configurations`, with `hint` as the way out. A file that is not a readable
/// results document is not refused here.
pub fn check_results_replacement(
    stored_path: &Path,
    dataset: &str,
    configurations: &[String],
    hint: &str,
) -> Result<(), Error> {
    let Some(stored) = stored_identity(stored_path) else {
        return Ok(());
    };
    let problem = if stored.dataset.name != dataset {
        Some(format!(
            "holds the results of dataset {:?}, not {dataset:?}",
            stored.dataset.name
        ))
    } else {
        let dropped: Vec<&str> = stored
            .configurations
            .iter()
            .map(|configuration| configuration.name.as_str())
            .filter(|stored| !configurations.iter().any(|name| name == stored))
            .collect();
        (!dropped.is_empty()).then(|| {
            format!(
                "holds results of {} that this write does not hold ({}); replacing it would lose them",
                if dropped.len() == 1 { "a configuration" } else { "configurations" },
                dropped.join(", ")
            )
        })
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(Error::Refused(
            Problem::new(stored_path, None, problem).with_hint(hint),
        )),
    }
}

/// Whether the file at `path` is a results document hyde-eval wrote (its dataset and
/// configurations read from its head); the file is not recorded as an input.
pub fn is_results_document(path: &Path) -> bool {
    stored_identity(path).is_some()
}

/// What [`stored_identity`] last read: the file's path, its [`FileVersion`] and what it
/// holds.
type StoredRead = (PathBuf, FileVersion, Arc<StoredIdentity>);

/// The last `results.json` [`stored_identity`] read. A run checks the report it replaces
/// three times (before the run, and before and under the lock as it writes), and parsing
/// a large run's `results.json` costs more than the rest of a check: an unchanged file is
/// parsed once.
static LAST_STORED_READ: Mutex<Option<StoredRead>> = Mutex::new(None);

/// The dataset and configurations the `results.json` at `path` holds, `None` when it
/// cannot be read or parsed. A version of the file read before is not read again.
fn stored_identity(path: &Path) -> Option<Arc<StoredIdentity>> {
    let file = std::fs::File::open(path).ok()?;
    // The version of the open file, which is the one read below.
    let version = FileVersion::of(&file.metadata().ok()?);
    let mut last = LAST_STORED_READ
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some((last_path, last_version, identity)) = last.as_ref() {
        if last_path == path && *last_version == version {
            return Some(Arc::clone(identity));
        }
    }
    let identity = Arc::new(StoredIdentity::read(std::io::BufReader::new(file))?);
    *last = Some((path.to_path_buf(), version, Arc::clone(&identity)));
    Some(identity)
}

/// Writes `files` (relative path, content) as the directory `output_dir/name`, replacing
/// a previous one the write policy lets it replace (see [`check_destination`]): the
/// directory is built in a scratch directory, flushed, and swapped into place. Returns
/// the directory. Files are taken one at a time, so a lazy iterator holds only the file
/// being written in memory.
pub fn write_directory<'a, F: Into<ReportFile<'a>>>(
    output_dir: &Path,
    name: &str,
    files: impl IntoIterator<Item = (String, F)>,
    policy: Policy,
) -> Result<PathBuf, Error> {
    write_directory_keeping(output_dir, name, files, policy, &|| Ok(()))
}

/// [`write_directory`], with `keep` (which refuses to replace a directory holding what
/// this write would drop) run before the build and again under the lock, just before
/// the swap.
pub fn write_directory_keeping<'a, F: Into<ReportFile<'a>>>(
    output_dir: &Path,
    name: &str,
    files: impl IntoIterator<Item = (String, F)>,
    policy: Policy,
    keep: &dyn Fn() -> Result<(), Error>,
) -> Result<PathBuf, Error> {
    check_output_name("output name", name)?;
    keep()?;
    let build = DirectoryBuild::start(output_dir, name, policy, DirectoryKind::Output)?;
    let root = build.root();
    for (relative, content) in files.into_iter() {
        let path = root.join(relative);
        // Each write is a critical section: once an interruption has removed the
        // scratch directory, no write may recreate a part of it.
        critical(|| {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(write_error(parent))?;
            }
            match content.into() {
                ReportFile::Bytes(bytes) => write_file(&path, &bytes),
                ReportFile::Moved(source) => {
                    std::fs::rename(&source, &path).map_err(write_error(&path))
                }
                ReportFile::Streamed(write) => {
                    let file = std::fs::File::create(&path).map_err(write_error(&path))?;
                    let mut writer = std::io::BufWriter::with_capacity(
                        1 << 20,
                        crate::writeback::WritebackFile::new(file),
                    );
                    write(&mut writer)
                        .and_then(|()| writer.flush())
                        .map_err(write_error(&path))
                }
            }
        })?;
    }
    build.swap_in(policy, keep)
}

/// The files of a report directory besides its results document: the timings, the
/// qrels of the judged queries, each configuration's run file and extra files (such as
/// the gate's verdict).
pub struct ReportParts<'a> {
    /// `timings.json`.
    pub timings: Vec<u8>,
    /// `qrels.trec`.
    pub qrels: Vec<u8>,
    /// `(configuration, content)`, written as `runs/<configuration>.run`.
    pub run_files: Vec<(String, ReportFile<'a>)>,
    pub extra: Vec<(String, Vec<u8>)>,
    /// What the report may replace; without `--force`, also no report whose results
    /// this one would not write again (see [`check_report_replacement`]).
    pub policy: Policy,
}

impl ReportParts<'_> {
    /// The parts of a run's report: its timings, the qrels of `dataset`'s queries with a
    /// relevant fact at `relevance_level`, and the run files spooled in `run_files`.
    pub fn of_run(
        dataset: &Dataset,
        relevance_level: Grade,
        outputs: &[ConfigurationOutput],
        stage_timings: &StageTimings,
        run_files: &RunSpool,
    ) -> ReportParts<'static> {
        let timings = Timings {
            threads: rayon::current_num_threads(),
            stages_ms: stage_timings.clone(),
            retrieval_ms: outputs
                .iter()
                .map(|output| (output.configuration.name.clone(), output.retrieval_ms))
                .collect(),
            shards: Vec::new(),
        };
        ReportParts {
            timings: super::json::json_bytes(&timings),
            qrels: judged_qrels(dataset, relevance_level),
            run_files: outputs
                .iter()
                .map(|output| {
                    let name = &output.configuration.name;
                    (name.clone(), ReportFile::Moved(run_files.run_file(name)))
                })
                .collect(),
            extra: Vec::new(),
            policy: Policy::default(),
        }
    }
}

impl<'a> ReportParts<'a> {
    fn into_files(self) -> impl Iterator<Item = (String, ReportFile<'a>)> {
        [
            ("timings.json".to_owned(), self.timings.into()),
            ("qrels.trec".to_owned(), self.qrels.into()),
        ]
        .into_iter()
        .chain(
            self.run_files
                .into_iter()
                .map(|(name, content)| (format!("runs/{name}.run"), content)),
        )
        .chain(
            self.extra
                .into_iter()
                .map(|(relative, bytes)| (relative, bytes.into())),
        )
    }
}

/// `timings.json`: wall-clock times, kept apart from `results.json` so that it stays
/// byte-identical for identical inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timings {
    pub threads: usize,
    pub stages_ms: StageTimings,
    /// Summed per-query retrieval time of each configuration.
    pub retrieval_ms: Vec<(String, f64)>,
    /// A merged run's: each shard's timings, in index order (the fields above are their
    /// sums, and the most threads any shard used).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<Timings>,
}

impl Timings {
    /// The timings of a run merged from shards that took `shards` (in index order).
    pub fn merged(shards: Vec<Timings>) -> Timings {
        let mut stages = StageTimings::default();
        let mut retrieval_ms: Vec<(String, f64)> = shards
            .first()
            .map(|first| {
                first
                    .retrieval_ms
                    .iter()
                    .map(|(name, _)| (name.clone(), 0.0))
                    .collect()
            })
            .unwrap_or_default();
        for shard in &shards {
            stages.index_ms += shard.stages_ms.index_ms;
            stages.embed_facts_ms += shard.stages_ms.embed_facts_ms;
            stages.expand_queries_ms += shard.stages_ms.expand_queries_ms;
            stages.retrieve_ms += shard.stages_ms.retrieve_ms;
            for ((_, total), (_, ms)) in retrieval_ms.iter_mut().zip(&shard.retrieval_ms) {
                *total += ms;
            }
        }
        Timings {
            threads: shards.iter().map(|shard| shard.threads).max().unwrap_or(0),
            stages_ms: stages,
            retrieval_ms,
            shards,
        }
    }
}

/// The qrels of `dataset`'s queries with a relevant fact at `relevance_level` (only
/// those, so trec_eval averages over the same queries), as TREC text.
pub fn judged_qrels(dataset: &Dataset, relevance_level: Grade) -> Vec<u8> {
    let judged: Vec<QueryId> = dataset
        .queries
        .iter()
        .filter(|query| {
            dataset
                .qrels
                .get(&query.id)
                .is_some_and(|judgments: &Vec<Judgment>| {
                    judgments.iter().any(|j| j.grade >= relevance_level)
                })
        })
        .map(|query| query.id.clone())
        .collect();
    let filtered: Qrels = judged
        .iter()
        .map(|query| (query.clone(), dataset.qrels[query].clone()))
        .collect();
    let mut qrels_bytes = Vec::new();
    write_trec_qrels(&mut qrels_bytes, &judged, &filtered).expect("writing to memory");
    qrels_bytes
}

/// Writes the report for `results` (`results.json`, `per_query.csv` and `parts`) into
/// `output_dir/<run name>`, replacing a previous one (unless
/// [`ReportParts::keep_other_results`] keeps it). Returns the report directory.
pub fn write_report(
    output_dir: &Path,
    results: &Results,
    parts: ReportParts<'_>,
) -> Result<PathBuf, Error> {
    let files: Vec<(String, ReportFile)> = vec![
        ("results.json".into(), json_streamed(results)),
        (
            "per_query.csv".into(),
            ReportFile::Streamed(Box::new(|writer| {
                super::csv::write_per_query_csv(writer, results).map_err(std::io::Error::other)
            })),
        ),
    ];
    let configurations: Vec<String> = results
        .configurations
        .iter()
        .map(|configuration| configuration.name.clone())
        .collect();
    let policy = parts.policy;
    let check = || {
        if policy.force {
            return Ok(());
        }
        check_report_replacement(
            output_dir,
            &results.run_name,
            &results.dataset.name,
            &configurations,
        )
    };
    write_directory_keeping(
        output_dir,
        &results.run_name,
        files.into_iter().chain(parts.into_files()),
        policy,
        &check,
    )
}

/// Writes a shard of a run (`shard.json` and `parts`) into `output_dir/name`, replacing
/// any previous one. Returns the shard directory.
pub fn write_shard(
    output_dir: &Path,
    name: &str,
    shard: &ShardResults,
    parts: ReportParts<'_>,
) -> Result<PathBuf, Error> {
    let policy = parts.policy;
    write_directory(
        output_dir,
        name,
        std::iter::once((SHARD_FILE.to_owned(), json_streamed(shard))).chain(parts.into_files()),
        policy,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that fails: what follows the head of a results.json in these tests.
    struct Unreadable;

    impl std::io::Read for Unreadable {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("read past the head"))
        }
    }

    fn identity(head: &str) -> Option<(String, Vec<String>)> {
        StoredIdentity::read(std::io::Read::chain(head.as_bytes(), Unreadable)).map(|identity| {
            (
                identity.dataset.name,
                identity
                    .configurations
                    .into_iter()
                    .map(|configuration| configuration.name)
                    .collect(),
            )
        })
    }

    #[test]
    fn a_stored_identity_is_read_from_the_head_alone() {
        let expected = Some((
            "scifact".to_owned(),
            vec!["bm25".to_owned(), "keyword".to_owned()],
        ));
        // Whatever follows the configurations is never read.
        let head = r#"{"schema_version": 1, "dataset": {"name": "scifact", "facts": 3},
            "configurations": [{"name": "bm25", "per_query": [1, 2]}, {"name": "keyword"}],"#;
        assert_eq!(identity(head), expected);
        // In either order, past other entries.
        let head = r#"{"configurations": [{"name": "bm25"}, {"name": "keyword"}],
            "queries": [{"id": "q1"}], "dataset": {"name": "scifact"}, "facts": ["#;
        assert_eq!(identity(head), expected);
        // A whole document without configurations, or not an object: nothing.
        assert_eq!(identity(r#"{"dataset": {"name": "scifact"}}"#), None);
        assert_eq!(identity(r#"["dataset"]"#), None);
        assert_eq!(
            identity(r#"{"dataset": {"name": "scifact"}, "configurations": 3}"#),
            None
        );
    }
}
