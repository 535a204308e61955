//! Options of `merge`: the shard directories to combine, where the dataset is, where the
//! report goes, and the regression gate's and summary's options (as `run` has them).

use std::path::PathBuf;

use clap::Args;

use super::GateArgs;

pub(super) const MERGE_EXAMPLES: &str = "\
Examples:
  hyde-eval run --shard 1/3 & hyde-eval run --shard 2/3 & hyde-eval run --shard 3/3; wait
  hyde-eval merge reports/devmem-shard-*-of-3
      results.json, run files and report of the whole run, as one `run` writes them
  hyde-eval merge shards/* --baseline reports/baseline.json --max-drop ndcg@10=0.01
      the regression gate, with run's exit codes (1 = regression)

Shards merge only when they ran the same dataset files, metric settings, configurations
and hyde-eval binary with the same N, and when every index 1..N is given once. The
metrics are recomputed from the shards' run files and the dataset's qrels; a run file
that is not the one its shard wrote, a query slice that is not shard I/N's, or a
per-query record that disagrees with the recomputation stops merge with exit code 2,
naming the file, the query and the line. See docs/sharding.md.";

/// `hyde-eval merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard directories (or their shard.json) written by `hyde-eval run --shard I/N`,
    /// one for each I
    #[arg(value_name = "SHARD", required = true)]
    pub shards: Vec<PathBuf>,

    /// The dataset the shards ran, read with the format and options they recorded
    /// [default: the path the shards recorded, relative to where they ran]
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,

    /// Name of the report directory [default: the shards' run name]
    #[arg(long, value_name = "NAME")]
    pub run_name: Option<String>,

    /// Where the report directory goes [default: reports]
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// Also write report.html, charts and Markdown/CSV metric tables (as `hyde-eval report`)
    #[arg(long)]
    pub html: bool,

    /// Replace the report directory even when it holds results of other configurations
    /// or hyde-eval did not write it (never one holding a shard)
    #[arg(long)]
    pub force: bool,

    /// No stage lines on stderr
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub gate: GateArgs,
}
