//! Fusion: how one configuration's signals for one query become its ranking. One file
//! per method, each holding all of that method's knowledge: [`keyword_temporal`],
//! [`bm25`], [`cosine`], [`blend`], [`hybrid`], [`ranked_lists`] (whose run-fusion
//! methods, RRF, CombSUM, CombMNZ, weighted sum and Borda, are in [`runs`], one file
//! each, shared with `hyde-eval fuse`). This file holds what they share: the
//! candidates, the per-query inputs a method reads ([`SignalSources`]), the
//! [`FusionMethod`] trait they implement, the two routes every method is run by, and
//! [`method`], the dispatch keyed by [`Fusion`].
//!
//! A method generates a query's candidates (facts with their raw semantic, lexical and
//! temporal signals) and scores each with its [`Scorer`]: its parameters plus any state
//! found over the whole set of candidates (the blend's min-max scalings). Both routes
//! walk the same candidates, in the same order, through the same scorer:
//! - the **table route** ([`Fuser::candidate_table`], then [`Fuser::fuse`]) keeps the
//!   candidates in a [`CandidateTable`], so a sweep re-fuses them at every parameter
//!   point without recomputing a signal;
//! - the **streaming route** ([`Fuser::fused_ranking`], used by `run`) scores them as
//!   they come off the lexical accumulators and keeps only the best `depth`: a keyword
//!   match table can hold most of a million-fact corpus (32 bytes a fact), so keyword,
//!   BM25 and blend rankings never build one. The small tables of vector hits (cosine,
//!   hybrid) are still built. Methods that read keyword relevance (keyword × temporal
//!   and the blend) take the query's keyword matches grouped by relevance instead
//!   ([`keyword_groups`]), found once per query and keyword list, and score only the
//!   groups whose bound can reach the top `depth` ([`FusionMethod::pruned_ranking`]).
//!
//! So the two routes cannot drift: their rankings are equal to the bit
//! (`tests/pipeline_behaviour.rs` checks it on every configuration, and
//! `tests/reference_implementations.rs` on inputs where the cut skips groups).
//!
//! Fusion sees one query at a time and must not reach up: it imports `configuration`,
//! `index` and below, never the pipeline (which decides what is searched and hands the
//! hits in), results, reports, sweeps, settings or the command line.
//!
//! Adding a method: a [`Fusion`] variant in `configuration.rs` (and a preset whose plan
//! uses it), a file here with a type that implements [`FusionMethod`] (its candidates,
//! its scorer, the parameters it reads and those it reads only at some settings of
//! others, its weight axes if it blends weights, how deep it reads vector searches), and
//! its arm in [`method`]. The pipeline, sweeps and both
//! routes need no change.

pub mod blend;
pub mod bm25;
pub mod cosine;
pub mod hybrid;
pub mod keyword_groups;
pub mod keyword_temporal;
pub mod lexical_memo;
pub mod ranked_lists;
pub mod runs;

use crate::configuration::{Fusion, Params, Plan, Preset, PARAM_NAMES};
use crate::index::{select_top_by_score_then_id, FactIndex, LexicalIndex, ScoredFacts};

pub use blend::{min_max_normalize, MIN_NORMALIZATION_SPAN};
pub use lexical_memo::LexicalMemo;

/// One candidate fact and its raw signals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub fact: FactIndex,
    pub semantic: f64,
    pub lexical: f64,
    pub temporal: f64,
}

impl Candidate {
    /// A candidate with only its temporal signal (`temporal` holds every fact's); the
    /// others are 0 until a method fills them in.
    pub fn blank(fact: FactIndex, temporal: &[f64]) -> Candidate {
        Candidate {
            fact,
            semantic: 0.0,
            lexical: 0.0,
            temporal: temporal[fact as usize],
        }
    }
}

/// How a table ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// Fuse the candidates' signals.
    Signals,
    /// chatcli's empty-input rule: every fact, by temporal score.
    AllByTemporal,
}

/// A query's candidates for one configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateTable {
    pub kind: TableKind,
    pub candidates: Vec<Candidate>,
}

/// The vector searches of one configuration for one query: each search vector's nearest
/// facts (score descending, id ascending, no floor), precomputed in one batch.
#[derive(Clone, Copy)]
pub struct Searches<'a> {
    pub hits: &'a [&'a [(FactIndex, f64)]],
    /// Every search vector is zero (or there is none).
    pub all_zero: bool,
}

impl Searches<'_> {
    /// What [`crate::index::FlatIndex::search`] returns for search vector `position`:
    /// the first `limit` hits with cosine >= `floor`.
    pub fn top(
        &self,
        position: usize,
        limit: usize,
        floor: f64,
    ) -> impl Iterator<Item = (FactIndex, f64)> + '_ {
        self.hits[position]
            .iter()
            .take(limit)
            .take_while(move |&&(_, score)| score >= floor)
            .copied()
    }
}

/// What one configuration's signals for one query are computed from: everything a
/// method may read.
#[derive(Clone, Copy)]
pub struct SignalSources<'a> {
    /// The query's keywords, when the plan has a keyword source.
    pub keywords: Option<&'a [String]>,
    /// The nearest facts of each vector the plan searches, as deep as
    /// [`Fuser::search_depth`] asked.
    pub searches: Searches<'a>,
    pub query_text: &'a str,
    pub params: &'a Params,
    /// The lexical index of the corpus.
    pub lexical: &'a LexicalIndex,
    /// The temporal score of every fact, by position (one per fact of the corpus).
    pub temporal: &'a [f64],
    /// A search engine's text ranking of the query (best first), when the run's engine
    /// ranks text: methods with [`MethodSpec::text_ranking`] read it instead of BM25.
    pub text_hits: Option<&'a [(FactIndex, f64)]>,
    /// The query's lexical results shared by its configurations (keyword matches
    /// grouped by relevance, BM25 tops): the streaming route reads them
    /// ([`FusionMethod::pruned_ranking`]). `None` in the table route.
    pub lexical_memo: Option<&'a LexicalMemo>,
}

impl SignalSources<'_> {
    /// The number of facts in the corpus.
    pub fn fact_count(&self) -> usize {
        self.temporal.len()
    }

    /// Every fact of the corpus as a blank candidate (see [`Candidate::blank`]).
    pub fn every_fact(&self) -> impl Iterator<Item = Candidate> + '_ {
        (0..self.fact_count() as FactIndex).map(|fact| Candidate::blank(fact, self.temporal))
    }
}

/// What a method knows about itself besides its candidates and scores.
#[derive(Debug, Clone, Copy)]
pub struct MethodSpec {
    /// The parameters (names of [`crate::configuration::PARAM_NAMES`]) whose change can
    /// change this method's rankings (see [`plan_reads`]).
    pub params: &'static [&'static str],
    /// For a method that blends weighted signals: the weights a weight sweep moves over
    /// their simplex, in grid order (empty for the others).
    pub weight_axes: &'static [WeightAxis],
    /// Reads chatcli keyword relevance (the lexical index builds keyword vocabularies).
    pub keyword_relevance: bool,
    /// Reads BM25 scores (the lexical index builds BM25 postings for the configuration's
    /// analyzer).
    pub bm25: bool,
    /// Its lexical side reads only the order of a text ranking of the query, which a
    /// search engine that ranks text serves in place of BM25 ([`SignalSources::text_hits`]).
    pub text_ranking: bool,
}

/// One weight a weight sweep moves: its name (a sweep axis) and where it is in [`Params`].
#[derive(Debug, Clone, Copy)]
pub struct WeightAxis {
    pub name: &'static str,
    /// The parameter of [`crate::configuration::PARAM_NAMES`] the weight is (part of).
    pub parameter: &'static str,
    pub get: fn(&Params) -> f64,
    pub set: fn(&mut Params, f64),
}

/// Scores one candidate of a set: `None` drops it from the ranking.
pub trait Scorer {
    fn score(&self, candidate: &Candidate) -> Option<f64>;
}

/// A query's candidates in fact order, to be walked twice: once in place, for a
/// scorer's state over the whole set ([`Self::peek`]), then taken ([`Self::take`]).
pub trait CandidateSet {
    /// At most this many candidates.
    fn size_bound(&self) -> usize;
    /// The candidates, left in place.
    fn peek(&self) -> impl Iterator<Item = Candidate> + '_;
    /// The same candidates in the same order, taken.
    fn take(self) -> impl Iterator<Item = Candidate>;
}

/// What a method hands a query's candidates to: the table route keeps them, the
/// streaming route ranks them as they come.
pub trait CandidateConsumer {
    type Output;
    /// chatcli's empty-input rule: nothing to search with, so every fact ranks by its
    /// temporal score.
    fn all_by_temporal(self) -> Self::Output;
    /// The query's candidates.
    fn signals(self, candidates: impl CandidateSet) -> Self::Output;
}

/// One fusion method: what it reads, the candidates it generates for a query and how it
/// scores one. Every method is run by the same two routes (see the module docs), through
/// [`Fuser`].
pub trait FusionMethod: Sync {
    /// Scores the candidates of one set.
    type Scorer: Scorer;

    /// What the method reads and how sweeps move it.
    const SPEC: MethodSpec;

    /// How many nearest facts the method reads per search vector (0: it reads no
    /// vector search).
    fn search_depth(&self, _params: &Params) -> usize {
        0
    }

    /// Generates one query's candidates from `sources` and hands them to `consumer`.
    fn candidates<C: CandidateConsumer>(
        &self,
        sources: SignalSources<'_>,
        consumer: C,
    ) -> C::Output;

    /// The scorer of one set of candidates under `params`; `candidates` walks the set,
    /// for a method whose scores depend on all of it.
    fn scorer(&self, params: &Params, candidates: impl Iterator<Item = Candidate>) -> Self::Scorer;

    /// The cosine floor one query's vector hits settled on, for a method whose floor
    /// adapts per query (the blend's adaptive floor, when its parameters turn it on);
    /// `None` otherwise.
    fn adaptive_floor(&self, _sources: SignalSources<'_>) -> Option<f64> {
        None
    }

    /// Why, at `params`, this method does not read parameter `name` although
    /// [`MethodSpec::params`] lists it: another parameter turns off what reads it (for
    /// example the adaptive floor's step while the floor is off). `None` (the default)
    /// when the method reads each listed parameter at any setting.
    fn unread_at(&self, _params: &Params, _name: &str) -> Option<String> {
        None
    }

    /// For a method that blends weighted signals, scores every candidate and whose
    /// scorer's score is [`weighted_sum`] of its weights (in [`MethodSpec::weight_axes`]
    /// order) and of terms that no weight changes: those terms for every candidate of
    /// the set, one column per weight axis. `None` (the default) for the others.
    fn weighted_terms(&self, _candidates: &[Candidate]) -> Option<Vec<Vec<f64>>> {
        None
    }

    /// The streaming route's ranking found without scoring every candidate, for a
    /// method that can bound the scores it has not computed; it must equal what ranking
    /// every candidate gives, to the bit. `None` (the default) ranks every candidate.
    fn pruned_ranking(&self, _sources: SignalSources<'_>) -> Option<Vec<(FactIndex, f64)>> {
        None
    }
}

/// `weights[0] * terms[0] + weights[1] * terms[1] + ...`, added left to right: the one
/// formula of weighted-sum scores, shared by the scorers that blend weights and by
/// [`WeightedColumns`], so that both give the same bits.
pub fn weighted_sum(weights: &[f64], terms: &[f64]) -> f64 {
    let mut products = weights
        .iter()
        .zip(terms)
        .map(|(weight, term)| weight * term);
    let first = products.next().unwrap_or(0.0);
    products.fold(first, |total, product| total + product)
}

/// A candidate table laid out once for fusing at many weights: the candidates' facts and,
/// per weight axis, their terms. The ranking at weights `w` is every candidate by
/// [`WeightedColumns::scores`] (descending, fact ascending), which is what
/// [`Fuser::fuse`] gives at those weights, to the bit.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedColumns {
    /// The candidates' facts, in table order.
    pub facts: Vec<FactIndex>,
    /// `terms[axis][candidate]`.
    pub terms: Vec<Vec<f64>>,
}

impl WeightedColumns {
    /// Every candidate's score at `weights` (in weight-axis order) into `scores`: column
    /// by column, in the order [`weighted_sum`] adds.
    pub fn scores(&self, weights: &[f64], scores: &mut Vec<f64>) {
        scores.clear();
        if let ([first, second, third], &[a, b, c]) = (self.terms.as_slice(), weights) {
            // The blend's three axes in one pass, added in the same order.
            scores.extend(
                first
                    .iter()
                    .zip(second)
                    .zip(third)
                    .map(|((x, y), z)| a * x + b * y + c * z),
            );
            return;
        }
        let mut axes = weights.iter().zip(&self.terms);
        match axes.next() {
            Some((&weight, terms)) => scores.extend(terms.iter().map(|term| weight * term)),
            None => scores.resize(self.facts.len(), 0.0),
        }
        for (&weight, terms) in axes {
            for (score, term) in scores.iter_mut().zip(terms) {
                *score += weight * term;
            }
        }
    }
}

/// A fusion method as the pipeline and sweeps call it; every [`FusionMethod`] is one.
pub trait Fuser: Sync {
    /// See [`FusionMethod::SPEC`].
    fn spec(&self) -> MethodSpec;
    /// See [`FusionMethod::search_depth`].
    fn search_depth(&self, params: &Params) -> usize;
    /// The table route, first half: one query's candidates, kept.
    fn candidate_table(&self, sources: SignalSources<'_>) -> CandidateTable;
    /// The table route, second half: a table fused into a ranking (score descending,
    /// fact ascending, at most `params.depth` entries).
    fn fuse(&self, table: &CandidateTable, params: &Params) -> Vec<(FactIndex, f64)>;
    /// The streaming route: what fusing the query's candidate table gives, without
    /// keeping the candidates.
    fn fused_ranking(&self, sources: SignalSources<'_>) -> Vec<(FactIndex, f64)>;
    /// See [`FusionMethod::adaptive_floor`].
    fn adaptive_floor(&self, sources: SignalSources<'_>) -> Option<f64>;
    /// See [`FusionMethod::unread_at`].
    fn unread_at(&self, params: &Params, name: &str) -> Option<String>;
    /// A table laid out for fusing at many weights (see [`FusionMethod::weighted_terms`]);
    /// `None` when the method has no weighted terms or the table ranks every fact by
    /// temporal score.
    fn weighted_columns(&self, table: &CandidateTable) -> Option<WeightedColumns>;
}

impl<M: FusionMethod> Fuser for M {
    fn spec(&self) -> MethodSpec {
        M::SPEC
    }

    fn search_depth(&self, params: &Params) -> usize {
        FusionMethod::search_depth(self, params)
    }

    fn candidate_table(&self, sources: SignalSources<'_>) -> CandidateTable {
        self.candidates(sources, KeepTable { sources })
    }

    fn fuse(&self, table: &CandidateTable, params: &Params) -> Vec<(FactIndex, f64)> {
        let candidates = &table.candidates;
        match table.kind {
            TableKind::AllByTemporal => select_top_by_score_then_id(
                candidates.iter().map(|c| (c.fact, c.temporal)),
                params.depth,
            ),
            TableKind::Signals => rank(self, candidates.as_slice(), params),
        }
    }

    fn fused_ranking(&self, sources: SignalSources<'_>) -> Vec<(FactIndex, f64)> {
        if let Some(ranking) = self.pruned_ranking(sources) {
            return ranking;
        }
        self.candidates(
            sources,
            RankAsTheyCome {
                method: self,
                sources,
            },
        )
    }

    fn adaptive_floor(&self, sources: SignalSources<'_>) -> Option<f64> {
        FusionMethod::adaptive_floor(self, sources)
    }

    fn unread_at(&self, params: &Params, name: &str) -> Option<String> {
        FusionMethod::unread_at(self, params, name)
    }

    fn weighted_columns(&self, table: &CandidateTable) -> Option<WeightedColumns> {
        if table.kind != TableKind::Signals {
            return None;
        }
        Some(WeightedColumns {
            terms: self.weighted_terms(&table.candidates)?,
            facts: table.candidates.iter().map(|c| c.fact).collect(),
        })
    }
}

/// The method that fuses `fusion`'s rankings.
pub fn method(fusion: Fusion) -> &'static dyn Fuser {
    match fusion {
        Fusion::KeywordTimesTemporal => &keyword_temporal::KeywordTemporal,
        Fusion::Bm25 => &bm25::Bm25,
        Fusion::Cosine => &cosine::Cosine,
        Fusion::Blend => &blend::Blend,
        Fusion::Hybrid => &hybrid::Hybrid,
        Fusion::RankedLists => &ranked_lists::RankedLists,
    }
}

/// Fuses `table` into a ranking with `fusion`'s method: score descending, fact id
/// ascending, at most `params.depth` entries.
pub fn fuse(table: &CandidateTable, fusion: Fusion, params: &Params) -> Vec<(FactIndex, f64)> {
    method(fusion).fuse(table, params)
}

/// True when changing parameter `name` (one of [`crate::configuration::PARAM_NAMES`])
/// can change what a configuration of `plan` retrieves: its plan searches with it
/// ([`Plan::expansion_reads`]) or its fusion method reads it ([`MethodSpec::params`]).
/// Sweeps use it to pick the configurations a parameter affects.
pub fn plan_reads(plan: &Plan, name: &str) -> bool {
    plan.expansion_reads(name) || method(plan.fusion).spec().params.contains(&name)
}

/// Why a configuration of `preset` with `params` would compute the same rankings whatever
/// the value of parameter `name` (one of [`crate::configuration::PARAM_NAMES`]): its plan
/// does not read it ([`plan_reads`]), or another of its parameters turns off what reads it
/// (Gimli's recency in place of the half-life; a method's own cases,
/// [`FusionMethod::unread_at`]). `None` when changing it can change what the
/// configuration retrieves. Settings refuse a parameter set for a configuration that
/// ignores it, and sweeps skip such configurations.
pub fn ignored_parameter(preset: Preset, params: &Params, name: &str) -> Option<String> {
    let plan = preset.plan();
    if !plan_reads(&plan, name) {
        let read: Vec<&str> = PARAM_NAMES
            .iter()
            .copied()
            .filter(|parameter| plan_reads(&plan, parameter))
            .collect();
        return Some(format!(
            "preset {} ({}) reads only {}",
            preset.name(),
            preset.description(),
            read.join(", ")
        ));
    }
    if name == "half_life_days" && params.recency_decay_days > 0.0 {
        return Some(format!(
            "recency_decay_days = {} puts Gimli's recency in place of the temporal score the half-life shapes",
            params.recency_decay_days
        ));
    }
    method(plan.fusion).unread_at(params, name)
}

/// The one scoring code path of both routes: the scorer found over `candidates`, then
/// every candidate scored, the best `params.depth` kept.
fn rank<M: FusionMethod>(
    method: &M,
    candidates: impl CandidateSet,
    params: &Params,
) -> Vec<(FactIndex, f64)> {
    let scorer = method.scorer(params, candidates.peek());
    select_top_by_score_then_id(
        candidates
            .take()
            .filter_map(|candidate| Some((candidate.fact, scorer.score(&candidate)?))),
        params.depth,
    )
}

/// The table route's consumer: keeps the candidates.
struct KeepTable<'a> {
    sources: SignalSources<'a>,
}

impl CandidateConsumer for KeepTable<'_> {
    type Output = CandidateTable;

    fn all_by_temporal(self) -> CandidateTable {
        CandidateTable {
            kind: TableKind::AllByTemporal,
            candidates: self.sources.every_fact().collect(),
        }
    }

    fn signals(self, candidates: impl CandidateSet) -> CandidateTable {
        let mut kept = Vec::with_capacity(candidates.size_bound());
        kept.extend(candidates.take());
        CandidateTable {
            kind: TableKind::Signals,
            candidates: kept,
        }
    }
}

/// The streaming route's consumer: ranks the candidates as they come (every fact by
/// temporal score straight off the temporal scores).
struct RankAsTheyCome<'a, M> {
    method: &'a M,
    sources: SignalSources<'a>,
}

impl<M: FusionMethod> CandidateConsumer for RankAsTheyCome<'_, M> {
    type Output = Vec<(FactIndex, f64)>;

    fn all_by_temporal(self) -> Vec<(FactIndex, f64)> {
        let temporal = self.sources.temporal;
        select_top_by_score_then_id(
            (0..temporal.len() as FactIndex).map(|fact| (fact, temporal[fact as usize])),
            self.sources.params.depth,
        )
    }

    fn signals(self, candidates: impl CandidateSet) -> Vec<(FactIndex, f64)> {
        rank(self.method, candidates, self.sources.params)
    }
}

/// Candidates kept in a table or a list.
impl CandidateSet for &[Candidate] {
    fn size_bound(&self) -> usize {
        self.len()
    }

    fn peek(&self) -> impl Iterator<Item = Candidate> + '_ {
        self.iter().copied()
    }

    fn take(self) -> impl Iterator<Item = Candidate> {
        self.iter().copied()
    }
}

impl CandidateSet for Vec<Candidate> {
    fn size_bound(&self) -> usize {
        self.len()
    }

    fn peek(&self) -> impl Iterator<Item = Candidate> + '_ {
        self.iter().copied()
    }

    fn take(self) -> impl Iterator<Item = Candidate> {
        self.into_iter()
    }
}

/// Facts scored off the lexical accumulators (keyword relevance or BM25), each a
/// candidate with that score as its lexical signal.
pub struct LexicalCandidates<'s, 'a> {
    scored: &'s mut ScoredFacts<'a>,
    temporal: &'s [f64],
}

impl<'s, 'a> LexicalCandidates<'s, 'a> {
    pub fn new(scored: &'s mut ScoredFacts<'a>, temporal: &'s [f64]) -> Self {
        LexicalCandidates { scored, temporal }
    }
}

impl CandidateSet for LexicalCandidates<'_, '_> {
    fn size_bound(&self) -> usize {
        self.scored.len()
    }

    fn peek(&self) -> impl Iterator<Item = Candidate> + '_ {
        let temporal = self.temporal;
        self.scored.peek().map(move |(fact, score)| Candidate {
            lexical: score,
            ..Candidate::blank(fact, temporal)
        })
    }

    fn take(self) -> impl Iterator<Item = Candidate> {
        let temporal = self.temporal;
        self.scored.map(move |(fact, score)| Candidate {
            lexical: score,
            ..Candidate::blank(fact, temporal)
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::configuration::{Fusion, Preset, PARAM_NAMES};

    /// A candidate with the given signals, for the methods' tests.
    pub(crate) fn candidate(
        fact: FactIndex,
        semantic: f64,
        lexical: f64,
        temporal: f64,
    ) -> Candidate {
        Candidate {
            fact,
            semantic,
            lexical,
            temporal,
        }
    }

    #[test]
    fn only_the_blend_lays_out_weighted_columns() {
        // The hybrid blends weights too, but cuts scores below hybrid_min_score and
        // multiplies by recency: its scores are not weighted sums of fixed terms.
        let table = CandidateTable {
            kind: TableKind::Signals,
            candidates: vec![candidate(0, 0.5, 0.2, 0.9), candidate(3, 0.1, 0.4, 0.3)],
        };
        for preset in Preset::ALL {
            let fusion = preset.plan().fusion;
            assert_eq!(
                method(fusion).weighted_columns(&table).is_some(),
                fusion == Fusion::Blend,
                "{fusion:?}"
            );
        }
    }

    #[test]
    fn weighted_sums_add_left_to_right() {
        // 0.1 + 0.2 + 0.3 differs in the last bit from 0.1 + (0.2 + 0.3).
        assert_eq!(
            weighted_sum(&[1.0, 1.0, 1.0], &[0.1, 0.2, 0.3]),
            (0.1 + 0.2) + 0.3
        );
        assert_ne!((0.1 + 0.2) + 0.3, 0.1 + (0.2 + 0.3));
        let columns = WeightedColumns {
            facts: vec![7],
            terms: vec![vec![0.1], vec![0.2], vec![0.3]],
        };
        let mut scores = Vec::new();
        columns.scores(&[1.0, 1.0, 1.0], &mut scores);
        assert_eq!(scores, [(0.1 + 0.2) + 0.3]);
        // Any other number of axes: column by column, in the same order.
        let columns = WeightedColumns {
            facts: vec![7, 9],
            terms: vec![vec![0.1, 0.5], vec![0.2, 0.25]],
        };
        columns.scores(&[0.5, 2.0], &mut scores);
        assert_eq!(scores, [0.5 * 0.1 + 2.0 * 0.2, 0.75]);
    }

    #[test]
    fn every_method_names_known_parameters_and_weight_axes() {
        for preset in Preset::ALL {
            let spec = method(preset.plan().fusion).spec();
            for name in spec.params {
                assert!(PARAM_NAMES.contains(name), "{name}");
            }
            for axis in spec.weight_axes {
                assert!(spec.params.contains(&axis.parameter), "{}", axis.name);
            }
            let mut params = Params::default();
            for (index, axis) in spec.weight_axes.iter().enumerate() {
                (axis.set)(&mut params, index as f64 + 0.5);
                assert_eq!((axis.get)(&params), index as f64 + 0.5, "{}", axis.name);
            }
        }
    }
}
