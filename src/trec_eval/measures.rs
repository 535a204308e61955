//! The measures trec_eval computes: their families and parameters (`-m map -m P.5,10`),
//! the columns they print, and each column's value for one query and over a run.

use super::{NOT_JUDGED, POOL_UNJUDGED};
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
/// trec_eval's default multiples of R for `Rprec_mult`.
pub const DEFAULT_R_MULTIPLES: [f64; 10] = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0];
/// trec_eval's default cut-offs for `unj`.
pub const DEFAULT_UNJUDGED_CUTOFFS: [f64; 3] = [5.0, 10.0, 20.0];
/// trec_eval's default `utility` coefficients: relevant retrieved, nonrelevant retrieved,
/// relevant missed, nonrelevant missed.
pub const DEFAULT_UTILITY_COEFFICIENTS: [f64; 4] = [1.0, -1.0, 0.0, 0.0];
/// trec_eval's floor for `gm_map` and `gm_bpref` (`MIN_GEO_MEAN`).
const MIN_GEOMETRIC_MEAN: f64 = 0.00001;
/// trec_eval's `INFAP_EPSILON`, which keeps `infAP`'s estimate defined with no judged
/// results above.
const INFAP_EPSILON: f64 = 0.00001;
/// The persistence `p` of `rbp` and `rbp_resid` (trec_eval's default).
const RBP_PERSISTENCE: f64 = 0.9;

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
    InfAp,
    GmBpref,
    RprecMult,
    Utility,
    ElevenPointAverage,
    BinG,
    G,
    Ndcg,
    NdcgRel,
    Rndcg,
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
    Rbp,
    RbpResid,
    Unj,
    /// hyde-eval's `judged@k` (ir_measures' `Judged@k`), which trec_eval lacks: judged
    /// results in the top k / min(k, returned).
    Judged,
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
    /// Positive multiples of R, printed as `_0.20` (`Rprec_mult`).
    Multiples(&'static [f64]),
    /// Exactly four coefficients, one value (`utility`).
    Coefficients(&'static [f64]),
}

impl Family {
    const ALL: [Family; 36] = [
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
        Family::InfAp,
        Family::GmBpref,
        Family::RprecMult,
        Family::Utility,
        Family::ElevenPointAverage,
        Family::BinG,
        Family::G,
        Family::Ndcg,
        Family::NdcgRel,
        Family::Rndcg,
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
        Family::Rbp,
        Family::RbpResid,
        Family::Unj,
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
            Family::InfAp => "infAP",
            Family::GmBpref => "gm_bpref",
            Family::RprecMult => "Rprec_mult",
            Family::Utility => "utility",
            Family::ElevenPointAverage => "11pt_avg",
            Family::BinG => "binG",
            Family::G => "G",
            Family::Ndcg => "ndcg",
            Family::NdcgRel => "ndcg_rel",
            Family::Rndcg => "Rndcg",
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
            Family::Rbp => "rbp",
            Family::RbpResid => "rbp_resid",
            Family::Unj => "unj",
            Family::Judged => "judged",
        }
    }

    /// trec_eval's families, then hyde-eval's additions, for lookups by name.
    fn every() -> impl Iterator<Item = Family> {
        Family::ALL.into_iter().chain([Family::Judged])
    }

    /// Whether the relevance level (`-l`, ir_measures' `rel=`) changes the family's
    /// values: not for those that read gains (the positive grades), the number retrieved
    /// or whether a result is judged.
    fn depends_on_level(self) -> bool {
        !matches!(
            self,
            Family::RunId
                | Family::NumQ
                | Family::NumRet
                | Family::Ndcg
                | Family::NdcgCut
                | Family::NdcgRel
                | Family::G
                | Family::Rbp
                | Family::RbpResid
                | Family::Unj
                | Family::Judged
        )
    }

    fn parameter_kind(self) -> ParameterKind {
        match self {
            Family::P | Family::Recall | Family::NdcgCut | Family::MapCut | Family::RelativeP => {
                ParameterKind::Cutoffs(&DEFAULT_CUTOFFS)
            }
            Family::Success => ParameterKind::Cutoffs(&DEFAULT_SUCCESS_CUTOFFS),
            Family::Unj => ParameterKind::Cutoffs(&DEFAULT_UNJUDGED_CUTOFFS),
            // No default: ir_measures' Judged needs its cut-off.
            Family::Judged => ParameterKind::Cutoffs(&[]),
            Family::RprecMult => ParameterKind::Multiples(&DEFAULT_R_MULTIPLES),
            Family::Utility => ParameterKind::Coefficients(&DEFAULT_UTILITY_COEFFICIENTS),
            Family::IprecAtRecall | Family::ElevenPointAverage => {
                ParameterKind::Levels(&DEFAULT_RECALL_LEVELS)
            }
            _ => ParameterKind::None,
        }
    }
}

/// trec_eval measures that hyde-eval does not compute; asking for one is an error that
/// says so rather than a silent omission.
const NOT_IMPLEMENTED: &[&str] = &["ndcg_p", "yaap"];
/// trec_eval's default `relstring` length.
const DEFAULT_RELSTRING_LENGTH: usize = 10;

/// Which measures to compute, with their parameters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeasureSet {
    /// Requested families, each with the parameters given for it (`None`: trec_eval's
    /// defaults).
    families: Vec<(Family, Option<Vec<f64>>)>,
    /// `relstring`'s length, and whether it was given (`relstring.20`, printed
    /// `relstring_20`) rather than the default (printed `relstring`).
    relstring: Option<(usize, bool)>,
    /// The relevance levels ir_measures' `rel=` asked for, each with the `-m` argument
    /// that asked.
    levels: Vec<(Grade, String)>,
    /// The first `-m` argument that named a measure the relevance level changes without
    /// a `rel=`.
    unleveled: Option<String>,
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
            set.families.push((family, None));
        }
        set
    }

    /// Every measure of trec_eval's that hyde-eval computes, with default parameters
    /// (`all_trec`).
    pub fn all_trec() -> MeasureSet {
        MeasureSet {
            families: Family::ALL
                .into_iter()
                .map(|family| (family, None))
                .collect(),
            relstring: Some((DEFAULT_RELSTRING_LENGTH, false)),
            ..MeasureSet::default()
        }
    }

    /// `relstring`'s printed name and length, when requested: trec_eval's string of the
    /// top results' grades, printed per query only.
    pub fn relstring(&self) -> Option<(String, usize)> {
        self.relstring.map(|(length, given)| {
            let name = if given {
                format!("relstring_{length}")
            } else {
                "relstring".to_owned()
            };
            (name, length)
        })
    }

    /// Adds `family` with the parameters given (`None`: the defaults). Each family is
    /// computed once: given parameters win over the defaults, whatever the order (as in
    /// trec_eval: `-m P -m P.7` and `-m P.7 -m P` print `P_7`); two lists of cut-offs,
    /// recall levels or multiples are merged (`-m P.5 -m P@10`, `-m nDCG@10 -m
    /// ndcg_cut.10`), and two different parameter lists of a measure that prints one value
    /// (`utility`, `11pt_avg`) are refused.
    fn add(&mut self, family: Family, parameters: Option<Vec<f64>>) -> Result<(), String> {
        let Some(entry) = self.families.iter_mut().find(|(known, _)| *known == family) else {
            self.families.push((family, parameters));
            self.families.sort_by_key(|(family, _)| *family);
            return Ok(());
        };
        match (&mut entry.1, parameters) {
            (_, None) => {}
            (slot @ None, given) => *slot = given,
            (Some(known), Some(given)) => {
                let merged = !matches!(
                    (family, family.parameter_kind()),
                    (Family::ElevenPointAverage, _) | (_, ParameterKind::Coefficients(_))
                );
                if merged {
                    known.extend(given);
                    known.sort_by(f64::total_cmp);
                    known.dedup();
                } else if *known != given {
                    let list = |values: &[f64]| {
                        values
                            .iter()
                            .map(f64::to_string)
                            .collect::<Vec<_>>()
                            .join(",")
                    };
                    return Err(format!(
                        "measure {} is given twice with different parameters ({} and {}), and it prints one value: give it once",
                        family.name(),
                        list(known),
                        list(&given)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Parses `-m` arguments: `official`, `all_trec`, a measure name, or a measure with
    /// its parameters (`P.5,10`, `ndcg_cut.10`, `iprec_at_recall.0.25,0.5`), in the
    /// spellings [`trec_eval_spelling`] accepts. Measures named twice are computed once.
    pub fn parse(arguments: &[String]) -> Result<MeasureSet, String> {
        let mut set = MeasureSet::default();
        for argument in arguments {
            let Spelling { measure, level } = trec_eval_spelling(argument)?;
            let (name, parameters) = match measure.split_once('.') {
                Some((name, parameters)) => (name, Some(parameters)),
                None => (measure.as_str(), None),
            };
            let family = match (name, parameters) {
                ("official", None) | ("all_trec", None) | ("relstring", _) if level.is_some() => {
                    return Err(format!(
                        "measure {argument:?}: rel= sets the relevance level of one measure of ir_measures', and {name} is not one"
                    ))
                }
                ("official", None) => {
                    set.merge(MeasureSet::official())?;
                    set.unleveled.get_or_insert_with(|| argument.clone());
                    continue;
                }
                ("all_trec", None) => {
                    set.merge(MeasureSet::all_trec())?;
                    set.unleveled.get_or_insert_with(|| argument.clone());
                    continue;
                }
                ("relstring", length) => {
                    set.add_relstring(length)?;
                    continue;
                }
                _ => Family::every()
                    .find(|family| family.name() == name)
                    .ok_or_else(|| unknown_measure(name))?,
            };
            let parameters = match (parameters, family.parameter_kind()) {
                (None, ParameterKind::Cutoffs([])) => {
                    return Err(format!(
                        "measure {name} needs a cut-off, e.g. -m {name}.10 (or {}@10)",
                        "Judged"
                    ))
                }
                (None, _) => None,
                (Some(_), ParameterKind::None) => {
                    return Err(format!("measure {name} takes no parameters"))
                }
                (Some(list), ParameterKind::Cutoffs(_)) => Some(parse_cutoffs(name, list)?),
                (Some(list), ParameterKind::Levels(_)) => Some(parse_levels(name, list)?),
                (Some(list), ParameterKind::Multiples(_)) => Some(parse_multiples(name, list)?),
                (Some(list), ParameterKind::Coefficients(_)) => {
                    Some(parse_coefficients(name, list)?)
                }
            };
            match level {
                Some(_) if !family.depends_on_level() => {
                    return Err(if matches!(family, Family::Ndcg | Family::NdcgCut) {
                        format!(
                            "measure {argument:?}: nDCG's gains are the grades whatever the relevance level (trec_eval's ndcg_cut; ir_measures' nDCG takes no rel=), so rel= would change nothing: drop it"
                        )
                    } else {
                        format!(
                            "measure {argument:?}: {name} does not depend on the relevance level, so rel= would change nothing: drop it"
                        )
                    });
                }
                Some(level) => set.levels.push((level, argument.clone())),
                None if family.depends_on_level() => {
                    set.unleveled.get_or_insert_with(|| argument.clone());
                }
                None => {}
            }
            set.add(family, parameters)?;
        }
        Ok(set)
    }

    /// `relstring` (the default length) or `relstring.N`: a given length wins over the
    /// default; two different given lengths are refused.
    fn add_relstring(&mut self, length: Option<&str>) -> Result<(), String> {
        let Some(length) = length else {
            self.relstring
                .get_or_insert((DEFAULT_RELSTRING_LENGTH, false));
            return Ok(());
        };
        let length = length.trim().parse::<usize>().map_err(|_| {
            format!(
                "measure relstring: length {length:?} is not a whole number (e.g. -m relstring.20)"
            )
        })?;
        match self.relstring {
            Some((known, true)) if known != length => Err(format!(
                "measure relstring is given twice with different lengths ({known} and {length}): give it once"
            )),
            _ => {
                self.relstring = Some((length, true));
                Ok(())
            }
        }
    }

    fn merge(&mut self, other: MeasureSet) -> Result<(), String> {
        for (family, parameters) in other.families {
            self.add(family, parameters)?;
        }
        if self.relstring.is_none() {
            self.relstring = other.relstring;
        }
        Ok(())
    }

    pub fn contains(&self, family: Family) -> bool {
        self.families.iter().any(|(known, _)| *known == family)
    }

    /// The relevance level every measure is computed at (trec_eval computes all at one
    /// level): `explicit` (`-l`), else the one ir_measures' `rel=` asked for, else 1.
    /// Refused, with the reason: two different `rel=` levels; a `rel=` that differs from
    /// `-l`; a `rel=` other than 1 beside a measure the level changes named without one
    /// (ir_measures reads that as rel=1, trec_eval as `-l`), unless `-l` says which.
    pub fn relevance_level(&self, explicit: Option<Grade>) -> Result<Grade, String> {
        let Some((level, asked)) = self.levels.first() else {
            return Ok(explicit.unwrap_or(1));
        };
        if let Some((other, other_asked)) = self.levels.iter().find(|(other, _)| other != level) {
            return Err(format!(
                "{asked:?} asks for relevance level {level} and {other_asked:?} for {other}; eval computes every measure at one relevance level (trec_eval's -l): evaluate them in two runs"
            ));
        }
        match (explicit, &self.unleveled) {
            (Some(explicit), _) if explicit != *level => Err(format!(
                "{asked:?} asks for relevance level {level}, and -l {explicit} for {explicit}; eval computes every measure at one relevance level: drop one, or make them equal"
            )),
            (None, Some(unleveled)) if *level != 1 => Err(format!(
                "{asked:?} asks for relevance level {level}, and {unleveled:?} names no level, which ir_measures reads as rel=1 (and trec_eval as -l); eval computes every measure at one relevance level: give -l {level} to compute every measure at level {level}, or evaluate them in two runs"
            )),
            _ => Ok(*level),
        }
    }

    /// The per-query columns, in output order (everything but `runid` and `num_q`).
    pub fn columns(&self) -> Vec<Column> {
        let mut columns = Vec::new();
        for (family, given) in &self.families {
            let parameters = given
                .clone()
                .unwrap_or_else(|| match family.parameter_kind() {
                    ParameterKind::None => Vec::new(),
                    ParameterKind::Cutoffs(defaults)
                    | ParameterKind::Levels(defaults)
                    | ParameterKind::Multiples(defaults)
                    | ParameterKind::Coefficients(defaults) => defaults.to_vec(),
                });
            let column = |parameter: Option<f64>, list: Vec<f64>| Column {
                family: *family,
                parameter,
                list,
            };
            match (family, family.parameter_kind()) {
                (Family::RunId | Family::NumQ, _) => {}
                (Family::ElevenPointAverage | Family::Utility, _) => {
                    columns.push(column(None, parameters))
                }
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

/// The error for a measure name that names no measure (or one hyde-eval does not
/// compute), with the closest name and the list.
fn unknown_measure(name: &str) -> String {
    let implemented: Vec<&str> = Family::every()
        .map(Family::name)
        .chain(["relstring"])
        .collect();
    if NOT_IMPLEMENTED.contains(&name) {
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
    }
}

/// A `-m` argument in trec_eval's spelling, and the relevance level ir_measures' `rel=`
/// asked for.
struct Spelling {
    measure: String,
    level: Option<Grade>,
}

/// `argument` in trec_eval's own `-m` spelling, with its `rel=`. Also accepted, in any
/// case: every spelling of a hyde-eval metric ([`crate::metric_names`]: `ndcg@10`,
/// `precision@5`, `mrr`, `nDCG@10`, `P_5`, `RR`, `Judged@10`, ...), the names trec_eval
/// prints (`ndcg_cut_10`, `iprec_at_recall_0.10`, `relstring_20`), ir_measures' other
/// names (`AP@10`, `IPrec@0.1`, `NumQ`, `NumRet`, `NumRel`, `SetP`, `SetR`, `SetF`,
/// `SetAP`) and its parameterised forms (`P(rel=2)@5`, `AP(rel=2)`, `R(cutoff=100)`),
/// each mapped only to the measure of the same definition.
fn trec_eval_spelling(argument: &str) -> Result<Spelling, String> {
    let trimmed = argument.trim();
    let Some(open) = trimmed.find('(') else {
        return Ok(Spelling {
            measure: plain_spelling(trimmed)?,
            level: None,
        });
    };
    // ir_measures' NAME(key=value,...), then an optional @cut-off.
    let malformed = || {
        format!(
            "measure {argument:?}: expected ir_measures' NAME(rel=N)@k, e.g. P(rel=2)@5 or AP(rel=2)"
        )
    };
    let close = trimmed
        .rfind(')')
        .filter(|&close| close > open)
        .ok_or_else(malformed)?;
    let (name, parameters, after) = (
        trimmed[..open].trim(),
        &trimmed[open + 1..close],
        trimmed[close + 1..].trim(),
    );
    let (mut level, mut cutoff) = (None, None);
    for parameter in parameters.split(',').filter(|item| !item.trim().is_empty()) {
        let (key, value) = parameter.split_once('=').ok_or_else(malformed)?;
        let value = value.trim();
        match key.trim() {
            "rel" => {
                level = Some(value.parse::<Grade>().ok().filter(|&level| level >= 0).ok_or_else(
                    || format!("measure {argument:?}: rel={value} is not a relevance level (a whole number >= 0)"),
                )?)
            }
            "cutoff" => cutoff = Some(value),
            other => {
                return Err(format!(
                    "measure {argument:?}: eval reads ir_measures' rel= and cutoff=, not {other}={value}{}",
                    if other == "judged_only" {
                        " (-J computes every measure over judged documents only)"
                    } else {
                        ""
                    }
                ))
            }
        }
    }
    let base = match (after.strip_prefix('@').map(str::trim), cutoff) {
        (Some(at), Some(cutoff)) if at != cutoff => {
            return Err(format!(
                "measure {argument:?} gives two cut-offs ({cutoff} and {at}): give one"
            ))
        }
        (Some(k), _) | (None, Some(k)) if after.is_empty() || after.starts_with('@') => {
            format!("{name}@{k}")
        }
        (None, None) if after.is_empty() => name.to_owned(),
        _ => return Err(malformed()),
    };
    // ir_measures' NumRet(rel=N) counts the relevant results retrieved.
    let measure = if level.is_some() && base.eq_ignore_ascii_case("numret") {
        "num_rel_ret".to_owned()
    } else {
        plain_spelling(&base)?
    };
    Ok(Spelling { measure, level })
}

/// [`trec_eval_spelling`] of an argument without ir_measures' parameters.
fn plain_spelling(argument: &str) -> Result<String, String> {
    // Every spelling of a hyde-eval metric, as every other flag reads it.
    if let Some(metric) = crate::metric_names::canonical(argument) {
        let measure = match metric.split_once('@') {
            None => match metric.as_str() {
                "mrr" => "recip_rank".to_owned(),
                other => other.to_owned(),
            },
            Some((family, k)) => {
                let family = match family {
                    "recall" => "recall",
                    "precision" => "P",
                    "ndcg" => "ndcg_cut",
                    "hit" => "success",
                    "judged" => "judged",
                    _ => return Err(no_counterpart(argument)),
                };
                format!("{family}.{k}")
            }
        };
        return Ok(measure);
    }
    let lower = argument.to_ascii_lowercase();
    if let Some((name, parameter)) = lower.split_once('@') {
        let family = match name {
            "ndcg" => "ndcg_cut",
            "p" | "precision" => "P",
            "r" | "recall" => "recall",
            "success" | "hit" => "success",
            "ap" => "map_cut",
            "iprec" => "iprec_at_recall",
            "judged" => "judged",
            "rr" | "mrr" => return Err(no_counterpart(argument)),
            _ => {
                return Err(format!(
                    "unknown measure {argument:?}; eval takes trec_eval's names (ndcg_cut.10, ndcg_cut_10), hyde-eval's (ndcg@10, precision@5, recall@10, hit@5, judged@10, mrr, map) or ir_measures' (nDCG@10, P@5, R@100, Success@1, AP@10, IPrec@0.1, Judged@10, P(rel=2)@5)"
                ))
            }
        };
        return Ok(format!("{family}.{parameter}"));
    }
    let whole = match lower.as_str() {
        "numq" => Some("num_q"),
        "numret" => Some("num_ret"),
        "numrel" => Some("num_rel"),
        "setp" => Some("set_P"),
        "setr" => Some("set_recall"),
        "setf" => Some("set_F"),
        "setap" => Some("set_map"),
        "official" | "all_trec" | "relstring" => Some(lower.as_str()),
        _ => None,
    };
    if let Some(whole) = whole {
        return Ok(whole.to_owned());
    }
    let (name, parameters) = match lower.split_once('.') {
        Some((name, parameters)) => (name, Some(parameters)),
        None => (lower.as_str(), None),
    };
    if let Some(family) = Family::every().find(|family| family.name().eq_ignore_ascii_case(name)) {
        return Ok(match parameters {
            Some(parameters) => format!("{}.{parameters}", family.name()),
            None => family.name().to_owned(),
        });
    }
    // A printed name: the longest family with parameters, then `_` and the parameter.
    let printed = Family::every()
        .filter(|family| family.parameter_kind() != ParameterKind::None)
        .map(Family::name)
        .chain(["relstring"])
        .filter_map(|family| {
            let parameter = lower.strip_prefix(&family.to_ascii_lowercase())?;
            Some((family, parameter.strip_prefix('_')?))
        })
        .max_by_key(|(family, _)| family.len());
    Ok(match printed {
        Some((family, parameter)) => format!("{family}.{parameter}"),
        None => argument.to_owned(),
    })
}

/// The refusal of `RR@k` (hyde-eval's `mrr@k`), which trec_eval has no measure for.
fn no_counterpart(argument: &str) -> String {
    format!(
        "measure {argument:?} (RR@k, hyde-eval's mrr@k) has no trec_eval counterpart, so eval does not compute it; RR over the whole ranking is recip_rank (-m RR)"
    )
}

fn parse_cutoffs(name: &str, list: &str) -> Result<Vec<f64>, String> {
    parse_positive_list(
        name,
        list,
        "cut-off",
        "is not a positive integer",
        "5,10",
        |item| item.parse::<u32>().ok().filter(|&k| k > 0).map(f64::from),
    )
}

fn parse_multiples(name: &str, list: &str) -> Result<Vec<f64>, String> {
    parse_positive_list(
        name,
        list,
        "multiple of R",
        "is not a positive number",
        "0.5,1.0",
        |item| {
            item.parse::<f64>()
                .ok()
                .filter(|multiple| *multiple > 0.0 && multiple.is_finite())
        },
    )
}

/// A measure's comma-separated parameter list, each item read by `parse` (None: not
/// allowed), sorted and without repeats.
fn parse_positive_list(
    name: &str,
    list: &str,
    what: &str,
    wrong: &str,
    example: &str,
    parse: impl Fn(&str) -> Option<f64>,
) -> Result<Vec<f64>, String> {
    let mut values = list
        .split(',')
        .map(|item| {
            parse(item.trim()).ok_or_else(|| {
                format!("measure {name}: {what} {item:?} {wrong} (e.g. -m {name}.{example})")
            })
        })
        .collect::<Result<Vec<f64>, String>>()?;
    values.sort_by(f64::total_cmp);
    values.dedup();
    Ok(values)
}

fn parse_coefficients(name: &str, list: &str) -> Result<Vec<f64>, String> {
    let coefficients: Vec<f64> = list
        .split(',')
        .map(|item| item.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("measure {name}: coefficients {list:?} are not numbers"))?;
    if coefficients.len() != 4 || coefficients.iter().any(|c| !c.is_finite()) {
        return Err(format!(
            "measure {name} takes four coefficients (e.g. -m {name}.1.0,-1.0,0.0,0.0), not {list:?}"
        ));
    }
    Ok(coefficients)
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
    /// The recall levels `11pt_avg` averages over, or `utility`'s four coefficients.
    list: Vec<f64>,
}

impl Column {
    /// trec_eval's printed name: `P_10`, `iprec_at_recall_0.10`, `map`.
    pub fn name(&self) -> String {
        match (self.parameter, self.family) {
            (Some(level), Family::IprecAtRecall | Family::RprecMult) => {
                format!("{}_{level:.2}", self.family.name())
            }
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

    /// trec_eval prints `gm_map` and `gm_bpref` only averaged (geometric means), never
    /// per query.
    pub fn is_printed_per_query(&self) -> bool {
        !matches!(self.family, Family::GmMap | Family::GmBpref)
    }

    /// The average over queries from the sum of per-query values, as trec_eval does.
    pub(super) fn summarize(&self, total: f64, queries: usize) -> f64 {
        match self.family {
            _ if self.is_count() => total,
            _ if queries == 0 => 0.0,
            Family::GmMap | Family::GmBpref => (total / queries as f64).exp(),
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
                    .list
                    .iter()
                    .rev()
                    .map(|&level| profile.interpolated_precision(level))
                    .fold(0.0, |total, value| total + value);
                ratio(sum, self.list.len() as f64)
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
            Family::InfAp => query.inferred_ap(profile.relevant_total()),
            Family::GmBpref => query
                .bpref(profile.relevant_total())
                .max(MIN_GEOMETRIC_MEAN)
                .ln(),
            Family::RprecMult => {
                // trec_eval rounds the multiple of R up from .1 (`(long)(m * R + 0.9)`).
                let cutoff = (self.parameter.unwrap_or_default() * relevant + 0.9) as usize;
                if cutoff == 0 {
                    0.0
                } else {
                    profile.precision(cutoff)
                }
            }
            Family::Utility => {
                let coefficient = |i: usize| self.list.get(i).copied().unwrap_or_default();
                // trec_eval's contingency table; the nonrelevant documents not retrieved
                // count from the collection size (-N, 0 by default as in trec_eval).
                coefficient(0) * relevant_returned
                    + coefficient(1) * (returned - relevant_returned)
                    + coefficient(2) * (relevant - relevant_returned)
                    + coefficient(3)
                        * (query.collection_size + relevant_returned - returned - relevant)
            }
            Family::BinG => query.binary_g(profile.relevant_total()),
            Family::G => query.normalized_g(),
            Family::NdcgRel => query.ndcg_over_relevant(),
            Family::Rndcg => query.ndcg_at_r_levels(profile.relevant_total()),
            Family::Rbp => query.rank_biased_precision(),
            Family::RbpResid => query.rank_biased_residual(),
            Family::Unj => query.unjudged_share(k),
            Family::Judged => crate::metrics::judged_share(query.grades, k),
            Family::RunId | Family::NumQ => unreachable!("not a per-query column"),
        }
    }
}

/// What the judgment-based measures need besides the [`RankingProfile`].
pub(super) struct QueryFacts<'g> {
    /// Grades in rank order: [`NOT_JUDGED`] for documents the qrels do not list,
    /// [`POOL_UNJUDGED`] for those they list with a negative grade.
    pub(super) grades: &'g [Grade],
    /// The query's positive judged grades, highest first: the ideal ranking's gains.
    pub(super) ideal_gains: Vec<Grade>,
    pub(super) level: Grade,
    /// Judged results (grade >= 0) below the relevance level.
    pub(super) judged_nonrelevant_returned: usize,
    /// Judgments below the relevance level (grade >= 0).
    pub(super) judged_nonrelevant: usize,
    /// Documents in the collection (`-N`), for `utility`.
    pub(super) collection_size: f64,
}

impl QueryFacts<'_> {
    /// trec_eval's `bpref`: over judged results only, each relevant one scores
    /// 1 - min(nonrelevant above it, R) / min(judged nonrelevant, R); the sum over R.
    fn bpref(&self, relevant: usize) -> f64 {
        crate::metrics::bpref(self.grades, self.level, relevant, self.judged_nonrelevant)
    }
}

/// A result's gain for the graded measures (`G`, `ndcg_rel`, `Rndcg`, `rbp`): its grade,
/// 0 for unjudged results.
fn gain(grade: Grade) -> f64 {
    f64::from(grade.max(0))
}

/// The discount of 0-based rank `i` in DCG: log2(i + 2).
fn discount(i: usize) -> f64 {
    ((i + 2) as f64).log2()
}

impl QueryFacts<'_> {
    /// trec_eval's `relstring`: one character per top result, its grade (`>` above 9),
    /// `-` when the qrels do not list it, `.` when they list it unjudged.
    pub(super) fn relstring(&self, length: usize) -> String {
        self.grades
            .iter()
            .take(length)
            .map(|&grade| match grade {
                NOT_JUDGED => '-',
                POOL_UNJUDGED => '.',
                10.. => '>',
                _ => char::from_digit(grade.max(0) as u32, 10).unwrap_or('<'),
            })
            .collect()
    }

    /// The ideal ranking's gain at 0-based rank `i` (0 past the positive judgments).
    fn ideal(&self, i: usize) -> f64 {
        self.ideal_gains.get(i).copied().map_or(0.0, f64::from)
    }

    /// trec_eval's `infAP` (Yilmaz and Aslam): results outside the qrels are skipped,
    /// judged-unjudged ones (negative grades) count as sampled-out pool members; each
    /// relevant result at 0-based rank j > 0 scores
    /// 1/(j+1) + j/(j+1) * (judged or pooled above)/j * (rel above + e)/(judged above + 2e).
    fn inferred_ap(&self, relevant: usize) -> f64 {
        let (mut relevant_so_far, mut nonrelevant_so_far, mut unjudged_so_far) = (0usize, 0, 0);
        let mut sum = 0.0;
        for (j, &grade) in self.grades.iter().enumerate() {
            if grade == NOT_JUDGED {
                continue;
            }
            if grade == POOL_UNJUDGED {
                unjudged_so_far += 1;
                continue;
            }
            if (0..self.level).contains(&grade) {
                nonrelevant_so_far += 1;
                continue;
            }
            relevant_so_far += 1;
            if j == 0 {
                sum += 1.0;
            } else {
                let rank = j as f64;
                let above = (relevant_so_far - 1 + nonrelevant_so_far + unjudged_so_far) as f64;
                let relevant_above = (relevant_so_far - 1) as f64;
                let judged_above = (relevant_so_far - 1 + nonrelevant_so_far) as f64;
                sum += 1.0 / (rank + 1.0)
                    + (rank / (rank + 1.0))
                        * (above / rank)
                        * ((relevant_above + INFAP_EPSILON) / (judged_above + 2.0 * INFAP_EPSILON));
            }
        }
        if relevant > 0 {
            sum / relevant as f64
        } else {
            sum
        }
    }

    /// trec_eval's `binG`: each relevant result scores 1 / log2(2 + results above it that
    /// are not relevant); the sum over R.
    fn binary_g(&self, relevant: usize) -> f64 {
        let mut relevant_so_far = 0usize;
        let mut sum = 0.0;
        for (i, &grade) in self.grades.iter().enumerate() {
            if grade >= self.level {
                relevant_so_far += 1;
                sum += 1.0 / ((3 + i - relevant_so_far) as f64).log2();
            }
        }
        if relevant_so_far > 0 {
            sum / relevant as f64
        } else {
            0.0
        }
    }

    /// trec_eval's `G`: a result with gain g at rank i scores
    /// g / log2(2 + cost(i) - gains so far), cost(i) summing max(ideal gain, 1) to rank i;
    /// the sum over the total ideal gain.
    fn normalized_g(&self) -> f64 {
        let total: f64 = self.ideal_gains.iter().map(|&grade| gain(grade)).sum();
        if total <= 0.0 {
            return 0.0;
        }
        let (mut gained, mut cost, mut sum) = (0.0, 0.0, 0.0);
        for (i, &grade) in self.grades.iter().enumerate() {
            let result_gain = gain(grade);
            gained += result_gain;
            cost += self.ideal(i).max(1.0);
            if result_gain != 0.0 {
                sum += result_gain / (2.0 + cost - gained).log2();
            }
        }
        sum / total
    }

    /// trec_eval's `ndcg_rel`: nDCG at each result with a positive gain, and the nDCG of
    /// the whole ranking for each positive judgment not retrieved, averaged over the
    /// positive judgments.
    fn ndcg_over_relevant(&self) -> f64 {
        let positive = self.ideal_gains.len();
        if positive == 0 {
            return 0.0;
        }
        let (mut dcg, mut ideal_dcg, mut sum) = (0.0, 0.0, 0.0);
        let mut retrieved = 0usize;
        for (i, &grade) in self.grades.iter().enumerate() {
            let result_gain = gain(grade);
            if result_gain != 0.0 {
                dcg += result_gain / discount(i);
            }
            if i < positive {
                ideal_dcg += self.ideal(i) / discount(i);
            }
            if result_gain > 0.0 {
                sum += dcg / ideal_dcg;
                retrieved += 1;
            }
        }
        for i in self.grades.len()..positive {
            ideal_dcg += self.ideal(i) / discount(i);
        }
        sum += (positive - retrieved) as f64 * dcg / ideal_dcg;
        if sum > 0.0 {
            sum / positive as f64
        } else {
            0.0
        }
    }

    /// trec_eval's `Rndcg`: nDCG averaged over the ranks where the ideal gain changes
    /// (the R levels of each grade, highest first), plus the end of the ranking when it
    /// runs on past the first rank after the positive judgments.
    fn ndcg_at_r_levels(&self, relevant: usize) -> f64 {
        if relevant == 0 || self.ideal_gains.is_empty() {
            return 0.0;
        }
        let returned = self.grades.len();
        let (mut dcg, mut ideal_dcg) = (0.0, 0.0);
        let mut points: Vec<f64> = Vec::new();
        let mut record = |dcg: f64, ideal_dcg: f64| {
            if ideal_dcg > 0.0 {
                points.push(dcg / ideal_dcg);
            }
        };
        let mut previous = self.ideal(0);
        let mut i = 0;
        while i < returned && previous > 0.0 {
            let current = self.ideal(i);
            if current != previous {
                record(dcg, ideal_dcg);
                previous = current;
            }
            let result_gain = gain(self.grades[i]);
            if result_gain != 0.0 {
                dcg += result_gain / discount(i);
            }
            if current > 0.0 {
                ideal_dcg += current / discount(i);
            }
            i += 1;
        }
        if i < returned {
            // The ranking runs on past the ideal gains: its end is one more point.
            for (rank, &grade) in self.grades.iter().enumerate().skip(i) {
                let result_gain = gain(grade);
                if result_gain != 0.0 {
                    dcg += result_gain / discount(rank);
                }
            }
            record(dcg, ideal_dcg);
            i = returned;
        }
        while previous > 0.0 {
            let current = self.ideal(i);
            if current != previous {
                record(dcg, ideal_dcg);
                previous = current;
            }
            if current > 0.0 {
                ideal_dcg += current / discount(i);
            }
            i += 1;
        }
        if points.is_empty() {
            0.0
        } else {
            points.iter().sum::<f64>() / points.len() as f64
        }
    }

    /// trec_eval's `rbp` with p = 0.9: (1 - p) * sum of gain * p^rank, gains scaled to
    /// [0, 1] by the query's highest grade when it is above 1.
    fn rank_biased_precision(&self) -> f64 {
        let scale = self.ideal(0).max(1.0);
        let mut weight = 1.0;
        let mut sum = 0.0;
        for &grade in self.grades {
            let result_gain = gain(grade) / scale;
            if result_gain != 0.0 {
                sum += result_gain * weight;
            }
            weight *= RBP_PERSISTENCE;
        }
        (1.0 - RBP_PERSISTENCE) * sum
    }

    /// trec_eval's `rbp_resid`: the weight `rbp` could still gain, p^n for the ranks past
    /// the ranking plus (1 - p) p^rank for each unjudged result; 0 when every result is
    /// judged.
    fn rank_biased_residual(&self) -> f64 {
        let mut weight = 1.0;
        let mut sum = 0.0;
        let mut unjudged = false;
        for &grade in self.grades {
            if grade < 0 {
                unjudged = true;
                sum += weight;
            }
            weight *= RBP_PERSISTENCE;
        }
        if unjudged {
            weight + (1.0 - RBP_PERSISTENCE) * sum
        } else {
            0.0
        }
    }

    /// trec_eval's `unj_k`: unjudged results (not in the qrels, or judged with a negative
    /// grade) in the top k, over k.
    fn unjudged_share(&self, k: usize) -> f64 {
        let unjudged = self.grades[..k.min(self.grades.len())]
            .iter()
            .filter(|&&grade| grade == NOT_JUDGED || grade == POOL_UNJUDGED)
            .count();
        unjudged as f64 / k as f64
    }
}
