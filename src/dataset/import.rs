//! Importing standard IR collections: the format choice, the dispatch to each format's
//! reader (`beir`, `trec`, `csv_tables`, `smart` beside this file, which fill a
//! [`super::collection::Collection`]), and writing hyde-eval's native layout.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::trec::TrecFiles;
use super::{Dataset, Expectation};
use crate::error::{Error, Problem};
use crate::write_policy::{self, DirectoryBuild, DirectoryKind, Policy};

/// The input formats `run`, `dataset import`, `stats` and `validate` understand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// hyde-eval's own layout (facts.jsonl, queries.jsonl, qrels.tsv)
    #[default]
    Native,
    /// BEIR: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv
    Beir,
    /// TREC qrels with tab-separated documents and topics
    Trec,
    /// facts.csv, queries.csv and qrels.csv with named columns
    Csv,
    /// SMART-style classics: Cranfield, CACM, NPL, ADI (detected by file names)
    Smart,
}

impl Format {
    /// The name `--dataset-format` and `--from` take.
    pub fn name(self) -> &'static str {
        match self {
            Format::Native => "native",
            Format::Beir => "beir",
            Format::Trec => "trec",
            Format::Csv => "csv",
            Format::Smart => "smart",
        }
    }

    /// Every format, with a line on each (for help texts).
    pub const CHOICES: [(Format, &'static str); 5] = [
        (
            Format::Native,
            "hyde-eval's own layout (facts.jsonl, queries.jsonl, qrels.tsv)",
        ),
        (
            Format::Beir,
            "BEIR: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv",
        ),
        (
            Format::Trec,
            "TREC qrels with tab-separated documents and topics",
        ),
        (
            Format::Csv,
            "facts.csv, queries.csv and qrels.csv with named columns",
        ),
        (
            Format::Smart,
            "SMART-style classics: Cranfield, CACM, NPL, ADI (detected by file names)",
        ),
    ];
}

/// Format-specific choices.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// BEIR qrels split (`qrels/SPLIT.tsv`).
    pub split: String,
    /// TREC: the collection's files.
    pub trec: TrecFiles,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            split: "test".into(),
            trec: TrecFiles::default(),
        }
    }
}

/// Another format's layout found in a directory read as native that holds no fact list:
/// the format, the files that tell it, and the options that read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignLayout {
    pub format: Format,
    pub files: String,
    pub options: String,
}

/// The format whose files `root` holds, told by their names (the default ones of each
/// format), when it is not hyde-eval's own layout.
pub fn foreign_layout(root: &Path) -> Option<ForeignLayout> {
    let present = |name: &str| crate::input::or_gzipped(&root.join(name)).is_file();
    let layout = |format, files: &str, options: String| ForeignLayout {
        format,
        files: files.to_owned(),
        options,
    };
    if present("corpus.jsonl") {
        let mut splits: Vec<String> = std::fs::read_dir(root.join("qrels"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".tsv").map(str::to_owned)
            })
            .collect();
        splits.sort();
        let default_split = ImportOptions::default().split;
        let options = match splits.first() {
            Some(split) if !splits.contains(&default_split) => {
                format!("--dataset-format beir --split {split}")
            }
            _ => "--dataset-format beir".to_owned(),
        };
        let files = if splits.is_empty() {
            "corpus.jsonl, queries.jsonl".to_owned()
        } else {
            let splits: Vec<String> = splits
                .iter()
                .map(|split| format!("qrels/{split}.tsv"))
                .collect();
            format!("corpus.jsonl, queries.jsonl, {}", splits.join(", "))
        };
        return Some(layout(Format::Beir, &files, options));
    }
    if present("facts.csv") {
        return Some(layout(
            Format::Csv,
            "facts.csv, queries.csv, qrels.csv",
            "--dataset-format csv".into(),
        ));
    }
    if let Some(files) = super::smart::files_held(root) {
        return Some(layout(
            Format::Smart,
            &files.join(", "),
            "--dataset-format smart".into(),
        ));
    }
    let trec = TrecFiles::default();
    if [&trec.docs, &trec.queries, &trec.qrels]
        .iter()
        .all(|file| root.join(file).is_file())
    {
        return Some(layout(
            Format::Trec,
            &format!(
                "{}, {}, {}",
                trec.docs.display(),
                trec.queries.display(),
                trec.qrels.display()
            ),
            "--dataset-format trec".into(),
        ));
    }
    None
}

/// Loads a dataset directory in `format`.
pub fn load(format: Format, root: &Path, options: &ImportOptions) -> Result<Dataset, Error> {
    if format != Format::Native && !root.is_dir() {
        return Err(Error::problem(
            Problem::new(root, None, "not a directory")
                .with_hint("pass the directory that holds the collection's files"),
        ));
    }
    match format {
        Format::Native => Dataset::load(root),
        Format::Beir => super::beir::load(root, &options.split),
        Format::Trec => super::trec::load(root, &options.trec),
        Format::Csv => super::csv_tables::load(root),
        Format::Smart => super::smart::load(root),
    }
}

#[derive(Serialize)]
struct FactLine<'a> {
    id: &'a str,
    content: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_accessed: Option<String>,
    #[serde(skip_serializing_if = "is_zero")]
    access_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

#[derive(Serialize)]
struct QueryLine<'a> {
    id: &'a str,
    text: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    scenario: Option<&'a str>,
    #[serde(skip_serializing_if = "<[Expectation]>::is_empty")]
    expect: &'a [Expectation],
}

#[derive(Serialize)]
struct ManifestOut<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    now: Option<String>,
}

/// Writes `dataset` in hyde-eval's native layout as the new directory `destination`,
/// under the write policy: built beside it and swapped in, where nothing is or an empty
/// directory is (anything else is refused, or replaced with `--force`). Returns the files
/// written, at their final paths.
pub fn write_native(
    dataset: &Dataset,
    destination: &Path,
    policy: Policy,
) -> Result<Vec<PathBuf>, Error> {
    let (parent, name) = write_policy::split_directory(destination)?;
    let build = DirectoryBuild::start(&parent, &name, policy, DirectoryKind::Dataset)?;
    let root = build.root();
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Write { path, source }
    };
    let rfc3339 = |time: Option<chrono::DateTime<chrono::Utc>>| {
        time.map(|time| time.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
    };
    let mut outputs = Vec::new();
    let mut write = |name: &str, text: String| -> Result<(), Error> {
        let path = root.join(name);
        std::fs::write(&path, text.as_bytes()).map_err(write_error(&path))?;
        outputs.push(destination.join(name));
        Ok(())
    };
    let manifest = ManifestOut {
        name: &dataset.manifest.name,
        description: &dataset.manifest.description,
        now: dataset
            .manifest
            .now_is_explicit
            .then(|| dataset.manifest.now.to_rfc3339()),
    };
    write(
        "dataset.toml",
        toml::to_string(&manifest).expect("serializable manifest"),
    )?;
    let mut facts = String::new();
    for fact in &dataset.facts {
        let line = FactLine {
            id: &fact.id.0,
            content: &fact.content,
            tags: &fact.tags,
            category: fact.category.as_deref(),
            created_at: rfc3339(fact.created_at),
            last_accessed: rfc3339(fact.last_accessed),
            access_count: fact.access_count,
            confidence: fact.confidence,
        };
        facts.push_str(&serde_json::to_string(&line).expect("serializable fact"));
        facts.push('\n');
    }
    write("facts.jsonl", facts)?;
    let mut queries = String::new();
    for query in &dataset.queries {
        let line = QueryLine {
            id: &query.id.0,
            text: &query.text,
            tags: &query.tags,
            scenario: query.scenario.as_deref(),
            expect: &query.expectations,
        };
        queries.push_str(&serde_json::to_string(&line).expect("serializable query"));
        queries.push('\n');
    }
    write("queries.jsonl", queries)?;
    let mut qrels = String::from("query_id\tfact_id\tgrade\n");
    for query in &dataset.queries {
        for judgment in dataset
            .qrels
            .get(&query.id)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            qrels.push_str(&format!(
                "{}\t{}\t{}\n",
                query.id, judgment.fact, judgment.grade
            ));
        }
    }
    write("qrels.tsv", qrels)?;
    build.swap_in(policy, &|| Ok(()))?;
    Ok(outputs)
}
