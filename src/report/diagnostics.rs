//! Per-query diagnostics: what `results.json` records about individual queries (texts,
//! hypotheses, judgments, each configuration's top facts and the ranks of the relevant
//! ones), and the comparisons built from it: which queries a HyDE configuration won or
//! lost against its baseline, where the relevant facts ranked under both, and which
//! facts displaced them.
//!
//! The records come with the results document (`results::details`); the comparisons
//! read only [`Results`], so a report can be rendered from `results.json` alone.

use std::collections::HashMap;

use crate::configuration::{KeywordSource, Plan, SearchVector};
use crate::dataset::{FactId, Grade, QueryId};
use crate::results::details::QueryDetail;
use crate::results::scored::ScoredConfiguration;
use crate::results::{ConfigurationResult, MetricValues, Results};

/// The plan a HyDE plan is measured against: the same fusion with the raw query in
/// place of every hypothesis-derived input. `None` for plans without hypotheses.
pub fn baseline_plan(plan: Plan) -> Option<Plan> {
    if !plan.uses_hypotheses() {
        return None;
    }
    Some(Plan {
        keywords: plan.keywords.map(|_| KeywordSource::Query),
        vector: plan.vector.map(|_| SearchVector::Query),
        fusion: plan.fusion,
    })
}

/// The first configuration of `results` whose plan is `configuration`'s baseline plan.
pub fn baseline_of<'r>(
    results: &'r Results,
    configuration: &ConfigurationResult,
) -> Option<&'r ConfigurationResult> {
    let target = baseline_plan(configuration.plan)?;
    results.configurations.iter().find(|c| c.plan == target)
}

/// One query's metric under a configuration and its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryDelta {
    pub query: QueryId,
    pub value: f64,
    pub baseline: f64,
    /// `value - baseline`.
    pub delta: f64,
}

/// Per-query `metric` of `configuration` against `baseline`, for the queries both
/// evaluated, in `configuration`'s order (a value the query lacks counts as 0).
pub fn per_query_deltas(
    configuration: &impl ScoredConfiguration,
    baseline: &impl ScoredConfiguration,
    metric: &str,
) -> Vec<QueryDelta> {
    let baseline_of: HashMap<&QueryId, &MetricValues> = baseline.query_metrics().collect();
    configuration
        .query_metrics()
        .filter_map(|(query, metrics)| {
            let other = baseline_of.get(query)?;
            let value = metrics.get(metric).unwrap_or(0.0);
            let baseline = other.get(metric).unwrap_or(0.0);
            Some(QueryDelta {
                query: query.clone(),
                value,
                baseline,
                delta: value - baseline,
            })
        })
        .collect()
}

/// A relevant fact's rank under both configurations.
#[derive(Debug, Clone, PartialEq)]
pub struct RelevantRanks {
    pub fact: FactId,
    pub grade: Grade,
    pub rank: Option<usize>,
    pub baseline_rank: Option<usize>,
}

/// A non-relevant fact ranked above the relevant ones by the configuration that did
/// worse on the query.
#[derive(Debug, Clone, PartialEq)]
pub struct Displacer {
    pub fact: FactId,
    /// Its rank under the configuration that did worse.
    pub rank: usize,
    /// Its rank in the other configuration's top list, if there.
    pub other_rank: Option<usize>,
}

/// Why a query moved.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryDiagnosis {
    pub delta: QueryDelta,
    pub relevant: Vec<RelevantRanks>,
    /// Facts that took the places of the relevant facts in the worse ranking.
    pub displaced_by: Vec<Displacer>,
}

/// A configuration against its baseline on one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub configuration: String,
    pub baseline: String,
    pub metric: String,
    pub better: usize,
    pub worse: usize,
    pub tied: usize,
    /// The largest gains, largest first.
    pub wins: Vec<QueryDiagnosis>,
    /// The largest losses, largest first.
    pub losses: Vec<QueryDiagnosis>,
}

/// At most this many displacing facts are listed per query.
const MAX_DISPLACERS: usize = 3;

fn diagnose(
    delta: &QueryDelta,
    configuration: &ConfigurationResult,
    baseline: &ConfigurationResult,
    relevance_level: Grade,
    query: Option<&QueryDetail>,
) -> QueryDiagnosis {
    let find =
        |c: &ConfigurationResult| c.per_query.iter().find(|q| q.query == delta.query).cloned();
    let (Some(ours), Some(theirs)) = (find(configuration), find(baseline)) else {
        return QueryDiagnosis {
            delta: delta.clone(),
            relevant: Vec::new(),
            displaced_by: Vec::new(),
        };
    };
    let grade_of = |fact: &FactId| -> Grade {
        query
            .and_then(|q| q.judgments.get(fact).copied())
            .unwrap_or(0)
    };
    let relevant = ours
        .relevant_ranks
        .iter()
        .map(|(fact, rank)| RelevantRanks {
            fact: fact.clone(),
            grade: grade_of(fact),
            rank,
            baseline_rank: theirs.relevant_ranks.get(fact).flatten(),
        })
        .collect();
    let (worse, better) = if delta.delta < 0.0 {
        (&ours, &theirs)
    } else {
        (&theirs, &ours)
    };
    let first_relevant = worse
        .top
        .iter()
        .position(|fact| grade_of(fact) >= relevance_level)
        .unwrap_or(worse.top.len());
    let displaced_by = worse.top[..first_relevant]
        .iter()
        .enumerate()
        .filter_map(|(position, fact)| {
            let other_rank = better.top.iter().position(|f| f == fact).map(|p| p + 1);
            // A fact the better ranking also placed at least as high displaced nothing.
            let displaced = other_rank.is_none_or(|other| other > position + 1);
            displaced.then(|| Displacer {
                fact: fact.clone(),
                rank: position + 1,
                other_rank,
            })
        })
        .take(MAX_DISPLACERS)
        .collect();
    QueryDiagnosis {
        delta: delta.clone(),
        relevant,
        displaced_by,
    }
}

/// Compares `configuration` with `baseline` on `metric`, keeping the `limit` largest
/// wins and losses (ties in size keep query order).
pub fn compare(
    results: &Results,
    configuration: &ConfigurationResult,
    baseline: &ConfigurationResult,
    metric: &str,
    limit: usize,
) -> Comparison {
    let deltas = per_query_deltas(configuration, baseline, metric);
    let query_of: HashMap<&QueryId, &QueryDetail> =
        results.queries.iter().map(|q| (&q.id, q)).collect();
    let level = results.evaluation.settings.relevance_level;
    let pick = |wanted: fn(f64) -> bool| -> Vec<QueryDiagnosis> {
        let mut chosen: Vec<&QueryDelta> = deltas.iter().filter(|d| wanted(d.delta)).collect();
        chosen.sort_by(|a, b| b.delta.abs().total_cmp(&a.delta.abs()));
        chosen
            .into_iter()
            .take(limit)
            .map(|delta| {
                diagnose(
                    delta,
                    configuration,
                    baseline,
                    level,
                    query_of.get(&delta.query).copied(),
                )
            })
            .collect()
    };
    Comparison {
        configuration: configuration.name.clone(),
        baseline: baseline.name.clone(),
        metric: metric.to_owned(),
        better: deltas.iter().filter(|d| d.delta > 0.0).count(),
        worse: deltas.iter().filter(|d| d.delta < 0.0).count(),
        tied: deltas.iter().filter(|d| d.delta == 0.0).count(),
        wins: pick(|delta| delta > 0.0),
        losses: pick(|delta| delta < 0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configuration::Preset;

    /// The counterpart each HyDE preset names is the plan the diagnostics measure it
    /// against (the same fusion with the raw query everywhere), and only HyDE presets
    /// name one.
    #[test]
    fn each_presets_counterpart_is_its_baseline_plan() {
        for preset in Preset::ALL {
            assert_eq!(
                preset.counterpart().map(Preset::plan),
                baseline_plan(preset.plan()),
                "{}",
                preset.name()
            );
            if let Some(counterpart) = preset.counterpart() {
                assert!(!counterpart.plan().uses_hypotheses(), "{}", preset.name());
            }
        }
    }
}
