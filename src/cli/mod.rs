//! Command-line definitions (clap derive) with help text and examples, one file per
//! family of commands, and their conversion into the plain options `settings` resolves
//! (`RunArgs::options`). clap stays here: no other module depends on it; the domain's
//! enums give their names and help through their `CHOICES`.

mod dataset;
mod engine;
mod eval;
mod format;
mod fuse;
mod label;
mod merge;
mod run;
mod shell;
mod tools;

pub use dataset::*;
pub use engine::*;
pub use eval::*;
pub use format::*;
pub use fuse::*;
pub use label::*;
pub use merge::*;
pub use run::*;
pub use shell::*;
pub use tools::*;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};

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
  hyde-eval run --shard 2/3
      every third query (positions 1, 4, 7, ...) into reports/devmem-shard-2-of-3/;
      `hyde-eval merge` combines the shards into this run's results (docs/sharding.md)
  hyde-eval run --config hyde-eval.toml --embedder openai-small --generator gpt
      an HTTP embedding API and LLM hypotheses ([embedders.NAME] and [generators.NAME]
      tables; see docs/backends-and-caches.md); every answer is cached on disk
  hyde-eval run --config hyde-eval.toml --embedder openai-small --generator gpt --offline
      CI: only cached answers, no request, no API key

Parameters (--set [CONFIGURATION.]NAME=VALUE, or a config file's [params] and
[configuration.NAME] tables): weights, vector_top_k, min_cosine, hyde_keywords,
num_hypotheses, half_life_days, bm25_k1, bm25_b, bm25_analyzer, hybrid_vector_weight,
hybrid_text_weight, hybrid_candidate_multiplier, hybrid_min_score, hybrid_limit,
adaptive_floor_start, adaptive_floor_step, skip_short_queries, skip_code_mentions,
min_query_chars, intent_gate, recency_decay_days, depth; for bm25-dense-rrf and
bm25-dense-wsum also fusion, normalization, rrf_k, fusion_vector_weight,
fusion_text_weight.
Precedence, lowest first: preset defaults, config [params], config
[configuration.NAME], command-line flags, --set. A parameter set for a configuration
that does not read it, or for every configuration when none of the run's reads it, is
refused with the reason (exit code 2); `hyde-eval configurations` and
docs/configurations.md list what each preset reads.

Outputs: the metric table on stdout; reports/<run-name>/results.json (versioned,
byte-identical for identical inputs at any thread count), per_query.csv, timings.json,
qrels.trec and runs/<configuration>.run (the fused scores, --run-depth N lines per
query, none with --no-runs; score them with `trec_eval -c`); with --html also
report.html, charts/*.png, metrics.md and metrics.csv (see `hyde-eval report`). A run
that would drop results the report holds (other configurations or another dataset) is
refused: name it with --run-name, or replace the report with --force.

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
    /// Combine the shards of a run (`run --shard I/N`) into its results, run files and
    /// report, as one run writes them; with --baseline, gate on regressions.
    #[command(after_long_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
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
    Configurations(ConfigurationsArgs),
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
    /// Fuse TREC runs into one (RRF, CombSUM, CombMNZ, weighted sum, Borda), as ranx
    /// fuses them; the fused run goes to stdout.
    #[command(after_long_help = FUSE_EXAMPLES)]
    Fuse(FuseArgs),
    /// Score TREC run files against TREC qrels with trec_eval's semantics.
    #[command(after_long_help = EVAL_HELP)]
    Eval(EvalArgs),
    /// Judge the pooled top results of runs (0/1/2) in the terminal, every grade saved
    /// to the dataset's qrels.tsv as it is given; --agreement reports Cohen's kappa.
    #[command(after_long_help = JUDGE_HELP)]
    Judge(JudgeArgs),
    /// Import, summarize or validate datasets (BEIR, TREC, CSV, SMART, native).
    #[command(subcommand)]
    Dataset(DatasetCommand),
    /// Generate hypotheses with an LLM ([generators.NAME]) and write them, with their
    /// provenance, into the dataset's hypotheses.jsonl for replay.
    #[command(after_long_help = RECORD_EXAMPLES)]
    Record(RecordArgs),
    /// Load a dataset into a search engine ([engines.NAME]), show what it holds, or drop
    /// it; `run --engine NAME` then takes its candidates from the engine.
    Engine {
        #[command(subcommand)]
        action: EngineAction,
    },
    /// Inspect or clear the cache of backend answers (embeddings, hypotheses).
    Cache {
        #[command(subcommand)]
        action: CacheAction,
    },
    /// Print the shell completion script for bash, zsh, fish, elvish or PowerShell.
    #[command(after_long_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print the man page hyde-eval(1), or write it with a page per subcommand.
    #[command(after_long_help = MAN_EXAMPLES)]
    Man(ManArgs),
}

impl Cli {
    /// Parses the command line as [`Parser::parse`] does (exiting with clap's message on
    /// a usage error), with hyde-eval's "did you mean" for an unknown option: clap's
    /// suggests any option of a similar shape (`sweep --baseline` drew `--engine`).
    pub fn from_command_line() -> Cli {
        Cli::try_parse().unwrap_or_else(|error| unknown_option_hint(error).exit())
    }
}

/// An unknown option's error with the suggestion `crate::hints` makes among the options
/// of the command given, in place of clap's; when it makes none, the commands that do
/// take the option are named.
fn unknown_option_hint(mut error: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use clap::CommandFactory;
    if error.kind() != ErrorKind::UnknownArgument {
        return error;
    }
    let Some(ContextValue::String(given)) = error.get(ContextKind::InvalidArg) else {
        return error;
    };
    let Some(name) = given.strip_prefix("--") else {
        return error;
    };
    let name = name
        .split_once('=')
        .map_or(name, |(name, _)| name)
        .to_owned();
    let mut root = Cli::command();
    root.build();
    let command = command_given(&root);
    let clap_suggestion = match error.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(flag)) => Some(flag.clone()),
        _ => None,
    };
    let longs: Vec<&str> = command
        .get_arguments()
        .filter(|argument| !argument.is_hide_set())
        .filter_map(clap::Arg::get_long)
        .collect();
    let ours = crate::hints::closest(&name, longs).map(|long| format!("--{long}"));
    if ours.is_some() && ours == clap_suggestion {
        return error;
    }
    let usage = command.clone().render_usage();
    match ours {
        Some(flag) => {
            error.insert(ContextKind::SuggestedArg, ContextValue::String(flag));
        }
        None => {
            error.remove(ContextKind::SuggestedArg);
            let mut everywhere = Vec::new();
            all_longs(&root, &mut everywhere);
            let meant = if everywhere.contains(&name.as_str()) {
                Some(name.as_str())
            } else {
                crate::hints::closest(&name, everywhere)
            };
            let takers = meant.map_or_else(Vec::new, |long| commands_taking(&root, long));
            if let (Some(name), false) = (meant, takers.is_empty()) {
                let mut tips = match error.remove(ContextKind::Suggested) {
                    Some(ContextValue::StyledStrs(tips)) => tips,
                    _ => Vec::new(),
                };
                tips.push(
                    format!(
                        "--{name} is an option of {}, not of `{}`",
                        takers.join(", "),
                        command.get_bin_name().unwrap_or(command.get_name())
                    )
                    .into(),
                );
                error.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
            }
        }
    }
    error.insert(ContextKind::Usage, ContextValue::StyledStr(usage));
    error
}

/// The (sub)command the command line names: the deepest subcommand its leading words
/// reach.
fn command_given(root: &clap::Command) -> &clap::Command {
    let mut command = root;
    for word in std::env::args_os().skip(1) {
        match word.to_str().and_then(|word| command.find_subcommand(word)) {
            Some(subcommand) => command = subcommand,
            None => break,
        }
    }
    command
}

/// The long options of `command` and of every command under it.
fn all_longs<'a>(command: &'a clap::Command, longs: &mut Vec<&'a str>) {
    longs.extend(
        command
            .get_arguments()
            .filter(|argument| !argument.is_hide_set())
            .filter_map(clap::Arg::get_long),
    );
    for subcommand in command.get_subcommands() {
        all_longs(subcommand, longs);
    }
}

/// The commands under `command` (its full names, `hyde-eval run`) that take `--long`.
fn commands_taking(command: &clap::Command, long: &str) -> Vec<String> {
    let mut takers = Vec::new();
    if command
        .get_arguments()
        .any(|argument| !argument.is_hide_set() && argument.get_long() == Some(long))
    {
        takers.push(format!(
            "`{}`",
            command.get_bin_name().unwrap_or(command.get_name())
        ));
    }
    for subcommand in command.get_subcommands() {
        takers.extend(commands_taking(subcommand, long));
    }
    takers
}

/// A value parser for a configuration name: any name (a config file may define more),
/// with the presets as the values shell completion offers.
#[derive(Debug, Clone, Copy)]
struct ConfigurationName;

impl TypedValueParser for ConfigurationName {
    type Value = String;

    fn parse_ref(
        &self,
        command: &clap::Command,
        argument: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(command, argument, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            crate::configuration::Preset::ALL
                .iter()
                .map(|preset| PossibleValue::new(preset.name())),
        ))
    }
}

/// A value parser for a domain enum: its `choices` (each value with a line of help),
/// named as the value serializes (`trec`, `t-test`, ...).
fn choices<T>(choices: &'static [(T, &'static str)]) -> impl TypedValueParser<Value = T>
where
    T: serde::Serialize + Copy + Send + Sync + 'static,
{
    let name = |value: &T| -> String {
        serde_json::to_value(value)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .expect("a choice serializes as its name")
    };
    let possible: Vec<PossibleValue> = choices
        .iter()
        .map(|(value, help)| PossibleValue::new(name(value)).help(*help))
        .collect();
    PossibleValuesParser::new(possible).map(move |chosen| {
        choices
            .iter()
            .find(|(value, _)| name(value) == chosen)
            .map(|(value, _)| *value)
            .expect("clap accepts only the listed names")
    })
}
