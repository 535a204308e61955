//! Figures the results document derives from its per-query records, so a run and the
//! merge of its shards compute them alike: the floors an adaptive floor settled on
//! ([`AdaptiveFloorSummary`]) and a HyDE configuration's improvement over its
//! counterpart without HyDE ([`Improvement`]), plus the generation time the HyDE
//! accounting reports ([`GenerationTime`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{ConfigurationResult, PerQueryResult, Results};
use crate::configuration::{Params, Preset};
use crate::dataset::QueryId;
use crate::stats::{
    adjust, randomization_test, Correction, DEFAULT_ALPHA, DEFAULT_ITERATIONS, DEFAULT_SEED,
};

/// Where one configuration's adaptive floor settled, over the evaluated queries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveFloorSummary {
    /// The floor each query's search starts at (`adaptive_floor_start`).
    pub start: f64,
    /// How far the floor steps down while there are no hits (`adaptive_floor_step`).
    pub step: f64,
    /// The lowest floor (`min_cosine`).
    pub minimum: f64,
    /// Mean settled floor; `null` when no query was evaluated.
    pub mean: Option<f64>,
    /// Queries whose floor stepped below `start`.
    pub stepped_down: usize,
    /// Queries per settled floor, highest floor first.
    pub settled: Vec<SettledFloor>,
}

/// How many evaluated queries settled on one floor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettledFloor {
    pub floor: f64,
    pub queries: usize,
}

impl AdaptiveFloorSummary {
    /// The summary of the floors in `per_query` (in dataset order) under `params`;
    /// `None` when no record carries a settled floor and the parameters turn no
    /// adaptive floor on.
    pub fn of(params: &Params, per_query: &[PerQueryResult]) -> Option<AdaptiveFloorSummary> {
        let floors: Vec<f64> = per_query
            .iter()
            .filter_map(|query| query.settled_floor)
            .collect();
        if floors.is_empty() && params.adaptive_floor_start <= params.min_cosine {
            return None;
        }
        let mut settled: Vec<SettledFloor> = Vec::new();
        let mut sorted = floors.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        for floor in sorted {
            match settled.last_mut() {
                Some(last) if last.floor.to_bits() == floor.to_bits() => last.queries += 1,
                _ => settled.push(SettledFloor { floor, queries: 1 }),
            }
        }
        Some(AdaptiveFloorSummary {
            start: params.adaptive_floor_start,
            step: params.adaptive_floor_step,
            minimum: params.min_cosine,
            mean: (!floors.is_empty()).then(|| floors.iter().sum::<f64>() / floors.len() as f64),
            stepped_down: floors
                .iter()
                .filter(|&&floor| floor < params.adaptive_floor_start)
                .count(),
            settled,
        })
    }

    /// The distribution in one line: `0.6 x3, 0.5 x1`.
    pub fn distribution(&self) -> String {
        self.settled
            .iter()
            .map(|settled| format!("{:.3} x{}", settled.floor, settled.queries))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The generation time of the queries whose time is known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerationTime {
    /// Queries with a known generation time.
    pub queries: usize,
    pub total_ms: f64,
    /// `total_ms / queries`.
    pub mean_ms: f64,
}

impl GenerationTime {
    /// The time of `queries` queries that took `total_ms` together; `None` for none.
    pub fn of(queries: usize, total_ms: f64) -> Option<GenerationTime> {
        (queries > 0).then(|| GenerationTime {
            queries,
            total_ms,
            mean_ms: total_ms / queries as f64,
        })
    }
}

/// The metric of the improvement figure.
pub const IMPROVEMENT_METRIC: &str = "ndcg@10";

/// A HyDE configuration's nDCG@10 against its counterpart without HyDE
/// ([`Preset::counterpart`]): the first configuration of the run with that preset.
/// Tested as `compare` tests (Fisher's randomization test, 10,000 permutations, seed
/// 42), Holm-corrected over every HyDE configuration of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Improvement {
    /// The preset of the counterpart.
    pub counterpart_preset: Preset,
    /// The configuration measured against; `null` when the run has none of that preset.
    pub counterpart: Option<String>,
    pub metric: String,
    /// This configuration's macro value minus the counterpart's; `null` when not
    /// measured.
    pub delta: Option<f64>,
    /// Queries both evaluated (the paired sample).
    pub paired_queries: usize,
    pub p_value: Option<f64>,
    pub adjusted_p_value: Option<f64>,
    /// Adjusted p-value below 0.05.
    pub significant: Option<bool>,
    /// Why nothing was measured (the counterpart is not in the run, or the run does
    /// not compute nDCG@10); absent when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
}

impl Improvement {
    /// The figure's one-line text: `+0.0250** vs blend (p adj. 0.0030)`, or why it is
    /// missing; `not measured` for a document written without the figure.
    pub fn text_of(figure: Option<&Improvement>) -> String {
        figure.map_or_else(|| "not measured".to_owned(), Improvement::text)
    }

    /// The figure's one-line text: `+0.0250** vs blend (p adj. 0.0030)`, or why it is
    /// missing.
    pub fn text(&self) -> String {
        match (&self.counterpart, self.delta, self.adjusted_p_value) {
            (Some(counterpart), Some(delta), Some(adjusted)) => {
                let mark = if adjusted < DEFAULT_ALPHA / 5.0 {
                    "**"
                } else if adjusted < DEFAULT_ALPHA {
                    "*"
                } else {
                    ""
                };
                format!("{delta:+.4}{mark} vs {counterpart} (p adj. {adjusted:.4})")
            }
            _ => self
                .not_measured
                .clone()
                .unwrap_or_else(|| "not measured".to_owned()),
        }
    }
}

/// Sets every HyDE configuration's improvement over its counterpart (see
/// [`Improvement`]); the run's HyDE configurations are corrected together.
pub fn add_improvements(results: &mut Results) {
    let has_metric = results
        .evaluation
        .metrics
        .iter()
        .any(|metric| metric == IMPROVEMENT_METRIC);
    let improvements: Vec<Option<Improvement>> = results
        .configurations
        .iter()
        .map(|configuration| {
            configuration.hyde.as_ref()?;
            let counterpart_preset = configuration.preset.counterpart()?;
            let counterpart = results
                .configurations
                .iter()
                .find(|other| other.preset == counterpart_preset);
            Some(improvement(
                configuration,
                counterpart_preset,
                counterpart,
                has_metric,
            ))
        })
        .collect();
    let p_values: Vec<f64> = improvements
        .iter()
        .flatten()
        .filter_map(|improvement| improvement.p_value)
        .collect();
    let mut adjusted = adjust(&p_values, Correction::Holm).into_iter();
    for (configuration, improvement) in results.configurations.iter_mut().zip(improvements) {
        let (Some(hyde), Some(mut improvement)) = (configuration.hyde.as_mut(), improvement) else {
            continue;
        };
        if improvement.p_value.is_some() {
            let p = adjusted.next().expect("one adjusted p-value per p-value");
            improvement.adjusted_p_value = Some(p);
            improvement.significant = Some(p < DEFAULT_ALPHA);
        }
        hyde.improvement = Some(improvement);
    }
}

/// `configuration` against `counterpart` on nDCG@10, before the correction.
fn improvement(
    configuration: &ConfigurationResult,
    counterpart_preset: Preset,
    counterpart: Option<&ConfigurationResult>,
    has_metric: bool,
) -> Improvement {
    let mut figure = Improvement {
        counterpart_preset,
        counterpart: None,
        metric: IMPROVEMENT_METRIC.to_owned(),
        delta: None,
        paired_queries: 0,
        p_value: None,
        adjusted_p_value: None,
        significant: None,
        not_measured: None,
    };
    let Some(counterpart) = counterpart else {
        figure.not_measured = Some(format!(
            "no {} configuration in this run",
            counterpart_preset.name()
        ));
        return figure;
    };
    figure.counterpart = Some(counterpart.name.clone());
    if !has_metric {
        figure.not_measured = Some(format!("{IMPROVEMENT_METRIC} not computed in this run"));
        return figure;
    }
    let macro_value = |c: &ConfigurationResult| {
        c.macro_metrics
            .get(IMPROVEMENT_METRIC)
            .and_then(serde_json::Value::as_f64)
    };
    let reference_by_query: HashMap<&QueryId, f64> = counterpart
        .per_query
        .iter()
        .filter_map(|query| Some((&query.query, query.metrics.get(IMPROVEMENT_METRIC)?)))
        .collect();
    let (mut reference, mut candidate) = (Vec::new(), Vec::new());
    for query in &configuration.per_query {
        if let (Some(&a), Some(b)) = (
            reference_by_query.get(&query.query),
            query.metrics.get(IMPROVEMENT_METRIC),
        ) {
            reference.push(a);
            candidate.push(b);
        }
    }
    figure.paired_queries = reference.len();
    figure.delta = match (macro_value(configuration), macro_value(counterpart)) {
        (Some(value), Some(baseline)) => Some(value - baseline),
        _ => None,
    };
    if figure.delta.is_none() || reference.is_empty() {
        figure.delta = None;
        figure.not_measured = Some("no evaluated query".to_owned());
        return figure;
    }
    figure.p_value = Some(randomization_test(
        &reference,
        &candidate,
        DEFAULT_ITERATIONS,
        DEFAULT_SEED,
    ));
    figure
}
