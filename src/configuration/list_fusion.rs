//! The parameters of a configuration that fuses ranked lists: the run-fusion method
//! ([`ListMethod`]), the normalization before a score-based method ([`Normalization`]),
//! and [`ListFusion`], what a configuration's `Params` carry. Data only: the methods
//! themselves are `fusion::runs`.

use serde::{Deserialize, Serialize};

/// A run-fusion method, as ranx defines it (`ranx.fusion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListMethod {
    /// Reciprocal rank fusion: the sum of `1 / (k + rank)`, ranks from 1.
    Rrf,
    /// CombSUM: the sum of the (normalized) scores.
    Combsum,
    /// CombMNZ: CombSUM times the number of lists holding the document.
    Combmnz,
    /// The weighted sum of the (normalized) scores.
    Wsum,
    /// BordaFuse: each list gives `candidates - position` points, and
    /// `(candidates - length + 1) / 2` to every candidate it does not hold.
    Borda,
    /// CombMAX: the highest score (missing: -1e9).
    Max,
    /// CombMIN: the lowest score (missing: 1e9).
    Min,
    /// CombMED: the median of the scores of the lists holding the document.
    Med,
    /// CombANZ: CombSUM divided by the number of lists holding the document.
    Anz,
    /// CombGMNZ: CombSUM times the number of lists holding the document to the power
    /// gamma. `hyde-eval fuse` only (`--gamma`): ranx gives gamma no default and a
    /// configuration has no parameter for it, so a configuration cannot name it.
    #[serde(skip_deserializing)]
    Gmnz,
    /// ISR: the sum of `1 / rank²` times the number of lists holding the document.
    Isr,
    /// log_ISR: the sum of `1 / rank²` times the log of that number.
    #[serde(rename = "log_isr")]
    LogIsr,
    /// logn_ISR: the sum of `1 / rank²` times the log of that number plus sigma (`fuse
    /// --sigma`; 0.01, ranx's default, in a configuration).
    #[serde(rename = "logn_isr")]
    LognIsr,
}

impl ListMethod {
    /// Every method, with a line on each (for help texts).
    pub const CHOICES: [(ListMethod, &'static str); 13] = [
        (
            ListMethod::Rrf,
            "reciprocal rank fusion: sum of 1/(k + rank)",
        ),
        (ListMethod::Combsum, "CombSUM: sum of the normalized scores"),
        (
            ListMethod::Combmnz,
            "CombMNZ: CombSUM x number of runs holding the document",
        ),
        (
            ListMethod::Wsum,
            "weighted sum of the normalized scores (--weights)",
        ),
        (
            ListMethod::Borda,
            "BordaFuse: candidates - position points per run",
        ),
        (ListMethod::Max, "CombMAX: highest normalized score"),
        (ListMethod::Min, "CombMIN: lowest normalized score"),
        (
            ListMethod::Med,
            "CombMED: median of the normalized scores of the runs holding the document",
        ),
        (
            ListMethod::Anz,
            "CombANZ: CombSUM / number of runs holding the document",
        ),
        (
            ListMethod::Gmnz,
            "CombGMNZ: CombSUM x number of runs holding the document ^ gamma (--gamma)",
        ),
        (
            ListMethod::Isr,
            "ISR: sum of 1/rank^2 x number of runs holding the document",
        ),
        (
            ListMethod::LogIsr,
            "log_ISR: sum of 1/rank^2 x ln(number of runs holding the document)",
        ),
        (
            ListMethod::LognIsr,
            "logn_ISR: sum of 1/rank^2 x ln(number of runs holding it + sigma) (--sigma)",
        ),
    ];

    pub fn name(self) -> &'static str {
        match self {
            ListMethod::Rrf => "rrf",
            ListMethod::Combsum => "combsum",
            ListMethod::Combmnz => "combmnz",
            ListMethod::Wsum => "wsum",
            ListMethod::Borda => "borda",
            ListMethod::Max => "max",
            ListMethod::Min => "min",
            ListMethod::Med => "med",
            ListMethod::Anz => "anz",
            ListMethod::Gmnz => "gmnz",
            ListMethod::Isr => "isr",
            ListMethod::LogIsr => "log_isr",
            ListMethod::LognIsr => "logn_isr",
        }
    }

    /// True for the methods that read only each list's order (RRF, Borda and the ISR
    /// family), so a normalization of the scores cannot change them.
    pub fn reads_ranks_only(self) -> bool {
        matches!(
            self,
            ListMethod::Rrf
                | ListMethod::Borda
                | ListMethod::Isr
                | ListMethod::LogIsr
                | ListMethod::LognIsr
        )
    }
}

/// How each list's scores are rescaled before a score-based fusion, as ranx's
/// `ranx.normalization` does it (a denominator below 1e-9 is raised to 1e-9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Normalization {
    /// The scores as they are.
    None,
    /// `(s - min) / (max - min)`.
    MinMax,
    /// `s / max`.
    Max,
    /// `(s - min) / (sum - min x n)`.
    Sum,
    /// Zero mean, unit variance (z-score): `(s - mean) / std` (population std).
    Zmuv,
    /// The scores replaced by the ranks: `1 - position / length`, positions from 0.
    Rank,
    /// Borda points over all lists' candidates: `1 - position / candidates` for a
    /// document the list holds, `0.5 - (length - 1) / (2 x candidates)` for every other
    /// candidate, so that afterwards every list holds every candidate.
    Borda,
}

impl Normalization {
    /// Every normalization, with a line on each (for help texts).
    pub const CHOICES: [(Normalization, &'static str); 7] = [
        (Normalization::None, "the scores as they are"),
        (Normalization::MinMax, "(s - min) / (max - min)"),
        (Normalization::Max, "s / max"),
        (Normalization::Sum, "(s - min) / (sum - min x n)"),
        (Normalization::Zmuv, "z-score: (s - mean) / std"),
        (Normalization::Rank, "1 - (rank - 1) / length"),
        (
            Normalization::Borda,
            "1 - (rank - 1) / candidates; a run's missing candidates 0.5 - (length - 1) / (2 x candidates)",
        ),
    ];

    pub fn name(self) -> &'static str {
        match self {
            Normalization::None => "none",
            Normalization::MinMax => "min-max",
            Normalization::Max => "max",
            Normalization::Sum => "sum",
            Normalization::Zmuv => "zmuv",
            Normalization::Rank => "rank",
            Normalization::Borda => "borda",
        }
    }
}

/// RRF's k when none is given (Cormack et al. 2009, and ranx's default).
pub const DEFAULT_RRF_K: usize = 60;

/// The parameters of a configuration that fuses ranked lists (its vector search's and
/// BM25's): the method, the normalization before a score-based method, RRF's k and the
/// weights of the weighted sum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListFusion {
    pub method: ListMethod,
    pub normalization: Normalization,
    pub rrf_k: usize,
    pub vector_weight: f64,
    pub text_weight: f64,
}

impl Default for ListFusion {
    fn default() -> ListFusion {
        ListFusion {
            method: ListMethod::Rrf,
            normalization: Normalization::MinMax,
            rrf_k: DEFAULT_RRF_K,
            vector_weight: 0.5,
            text_weight: 0.5,
        }
    }
}
