//! The measures trec_eval computes: their families and parameters (`-m map -m P.5,10`),
//! the columns they print, and each column's value for one query and over a run.

use crate::dataset::Grade;
use crate::metrics::RankingProfile;

/// trec_eval's default cut-offs for `P`, `recall`, `ndcg_cut`, `map_cut`, `relative_P`.
pub const DEFAULT_CUTOFFS: [f64; 9] = [5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0];
/// trec_eval's default cut-offs for `success`.
pub const DEFAULT_SUCCESS_CUTOFFS: [f64; 3] = [1.0, 5.0, 10.0];
/// trec_eval's default recall levels for `iprec_at_recall` and `11pt_avg` (C literals,
/// so the same doubles as trec_eval's).
pub const DEFAULT_RECALL_LEVELS: [f64; 11] =
    [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
/// trec_eval's floor for `gm_map` (`MIN_GEO_MEAN`).
const MIN_GEOMETRIC_MEAN: f64 = 0.00001;

/// One measure family, in trec_eval's output order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    RunId,
    NumQ,
    NumRet,
    NumRel,
    NumRelRet,
    Map,
    GmMap,
    Rprec,
    Bpref,
    RecipRank,
    IprecAtRecall,
    P,
    Recall,
    ElevenPointAverage,
    Ndcg,
    NdcgCut,
    MapCut,
    RelativeP,
    Success,
    SetP,
    SetRelativeP,
    SetRecall,
    SetMap,
    SetF,
    NumNonrelJudgedRet,
}

/// What a family's parameters are.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ParameterKind {
    None,
    /// Positive integer ranks, printed as `_k`.
    Cutoffs(&'static [f64]),
    /// Recall levels in [0, 1], printed as `_0.10` (`iprec_at_recall`) or averaged into
    /// one value (`11pt_avg`).
    Levels(&'static [f64]),
}

impl Family {
    const ALL: [Family; 25] = [
        Family::RunId,
        Family::NumQ,
        Family::NumRet,
        Family::NumRel,
        Family::NumRelRet,
        Family::Map,
        Family::GmMap,
        Family::Rprec,
        Family::Bpref,
        Family::RecipRank,
        Family::IprecAtRecall,
        Family::P,
        Family::Recall,
        Family::ElevenPointAverage,
        Family::Ndcg,
        Family::NdcgCut,
        Family::MapCut,
        Family::RelativeP,
        Family::Success,
        Family::SetP,
        Family::SetRelativeP,
        Family::SetRecall,
        Family::SetMap,
        Family::SetF,
        Family::NumNonrelJudgedRet,
    ];

    /// trec_eval's name.
    pub fn name(self) -> &'static str {
        match self {
            Family::RunId => "runid",
            Family::NumQ => "num_q",
            Family::NumRet => "num_ret",
            Family::NumRel => "num_rel",
            Family::NumRelRet => "num_rel_ret",
            Family::Map => "map",
            Family::GmMap => "gm_map",
            Family::Rprec => "Rprec",
            Family::Bpref => "bpref",
            Family::RecipRank => "recip_rank",
            Family::IprecAtRecall => "iprec_at_recall",
            Family::P => "P",
            Family::Recall => "recall",
            Family::ElevenPointAverage => "11pt_avg",
            Family::Ndcg => "ndcg",
            Family::NdcgCut => "ndcg_cut",
            Family::MapCut => "map_cut",
            Family::RelativeP => "relative_P",
            Family::Success => "success",
            Family::SetP => "set_P",
            Family::SetRelativeP => "set_relative_P",
            Family::SetRecall => "set_recall",
            Family::SetMap => "set_map",
            Family::SetF => "set_F",
            Family::NumNonrelJudgedRet => "num_nonrel_judged_ret",
        }
    }

    fn parameter_kind(self) -> ParameterKind {
        match self {
            Family::P | Family::Recall | Family::NdcgCut | Family::MapCut | Family::RelativeP => {
                ParameterKind::Cutoffs(&DEFAULT_CUTOFFS)
            }
            Family::Success => ParameterKind::Cutoffs(&DEFAULT_SUCCESS_CUTOFFS),
            Family::IprecAtRecall | Family::ElevenPointAverage => {
                ParameterKind::Levels(&DEFAULT_RECALL_LEVELS)
            }
            _ => ParameterKind::None,
        }
    }
}

/// trec_eval measures that hyde-eval does not compute; asking for one is an error that
/// says so rather than a silent omission.
const NOT_IMPLEMENTED: &[&str] = &[
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "binG",
    "G",
    "ndcg_rel",
    "Rndcg",
    "rbp",
    "rbp_resid",
    "unj",
    "relstring",
    "ndcg_p",
    "yaap",
];

/// Which measures to compute, with their parameters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeasureSet {
    /// Requested families, each with its cut-offs or levels (empty for the others).
    families: Vec<(Family, Vec<f64>)>,
}

impl MeasureSet {
    /// trec_eval's default set (`official`), restricted to what hyde-eval computes.
    pub fn official() -> MeasureSet {
        let mut set = MeasureSet::default();
        for family in [
            Family::RunId,
            Family::NumQ,
            Family::NumRet,
            Family::NumRel,
            Family::NumRelRet,
            Family::Map,
            Family::GmMap,
            Family::Rprec,
            Family::Bpref,
            Family::RecipRank,
            Family::IprecAtRecall,
            Family::P,
        ] {
            set.add(family, None);
        }
        set
    }

    /// Every measure hyde-eval computes, with default parameters (`all_trec`).
    pub fn all_trec() -> MeasureSet {
        let mut set = MeasureSet::default();
        for family in Family::ALL {
            set.add(family, None);
        }
        set
    }

    fn add(&mut self, family: Family, parameters: Option<Vec<f64>>) {
        let parameters = parameters.unwrap_or_else(|| match family.parameter_kind() {
            ParameterKind::None => Vec::new(),
            ParameterKind::Cutoffs(defaults) | ParameterKind::Levels(defaults) => defaults.to_vec(),
        });
        match self.families.iter_mut().find(|(known, _)| *known == family) {
            Some(entry) => entry.1 = parameters,
            None => self.families.push((family, parameters)),
        }
        self.families.sort_by_key(|(family, _)| *family);
    }

    /// Parses trec_eval `-m` arguments: `official`, `all_trec`, a measure name, or a
    /// measure with its parameters (`P.5,10`, `ndcg_cut.10`, `iprec_at_recall.0.25,0.5`).
    pub fn parse(arguments: &[String]) -> Result<MeasureSet, String> {
        let mut set = MeasureSet::default();
        for argument in arguments {
            let (name, parameters) = match argument.split_once('.') {
                Some((name, parameters)) => (name, Some(parameters)),
                None => (argument.as_str(), None),
            };
            match (name, parameters) {
                ("official", None) => set.merge(MeasureSet::official()),
                ("all_trec", None) => set.merge(MeasureSet::all_trec()),
                _ => {
                    let Some(family) = Family::ALL.into_iter().find(|f| f.name() == name) else {
                        let implemented: Vec<&str> =
                            Family::ALL.iter().map(|family| family.name()).collect();
                        return Err(if NOT_IMPLEMENTED.contains(&name) {
                            format!(
                                "measure {name:?} is a trec_eval measure hyde-eval does not compute; it computes official, all_trec, {}",
                                implemented.join(", ")
                            )
                        } else {
                            format!(
                                "unknown measure {name:?}{}; measures: official, all_trec, {}",
                                crate::hints::suggestion(name, &implemented),
                                implemented.join(", ")
                            )
                        });
                    };
                    let parameters = match (parameters, family.parameter_kind()) {
                        (None, _) => None,
                        (Some(_), ParameterKind::None) => {
                            return Err(format!("measure {name} takes no parameters"))
                        }
                        (Some(list), ParameterKind::Cutoffs(_)) => Some(parse_cutoffs(name, list)?),
                        (Some(list), ParameterKind::Levels(_)) => Some(parse_levels(name, list)?),
                    };
                    set.add(family, parameters);
                }
            }
        }
        Ok(set)
    }

    fn merge(&mut self, other: MeasureSet) {
        for (family, parameters) in other.families {
            self.add(family, Some(parameters));
        }
    }

    pub fn contains(&self, family: Family) -> bool {
        self.families.iter().any(|(known, _)| *known == family)
    }

    /// The per-query columns, in output order (everything but `runid` and `num_q`).
    pub fn columns(&self) -> Vec<Column> {
        let mut columns = Vec::new();
        for (family, parameters) in &self.families {
            let column = |parameter: Option<f64>, levels: Vec<f64>| Column {
                family: *family,
                parameter,
                levels,
            };
            match (family, family.parameter_kind()) {
                (Family::RunId | Family::NumQ, _) => {}
                (Family::ElevenPointAverage, _) => columns.push(column(None, parameters.clone())),
                (_, ParameterKind::None) => columns.push(column(None, Vec::new())),
                _ => columns.extend(
                    parameters
                        .iter()
                        .map(|&parameter| column(Some(parameter), Vec::new())),
                ),
            }
        }
        columns
    }
}

fn parse_cutoffs(name: &str, list: &str) -> Result<Vec<f64>, String> {
    let mut cutoffs = Vec::new();
    for item in list.split(',') {
        match item.trim().parse::<u32>() {
            Ok(k) if k > 0 => cutoffs.push(f64::from(k)),
            _ => {
                return Err(format!(
                "measure {name}: cut-off {item:?} is not a positive integer (e.g. -m {name}.5,10)"
            ))
            }
        }
    }
    cutoffs.sort_by(f64::total_cmp);
    cutoffs.dedup();
    Ok(cutoffs)
}

fn parse_levels(name: &str, list: &str) -> Result<Vec<f64>, String> {
    let mut levels = Vec::new();
    for item in list.split(',') {
        match item.trim().parse::<f64>() {
            Ok(level) if (0.0..=1.0).contains(&level) => levels.push(level),
            _ => {
                return Err(format!(
                    "measure {name}: recall level {item:?} is not a number in [0, 1] (e.g. -m {name}.0.25,0.5)"
                ))
            }
        }
    }
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    Ok(levels)
}

/// One per-query measure value, e.g. `P_10` or `map`.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub family: Family,
    /// The cut-off or recall level, for families printed with one.
    pub parameter: Option<f64>,
    /// The recall levels `11pt_avg` averages over.
    levels: Vec<f64>,
}

impl Column {
    /// trec_eval's printed name: `P_10`, `iprec_at_recall_0.10`, `map`.
    pub fn name(&self) -> String {
        match (self.parameter, self.family) {
            (Some(level), Family::IprecAtRecall) => format!("{}_{level:.2}", self.family.name()),
            (Some(k), _) => format!("{}_{}", self.family.name(), k as u64),
            (None, _) => self.family.name().to_owned(),
        }
    }

    /// Counts are summed over queries and printed as integers; the rest are means.
    pub fn is_count(&self) -> bool {
        matches!(
            self.family,
            Family::NumRet | Family::NumRel | Family::NumRelRet | Family::NumNonrelJudgedRet
        )
    }

    /// trec_eval prints `gm_map` only averaged (a geometric mean), never per query.
    pub fn is_printed_per_query(&self) -> bool {
        self.family != Family::GmMap
    }

    /// The average over queries from the sum of per-query values, as trec_eval does.
    pub(super) fn summarize(&self, total: f64, queries: usize) -> f64 {
        match self.family {
            _ if self.is_count() => total,
            _ if queries == 0 => 0.0,
            Family::GmMap => (total / queries as f64).exp(),
            _ => total / queries as f64,
        }
    }

    pub(super) fn value(&self, profile: &RankingProfile, query: &QueryFacts<'_>) -> f64 {
        let k = self.parameter.map_or(usize::MAX, |k| k as usize);
        let returned = profile.returned() as f64;
        let relevant = profile.relevant_total() as f64;
        let relevant_returned = profile.relevant_in_top(usize::MAX) as f64;
        let ratio = |numerator: f64, denominator: f64| {
            if denominator > 0.0 {
                numerator / denominator
            } else {
                0.0
            }
        };
        let set_precision = ratio(relevant_returned, returned);
        let set_recall = ratio(relevant_returned, relevant);
        match self.family {
            Family::NumRet => returned,
            Family::NumRel => relevant,
            Family::NumRelRet => relevant_returned,
            Family::NumNonrelJudgedRet => query.judged_nonrelevant_returned as f64,
            Family::Map => profile.average_precision(),
            Family::GmMap => profile.average_precision().max(MIN_GEOMETRIC_MEAN).ln(),
            Family::Rprec => profile.r_precision(),
            Family::Bpref => query.bpref(profile.relevant_total()),
            Family::RecipRank => profile.reciprocal_rank(),
            Family::IprecAtRecall => {
                profile.interpolated_precision(self.parameter.unwrap_or_default())
            }
            Family::ElevenPointAverage => {
                // trec_eval adds the levels from the highest down.
                let sum = self
                    .levels
                    .iter()
                    .rev()
                    .map(|&level| profile.interpolated_precision(level))
                    .fold(0.0, |total, value| total + value);
                ratio(sum, self.levels.len() as f64)
            }
            Family::P => profile.precision(k),
            Family::Recall => profile.recall(k),
            Family::Ndcg => profile.ndcg(usize::MAX),
            Family::NdcgCut => profile.ndcg(k),
            Family::MapCut => profile.average_precision_at(k),
            Family::RelativeP => ratio(profile.relevant_in_top(k) as f64, relevant.min(k as f64)),
            Family::Success => profile.success(k),
            Family::SetP => set_precision,
            Family::SetRelativeP => ratio(relevant_returned, returned.min(relevant)),
            Family::SetRecall => set_recall,
            Family::SetMap => set_precision * set_recall,
            Family::SetF => ratio(2.0 * set_precision * set_recall, set_precision + set_recall),
            Family::RunId | Family::NumQ => unreachable!("not a per-query column"),
        }
    }
}

/// What the judgment-based measures need besides the [`RankingProfile`].
pub(super) struct QueryFacts<'g> {
    /// Grades in rank order; negative for unjudged results.
    pub(super) grades: &'g [Grade],
    pub(super) level: Grade,
    /// Judged results (grade >= 0) below the relevance level.
    pub(super) judged_nonrelevant_returned: usize,
    /// Judgments below the relevance level (grade >= 0).
    pub(super) judged_nonrelevant: usize,
}

impl QueryFacts<'_> {
    /// trec_eval's `bpref`: over judged results only, each relevant one scores
    /// 1 - min(nonrelevant above it, R) / min(judged nonrelevant, R); the sum over R.
    fn bpref(&self, relevant: usize) -> f64 {
        let mut nonrelevant_so_far = 0usize;
        let mut sum = 0.0;
        for &grade in self.grades {
            if grade < 0 {
                continue;
            }
            if grade < self.level {
                nonrelevant_so_far += 1;
            } else if nonrelevant_so_far > 0 {
                sum += 1.0
                    - nonrelevant_so_far.min(relevant) as f64
                        / self.judged_nonrelevant.min(relevant) as f64;
            } else {
                sum += 1.0;
            }
        }
        if relevant > 0 {
            sum / relevant as f64
        } else {
            0.0
        }
    }
}
