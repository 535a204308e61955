//! Options of `eval`, trec_eval's flags where trec_eval has one.

use std::path::PathBuf;

use clap::Args;

pub(super) const EVAL_HELP: &str = "\
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
measure below), runid, num_q, num_ret, num_rel, num_rel_ret,
num_nonrel_judged_ret, map, gm_map, Rprec, bpref, infAP, gm_bpref, recip_rank, ndcg,
ndcg_rel, Rndcg, binG, G, set_P, set_relative_P, set_recall, set_map, set_F, utility,
rbp, rbp_resid; the cut-off measures P, recall, ndcg_cut, map_cut, relative_P (default
cut-offs 5,10,15,20,30,100,200,500,1000), success (1,5,10) and unj (5,10,20); the
recall-level measures iprec_at_recall and 11pt_avg (0.0,0.1,...,1.0); Rprec_mult
(0.2,0.4,...,2.0); relstring (per query, first 10 results); and hyde-eval's judged
(judged.10: judged results in the top k / min(k, returned); not in all_trec). Set
parameters with a dot, as trec_eval does: -m P.5,10 -m ndcg_cut.10 -m
iprec_at_recall.0.25,0.5 -m relstring.20. Also accepted: every name of a metric that the
other commands take (ndcg@10, precision@5, recall@10, hit@5, mrr, judged@10, nDCG@10,
P_5, RR) and ir_measures' names and parameters (P(rel=2)@5, AP(rel=2), R@100,
Judged@10); rel=N sets the relevance level (-l N) of every measure, so two different
rel= are refused, as is a rel= that -l contradicts. A measure named twice is computed
once. -J drops the results the qrels do not judge (after -M); -N is the collection size
that utility reads.

Examples:
  hyde-eval eval qrels.test results.test
  hyde-eval eval -m all_trec -q -c -M100 qrels.test results.trunc
  hyde-eval eval -m map -m ndcg_cut.10 --format json qrels run-a run-b
  zcat run.gz | hyde-eval eval qrels/test.tsv -
  hyde-eval eval qrels.test new.run --baseline old.run --max-drop ndcg@10=0.01

Inputs: `-` reads standard input; gzip is decompressed (by content, .gz or not). Runs
are TREC, ranx JSON ({\"q1\": {\"d1\": 1.5}}) or ir_measures JSON lines (query_id,
doc_id, score); qrels are TREC, BEIR TSV (query-id corpus-id score header), ranx JSON or
ir_measures JSON lines (query_id, doc_id, relevance). Detected by content.

Regression gate: --baseline BASE.run [--max-drop ndcg@10=0.01,...] [--min ...]
[--require-significant] gates every RUN against the baseline run with the metrics, paired
tests and corrections of `run --baseline` (metric names recall@k precision@k ndcg@k hit@k
mrr@k mrr map; cut-offs 1,3,5,10 plus those the thresholds name; -l is the relevance
level, -M the depth). stdout keeps the measures (JSON adds the gate as `gate`, Markdown
opens with the gate's summary); the verdict goes to stderr in every format, whatever
--quiet (beside trec_eval's layout as the gate's table, else as one line), and with
--summary-file as Markdown to that file.

-q is trec_eval's per-query flag here, so that trec_eval command lines run unchanged;
quiet is --quiet (every other command takes -q for --quiet).

Exit codes: 0 success (gate passed); 1 the gate failed; 2 bad flag or input file (the
message names the file and line).";

/// Output of `hyde-eval eval`: the formats of every command, its table being
/// trec_eval's layout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalFormat {
    /// trec_eval's text layout (also accepted as `table`)
    #[default]
    #[value(alias = "table")]
    Trec,
    /// One JSON document with full-precision values
    Json,
    /// run,runid,query,measure,value rows
    Csv,
    /// The averages, a measure per row and a column per run
    Markdown,
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

    /// Print per-query values before the averages (trec_eval -q; the one command where
    /// -q is not --quiet)
    #[arg(short = 'q', long)]
    pub per_query: bool,

    /// Average over every qrels query; queries missing from a run score 0 (trec_eval -c)
    #[arg(short = 'c', long)]
    pub complete: bool,

    /// Minimum grade that counts as relevant (trec_eval -l; ir_measures' rel= in -m sets
    /// it too) [default: 1]
    #[arg(short = 'l', long, value_name = "GRADE")]
    pub relevance_level: Option<i32>,

    /// Results kept per query after sorting (trec_eval -M) [default: all]
    #[arg(short = 'M', long, value_name = "N")]
    pub max_results: Option<usize>,

    /// Judged documents only: every result the qrels do not judge (not listed, or listed
    /// with a negative grade) is removed from each ranking, after -M, before any measure
    /// (trec_eval -J)
    #[arg(short = 'J', long)]
    pub judged_only: bool,

    /// Number of documents in the collection, which utility's fourth coefficient
    /// (nonrelevant documents not retrieved) counts (trec_eval -N) [default: 0]
    #[arg(short = 'N', long, value_name = "N")]
    pub collection_size: Option<u64>,

    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: EvalFormat,

    /// Worker threads [default: all cores]
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,

    /// No notes on stderr (long form only: -q is trec_eval's per-query flag)
    #[arg(long)]
    pub quiet: bool,

    #[command(flatten)]
    pub gate: EvalGateArgs,
}

/// The regression gate of `eval`: every RUN against a baseline run (or absolute
/// targets), with `run`'s metric names and statistics.
#[derive(Debug, Args)]
pub struct EvalGateArgs {
    /// Gate every RUN against this baseline run (same formats as RUN) and exit 1 on a
    /// regression, as `run --baseline` does
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<PathBuf>,

    /// Tolerated drop per metric (`run`'s names), e.g. ndcg@10=0.01,map=0 [default:
    /// every metric, 0]
    #[arg(long, value_name = "METRIC=DROP,...")]
    pub max_drop: Option<String>,

    /// Absolute targets: fail when a RUN's macro value is below one, e.g. ndcg@10=0.5
    #[arg(long, value_name = "METRIC=VALUE,...")]
    pub min: Option<String>,

    /// Fail only when a drop beyond its threshold is also significant after correction
    #[arg(long)]
    pub require_significant: bool,

    #[command(flatten)]
    pub significance: super::SignificanceArgs,

    /// Also append the gate's Markdown summary to this file (e.g. "$GITHUB_STEP_SUMMARY")
    #[arg(long, value_name = "FILE")]
    pub summary_file: Option<PathBuf>,
}
