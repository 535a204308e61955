//! Sharded runs: which queries a shard evaluates ([`Shard`]), the build that ran it
//! ([`BuildInfo`]), and the shard file (`shard.json`, [`ShardResults`]) that
//! `run --shard I/N` writes and `merge` reads: the shard's results document, what
//! merging needs beyond it (where the dataset is, the shard's exact query slice, the
//! digest of each run file it wrote, the depth of the merged run files) and what must
//! agree between the shards of one run ([`check_shards`]). What `merge` checks against
//! the dataset and the run files is [`super::recompute`]'s; merging the documents
//! themselves is [`super::merge`]'s.
//!
//! It reads shard files but writes none (the report directory writer does).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Results;
use crate::dataset::import::Format;
use crate::dataset::{Query, QueryId};
use crate::error::{Error, Problem};

/// The shard file inside a shard directory.
pub const SHARD_FILE: &str = "shard.json";

/// Shard `index` of `count` (1-based): the queries at dataset positions `p` with
/// `p mod count + 1 == index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Shard `index` of `count`; refused unless 1 <= index <= count.
    pub fn new(index: usize, count: usize) -> Result<Shard, Error> {
        if count == 0 || index == 0 || index > count {
            return Err(Error::Usage(format!(
                "shard {index}/{count}: the index must be between 1 and the count (1 <= I <= N)"
            )));
        }
        Ok(Shard { index, count })
    }

    /// Whether the query at dataset position `position` belongs to this shard.
    pub fn contains(&self, position: usize) -> bool {
        position % self.count + 1 == self.index
    }

    /// This shard's queries, in dataset order.
    pub fn select(&self, queries: &[Query]) -> Vec<Query> {
        queries
            .iter()
            .enumerate()
            .filter(|(position, _)| self.contains(*position))
            .map(|(_, query)| query.clone())
            .collect()
    }

    /// The name of the shard's directory for the run `run_name`.
    pub fn directory_name(&self, run_name: &str) -> String {
        format!("{run_name}-shard-{}-of-{}", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}/{}", self.index, self.count)
    }
}

/// The build of hyde-eval that wrote a shard: shards merge only when it is the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// The crate version (as `results.json`'s `tool.version`).
    pub version: String,
    /// `xxh3-128:` over the running executable; `null` when it could not be read.
    pub binary: Option<String>,
}

impl BuildInfo {
    /// This process' build.
    pub fn current() -> BuildInfo {
        BuildInfo {
            version: super::ToolInfo::current().version,
            binary: binary_hash(),
        }
    }
}

/// The hash of the running executable, read through a memory map.
fn binary_hash() -> Option<String> {
    let file = std::fs::File::open(std::env::current_exe().ok()?).ok()?;
    // SAFETY: the map is read once, here; an executable is not rewritten while it runs.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    Some(digest_of(&map))
}

/// The digest shard files record of a file's bytes: `xxh3-128:` and 32 hex digits.
pub fn digest_of(bytes: &[u8]) -> String {
    format!("xxh3-128:{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// The digest ([`digest_of`]) of the file at `path`, read through a memory map.
pub fn file_digest(path: &Path) -> Result<String, Error> {
    let read_error = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    if file.metadata().map_err(read_error)?.len() == 0 {
        return Ok(digest_of(&[]));
    }
    // SAFETY: the map is read once, here, right after this process wrote the file.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(read_error)?;
    Ok(digest_of(&map))
}

/// Where a shard read its dataset and how (`run`'s `--dataset`, `--dataset-format` and
/// the format's options): `merge` reads the dataset there, or at `merge --dataset`, and
/// checks its content hash against the one every shard records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetSource {
    /// The dataset directory as the shard's run resolved it; a relative path is relative
    /// to the directory the shard ran in.
    pub path: PathBuf,
    pub format: Format,
    /// BEIR: the qrels split, as given (none: the format's default).
    pub split: Option<String>,
    /// TREC: the documents, topics and qrels files in the directory, as given (none:
    /// the format's defaults).
    pub docs: Option<PathBuf>,
    pub queries: Option<PathBuf>,
    pub qrels: Option<PathBuf>,
}

/// The digest of a run file a shard wrote (`runs/<configuration>.run`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFileDigest {
    pub configuration: String,
    /// [`digest_of`] the file's bytes.
    pub digest: String,
}

/// What `run --shard` writes into `shard.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardResults {
    pub shard: Shard,
    pub build: BuildInfo,
    /// The metric columns of the terminal table the run resolved.
    pub table_metrics: Vec<String>,
    /// Where the dataset was read.
    pub dataset_source: DatasetSource,
    /// The ids of the shard's queries, in dataset order.
    pub query_slice: Vec<QueryId>,
    /// Lines per query of the merged run files (`run --run-depth`; `null`: whole
    /// rankings). The shard's own run files hold every ranking whole, so that `merge`
    /// can recompute every metric from them.
    pub run_depth: Option<usize>,
    /// The digest of each run file the shard wrote, in configuration order.
    pub run_files: Vec<RunFileDigest>,
    /// The shard's results document: every per-query part holds this shard's queries
    /// only; the dataset summary is the whole dataset's.
    pub results: Results,
}

impl ShardResults {
    /// Reads the shard file at `path`, or in the shard directory `path`. Returns the
    /// file's path with it.
    pub fn load(path: &Path) -> Result<(PathBuf, ShardResults), Error> {
        let file = if path.is_dir() {
            path.join(SHARD_FILE)
        } else {
            path.to_path_buf()
        };
        let bytes = crate::input::read(&file)?;
        let shard: ShardResults = serde_json::from_slice(&bytes).map_err(|error| {
            Error::problem(
                Problem::new(
                    &file,
                    Some(error.line()),
                    format!("not a hyde-eval shard file: {error}"),
                )
                .with_hint(
                    "pass the directories (or their shard.json) that `hyde-eval run --shard I/N` wrote",
                ),
            )
        })?;
        if shard.results.schema_version != super::SCHEMA_VERSION {
            return Err(Error::problem(Problem::new(
                &file,
                None,
                format!(
                    "results schema version {} (this hyde-eval reads {})",
                    shard.results.schema_version,
                    super::SCHEMA_VERSION
                ),
            )));
        }
        Ok((file, shard))
    }

    /// What must be equal in every shard of one run, named: the dataset, the build, the
    /// shard count, the metric definitions, the configurations and the providers.
    fn identity(&self) -> Vec<(String, Value)> {
        let results = &self.results;
        let mut fields = vec![
            (
                "dataset content hash".to_owned(),
                Value::from(results.dataset.content_hash.clone()),
            ),
            ("build".to_owned(), json(&self.build)),
            ("shard count N".to_owned(), Value::from(self.shard.count)),
            (
                "run file depth (--run-depth)".to_owned(),
                json(&self.run_depth),
            ),
            (
                "metric settings".to_owned(),
                json(&(&results.evaluation.settings, &results.evaluation.metrics)),
            ),
            (
                "configuration list".to_owned(),
                Value::from(
                    results
                        .configurations
                        .iter()
                        .map(|configuration| configuration.name.clone())
                        .collect::<Vec<_>>(),
                ),
            ),
        ];
        for configuration in &results.configurations {
            fields.push((
                format!("definition of configuration {}", configuration.name),
                json(&(
                    &configuration.preset,
                    &configuration.plan,
                    &configuration.params,
                )),
            ));
        }
        fields.push(("embedder".to_owned(), json(&results.embedder)));
        fields.push(("generator".to_owned(), json(&results.generator)));
        fields
    }
}

/// `value` as JSON, for [`ShardResults::identity`].
fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("results serialize")
}

/// A value cut to a readable length for an error message.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 160 {
        format!("{}...", text.chars().take(160).collect::<String>())
    } else {
        text
    }
}

/// Checks that `shards` (shard file, contents) are the complete set of shards of one
/// run, and puts them in index order. Refused (exit code 2), naming the files and what
/// differs: shards of different datasets, builds, shard counts, metric settings,
/// configurations or providers; an index given twice; a missing index.
pub fn check_shards(shards: &mut [(PathBuf, ShardResults)]) -> Result<(), Error> {
    let Some((first_path, first)) = shards.first() else {
        return Err(Error::Usage("merge needs at least one shard".into()));
    };
    let expected = first.identity();
    for (path, shard) in &shards[1..] {
        for ((field, want), (_, have)) in expected.iter().zip(shard.identity()) {
            if *want != have {
                return Err(Error::Usage(format!(
                    "shards differ in the {field}: {} has {}, {} has {}; shards merge only when they ran the same dataset, settings, configurations and build with the same N",
                    first_path.display(),
                    shown(want),
                    path.display(),
                    shown(&have)
                )));
            }
        }
        // The configuration lists are compared before the definitions, so the zip
        // above sees identities of the same length whenever it gets that far.
    }
    let count = first.shard.count;
    shards.sort_by_key(|(_, shard)| shard.shard.index);
    for pair in shards.windows(2) {
        if pair[0].1.shard.index == pair[1].1.shard.index {
            return Err(Error::Usage(format!(
                "shard {} given twice: {} and {}",
                pair[0].1.shard,
                pair[0].0.display(),
                pair[1].0.display()
            )));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|index| !shards.iter().any(|(_, shard)| shard.shard.index == *index))
        .map(|index| format!("shard {index}/{count} missing"))
        .collect();
    if !missing.is_empty() {
        let given: Vec<String> = shards
            .iter()
            .map(|(path, shard)| format!("{} ({})", path.display(), shard.shard))
            .collect();
        return Err(Error::Usage(format!(
            "{}; given: {}",
            missing.join(", "),
            given.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_position_belongs_to_exactly_one_shard() {
        let shards: Vec<Shard> = (1..=3).map(|index| Shard::new(index, 3).unwrap()).collect();
        for position in 0..10 {
            let owners: Vec<usize> = shards
                .iter()
                .filter(|shard| shard.contains(position))
                .map(|shard| shard.index)
                .collect();
            assert_eq!(owners, vec![position % 3 + 1]);
        }
        assert!(Shard::new(0, 3).is_err());
        assert!(Shard::new(4, 3).is_err());
        assert!(Shard::new(1, 0).is_err());
        assert_eq!(Shard::new(1, 1).unwrap().to_string(), "1/1");
    }
}
