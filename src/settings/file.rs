//! The config file (`--config FILE`, TOML): what a run may set besides the command line,
//! with relative paths taken relative to the file. Parsing only; `settings` resolves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::backends::{self, EmbedderTables, GeneratorTables};
use super::engines::EngineTables;
use crate::configuration::ParamOverrides;
use crate::dataset::Grade;
use crate::error::{Error, Problem};
use crate::metrics::Semantics;
use crate::pipeline::sources::SourcePolicy;
use crate::text::ChunkSpec;

/// A parsed config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub(super) dataset: Option<PathBuf>,
    pub(super) configurations: Option<Vec<String>>,
    pub(super) embedder: Option<String>,
    pub(super) generator: Option<String>,
    pub(super) cache_dir: Option<PathBuf>,
    #[serde(default)]
    pub(super) embedders: EmbedderTables,
    #[serde(default)]
    pub(super) generators: GeneratorTables,
    /// `engine = "NAME"`: take candidates from `[engines.NAME]` (like `--engine`).
    pub(super) engine: Option<String>,
    #[serde(default)]
    pub(super) engines: EngineTables,
    /// `chunk = "TOKENS,OVERLAP"`: facts split into windows for vector search (like
    /// `--chunk`).
    pub(super) chunk: Option<String>,
    /// `sources = ["memory"]`: return only facts of these sources.
    pub(super) sources: Option<Vec<String>>,
    /// `source_boost = { memory = 1.2 }`: multiply a source's facts' fused scores.
    pub(super) source_boost: Option<BTreeMap<String, f64>>,
    pub(super) dimension: Option<usize>,
    pub(super) lexicon: Option<PathBuf>,
    pub(super) model_dir: Option<PathBuf>,
    pub(super) k: Option<Vec<usize>>,
    pub(super) relevance_level: Option<Grade>,
    pub(super) semantics: Option<Semantics>,
    pub(super) metrics: Option<Vec<String>>,
    pub(super) run_name: Option<String>,
    pub(super) output_dir: Option<PathBuf>,
    #[serde(default)]
    pub(super) params: ParamOverrides,
    #[serde(default)]
    pub(super) configuration: BTreeMap<String, toml::Table>,
    #[serde(default)]
    pub(super) gate: GateSection,
    /// Directory of the file, for relative paths.
    #[serde(skip)]
    pub(super) directory: PathBuf,
    #[serde(skip)]
    pub(super) path: PathBuf,
}

impl ConfigFile {
    pub fn load(path: &Path) -> Result<ConfigFile, Error> {
        let text = crate::input::read_small_text(path)?;
        let mut file: ConfigFile = toml::from_str(&text).map_err(|error| {
            let line = error
                .span()
                .map(|span| text[..span.start].matches('\n').count() + 1);
            let message = error.message().trim();
            let mut problem = Problem::new(path, line, message.to_owned());
            if let Some(hint) =
                crate::hints::unknown_field_hint(message).or_else(|| backends::field_hint(message))
            {
                problem = problem.with_hint(hint);
            }
            Error::problem(problem)
        })?;
        file.directory = path.parent().map(Path::to_path_buf).unwrap_or_default();
        file.path = path.to_path_buf();
        Ok(file)
    }

    /// The `chunk` key, parsed; an error names the file.
    pub(super) fn chunk_spec(&self) -> Result<Option<ChunkSpec>, Error> {
        self.chunk
            .as_deref()
            .map(|text| {
                text.parse().map_err(|message: String| {
                    Error::problem(Problem::new(&self.path, None, format!("chunk: {message}")))
                })
            })
            .transpose()
    }

    /// The `sources` and `source_boost` keys, checked; `None` when neither is set.
    pub(super) fn source_policy(&self) -> Result<Option<SourcePolicy>, Error> {
        if self.sources.is_none() && self.source_boost.is_none() {
            return Ok(None);
        }
        SourcePolicy::new(
            self.sources.clone().unwrap_or_default(),
            self.source_boost.clone().unwrap_or_default(),
        )
        .map(Some)
        .map_err(|error| Error::problem(Problem::new(&self.path, None, error.to_string())))
    }

    pub(super) fn relative(&self, path: &Option<PathBuf>) -> Option<PathBuf> {
        path.as_ref().map(|path| {
            if path.is_absolute() {
                path.clone()
            } else {
                self.directory.join(path)
            }
        })
    }
}

/// The config file's `[gate]` table: the same settings as `run`'s gate flags, which win.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GateSection {
    pub(super) baseline: Option<PathBuf>,
    /// `{ "ndcg@10" = 0.01, "recall@5" = 0.02 }`
    pub(super) max_drop: Option<BTreeMap<String, f64>>,
    /// Absolute targets, `{ "ndcg@10" = 0.8 }`; need no baseline.
    pub(super) min: Option<BTreeMap<String, f64>>,
    pub(super) require_significant: Option<bool>,
    pub(super) require_expectations: Option<bool>,
}
