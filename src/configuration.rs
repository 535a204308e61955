//! Retrieval configurations as data: a [`Preset`] names which signals and which fusion a
//! configuration uses (its [`Plan`]); [`Params`] hold every number. A new configuration is
//! a preset plus overrides, never new code.

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::text::Analyzer;

mod list_fusion;
pub use list_fusion::{ListFusion, ListMethod, Normalization, DEFAULT_RRF_K};

/// Blend weights for chatcli's ranker: semantic, lexical, temporal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Weights {
    pub semantic: f64,
    pub lexical: f64,
    pub temporal: f64,
}

/// The most results, candidates or cut-off positions a parameter may ask for per query.
/// Larger values are refused rather than left to overflow or exhaust memory.
pub const MAX_RESULTS: usize = crate::dataset::manifest::MAX_CUTOFF;

/// The largest weight of a list fusion (`fusion_vector_weight`, `fusion_text_weight`):
/// the weighted sum multiplies scores as the normalization leaves them (raw BM25 scores
/// under `none`, up to 1e9 under `max` for negative cosines), and products of weights up
/// to this bound with those stay far from overflowing.
pub const MAX_LIST_WEIGHT: f64 = 1e100;

/// The most hypotheses or hypothesis keywords a configuration may ask for per query.
pub const MAX_PER_QUERY_ITEMS: usize = 1_000;

impl Weights {
    /// The same weights divided by their sum, so only their proportions matter and a
    /// blended score stays in [0, 1]: `1,1,1` and `1e308,1e308,1e308` blend alike.
    /// chatcli's defaults already sum to exactly 1 and are returned unchanged. Weights
    /// whose sum overflows are first divided by the largest. Call after validation
    /// (finite, non-negative, not all zero).
    pub fn normalized(self) -> Weights {
        let parts = [self.semantic, self.lexical, self.temporal];
        let mut sum: f64 = parts.iter().sum();
        let mut scale = 1.0;
        if !sum.is_finite() {
            scale = parts.iter().copied().fold(0.0, f64::max);
            sum = parts.iter().map(|part| part / scale).sum();
        }
        let normalize = |part: f64| part / scale / sum;
        Weights {
            semantic: normalize(self.semantic),
            lexical: normalize(self.lexical),
            temporal: normalize(self.temporal),
        }
    }
}

/// The most searches the adaptive floor may step through for one query.
pub const MAX_FLOOR_STEPS: f64 = 1_000.0;

/// The largest BM25 k1 accepted (k1 saturates term frequency; past a few it is linear).
pub const MAX_BM25_K1: f64 = 1_000.0;

/// chatcli's default blend weights.
pub const CHATCLI_WEIGHTS: Weights = Weights {
    semantic: 0.55,
    lexical: 0.30,
    temporal: 0.15,
};

/// Every tunable number of the pipeline. Each configuration carries a full set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Blend weights (configurations that fuse with chatcli's ranker).
    pub weights: Weights,
    /// Vector hits kept per search (chatcli VectorTopK).
    pub vector_top_k: usize,
    /// Minimum cosine for a vector hit (chatcli MinCosineScore; kept when >= floor).
    pub min_cosine: f64,
    /// Hypothesis keywords added by HyDE 3a (chatcli NumKeywords).
    pub hyde_keywords: usize,
    /// Hypotheses used per query.
    pub num_hypotheses: usize,
    /// Temporal half-life in days.
    pub half_life_days: f64,
    pub bm25_k1: f64,
    pub bm25_b: f64,
    /// How BM25 turns text into terms (`chatcli` or `english`).
    pub bm25_analyzer: Analyzer,
    /// Gimli hybrid: weight of the vector score.
    pub hybrid_vector_weight: f64,
    /// Gimli hybrid: weight of the text score `1 / (1 + BM25 rank)`.
    pub hybrid_text_weight: f64,
    /// Gimli hybrid: each search fetches `limit x multiplier` candidates.
    pub hybrid_candidate_multiplier: usize,
    /// Gimli hybrid: fused scores below this are dropped.
    pub hybrid_min_score: f64,
    /// Gimli hybrid: result limit; 0 means "the largest evaluated k".
    pub hybrid_limit: usize,
    /// multi-hyde adaptive floor: start here and step down to `min_cosine` until a
    /// search returns hits; 0 disables it (plain `min_cosine`).
    pub adaptive_floor_start: f64,
    pub adaptive_floor_step: f64,
    /// Skip HyDE for queries of at most this many words (0 = never skip).
    pub skip_short_queries: usize,
    /// Skip HyDE when the query mentions code (backticks or a code-like identifier).
    pub skip_code_mentions: bool,
    /// Skip HyDE for queries shorter than this many characters (ctx-sys
    /// `minQueryLength`, which defaults to 10; 0 = never skip). Omitted from JSON at 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_query_chars: usize,
    /// Use HyDE only for explain / how / why / general questions, skipping lookups
    /// (ctx-sys `hydeIntents`; see `pipeline::expand::query_intent`). Omitted from JSON
    /// when off.
    #[serde(default, skip_serializing_if = "is_false")]
    pub intent_gate: bool,
    /// Gimli's recency factor `max(0.5, 1 - days / recency_decay_days)` (Gimli
    /// recommends 180): when > 0 it replaces chatcli's temporal score as every method's
    /// temporal signal, and the hybrid multiplies its score by it. 0 = off (omitted
    /// from JSON).
    #[serde(default, skip_serializing_if = "is_zero_days")]
    pub recency_decay_days: f64,
    /// Results kept per query (trec_eval's -M): metrics and run files see this many.
    pub depth: usize,
    /// How a configuration that fuses ranked lists combines them; absent for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lists: Option<ListFusion>,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            weights: CHATCLI_WEIGHTS,
            vector_top_k: 12,
            min_cosine: 0.25,
            hyde_keywords: 5,
            num_hypotheses: 1,
            half_life_days: 30.0,
            bm25_k1: 0.9,
            bm25_b: 0.4,
            bm25_analyzer: Analyzer::Chatcli,
            hybrid_vector_weight: 0.7,
            hybrid_text_weight: 0.3,
            hybrid_candidate_multiplier: 4,
            hybrid_min_score: 0.35,
            hybrid_limit: 0,
            adaptive_floor_start: 0.0,
            adaptive_floor_step: 0.05,
            skip_short_queries: 0,
            skip_code_mentions: false,
            min_query_chars: 0,
            intent_gate: false,
            recency_decay_days: 0.0,
            depth: 1000,
            lists: None,
        }
    }
}

fn is_zero(value: &usize) -> bool {
    *value == 0
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero_days(value: &f64) -> bool {
    *value == 0.0
}

/// Declares [`ParamOverrides`] and [`PARAM_NAMES`] from one list of parameters, so the
/// names a config file, `--set` and sweeps accept and the names [`ParamOverrides::names`]
/// reports are the struct's own fields.
macro_rules! param_overrides {
    ($($name:ident: $type:ty),* $(,)?) => {
        /// Partial [`Params`]: what a config file section or the command line sets.
        #[derive(Debug, Clone, Default, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct ParamOverrides {
            $(pub $name: Option<$type>,)*
        }

        /// Names of every parameter, for help text and error hints.
        pub const PARAM_NAMES: &[&str] = &[$(stringify!($name)),*];

        impl ParamOverrides {
            /// The parameters this sets, in [`PARAM_NAMES`] order.
            pub fn names(&self) -> Vec<&'static str> {
                let mut names = Vec::new();
                $(
                    if self.$name.is_some() {
                        names.push(stringify!($name));
                    }
                )*
                names
            }
        }
    };
}

param_overrides! {
    weights: Weights,
    vector_top_k: usize,
    min_cosine: f64,
    hyde_keywords: usize,
    num_hypotheses: usize,
    half_life_days: f64,
    bm25_k1: f64,
    bm25_b: f64,
    bm25_analyzer: Analyzer,
    hybrid_vector_weight: f64,
    hybrid_text_weight: f64,
    hybrid_candidate_multiplier: usize,
    hybrid_min_score: f64,
    hybrid_limit: usize,
    adaptive_floor_start: f64,
    adaptive_floor_step: f64,
    skip_short_queries: usize,
    skip_code_mentions: bool,
    min_query_chars: usize,
    intent_gate: bool,
    recency_decay_days: f64,
    depth: usize,
    fusion: ListMethod,
    normalization: Normalization,
    rrf_k: usize,
    fusion_vector_weight: f64,
    fusion_text_weight: f64,
}

impl ParamOverrides {
    /// The override of one parameter, `name` (one of [`PARAM_NAMES`]) set to `value` in
    /// TOML value syntax, as `--set NAME=VALUE` and sweep ranges write it; the error
    /// explains the expected form.
    pub fn parse(name: &str, value: &str) -> Result<ParamOverrides, String> {
        toml::from_str(&format!("{name} = {}", value.trim())).map_err(|error: toml::de::Error| {
            format!(
                "{} (values are TOML: 12, 0.3, true, {{ semantic = 0.6, lexical = 0.3, temporal = 0.1 }})",
                error.message().trim()
            )
        })
    }

    /// Applies every set field to `params`.
    pub fn apply(&self, params: &mut Params) {
        macro_rules! set {
            ($($field:ident),*) => {$(
                if let Some(value) = self.$field.clone() {
                    params.$field = value;
                }
            )*};
        }
        set!(
            weights,
            vector_top_k,
            min_cosine,
            hyde_keywords,
            num_hypotheses,
            half_life_days,
            bm25_k1,
            bm25_b,
            bm25_analyzer,
            hybrid_vector_weight,
            hybrid_text_weight,
            hybrid_candidate_multiplier,
            hybrid_min_score,
            hybrid_limit,
            adaptive_floor_start,
            adaptive_floor_step,
            skip_short_queries,
            skip_code_mentions,
            min_query_chars,
            intent_gate,
            recency_decay_days,
            depth
        );
        // The list-fusion parameters apply to configurations that fuse ranked lists.
        if let Some(lists) = params.lists.as_mut() {
            if let Some(method) = self.fusion {
                lists.method = method;
            }
            if let Some(normalization) = self.normalization {
                lists.normalization = normalization;
            }
            if let Some(rrf_k) = self.rrf_k {
                lists.rrf_k = rrf_k;
            }
            if let Some(weight) = self.fusion_vector_weight {
                lists.vector_weight = weight;
            }
            if let Some(weight) = self.fusion_text_weight {
                lists.text_weight = weight;
            }
        }
    }
}

impl Params {
    /// Rejects values the pipeline cannot use, naming the configuration and parameter.
    /// (chatcli silently clamps some of these; an evaluation tool should not.)
    pub fn validate(&self, configuration: &str) -> Result<(), Error> {
        let fail = |parameter: &str, problem: String| {
            Err(Error::Usage(format!(
                "configuration {configuration}: {parameter} {problem}"
            )))
        };
        let weights = [
            self.weights.semantic,
            self.weights.lexical,
            self.weights.temporal,
        ];
        if weights
            .iter()
            .any(|weight| !weight.is_finite() || *weight < 0.0)
        {
            return fail(
                "weights",
                format!("must be finite and >= 0, got {weights:?}"),
            );
        }
        if weights.iter().all(|weight| *weight == 0.0) {
            return fail(
                "weights",
                "are all zero; at least one signal needs weight".into(),
            );
        }
        for (name, value, most) in [
            ("vector_top_k", self.vector_top_k, MAX_RESULTS),
            ("depth", self.depth, MAX_RESULTS),
            ("hybrid_limit", self.hybrid_limit, MAX_RESULTS),
            (
                "hybrid_candidate_multiplier",
                self.hybrid_candidate_multiplier,
                MAX_PER_QUERY_ITEMS,
            ),
            ("hyde_keywords", self.hyde_keywords, MAX_PER_QUERY_ITEMS),
            ("num_hypotheses", self.num_hypotheses, MAX_PER_QUERY_ITEMS),
        ] {
            if value > most {
                return fail(name, format!("must be at most {most}, got {value}"));
            }
        }
        if !(0.0..1.0).contains(&self.min_cosine) {
            return fail(
                "min_cosine",
                format!("must be in [0, 1), got {}", self.min_cosine),
            );
        }
        for (name, value) in [
            ("vector_top_k", self.vector_top_k),
            ("hyde_keywords", self.hyde_keywords),
            ("num_hypotheses", self.num_hypotheses),
            (
                "hybrid_candidate_multiplier",
                self.hybrid_candidate_multiplier,
            ),
            ("depth", self.depth),
        ] {
            if value == 0 {
                return fail(name, "must be at least 1".into());
            }
        }
        if !(self.half_life_days.is_finite() && self.half_life_days > 0.0) {
            return fail(
                "half_life_days",
                format!("must be > 0, got {}", self.half_life_days),
            );
        }
        if !(0.0..=MAX_BM25_K1).contains(&self.bm25_k1) {
            return fail(
                "bm25_k1",
                format!("must be in [0, {MAX_BM25_K1}], got {}", self.bm25_k1),
            );
        }
        if !(0.0..=1.0).contains(&self.bm25_b) {
            return fail("bm25_b", format!("must be in [0, 1], got {}", self.bm25_b));
        }
        for (name, value) in [
            ("hybrid_vector_weight", self.hybrid_vector_weight),
            ("hybrid_text_weight", self.hybrid_text_weight),
            ("hybrid_min_score", self.hybrid_min_score),
            ("adaptive_floor_start", self.adaptive_floor_start),
            ("adaptive_floor_step", self.adaptive_floor_step),
            ("recency_decay_days", self.recency_decay_days),
        ] {
            if !value.is_finite() || value < 0.0 {
                return fail(name, format!("must be finite and >= 0, got {value}"));
            }
        }
        if self.hybrid_vector_weight == 0.0 && self.hybrid_text_weight == 0.0 {
            return fail(
                "hybrid_vector_weight and hybrid_text_weight",
                "are both zero, which scores every fact 0; at least one signal needs weight".into(),
            );
        }
        // A fused hybrid score is at most the sum of its weights: keep it finite.
        if !(self.hybrid_vector_weight + self.hybrid_text_weight).is_finite() {
            return fail(
                "hybrid_vector_weight + hybrid_text_weight",
                "overflows; the fused score must stay finite".into(),
            );
        }
        if let Some(lists) = &self.lists {
            for (name, value) in [
                ("fusion_vector_weight", lists.vector_weight),
                ("fusion_text_weight", lists.text_weight),
            ] {
                if !value.is_finite() || value < 0.0 {
                    return fail(name, format!("must be finite and >= 0, got {value}"));
                }
                if value > MAX_LIST_WEIGHT {
                    return fail(
                        name,
                        format!("must be at most {MAX_LIST_WEIGHT:e} (weights are relative; a larger one could make a fused score infinite), got {value:e}"),
                    );
                }
            }
            if lists.vector_weight == 0.0 && lists.text_weight == 0.0 {
                return fail(
                    "fusion_vector_weight and fusion_text_weight",
                    "are both zero, which scores every fact 0; at least one list needs weight"
                        .into(),
                );
            }
            if !(lists.vector_weight + lists.text_weight).is_finite() {
                return fail(
                    "fusion_vector_weight + fusion_text_weight",
                    "overflows; the fused score must stay finite".into(),
                );
            }
            if lists.rrf_k > MAX_RESULTS {
                return fail(
                    "rrf_k",
                    format!("must be at most {MAX_RESULTS}, got {}", lists.rrf_k),
                );
            }
        }
        if self.adaptive_floor_start > 1.0 {
            return fail(
                "adaptive_floor_start",
                format!(
                    "must be at most 1 (a cosine), got {}",
                    self.adaptive_floor_start
                ),
            );
        }
        if self.adaptive_floor_start > 0.0 && self.adaptive_floor_step <= 0.0 {
            return fail(
                "adaptive_floor_step",
                "must be > 0 when adaptive_floor_start is set".into(),
            );
        }
        let floor_steps = (self.adaptive_floor_start - self.min_cosine) / self.adaptive_floor_step;
        if self.adaptive_floor_start > self.min_cosine && floor_steps > MAX_FLOOR_STEPS {
            return fail(
                "adaptive_floor_step",
                format!(
                    "is too small: stepping from {} down to min_cosine {} would take {floor_steps:.0} searches (at most {MAX_FLOOR_STEPS})",
                    self.adaptive_floor_start, self.min_cosine
                ),
            );
        }
        Ok(())
    }
}

/// Where the lexical keywords of a query come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeywordSource {
    /// chatcli `ExtractKeywords(query)`.
    Query,
    /// Query keywords + the first `hyde_keywords` keywords of the first hypothesis
    /// (HyDE 3a, chatcli merge rules).
    QueryAndHypothesis,
}

/// Which vector a configuration searches with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchVector {
    /// The raw query's embedding.
    Query,
    /// The first hypothesis' embedding (true HyDE).
    FirstHypothesis,
    /// Mean of the query and `num_hypotheses` hypothesis embeddings, searched once.
    MeanOfQueryAndHypotheses,
    /// Each of `num_hypotheses` hypotheses searched separately; union, max score.
    EachHypothesis,
    /// Element-wise mean of `num_hypotheses` hypothesis embeddings (each L2-normalized
    /// first), without the query's, searched once (the backend plan).
    MeanOfHypotheses,
}

/// How signals become one ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fusion {
    /// chatcli keyword-only: facts with relevance > 0, score = temporal x relevance.
    KeywordTimesTemporal,
    /// The BM25 score alone.
    Bm25,
    /// Cosine against every fact.
    Cosine,
    /// chatcli blended ranker: min-max per signal over the candidates, weighted sum.
    Blend,
    /// Gimli hybrid: `w_v x cosine + w_t / (1 + BM25 rank)`, min score.
    Hybrid,
    /// The vector search's and BM25's rankings fused by a run-fusion method (RRF,
    /// CombSUM, CombMNZ, weighted sum, Borda), as ranx fuses runs.
    RankedLists,
}

/// The structure of a configuration: which signals feed which fusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub keywords: Option<KeywordSource>,
    pub vector: Option<SearchVector>,
    pub fusion: Fusion,
}

impl Plan {
    /// True when changing parameter `name` (one of [`PARAM_NAMES`]) can change what this
    /// plan searches with (its keywords, hypotheses and search vectors) or how many
    /// results it keeps. The parameters its fusion method reads are the method's own
    /// knowledge (`fusion::plan_reads` asks both; settings refuse, and sweeps skip, the
    /// parameters a configuration does not read).
    pub fn expansion_reads(&self, name: &str) -> bool {
        match name {
            "hyde_keywords" => self.keywords == Some(KeywordSource::QueryAndHypothesis),
            // Keywords and FirstHypothesis read only the first hypothesis.
            "num_hypotheses" => matches!(
                self.vector,
                Some(
                    SearchVector::MeanOfQueryAndHypotheses
                        | SearchVector::EachHypothesis
                        | SearchVector::MeanOfHypotheses
                )
            ),
            "skip_short_queries" | "skip_code_mentions" | "min_query_chars" | "intent_gate" => {
                self.uses_hypotheses()
            }
            "depth" => true,
            _ => false,
        }
    }

    /// True when the plan reads hypotheses.
    pub fn uses_hypotheses(&self) -> bool {
        self.keywords == Some(KeywordSource::QueryAndHypothesis)
            || matches!(
                self.vector,
                Some(
                    SearchVector::FirstHypothesis
                        | SearchVector::MeanOfQueryAndHypotheses
                        | SearchVector::EachHypothesis
                        | SearchVector::MeanOfHypotheses
                )
            )
    }
}

/// The built-in configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    Keyword,
    Bm25,
    Dense,
    Blend,
    Hyde3a,
    Hyde3b,
    Hyde3bHyp,
    HydeMean,
    MultiHyde,
    Hybrid,
    Bm25DenseRrf,
    Bm25DenseWsum,
    HydeDense,
    MultiHydeDense,
    HydeMeanDense,
}

impl Preset {
    pub const ALL: [Preset; 15] = [
        Preset::Keyword,
        Preset::Bm25,
        Preset::Dense,
        Preset::Blend,
        Preset::Hyde3a,
        Preset::Hyde3b,
        Preset::Hyde3bHyp,
        Preset::HydeMean,
        Preset::MultiHyde,
        Preset::Hybrid,
        Preset::Bm25DenseRrf,
        Preset::Bm25DenseWsum,
        Preset::HydeDense,
        Preset::MultiHydeDense,
        Preset::HydeMeanDense,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Keyword => "keyword",
            Preset::Bm25 => "bm25",
            Preset::Dense => "dense",
            Preset::Blend => "blend",
            Preset::Hyde3a => "hyde-3a",
            Preset::Hyde3b => "hyde-3b",
            Preset::Hyde3bHyp => "hyde-3b-hyp",
            Preset::HydeMean => "hyde-mean",
            Preset::MultiHyde => "multi-hyde",
            Preset::Hybrid => "hybrid",
            Preset::Bm25DenseRrf => "bm25-dense-rrf",
            Preset::Bm25DenseWsum => "bm25-dense-wsum",
            Preset::HydeDense => "hyde-dense",
            Preset::MultiHydeDense => "multi-hyde-dense",
            Preset::HydeMeanDense => "hyde-mean-dense",
        }
    }

    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|preset| preset.name() == name)
    }

    /// True when a run that names no configurations evaluates this preset. The list
    /// fusions and the vector-only HyDE presets run only when named, so the default set
    /// (and the baselines recorded from it) stays as it is.
    pub fn in_default_run(self) -> bool {
        !matches!(
            self,
            Preset::Bm25DenseRrf
                | Preset::Bm25DenseWsum
                | Preset::HydeDense
                | Preset::MultiHydeDense
                | Preset::HydeMeanDense
        )
    }

    /// The configuration without HyDE a HyDE preset's improvement is measured against:
    /// the same fusion with the raw query in place of every hypothesis-derived input
    /// (ctx-sys: HyDE against direct embedding). `None` for presets without hypotheses.
    pub fn counterpart(self) -> Option<Preset> {
        match self {
            Preset::Hyde3a => Some(Preset::Keyword),
            Preset::Hyde3b | Preset::Hyde3bHyp | Preset::HydeMean | Preset::MultiHyde => {
                Some(Preset::Blend)
            }
            Preset::HydeDense | Preset::MultiHydeDense | Preset::HydeMeanDense => {
                Some(Preset::Dense)
            }
            Preset::Keyword
            | Preset::Bm25
            | Preset::Dense
            | Preset::Blend
            | Preset::Hybrid
            | Preset::Bm25DenseRrf
            | Preset::Bm25DenseWsum => None,
        }
    }

    /// One line on what the configuration does.
    pub fn description(self) -> &'static str {
        match self {
            Preset::Keyword => "chatcli keyword-only: relevance x temporal, ties by id",
            Preset::Bm25 => "BM25 on the raw query",
            Preset::Dense => "cosine of the query embedding against every fact",
            Preset::Blend => {
                "chatcli blended ranker without HyDE: query keywords + query cosine + temporal"
            }
            Preset::Hyde3a => {
                "chatcli 3a: query keywords + first N hypothesis keywords, keyword-only scoring"
            }
            Preset::Hyde3b => {
                "chatcli 3b: 3a keywords + QUERY cosine (top-K, floor) + temporal, min-max blend"
            }
            Preset::Hyde3bHyp => {
                "as hyde-3b, but the cosine is of the HYPOTHESIS embedding (true HyDE)"
            }
            Preset::HydeMean => {
                "mean of query and N hypothesis embeddings searched once; raw-query keywords"
            }
            Preset::MultiHyde => {
                "each of N hypotheses searched, union, max score per fact; raw-query keywords"
            }
            Preset::Hybrid => {
                "Gimli hybrid: 0.7 x cosine + 0.3 / (1 + BM25 rank), x4 candidates, min 0.35"
            }
            Preset::Bm25DenseRrf => {
                "BM25 and query-cosine rankings (top depth each) fused by RRF, k = 60"
            }
            Preset::Bm25DenseWsum => {
                "BM25 and query-cosine rankings (top depth each), min-max, weighted sum 0.5/0.5"
            }
            Preset::HydeDense => "cosine of the first hypothesis' embedding alone (no blend)",
            Preset::MultiHydeDense => {
                "each of N hypotheses searched, union keeping each fact's highest cosine alone"
            }
            Preset::HydeMeanDense => {
                "mean of N (2) hypothesis embeddings (no query) searched once, cosine alone"
            }
        }
    }

    /// The seed system or paper the configuration reproduces.
    pub fn source(self) -> &'static str {
        match self {
            Preset::Keyword => "chatcli facts.go Search",
            Preset::Bm25 => {
                "Robertson/Sparck Jones BM25, Lucene idf (Anserini defaults k1=0.9, b=0.4)"
            }
            Preset::Dense => "dense retrieval baseline (chatcli vindex cosine)",
            Preset::Blend => "chatcli ranking.go blended ranker",
            Preset::Hyde3a => "chatcli hyde.go phase 3a",
            Preset::Hyde3b => "chatcli retriever.go phase 3b",
            Preset::Hyde3bHyp => "Gao et al. 2022, HyDE (hypothesis embedding) in chatcli's blend",
            Preset::HydeMean => {
                "Gao et al. 2022 / backend plan: mean of query + hypothesis vectors"
            }
            Preset::MultiHyde => {
                "multi-hypothesis retrieval seed (max-score union, adaptive floor)"
            }
            Preset::Hybrid => "Gimli hybrid search (vector + FTS rank fusion)",
            Preset::Bm25DenseRrf => "Cormack et al. 2009, reciprocal rank fusion (ranx rrf)",
            Preset::Bm25DenseWsum => "ranx fuse(norm=\"min-max\", method=\"wsum\")",
            Preset::HydeDense => "TypeScript HyDE retriever / ctx-sys F6.5 (single hypothesis)",
            Preset::MultiHydeDense => "TypeScript HyDE retriever (multi-hypothesis, max score)",
            Preset::HydeMeanDense => "backend RAG plan (hyde_num_docs = 2, averaged)",
        }
    }

    pub fn plan(self) -> Plan {
        use KeywordSource as K;
        use SearchVector as V;
        let (keywords, vector, fusion) = match self {
            Preset::Keyword => (Some(K::Query), None, Fusion::KeywordTimesTemporal),
            Preset::Bm25 => (None, None, Fusion::Bm25),
            Preset::Dense => (None, Some(V::Query), Fusion::Cosine),
            Preset::Blend => (Some(K::Query), Some(V::Query), Fusion::Blend),
            Preset::Hyde3a => (
                Some(K::QueryAndHypothesis),
                None,
                Fusion::KeywordTimesTemporal,
            ),
            Preset::Hyde3b => (Some(K::QueryAndHypothesis), Some(V::Query), Fusion::Blend),
            Preset::Hyde3bHyp => (
                Some(K::QueryAndHypothesis),
                Some(V::FirstHypothesis),
                Fusion::Blend,
            ),
            Preset::HydeMean => (
                Some(K::Query),
                Some(V::MeanOfQueryAndHypotheses),
                Fusion::Blend,
            ),
            Preset::MultiHyde => (Some(K::Query), Some(V::EachHypothesis), Fusion::Blend),
            Preset::Hybrid => (None, Some(V::Query), Fusion::Hybrid),
            Preset::Bm25DenseRrf | Preset::Bm25DenseWsum => {
                (None, Some(V::Query), Fusion::RankedLists)
            }
            Preset::HydeDense => (None, Some(V::FirstHypothesis), Fusion::Cosine),
            Preset::MultiHydeDense => (None, Some(V::EachHypothesis), Fusion::Cosine),
            Preset::HydeMeanDense => (None, Some(V::MeanOfHypotheses), Fusion::Cosine),
        };
        Plan {
            keywords,
            vector,
            fusion,
        }
    }

    /// The preset's own parameter defaults.
    pub fn default_params(self) -> Params {
        let mut params = Params::default();
        match self {
            Preset::HydeMean | Preset::MultiHyde | Preset::MultiHydeDense => {
                params.num_hypotheses = 3
            }
            Preset::HydeMeanDense => params.num_hypotheses = 2,
            _ => {}
        }
        match self {
            Preset::Bm25DenseRrf => params.lists = Some(ListFusion::default()),
            Preset::Bm25DenseWsum => {
                params.lists = Some(ListFusion {
                    method: ListMethod::Wsum,
                    ..ListFusion::default()
                })
            }
            _ => {}
        }
        params
    }
}

/// A named, fully parameterized configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Configuration {
    pub name: String,
    pub preset: Preset,
    pub params: Params,
}

impl Configuration {
    pub fn plan(&self) -> Plan {
        self.preset.plan()
    }
}
