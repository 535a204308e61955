//! Writes a run's report directory (`results.json`, `per_query.csv`, `timings.json`,
//! `qrels.trec`, `runs/<configuration>.run`) and other output directories and files.
//! Run files are written while the pipeline runs, into a [`RunSpool`] beside the report,
//! and moved in with the rest.
//!
//! The directory is built beside its destination under a temporary name and swapped in
//! with renames, so a reader (or an interrupted run) never sees a half-written report.
//! Timings live in their own file so that `results.json` stays byte-identical for
//! identical inputs.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Results;
use crate::dataset::{Dataset, Judgment, Qrels, QueryId};
use crate::error::Error;
use crate::interrupt::{critical, write_through_temporary, Temporary};
use crate::pipeline::{ConfigurationOutput, StageTimings};
use crate::trec::write_trec_qrels;

#[derive(Serialize)]
struct Timings<'a> {
    threads: usize,
    stages_ms: &'a StageTimings,
    /// Summed per-query retrieval time of each configuration.
    retrieval_ms: Vec<(&'a str, f64)>,
}

fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    std::fs::write(path, bytes).map_err(write_error(path))
}

/// The per-query CSV: one row per (configuration, evaluated query).
fn per_query_csv(results: &Results) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header = vec![
        "configuration",
        "query",
        "relevant",
        "returned",
        "hypothesis_used",
    ];
    header.extend(results.evaluation.metrics.iter().map(String::as_str));
    writer.write_record(&header)?;
    for configuration in &results.configurations {
        for query in &configuration.per_query {
            let mut record = vec![
                configuration.name.clone(),
                query.query.0.clone(),
                query.relevant.to_string(),
                query.returned.to_string(),
                query
                    .hypothesis_used
                    .map(|used| used.to_string())
                    .unwrap_or_default(),
            ];
            record.extend(query.metrics.values().map(|value| value.to_string()));
            writer.write_record(&record)?;
        }
    }
    writer
        .into_inner()
        .map_err(|error| csv::Error::from(error.into_error()))
}

/// The content of one file of an output directory.
pub enum ReportFile {
    Bytes(Vec<u8>),
    /// A finished file on the same file system, moved into place.
    Moved(PathBuf),
}

impl From<Vec<u8>> for ReportFile {
    fn from(bytes: Vec<u8>) -> ReportFile {
        ReportFile::Bytes(bytes)
    }
}

/// The directory beside a report where its run files are written while the rankings
/// stream out of the pipeline (see [`super::digest`]); [`write_report`] moves them into
/// the report. Removed when dropped, or by the interrupt handler.
pub struct RunSpool {
    directory: PathBuf,
    _registered: Temporary,
}

impl RunSpool {
    /// Creates the spool for the report `output_dir/run_name`.
    pub fn create(output_dir: &Path, run_name: &str) -> Result<RunSpool, Error> {
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

/// Writes `files` (relative path, content) as the directory `output_dir/name`, replacing
/// any previous one: the directory is built under a temporary name, flushed, and renamed
/// into place. Returns the directory. Files are taken one at a time, so a lazy iterator
/// holds only the file being written in memory.
pub fn write_directory<F: Into<ReportFile>>(
    output_dir: &Path,
    name: &str,
    files: impl IntoIterator<Item = (String, F)>,
) -> Result<PathBuf, Error> {
    // Names come from flags, dataset.toml and stored results: none may leave output_dir.
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) {
        return Err(Error::Usage(format!(
            "output name {name:?} must be a plain directory name (it would be written outside {})",
            output_dir.display()
        )));
    }
    std::fs::create_dir_all(output_dir).map_err(write_error(output_dir))?;
    let destination = output_dir.join(name);
    let partial = output_dir.join(format!(".{name}.partial-{}", std::process::id()));
    let _registered = Temporary::register(&partial);
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(write_error(&partial))?;
    }
    for (relative, content) in files {
        let path = partial.join(relative);
        let content = content.into();
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
            }
        })?;
    }
    flush_directory(&partial);
    let previous = output_dir.join(format!(".{name}.previous-{}", std::process::id()));
    critical(|| {
        if destination.exists() {
            std::fs::rename(&destination, &previous).map_err(write_error(&destination))?;
        }
        std::fs::rename(&partial, &destination).map_err(write_error(&destination))?;
        if previous.exists() {
            std::fs::remove_dir_all(&previous).map_err(write_error(&previous))?;
        }
        Ok(destination)
    })
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

/// Pretty JSON with a final newline.
pub fn json_bytes(value: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("report types serialize");
    bytes.push(b'\n');
    bytes
}

/// Writes the report for `results` into `output_dir/run_name`, replacing any previous
/// one; `extra` files (such as the gate's verdict) go beside the standard ones. Returns
/// the report directory.
pub fn write_report(
    output_dir: &Path,
    results: &Results,
    dataset: &Dataset,
    outputs: &[ConfigurationOutput],
    stage_timings: &StageTimings,
    run_files: &RunSpool,
    extra: Vec<(String, Vec<u8>)>,
) -> Result<PathBuf, Error> {
    let relevance_level = results.evaluation.settings.relevance_level;
    let mut files: Vec<(String, ReportFile)> =
        vec![("results.json".into(), json_bytes(results).into())];
    let csv = per_query_csv(results).map_err(|error| Error::Write {
        path: output_dir.join(&results.run_name).join("per_query.csv"),
        source: std::io::Error::other(error),
    })?;
    files.push(("per_query.csv".into(), csv.into()));
    let timings = Timings {
        threads: rayon::current_num_threads(),
        stages_ms: stage_timings,
        retrieval_ms: outputs
            .iter()
            .map(|output| (output.configuration.name.as_str(), output.retrieval_ms))
            .collect(),
    };
    files.push(("timings.json".into(), json_bytes(&timings).into()));

    // Only queries with a relevant fact, so trec_eval averages over the same queries.
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
    files.push(("qrels.trec".into(), qrels_bytes.into()));
    files.extend(outputs.iter().map(|output| {
        let name = &output.configuration.name;
        (
            format!("runs/{name}.run"),
            ReportFile::Moved(run_files.run_file(name)),
        )
    }));
    files.extend(
        extra
            .into_iter()
            .map(|(relative, bytes)| (relative, bytes.into())),
    );
    write_directory(output_dir, &results.run_name, files)
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
