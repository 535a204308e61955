//! Options of `run`, `baseline update` and `compare`: the run's options, the regression
//! gate's and the significance tests'.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::choices;
use super::dataset::SourceArgs;
use super::format::{CompareFormat, OutputFormat};

use crate::compare::paired::SignificanceTest;
use crate::metrics::Semantics;
use crate::results::shard::Shard;
use crate::settings::{GateOptions, RunOptions, SignificanceOptions};
use crate::stats::Correction;
use crate::text::{Analyzer, ChunkSpec};

pub(super) const COMPARE_EXAMPLES: &str = "\
Examples:
  hyde-eval compare --dataset datasets/scenarios --embedder concept --embedder hash
      runs every configuration once per provider; the first is the reference
  hyde-eval compare old=reports/a/results.json new=reports/b/results.json --metric mrr
      compares stored runs of the same dataset without re-running, labelled old and new
  hyde-eval compare --qrels qrels.test bm25.run dense.run.gz splade=splade.json \
      --metrics ndcg@10,map,mrr --format latex
      runs of any system (TREC, ranx JSON, ir_measures JSON lines) scored against the
      qrels with the metrics of `run`, as a paper's LaTeX table

The runs are lettered a, b, c, ... in the order given. Each value is followed by the
letters of the runs it beats significantly: every pair of runs is tested on every metric
(and configuration), all tests corrected together (--test, --correction, --alpha); the
best value of the runs is marked. A second table gives every pair's difference and p.
compare.json, compare.md and compare.tex are written to reports/<dataset>-compare/
(reports/compare/ for stored results and run files; or --output-dir/--run-name).
--configurations keeps those rows of stored results; --html writes report.html beside
them for run files compared with --qrels, and is refused otherwise. Stored results and
run files are compared as they are: the run options that would shape a run (--weights,
--set, --embedder, ...) are refused with them.";

/// `hyde-eval run`: run options plus the gate and summary options.
#[derive(Debug, Args)]
pub struct RunCommand {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Evaluate only shard I of N (the queries at positions p with p mod N = I - 1) into
    /// <output-dir>/<run-name>-shard-I-of-N, for `hyde-eval merge`; not gated
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Write at most N lines per query into each run file (metrics still use --depth;
    /// with --shard, into the merged run files) [default: the whole ranking]
    #[arg(long, value_name = "N")]
    pub run_depth: Option<usize>,
    /// Write the report without run files (runs/)
    #[arg(long)]
    pub no_runs: bool,
    /// Replace the report directory even when it holds results of other configurations
    /// or hyde-eval did not write it (never one holding an input)
    #[arg(long)]
    pub force: bool,
    /// Also write report.html, charts and Markdown/CSV metric tables (as `hyde-eval report`)
    #[arg(long)]
    pub html: bool,
}

impl RunCommand {
    /// The run's options as plain values, for `settings`.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            run_depth: self.run_depth,
            no_runs: self.no_runs,
            force: self.force,
            html: self.html,
            ..self.run.options()
        }
    }
}

/// `I/N` with 1 <= I <= N.
fn parse_shard(text: &str) -> Result<Shard, String> {
    let expected = || format!("{text:?} is not I/N (e.g. 2/3, with 1 <= I <= N)");
    let (index, count) = text.split_once('/').ok_or_else(expected)?;
    let index = index.trim().parse().map_err(|_| expected())?;
    let count = count.trim().parse().map_err(|_| expected())?;
    Shard::new(index, count).map_err(|error| error.to_string())
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

    /// Replace the baseline even when it holds results this one lacks (another dataset,
    /// or configurations not computed here), or hyde-eval did not write it
    #[arg(long)]
    pub force: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

/// How comparisons are tested (gate and compare). Each is `None` unless given, so a
/// command that tests nothing can refuse it.
#[derive(Debug, Args, Clone)]
pub struct SignificanceArgs {
    /// Paired significance test [default: randomization]
    #[arg(long, value_parser = choices(&SignificanceTest::CHOICES))]
    pub test: Option<SignificanceTest>,

    /// Multiple-comparison correction over every comparison made together [default: holm]
    #[arg(long, value_parser = choices(&Correction::CHOICES))]
    pub correction: Option<Correction>,

    /// Significance level after correction [default: 0.05]
    #[arg(long, value_name = "P")]
    pub alpha: Option<f64>,

    /// Permutations of the randomization test and bootstrap resamples [default: 10000]
    #[arg(long, value_name = "N")]
    pub iterations: Option<usize>,

    /// Seed of the permutation and bootstrap streams [default: 42]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
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

    /// Absolute targets: fail when a configuration's macro value is below one, e.g.
    /// ndcg@10=0.8,mrr=0.7 (no baseline needed)
    #[arg(long, value_name = "METRIC=VALUE,...")]
    pub min: Option<String>,

    /// Fail only when a drop beyond its threshold is also significant after correction
    #[arg(long)]
    pub require_significant: bool,

    /// Fail when any per-query expectation fails
    #[arg(long)]
    pub require_expectations: bool,

    #[command(flatten)]
    pub significance: SignificanceArgs,

    /// Format on stdout: the tables; JSON is results.json (with a gate, plus its verdict as
    /// `gate`, gate.json's document); CSV the macro metric table; Markdown the
    /// pull-request summary. A gate's verdict also ends stderr, in every format
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormat,

    /// Also append the Markdown summary to this file (e.g. "$GITHUB_STEP_SUMMARY")
    #[arg(long, value_name = "FILE")]
    pub summary_file: Option<PathBuf>,
}

/// `hyde-eval compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Stored results.json files to compare, or with --qrels QRELS run files of any system
    /// (TREC, ranx JSON, ir_measures JSON lines; qrels also BEIR TSV) scored with `run`'s
    /// metrics (-k, --relevance-level, --semantics, --depth). NAME=FILE labels a run
    /// [default label: a results file's directory, a run file's name without extensions].
    /// Without them, the dataset is run once per --embedder
    #[arg(value_name = "[NAME=]FILE")]
    pub results: Vec<PathBuf>,

    /// The metric compared; several: --metrics [default: ndcg at the largest cut-off]
    #[arg(long, value_name = "METRIC")]
    pub metric: Option<String>,

    /// With --qrels: also write report.html (metrics, the paired comparison, per-query
    /// diagnostics) beside compare.json and compare.md
    #[arg(long)]
    pub html: bool,

    /// Format on stdout (JSON is compare.json, Markdown compare.md, LaTeX compare.tex;
    /// CSV one row per pairwise test)
    #[arg(long, value_enum, default_value_t)]
    pub format: CompareFormat,

    #[command(flatten)]
    pub significance: SignificanceArgs,

    /// Replace the comparison's directory even when it holds a comparison of other
    /// inputs, or hyde-eval did not write it (never one holding an input)
    #[arg(long)]
    pub force: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of `hyde-eval run`.
#[derive(Debug, Args, Default, Clone)]
pub struct RunArgs {
    /// Dataset directory, or a built-in set (devmem, scenarios, chatcli-ab) where no such directory is
    /// [default: ./datasets/devmem where it exists, else the built-in devmem]
    #[arg(short, long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,

    #[command(flatten)]
    pub source: SourceArgs,

    /// TOML config file (dataset, configurations, parameters)
    #[arg(short, long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Configurations to run, comma-separated [default: all built-in + config-defined]
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = super::ConfigurationName,
        hide_possible_values = true
    )]
    pub configurations: Vec<String>,

    /// Embedding provider: hash, concept, local or an [embedders.NAME] table of the
    /// config file [default: the dataset's, else hash]; `compare` takes it several times
    #[arg(short, long, value_name = "NAME")]
    pub embedder: Vec<String>,

    /// Hypothesis generator: recorded (the dataset's hypotheses.jsonl) or a
    /// [generators.NAME] table of the config file [default: recorded]
    #[arg(long, value_name = "NAME")]
    pub generator: Option<String>,

    /// Take vector candidates (and text rankings, where the engine ranks text) from the
    /// search engine of the config file's [engines.NAME] table, loaded by `hyde-eval
    /// engine load`; the exact in-process index runs beside it for comparison
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,

    /// Index each fact for vector search as windows of TOKENS whitespace-separated words
    /// overlapping by OVERLAP (e.g. 400,80), a fact scoring as its best window (MaxP);
    /// the lexical signals still score whole facts [default: whole facts]
    #[arg(long, value_name = "TOKENS,OVERLAP")]
    pub chunk: Option<ChunkSpec>,

    /// Use only cached embeddings and hypotheses: a miss is an error (exit 3), no request
    /// is made and no API key is needed
    #[arg(long)]
    pub offline: bool,

    /// Cache of backend answers, and where the local embedder's default model is looked
    /// for (DIR/models, as `models fetch --cache-dir DIR` writes it) [default:
    /// $HYDE_EVAL_CACHE/cache, else ~/.cache/hyde-eval/cache]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// sentence-transformers model directory for the local embedder [default: the
    /// cache's all-minilm-l6-v2, see `hyde-eval models fetch`; DIR/models/all-minilm-l6-v2
    /// with --cache-dir DIR]
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
    #[arg(long, value_parser = choices(&Semantics::CHOICES))]
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
    #[arg(long, value_name = "NAME", value_parser = choices(&Analyzer::CHOICES))]
    pub bm25_analyzer: Option<Analyzer>,

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

    /// Metric columns of the terminal table, comma-separated (e.g. ndcg@10,mrr); for
    /// `compare`, the metrics compared
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

    /// Worker threads [default: all cores]
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,

    /// No progress bars or notes on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

impl CompareArgs {
    /// The qrels the FILEs are scored against (`--qrels` with FILEs): they are runs then.
    pub fn external_qrels(&self) -> Option<&PathBuf> {
        self.run
            .source
            .options
            .qrels
            .as_ref()
            .filter(|_| !self.results.is_empty())
    }
}

impl RunArgs {
    /// Every option given, as the command line spells it (`--dataset-format native`, the
    /// default, reads as not given), for the commands that refuse the ones they would not
    /// read.
    pub fn given(&self) -> Vec<&'static str> {
        let options = &self.source.options;
        [
            ("--dataset", self.dataset.is_some()),
            (
                "--dataset-format",
                self.source.dataset_format != crate::dataset::import::Format::Native,
            ),
            ("--split", options.split.is_some()),
            ("--docs", options.docs.is_some()),
            ("--queries", options.queries.is_some()),
            ("--qrels", options.qrels.is_some()),
            ("--config", self.config.is_some()),
            ("--configurations", !self.configurations.is_empty()),
            ("--embedder", !self.embedder.is_empty()),
            ("--generator", self.generator.is_some()),
            ("--engine", self.engine.is_some()),
            ("--chunk", self.chunk.is_some()),
            ("--offline", self.offline),
            ("--cache-dir", self.cache_dir.is_some()),
            ("--model-dir", self.model_dir.is_some()),
            ("--dimension", self.dimension.is_some()),
            ("--lexicon", self.lexicon.is_some()),
            ("--k", !self.k.is_empty()),
            ("--relevance-level", self.relevance_level.is_some()),
            ("--semantics", self.semantics.is_some()),
            ("--weights", !self.weights.is_empty()),
            ("--top-k", self.top_k.is_some()),
            ("--min-cosine", self.min_cosine.is_some()),
            ("--hyde-keywords", self.hyde_keywords.is_some()),
            ("--num-hypotheses", self.num_hypotheses.is_some()),
            ("--half-life", self.half_life.is_some()),
            ("--bm25-k1", self.bm25_k1.is_some()),
            ("--bm25-b", self.bm25_b.is_some()),
            ("--bm25-analyzer", self.bm25_analyzer.is_some()),
            ("--depth", self.depth.is_some()),
            ("--skip-short-queries", self.skip_short_queries.is_some()),
            ("--skip-code-mentions", self.skip_code_mentions),
            ("--set", !self.set.is_empty()),
            ("--metrics", !self.metrics.is_empty()),
            ("--run-name", self.run_name.is_some()),
            ("--output-dir", self.output_dir.is_some()),
            ("--no-report", self.no_report),
            ("--threads", self.threads.is_some()),
            ("--quiet", self.quiet),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
    }

    /// The run's options as plain values, for `settings`.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            dataset: self.dataset.clone(),
            configurations: self.configurations.clone(),
            embedder: self.embedder.clone(),
            generator: self.generator.clone(),
            engine: self.engine.clone(),
            chunk: self.chunk,
            offline: self.offline,
            cache_dir: self.cache_dir.clone(),
            model_dir: self.model_dir.clone(),
            dimension: self.dimension,
            lexicon: self.lexicon.clone(),
            k: self.k.clone(),
            relevance_level: self.relevance_level,
            semantics: self.semantics,
            weights: self.weights.clone(),
            top_k: self.top_k,
            min_cosine: self.min_cosine,
            hyde_keywords: self.hyde_keywords,
            num_hypotheses: self.num_hypotheses,
            half_life: self.half_life,
            bm25_k1: self.bm25_k1,
            bm25_b: self.bm25_b,
            bm25_analyzer: self.bm25_analyzer,
            depth: self.depth,
            skip_short_queries: self.skip_short_queries,
            skip_code_mentions: self.skip_code_mentions,
            set: self.set.clone(),
            metrics: self.metrics.clone(),
            run_name: self.run_name.clone(),
            output_dir: self.output_dir.clone(),
            no_report: self.no_report,
            run_depth: None,
            no_runs: false,
            force: false,
            html: false,
            threads: self.threads,
            quiet: self.quiet,
        }
    }
}

impl SignificanceArgs {
    /// The significance options as plain values, for `settings`.
    pub fn options(&self) -> SignificanceOptions {
        SignificanceOptions {
            test: self.test,
            correction: self.correction,
            alpha: self.alpha,
            iterations: self.iterations,
            seed: self.seed,
        }
    }
}

impl GateArgs {
    /// The gate's options as plain values, for `settings`.
    pub fn options(&self) -> GateOptions {
        GateOptions {
            baseline: self.baseline.clone(),
            max_drop: self.max_drop.clone(),
            min: self.min.clone(),
            require_significant: self.require_significant,
            require_expectations: self.require_expectations,
            significance: self.significance.options(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, Command, FromArgMatches};

    /// [`RunArgs::given`] reports each option of `RunArgs`, alone, when it alone is given:
    /// a new option is then refused by the commands that do not read it rather than
    /// slipping through.
    #[test]
    fn given_reports_every_run_option() {
        let command = RunArgs::augment_args(Command::new("run").no_binary_name(true));
        for argument in command.get_arguments() {
            let flag = format!("--{}", argument.get_long().expect("run options are long"));
            let mut words = vec![flag.clone()];
            if argument.get_action().takes_values() {
                let choices = argument.get_possible_values();
                words.push(match choices.last() {
                    // The last choice: never the default (`--dataset-format native`).
                    Some(choice) => choice.get_name().to_owned(),
                    None if flag == "--chunk" => "400,80".to_owned(),
                    None => "1".to_owned(),
                });
            }
            let matches = command.clone().try_get_matches_from(&words).unwrap();
            let args = RunArgs::from_arg_matches(&matches).unwrap();
            assert_eq!(args.given(), [flag.as_str()], "{words:?}");
        }
        let nothing = command.try_get_matches_from(Vec::<String>::new()).unwrap();
        assert!(RunArgs::from_arg_matches(&nothing)
            .unwrap()
            .given()
            .is_empty());
    }
}
