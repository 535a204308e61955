//! Options of the two ways to get a labeled set: `dataset draft-queries` (queries
//! drafted by an LLM from the facts) and `judge` (pooled judging in the terminal).

use std::path::PathBuf;

use clap::Args;

use crate::generate::draft::DEFAULT_MAX_OVERLAP;

pub(super) const DRAFT_HELP: &str = "\
Writes DIR/queries.jsonl (tags: the style and `drafted`), DIR/qrels.tsv (grade 2 for each
query's source fact) and DIR/drafted.json (provenance: generator, model, prompt, date,
seed, per-style counts and what each filter dropped). Nothing is written elsewhere but
the answer cache. Styles: synonym (alias paraphrase), exact, temporal, multi-concept.
The prompt file holds {fact} and {style}. A query whose content words are more than
--max-overlap shared with its fact copies its wording and is dropped (exact queries are
exempt); of two queries with content-word Jaccard >= 0.8, the later is dropped.

Example:
  hyde-eval dataset draft-queries my-notes --config hyde-eval.toml --generator gpt \\
      --facts 30 --per-fact 1 --seed 7
  hyde-eval judge --dataset my-notes --results reports/my-notes/results.json";

/// Options of `hyde-eval dataset draft-queries`.
#[derive(Debug, Args)]
pub struct DraftQueriesArgs {
    /// Dataset directory with facts.jsonl or memory_index.json
    #[arg(value_name = "DIR")]
    pub dataset: PathBuf,

    /// The LLM: a [generators.NAME] table of the --config file
    #[arg(long, value_name = "NAME")]
    pub generator: String,

    /// Config file with the [generators.NAME] table
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Facts to sample (seeded)
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub facts: usize,

    /// Sampling seed: the same seed picks the same facts
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Query styles, comma-separated
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "synonym,exact,temporal,multi-concept"
    )]
    pub styles: Vec<String>,

    /// Queries asked per fact and style
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub per_fact: usize,

    /// A prompt file replacing hyde-eval's drafting prompt ({fact}, {style})
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,

    /// Largest share of a query's content words that its fact may hold
    #[arg(long, value_name = "SHARE", default_value_t = DEFAULT_MAX_OVERLAP)]
    pub max_overlap: f64,

    /// Only cached answers: a miss is an error, no request is made
    #[arg(long)]
    pub offline: bool,

    /// The answer cache [default: the config's cache_dir, else ~/.cache/hyde-eval/cache]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Replace an existing queries.jsonl and qrels.tsv
    #[arg(long, alias = "replace")]
    pub force: bool,

    /// No progress or notes on stderr
    #[arg(short, long)]
    pub quiet: bool,
}

pub(super) const JUDGE_HELP: &str = "\
The pool, as TREC pools: per query, the union of the top --depth facts of every
configuration in the --results files and of every --run file, less the pairs
DATASET/qrels.tsv already judges. Each grade is written at once (atomically) to
DATASET/qrels.tsv and DATASET/judgments.jsonl, so a session can stop at any point and
the next one resumes with the pairs left.

Keys: 0 not relevant, 1 related, 2 answers; s or Right skip; b or Left back; q quit.
--keys FILE (or - for stdin) reads the same keys as whitespace-separated tokens and
drives the same handler without a terminal, printing one status line per key.

Examples:
  hyde-eval judge --dataset my-notes --results reports/my-notes/results.json
  hyde-eval judge --dataset my-notes --results r.json --assist gpt --config hyde-eval.toml
  hyde-eval judge --dataset my-notes --agreement";

/// Options of `hyde-eval judge`.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// Dataset directory whose qrels.tsv receives the grades
    #[arg(long, value_name = "DIR")]
    pub dataset: PathBuf,

    /// results.json files whose configurations' top lists are pooled
    #[arg(long, value_name = "FILE")]
    pub results: Vec<PathBuf>,

    /// TREC run files pooled as well
    #[arg(long = "run", value_name = "FILE")]
    pub runs: Vec<PathBuf>,

    /// Pool depth: the top k of each configuration and run [default: 10]
    #[arg(long, value_name = "K")]
    pub depth: Option<usize>,

    /// Show an LLM's proposed grade beside each pair ([generators.NAME])
    #[arg(long, value_name = "NAME")]
    pub assist: Option<String>,

    /// Config file with the [generators.NAME] table
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Only cached proposals: a miss is an error, no request is made
    #[arg(long)]
    pub offline: bool,

    /// The answer cache [default: the config's cache_dir, else ~/.cache/hyde-eval/cache]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Scripted input: keys from FILE (- for stdin) instead of the terminal
    #[arg(long, value_name = "FILE")]
    pub keys: Option<PathBuf>,

    /// Report Cohen's kappa between the LLM's proposals and the grades given, and exit
    #[arg(long)]
    pub agreement: bool,

    /// No note of the pool's size on stderr
    #[arg(short, long)]
    pub quiet: bool,
}
