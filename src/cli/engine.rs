//! Arguments of `hyde-eval engine load | status | drop`: the search engines of the
//! config file's `[engines.NAME]` tables.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::dataset::SourceArgs;
use super::run::RunArgs;

/// `hyde-eval engine ...`
#[derive(Debug, Subcommand)]
pub enum EngineAction {
    /// Load a dataset's facts (ids, texts, vectors) into the engine: creates the collection
    /// or table, upserts in batches, records the dataset's content hash and the embedder;
    /// resumes an interrupted load, and does nothing when the same load is complete.
    Load(EngineLoadArgs),
    /// Show what the engine holds, and whether it matches the dataset and embedder.
    Status(EngineLoadArgs),
    /// Remove the engine's collection or table.
    Drop(EngineDropArgs),
}

/// Which engine, and the dataset and embedder whose facts it holds.
#[derive(Debug, Args, Clone)]
pub struct EngineLoadArgs {
    /// The config file's [engines.NAME] table
    #[arg(long, value_name = "NAME")]
    pub engine: String,

    /// TOML config file holding the [engines.NAME] table (and any [embedders.NAME])
    #[arg(short, long, value_name = "FILE")]
    pub config: PathBuf,

    /// Dataset directory, or a built-in set (devmem, scenarios, chatcli-ab) where no such
    /// directory is [default: the config file's, else ./datasets/devmem where it exists,
    /// else the built-in devmem]
    #[arg(short, long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,

    #[command(flatten)]
    pub source: SourceArgs,

    /// Embedding provider: hash, concept, local or an [embedders.NAME] table [default:
    /// the config file's, the dataset's, else hash]
    #[arg(short, long, value_name = "NAME")]
    pub embedder: Option<String>,

    /// Vector dimension of the hash embedder
    #[arg(long, value_name = "N")]
    pub dimension: Option<usize>,

    /// sentence-transformers model directory for the local embedder
    #[arg(long, value_name = "DIR")]
    pub model_dir: Option<PathBuf>,

    /// Cache of backend answers [default: $HYDE_EVAL_CACHE/cache, else
    /// ~/.cache/hyde-eval/cache]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Use only cached embeddings: a miss is an error (exit 3)
    #[arg(long)]
    pub offline: bool,

    /// Facts per upsert request (load only) [default: 256]
    #[arg(long, value_name = "N")]
    pub batch_size: Option<usize>,

    /// No stage lines or progress bars
    #[arg(short, long)]
    pub quiet: bool,
}

impl EngineLoadArgs {
    /// The same choices as `run` options, for the dataset loader and settings.
    pub fn run_args(&self) -> RunArgs {
        RunArgs {
            dataset: self.dataset.clone(),
            source: self.source.clone(),
            config: Some(self.config.clone()),
            embedder: self.embedder.iter().cloned().collect(),
            dimension: self.dimension,
            model_dir: self.model_dir.clone(),
            cache_dir: self.cache_dir.clone(),
            offline: self.offline,
            engine: Some(self.engine.clone()),
            quiet: self.quiet,
            ..RunArgs::default()
        }
    }
}

/// Which engine to drop.
#[derive(Debug, Args, Clone)]
pub struct EngineDropArgs {
    /// The config file's [engines.NAME] table
    #[arg(long, value_name = "NAME")]
    pub engine: String,

    /// TOML config file holding the [engines.NAME] table
    #[arg(short, long, value_name = "FILE")]
    pub config: PathBuf,
}
