//! Options of `fuse`: the TREC runs to combine, the run-fusion method and its
//! parameters, and where the fused run goes.

use std::path::PathBuf;

use clap::Args;

use super::choices;
use crate::configuration::{ListMethod, Normalization};

pub(super) const FUSE_EXAMPLES: &str = "\
Examples:
  hyde-eval fuse --method rrf bm25.run dense.run > fused.run
      reciprocal rank fusion, k = 60 (--k to change it)
  hyde-eval fuse --method wsum --norm zmuv --weights 0.7,0.3 bm25.run dense.run -o fused.run
  hyde-eval fuse --method combmnz --norm max a.run b.run c.run --depth 100
  hyde-eval fuse --method gmnz --gamma 0.5 a.run b.run c.run

Each method follows ranx's definition (ranx.fusion, ranx.normalization), checked by
scripts/fusion_reference.py: a run's ranks are its order by score descending, then
docno ascending; the fused run is ordered the same way and carries the fused scores
(trec_eval orders equal scores by docno descending). Score-based methods (combsum,
combmnz, wsum, max, min, med, anz, gmnz) normalize each run's scores per query first
(--norm, default min-max; every denominator below 1e-9 is raised to 1e-9); rrf, borda,
isr, log_isr and logn_isr read ranks only. A query missing from a run counts as an
empty ranking there. See docs/fusion.md.";

/// `hyde-eval fuse`.
#[derive(Debug, Args)]
pub struct FuseArgs {
    /// TREC run files (`qid Q0 docno rank score tag`), two or more
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<PathBuf>,

    /// The fusion method
    #[arg(long, value_parser = choices(&ListMethod::CHOICES))]
    pub method: ListMethod,

    /// How each run's scores are normalized before a score-based method (all but rrf,
    /// borda, isr, log_isr, logn_isr) [default: min-max]
    #[arg(long, value_parser = choices(&Normalization::CHOICES))]
    pub norm: Option<Normalization>,

    /// wsum's weights, one per run, in the order of the runs (e.g. 0.7,0.3)
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub weights: Vec<f64>,

    /// RRF's k: a document at rank r earns 1/(k + r) [default: 60]
    #[arg(long, value_name = "K")]
    pub k: Option<usize>,

    /// gmnz's gamma: CombSUM x (runs holding the document)^gamma (required with gmnz)
    #[arg(long, value_name = "GAMMA", allow_negative_numbers = true)]
    pub gamma: Option<f64>,

    /// logn_isr's sigma, in [0, 1]: ln(runs holding the document + sigma) [default: 0.01]
    #[arg(long, value_name = "SIGMA", allow_negative_numbers = true)]
    pub sigma: Option<f64>,

    /// Results kept per query in the fused run
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub depth: usize,

    /// The run tag of the fused run [default: the method's name]
    #[arg(long, value_name = "TAG")]
    pub tag: Option<String>,

    /// Write the fused run to FILE instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// With --output: replace FILE even when hyde-eval did not write it or it was
    /// changed since (never one of the runs)
    #[arg(long, requires = "output")]
    pub force: bool,
}
