//! Checks per-query expectations (see [`Expectation`]) against a configuration's
//! rankings and summarizes them per scenario. Pure: rankings in, verdicts out.

use serde::{Deserialize, Serialize};

use crate::dataset::{Expectation, FactId, Query, QueryId};
use crate::ranking::QueryRanking;

/// One expectation a configuration did not meet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectationFailure {
    pub query: QueryId,
    pub scenario: Option<String>,
    pub expectation: Expectation,
    /// What the ranking did instead.
    pub detail: String,
}

/// Pass counts of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioCount {
    pub scenario: String,
    pub checked: usize,
    pub passed: usize,
}

/// All expectations of one configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpectationSummary {
    pub checked: usize,
    pub passed: usize,
    /// Per scenario, in first-seen query order; queries without a scenario are "(none)".
    pub by_scenario: Vec<ScenarioCount>,
    pub failures: Vec<ExpectationFailure>,
}

fn rank_of(ranking: &[(FactId, f64)], fact: &FactId) -> Option<usize> {
    ranking.iter().position(|(candidate, _)| candidate == fact)
}

/// `Ok` when `ranking` meets `expectation`, else what happened instead.
pub fn check(expectation: &Expectation, ranking: &[(FactId, f64)]) -> Result<(), String> {
    let describe = |fact: &FactId| match rank_of(ranking, fact) {
        Some(position) => format!("{fact} at rank {}", position + 1),
        None => format!("{fact} not returned"),
    };
    match expectation {
        Expectation::InTop { fact, n } => match rank_of(ranking, fact) {
            Some(position) if position < *n => Ok(()),
            _ => Err(format!("{} (expected in the top {n})", describe(fact))),
        },
        Expectation::AllInTop { facts, n } => {
            let missing: Vec<String> = facts
                .iter()
                .filter(|fact| rank_of(ranking, fact).is_none_or(|position| position >= *n))
                .map(describe)
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "{} (expected all in the top {n})",
                    missing.join(", ")
                ))
            }
        }
        Expectation::RankedAbove { fact, over } => {
            match (rank_of(ranking, fact), rank_of(ranking, over)) {
                (Some(winner), Some(loser)) if winner < loser => Ok(()),
                (Some(_), None) => Ok(()),
                _ => Err(format!(
                    "{} and {} (expected {fact} above {over})",
                    describe(fact),
                    describe(over)
                )),
            }
        }
        Expectation::Abstain => match ranking.first() {
            None => Ok(()),
            Some((top, score)) => Err(format!(
                "returned {} result(s), top {top} with score {score:.4} (expected none)",
                ranking.len()
            )),
        },
        Expectation::ScoreAbove { fact, value } => match rank_of(ranking, fact) {
            Some(position) if ranking[position].1 > *value => Ok(()),
            Some(position) => Err(format!(
                "{fact} scored {:.4} (expected above {value})",
                ranking[position].1
            )),
            None => Err(format!(
                "{fact} not returned (expected a score above {value})"
            )),
        },
    }
}

/// Checks every expectation of `queries` against `rankings` (aligned by position).
pub fn summarize(queries: &[Query], rankings: &[QueryRanking]) -> ExpectationSummary {
    let mut summary = ExpectationSummary::default();
    for (query, ranking) in queries.iter().zip(rankings) {
        debug_assert_eq!(query.id, ranking.query);
        summary.record(query, &ranking.results);
    }
    summary
}

impl ExpectationSummary {
    /// Checks every expectation of `query` against its ranked `results`, adding them to
    /// the counts (queries are recorded in dataset order).
    pub fn record(&mut self, query: &Query, results: &[(FactId, f64)]) {
        for expectation in &query.expectations {
            let scenario = query.scenario.clone().unwrap_or_else(|| "(none)".into());
            let slot = match self
                .by_scenario
                .iter()
                .position(|count| count.scenario == scenario)
            {
                Some(slot) => slot,
                None => {
                    self.by_scenario.push(ScenarioCount {
                        scenario,
                        checked: 0,
                        passed: 0,
                    });
                    self.by_scenario.len() - 1
                }
            };
            self.checked += 1;
            self.by_scenario[slot].checked += 1;
            match check(expectation, results) {
                Ok(()) => {
                    self.passed += 1;
                    self.by_scenario[slot].passed += 1;
                }
                Err(detail) => self.failures.push(ExpectationFailure {
                    query: query.id.clone(),
                    scenario: query.scenario.clone(),
                    expectation: expectation.clone(),
                    detail,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranking(ids: &[&str]) -> Vec<(FactId, f64)> {
        ids.iter()
            .enumerate()
            .map(|(index, id)| (FactId::from(id.to_string()), 1.0 - index as f64 / 10.0))
            .collect()
    }

    fn fact(id: &str) -> FactId {
        FactId(id.into())
    }

    #[test]
    fn each_kind_passes_and_fails_as_specified() {
        let ranked = ranking(&["a", "b", "c"]);
        assert!(check(
            &Expectation::InTop {
                fact: fact("b"),
                n: 2
            },
            &ranked
        )
        .is_ok());
        assert_eq!(
            check(
                &Expectation::InTop {
                    fact: fact("c"),
                    n: 2
                },
                &ranked
            ),
            Err("c at rank 3 (expected in the top 2)".into())
        );
        assert!(check(
            &Expectation::AllInTop {
                facts: vec![fact("a"), fact("c")],
                n: 3
            },
            &ranked
        )
        .is_ok());
        assert_eq!(
            check(
                &Expectation::AllInTop {
                    facts: vec![fact("a"), fact("z")],
                    n: 3
                },
                &ranked
            ),
            Err("z not returned (expected all in the top 3)".into())
        );
        assert!(check(
            &Expectation::RankedAbove {
                fact: fact("a"),
                over: fact("c")
            },
            &ranked
        )
        .is_ok());
        assert!(check(
            &Expectation::RankedAbove {
                fact: fact("a"),
                over: fact("z")
            },
            &ranked
        )
        .is_ok());
        assert!(check(
            &Expectation::RankedAbove {
                fact: fact("c"),
                over: fact("a")
            },
            &ranked
        )
        .is_err());
        assert!(check(
            &Expectation::RankedAbove {
                fact: fact("z"),
                over: fact("a")
            },
            &ranked
        )
        .is_err());
        assert!(check(&Expectation::Abstain, &[]).is_ok());
        assert_eq!(
            check(&Expectation::Abstain, &ranked),
            Err("returned 3 result(s), top a with score 1.0000 (expected none)".into())
        );
        assert!(check(
            &Expectation::ScoreAbove {
                fact: fact("b"),
                value: 0.85
            },
            &ranked
        )
        .is_ok());
        assert!(check(
            &Expectation::ScoreAbove {
                fact: fact("b"),
                value: 0.9
            },
            &ranked
        )
        .is_err());
    }

    #[test]
    fn expectations_parse_from_json_and_reject_unknown_fields() {
        let parsed: Vec<Expectation> =
            serde_json::from_str(r#"[{"kind":"in_top","fact":"f1","n":3},{"kind":"abstain"}]"#)
                .unwrap();
        assert_eq!(
            parsed,
            vec![
                Expectation::InTop {
                    fact: fact("f1"),
                    n: 3
                },
                Expectation::Abstain
            ]
        );
        assert!(serde_json::from_str::<Expectation>(
            r#"{"kind":"in_top","fact":"f1","n":3,"x":1}"#
        )
        .is_err());
        assert!(serde_json::from_str::<Expectation>(r#"{"kind":"top"}"#).is_err());
    }
}
