//! Writes a run's report directory (`results.json`, `per_query.csv`, `timings.json`,
//! `qrels.trec`, `runs/<configuration>.run`), a shard's directory (`shard.json` in place
//! of the first two) and other output directories and files.
//! Run files are written while the pipeline runs, into a [`RunSpool`] beside the report,
//! and moved in with the rest.
//!
//! The directory is built beside its destination under a temporary name and swapped in
//! with renames, so a reader (or an interrupted run) never sees a half-written report.
//! Timings live in their own file so that `results.json` stays byte-identical for
//! identical inputs.
//!
//! hyde-eval replaces only what it wrote: every output directory carries an
//! [`OWNER_MARKER`] file, and a destination without one (unless empty) is refused, as is
//! one that holds a file this run read (see [`crate::input::read_so_far`]). The swap runs
//! under a lock on the output directory, so concurrent writers of one name each swap in
//! a complete directory, and it first removes the temporaries that killed hyde-eval
//! processes left there.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::dataset::{Dataset, Grade, Judgment, Qrels, QueryId};
use crate::error::{Error, Problem};
use crate::interrupt::{critical, write_through_temporary, Temporary};
use crate::pipeline::{ConfigurationOutput, StageTimings};
use crate::results::shard::{ShardResults, SHARD_FILE};
use crate::results::Results;
use crate::trec::write_trec_qrels;

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
/// the report. Removed when dropped, or by the interrupt handler.
pub struct RunSpool {
    directory: PathBuf,
    _registered: Temporary,
}

impl RunSpool {
    /// Creates the spool for the report `output_dir/run_name`, after checking that the
    /// report may be written there (see [`check_destination`]), so a run that could not
    /// write its report fails before it starts.
    pub fn create(output_dir: &Path, run_name: &str) -> Result<RunSpool, Error> {
        check_destination(output_dir, run_name)?;
        std::fs::create_dir_all(output_dir).map_err(write_error(output_dir))?;
        let directory = output_dir.join(format!(".{run_name}.runs-{}", std::process::id()));
        let registered = Temporary::register(&directory);
        if directory.exists() {
            std::fs::remove_dir_all(&directory).map_err(write_error(&directory))?;
        }
        std::fs::create_dir(&directory).map_err(write_error(&directory))?;
        Ok(RunSpool {
            directory,
            _registered: registered,
        })
    }

    /// The directory the run files are spooled into (`NAME.run` each).
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    /// Where the run file of `configuration` is spooled.
    pub fn run_file(&self, configuration: &str) -> PathBuf {
        self.directory.join(format!("{configuration}.run"))
    }
}

impl Drop for RunSpool {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

/// The file that marks a directory as one hyde-eval wrote and may replace.
pub const OWNER_MARKER: &str = ".hyde-eval-output";

const OWNER_MARKER_TEXT: &str =
    "This directory was written by hyde-eval. The next output of the same name replaces it.\n";

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

/// Checks that `output_dir/name` may be (re)written: it is absent, an empty directory,
/// or a directory hyde-eval wrote ([`OWNER_MARKER`]), and it holds none of this run's
/// inputs. Anything else is refused (exit code 2) and left untouched.
pub fn check_destination(output_dir: &Path, name: &str) -> Result<(), Error> {
    check_output_name("output name", name)?;
    let destination = output_dir.join(name);
    let refuse = |problem: String| {
        Err(Error::problem(
            Problem::new(&destination, None, problem).with_hint(
                "hyde-eval replaces only directories it wrote; choose another --run-name or --output-dir, or move this one away",
            ),
        ))
    };
    let metadata = match std::fs::symlink_metadata(&destination) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(write_error(&destination)(source)),
    };
    if metadata.file_type().is_symlink() {
        return refuse("exists and is a symlink; refusing to replace it".into());
    }
    if !metadata.is_dir() {
        return refuse("exists and is not a directory; refusing to replace it".into());
    }
    if let Ok(resolved) = destination.canonicalize() {
        if let Some(input) = crate::input::read_so_far()
            .into_iter()
            .find(|input| input.starts_with(&resolved))
        {
            return refuse(format!(
                "holds {}, an input of this run; refusing to replace it",
                input.display()
            ));
        }
    }
    let marked = std::fs::symlink_metadata(destination.join(OWNER_MARKER))
        .is_ok_and(|marker| marker.is_file());
    let empty = std::fs::read_dir(&destination)
        .map_err(write_error(&destination))?
        .next()
        .is_none();
    if marked || empty {
        Ok(())
    } else {
        refuse(format!(
            "exists and was not written by hyde-eval (it has no {OWNER_MARKER} file); refusing to replace it"
        ))
    }
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
    let stored_path = output_dir.join(name).join("results.json");
    let Some(stored) = stored_identity(&stored_path) else {
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
                "holds results of {} that this run does not compute ({}); replacing it would lose them",
                if dropped.len() == 1 { "a configuration" } else { "configurations" },
                dropped.join(", ")
            )
        })
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(Error::problem(
            Problem::new(&stored_path, None, problem).with_hint(format!(
                "keep both by naming this run (--run-name {name}-NAME), or pass --force to replace {}",
                output_dir.join(name).display()
            )),
        )),
    }
}

/// What [`stored_identity`] last read: the file's path, its [`FileVersion`] and what it
/// holds.
type StoredRead = (PathBuf, FileVersion, Arc<StoredIdentity>);

/// The last `results.json` [`stored_identity`] read. A run checks the report it replaces
/// three times (before the run, and before and under the lock as it writes), and parsing
/// a large run's `results.json` costs more than the rest of a check: an unchanged file is
/// parsed once.
static LAST_STORED_READ: Mutex<Option<StoredRead>> = Mutex::new(None);

/// What identifies one version of a file: its device and inode, size and the times of
/// its last modification and status change, to the nanosecond.
#[derive(PartialEq)]
struct FileVersion([i64; 7]);

impl FileVersion {
    fn of(metadata: &std::fs::Metadata) -> FileVersion {
        use std::os::unix::fs::MetadataExt;
        FileVersion([
            metadata.dev() as i64,
            metadata.ino() as i64,
            metadata.size() as i64,
            metadata.mtime(),
            metadata.mtime_nsec(),
            metadata.ctime(),
            metadata.ctime_nsec(),
        ])
    }
}

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

/// Holds an exclusive lock on an output directory while the guard lives.
struct DirectoryLock(std::fs::File);

impl DirectoryLock {
    fn acquire(directory: &Path) -> Result<DirectoryLock, Error> {
        let file = std::fs::File::open(directory).map_err(write_error(directory))?;
        file.lock().map_err(write_error(directory))?;
        Ok(DirectoryLock(file))
    }
}

impl Drop for DirectoryLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// The process id in the name of one of hyde-eval's temporaries (`.NAME.partial-PID`,
/// `.NAME.runs-PID`, `.NAME.previous-PID`, `.FILE.partial-PID-N`).
fn temporary_owner(file_name: &str) -> Option<i32> {
    if !file_name.starts_with('.') {
        return None;
    }
    ["partial-", "runs-", "previous-"].iter().find_map(|tag| {
        let (_, rest) = file_name.rsplit_once(&format!(".{tag}"))?;
        let pid = match rest.split_once('-') {
            Some((pid, sequence)) if sequence.bytes().all(|byte| byte.is_ascii_digit()) => pid,
            Some(_) => return None,
            None => rest,
        };
        if pid.is_empty() || !pid.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        pid.parse().ok()
    })
}

fn process_is_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes the temporaries in `output_dir` that hyde-eval processes which no longer run
/// left behind (a SIGKILL gives no chance to clean up). Returns how many were removed.
pub fn remove_stale_temporaries(output_dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(output_dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temporary_owner) else {
            continue;
        };
        if pid == std::process::id() as i32 || process_is_alive(pid) {
            continue;
        }
        let path = entry.path();
        let outcome = match entry.file_type() {
            Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(error) => Err(error),
        };
        if outcome.is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Writes `files` (relative path, content) as the directory `output_dir/name`, replacing
/// a previous one that hyde-eval wrote (see [`check_destination`]): the directory is built
/// under a temporary name, flushed, and renamed into place. Returns the directory. Files
/// are taken one at a time, so a lazy iterator holds only the file being written in
/// memory.
pub fn write_directory<'a, F: Into<ReportFile<'a>>>(
    output_dir: &Path,
    name: &str,
    files: impl IntoIterator<Item = (String, F)>,
) -> Result<PathBuf, Error> {
    write_directory_checked(output_dir, name, files, &|| Ok(()))
}

/// [`write_directory`], with `check` run with [`check_destination`] before the build and
/// again under the lock, just before the swap.
fn write_directory_checked<'a, F: Into<ReportFile<'a>>>(
    output_dir: &Path,
    name: &str,
    files: impl IntoIterator<Item = (String, F)>,
    check: &dyn Fn() -> Result<(), Error>,
) -> Result<PathBuf, Error> {
    check_destination(output_dir, name)?;
    check()?;
    std::fs::create_dir_all(output_dir).map_err(write_error(output_dir))?;
    {
        let _lock = DirectoryLock::acquire(output_dir)?;
        remove_stale_temporaries(output_dir);
    }
    let destination = output_dir.join(name);
    let partial = output_dir.join(format!(".{name}.partial-{}", std::process::id()));
    let _registered = Temporary::register(&partial);
    // Removed again on any failure below, so an error leaves no partial directory.
    let mut cleanup = RemoveOnDrop(Some(partial.clone()));
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(write_error(&partial))?;
    }
    let marker = std::iter::once((
        OWNER_MARKER.to_owned(),
        ReportFile::Bytes(OWNER_MARKER_TEXT.as_bytes().to_vec()),
    ));
    for (relative, content) in marker.chain(
        files
            .into_iter()
            .map(|(relative, content)| (relative, content.into())),
    ) {
        let path = partial.join(relative);
        // Each write is a critical section: once an interruption has removed the
        // temporary directory, no write may recreate it.
        critical(|| {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(write_error(parent))?;
            }
            match content {
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
    flush_directory(&partial);
    let previous = output_dir.join(format!(".{name}.previous-{}", std::process::id()));
    // Concurrent writers of one name take turns; each finds the destination as the
    // last one left it, checks it again and swaps in a complete directory.
    let _lock = DirectoryLock::acquire(output_dir)?;
    check_destination(output_dir, name)?;
    check()?;
    critical(|| {
        if destination.exists() {
            std::fs::rename(&destination, &previous).map_err(write_error(&destination))?;
        }
        std::fs::rename(&partial, &destination).map_err(write_error(&destination))?;
        cleanup.0 = None;
        if previous.exists() {
            std::fs::remove_dir_all(&previous).map_err(write_error(&previous))?;
        }
        Ok(destination)
    })
}

/// Removes a temporary directory when dropped, unless it was handed on.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// Writes one file atomically: a temporary sibling, flushed, renamed over `path`.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).map_err(write_error(parent))?;
    }
    write_through_temporary(path, bytes, true)
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
    /// Refuse to replace a report whose results this one would not write again (see
    /// [`check_report_replacement`]); `run` without `--force`.
    pub keep_other_results: bool,
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
            keep_other_results: false,
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
    let keep_other_results = parts.keep_other_results;
    let check = || {
        if !keep_other_results {
            return Ok(());
        }
        check_report_replacement(
            output_dir,
            &results.run_name,
            &results.dataset.name,
            &configurations,
        )
    };
    write_directory_checked(
        output_dir,
        &results.run_name,
        files.into_iter().chain(parts.into_files()),
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
    write_directory(
        output_dir,
        name,
        std::iter::once((SHARD_FILE.to_owned(), json_streamed(shard))).chain(parts.into_files()),
    )
}

/// Best-effort fsync of the files in `directory` before it is renamed into place.
fn flush_directory(directory: &Path) {
    let mut pending = vec![directory.to_path_buf()];
    while let Some(path) = pending.pop() {
        if let Ok(entries) = std::fs::read_dir(&path) {
            for entry in entries.flatten() {
                let entry_path = entry.path();
                if entry_path.is_dir() {
                    pending.push(entry_path);
                } else if let Ok(file) = std::fs::File::open(&entry_path) {
                    let _ = file.sync_all();
                }
            }
        }
    }
    let _ = std::fs::File::open(directory).and_then(|file| file.sync_all());
}

/// Writes each `(relative path, bytes)` under the existing `directory`, each through a
/// temporary file renamed into place, so no reader sees a half-written file.
pub fn write_files(directory: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<(), Error> {
    for (relative, bytes) in files {
        write_file_atomically(&directory.join(relative), bytes)?;
    }
    Ok(())
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
