//! Options of `dataset synth|import|export|stats|validate`, and where a dataset comes from.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::choices;
use super::format::OutputFormat;

use crate::dataset::import::Format;

pub(super) const DATASET_HELP: &str = "\
Formats (--dataset-format, or dataset import's --from):
  native  facts.jsonl, queries.jsonl, qrels.tsv (docs/dataset-format.md)
  beir    corpus.jsonl (title + text), queries.jsonl, qrels/SPLIT.tsv (--split, default test)
  trec    TREC qrels plus docno<TAB>text and qid<TAB>text files (--docs, --queries, --qrels)
  csv     facts.csv, queries.csv, qrels.csv with a header row naming the columns
  smart   Cranfield, CACM, ADI or NPL in their original files (detected by file names)

Examples:
  hyde-eval dataset import --from beir ../shared/datasets/scifact datasets/scifact
  hyde-eval dataset stats --dataset-format smart ../shared/datasets/cranfield
  hyde-eval dataset validate datasets/devmem";

/// Where a dataset comes from and in which format.
#[derive(Debug, Args, Default, Clone)]
pub struct SourceArgs {
    /// Format of the dataset directory, imported in memory (beir, trec, csv, smart)
    #[arg(
        long = "dataset-format",
        value_name = "FORMAT",
        value_parser = choices(&Format::CHOICES),
        default_value = "native"
    )]
    pub dataset_format: Format,

    #[command(flatten)]
    pub options: FormatOptions,
}

/// Format-specific options of an imported collection. Each is `None` unless given, so
/// one given to a format that does not read it is refused.
#[derive(Debug, Args, Default, Clone)]
pub struct FormatOptions {
    /// BEIR format: qrels split (qrels/SPLIT.tsv) [default: test]
    #[arg(long, value_name = "SPLIT")]
    pub split: Option<String>,

    /// TREC format: documents file, docno<TAB>text, in the directory [default: docs.tsv]
    #[arg(long, value_name = "FILE")]
    pub docs: Option<PathBuf>,

    /// TREC format: topics file, qid<TAB>text, in the directory [default: queries.tsv]
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,

    /// TREC format: qrels file in the directory [default: qrels]; `compare --qrels QRELS
    /// RUN...` scores run files of any system against it
    #[arg(long, value_name = "FILE")]
    pub qrels: Option<PathBuf>,
}

/// `hyde-eval dataset ...`
#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Convert a collection into hyde-eval's native layout
    #[command(after_long_help = DATASET_HELP)]
    Import(ImportArgs),
    /// Counts, judged queries, grade histogram and text-length percentiles
    #[command(after_long_help = DATASET_HELP)]
    Stats(StatsArgs),
    /// Load and validate a dataset; report every defect (exit code 2) or a summary line
    #[command(after_long_help = DATASET_HELP)]
    Validate(InspectArgs),
    /// Write a dataset built into hyde-eval (devmem, scenarios, chatcli-ab) out into a new
    /// directory, byte for byte: the start of a team's own set
    Export(ExportArgs),
    /// Write a seeded synthetic dataset (Zipfian vocabulary, topical clusters, planted
    /// graded qrels, synonym-shifted queries, hypotheses) for scale tests
    Synth(SynthArgs),
    /// Draft queries and grade-2 judgments for a set of facts with an LLM
    /// ([generators.NAME]), filtered for near-duplicates and copied wording
    #[command(name = "draft-queries", after_long_help = super::label::DRAFT_HELP)]
    DraftQueries(super::label::DraftQueriesArgs),
}

/// Options of `hyde-eval dataset synth`.
#[derive(Debug, Args)]
pub struct SynthArgs {
    /// Facts to generate
    #[arg(long, value_name = "N")]
    pub facts: usize,

    /// Queries to generate
    #[arg(long, value_name = "Q")]
    pub queries: usize,

    /// Random seed: the same arguments give byte-identical files
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Topical clusters [default: facts / 500, at least 4]
    #[arg(long, value_name = "T")]
    pub topics: Option<usize>,

    /// Background vocabulary size
    #[arg(long, value_name = "V", default_value_t = 20_000)]
    pub vocabulary: usize,

    /// New dataset directory [default: synth-N]
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Replace the output directory even when it is not empty (never one holding an
    /// input)
    #[arg(long)]
    pub force: bool,
}

/// Options of `hyde-eval dataset export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Built-in dataset: devmem, scenarios or chatcli-ab
    #[arg(value_name = "NAME")]
    pub name: String,

    /// New dataset directory
    #[arg(value_name = "DIR")]
    pub destination: PathBuf,

    /// Replace DIR even when it is not empty (never one holding an input)
    #[arg(long)]
    pub force: bool,
}

/// Options of `hyde-eval dataset import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Format of SRC
    #[arg(long = "from", value_parser = choices(&Format::CHOICES))]
    pub from: Format,

    /// Collection directory
    #[arg(value_name = "SRC")]
    pub source: PathBuf,

    /// New dataset directory
    #[arg(value_name = "DEST")]
    pub destination: PathBuf,

    #[command(flatten)]
    pub options: FormatOptions,

    /// Replace DEST even when it is not empty (never SRC or a directory holding it)
    #[arg(long)]
    pub force: bool,

    /// No notes on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

/// Options of `hyde-eval dataset stats` and `validate`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Dataset directory
    #[arg(value_name = "DIR")]
    pub dataset: PathBuf,

    #[command(flatten)]
    pub source: SourceArgs,

    /// No notes on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

/// Options of `hyde-eval dataset stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub inspect: InspectArgs,

    /// Format on stdout (CSV and Markdown: one row per field)
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,

    /// Same as --format json
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}
