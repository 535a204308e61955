//! `hyde-eval sweep`: evaluate a configuration at many parameter points cheaply.
//!
//! Signals are computed once per query and configuration (the pipeline's candidate
//! tables); each point only re-fuses those tables and scores the rankings. Two kinds of
//! sweep exist:
//! - **weights**: every configuration whose fusion method blends weighted signals is
//!   evaluated on an integer grid over its weight simplex, step 1/m: the axes are the
//!   method's own (`fusion::MethodSpec::weight_axes`: semantic, lexical, temporal for
//!   chatcli's blend, C(m + 2, 2) points; vector and text for the hybrid, m + 1);
//! - **parameter**: one numeric parameter over a decimal range, for every configuration
//!   that reads it at its other parameters (`fusion::ignored_parameter`, as `run` decides
//!   it; a weight sweep likewise covers the configurations that read their weights).
//!   Each value needs its own signals, so each is a variant configuration prepared in
//!   the same pass.
//!
//! For every configuration and metric the sweep reports the value at the configuration's
//! own parameters, the best points (ties included) and a k-fold cross-validated estimate
//! of what choosing the best point would reach on unseen queries ([`folds`]).
//! [`SweepResults`] is the versioned `sweep.json` contract; rendering lives in
//! `report::sweep` and `report::charts`.
//!
//! A sweep knows no fusion method by name: what a method reads and which weights it
//! blends come from its spec in `fusion/`. It imports the pipeline and fusion, never
//! reports, settings or the command line.

pub mod folds;
pub mod grid;
pub mod rank_tree;
pub mod score;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::configuration::{Configuration, Fusion, ParamOverrides, Params, Preset};
use crate::dataset::Dataset;
use crate::embed::{EmbeddingProvider, ProviderIdentity};
use crate::engine::SearchEngine;
use crate::error::Error;
use crate::fusion::{self, MethodSpec};
use crate::generate::HypothesisGenerator;
use crate::metrics::MetricSettings;
use crate::pipeline::{self, PipelineInputs};
use crate::results::ToolInfo;
use crate::text::ChunkSpec;
use grid::{simplex_grid, weight, ParamRange};
use score::{mean, score_query, JudgedQueries, ScoredPoint};

/// Bumped whenever a field of `sweep.json` changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

/// Default number of grid steps per unit weight: 0.05 steps, 231 blend points, and
/// chatcli's 0.55 / 0.30 / 0.15 lies on the grid.
pub const DEFAULT_STEPS: u32 = 20;

/// Two means closer than this count as tied.
pub const TIE_TOLERANCE: f64 = 1e-12;

pub use crate::fusion::blend::BLEND_AXES;
pub use crate::fusion::hybrid::HYBRID_AXES;

/// What a sweep varies.
#[derive(Debug, Clone, PartialEq)]
pub enum SweepKind {
    /// Blend and hybrid weights on a grid with `steps` steps per unit.
    Weights { steps: u32 },
    /// One parameter over a range.
    Param(ParamRange),
}

/// How to sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSettings {
    pub kind: SweepKind,
    /// Metrics to report and optimize, each one of the run's metric names.
    pub metrics: Vec<String>,
    /// Folds of the cross-validation (at least 2).
    pub folds: usize,
    pub seed: u64,
}

/// `sweep.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepResults {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub run_name: String,
    pub dataset: SweptDataset,
    pub evaluation: SweepEvaluation,
    pub sweep: SweepDescription,
    pub cross_validation: CrossValidationSettings,
    /// `null` when no swept configuration used embeddings.
    pub embedder: Option<ProviderIdentity>,
    /// The search engine that served the vector searches (`--engine`); absent for sweeps
    /// on the in-process index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    pub configurations: Vec<ConfigurationSweep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweptDataset {
    pub name: String,
    /// Same as `results.json`'s, so a report can check that both describe one dataset.
    pub content_hash: String,
    pub queries: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepEvaluation {
    #[serde(flatten)]
    pub settings: MetricSettings,
    /// The swept metrics, in the order every `metrics` map lists them.
    pub metrics: Vec<String>,
    pub evaluated_queries: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SweepDescription {
    /// Weight grids with `steps` steps per unit.
    Weights { steps: u32 },
    /// One parameter over `values`.
    Param { parameter: String, values: Vec<f64> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossValidationSettings {
    pub folds: usize,
    pub seed: u64,
    /// Held-out queries per fold.
    pub fold_sizes: Vec<usize>,
    pub rule: String,
}

/// One configuration's sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigurationSweep {
    pub name: String,
    pub preset: Preset,
    pub fusion: Fusion,
    /// The configuration's own parameters (the "default" point).
    pub params: Params,
    /// What each point's `at` lists.
    pub axes: Vec<String>,
    /// The configuration's own parameters, evaluated: equal to `run`'s numbers.
    pub default: SweepPoint,
    /// Every grid point or parameter value, in sweep order.
    pub points: Vec<SweepPoint>,
    /// Per swept metric: the best points and the cross-validated estimate.
    pub summaries: Vec<MetricSummary>,
}

/// One evaluated point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Coordinates, aligned with the configuration's `axes`.
    pub at: Vec<f64>,
    /// Macro averages of the swept metrics.
    pub metrics: serde_json::Map<String, serde_json::Value>,
}

impl SweepPoint {
    /// The value of `metric` (0 when absent).
    pub fn value(&self, metric: &str) -> f64 {
        self.metrics
            .get(metric)
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0)
    }
}

/// The outcome of one configuration's sweep for one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    pub metric: String,
    /// At the configuration's own parameters.
    pub default: f64,
    /// The largest mean over the points.
    pub best: f64,
    /// Coordinates of every point within the tie tolerance of `best`, in sweep order.
    pub best_points: Vec<Vec<f64>>,
    /// Mean over all queries of the held-out score of the point chosen on the other
    /// folds: what tuning on this data would reach on unseen queries.
    pub cross_validated: f64,
    pub folds: Vec<FoldSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoldSummary {
    pub held_out_queries: usize,
    /// Coordinates of the point chosen on the other folds.
    pub chosen: Vec<f64>,
    pub train_mean: f64,
    pub held_out_mean: f64,
}

/// What [`run`] needs besides the settings.
pub struct SweepInputs<'a> {
    pub dataset: &'a Dataset,
    pub embedder: Option<&'a dyn EmbeddingProvider>,
    pub generator: &'a dyn HypothesisGenerator,
    pub run_name: &'a str,
    pub metrics: &'a MetricSettings,
    /// The run's configurations; those the sweep does not apply to are skipped.
    pub configurations: &'a [Configuration],
    pub progress: bool,
    /// The search engine serving the vector searches (`--engine`): its table's name and
    /// client.
    pub engine: Option<(&'a str, &'a dyn SearchEngine)>,
    /// `--chunk`: facts indexed as windows for vector search, a fact scoring as its
    /// best window.
    pub chunk: Option<ChunkSpec>,
}

/// Which configurations a sweep applies to, and the names of the others.
pub fn select(
    configurations: &[Configuration],
    kind: &SweepKind,
) -> (Vec<Configuration>, Vec<String>) {
    let (selected, skipped): (Vec<&Configuration>, Vec<&Configuration>) =
        configurations.iter().partition(|configuration| match kind {
            SweepKind::Weights { .. } => {
                blends_weights(configuration.preset, &configuration.params)
            }
            SweepKind::Param(range) => {
                fusion::ignored_parameter(configuration.preset, &configuration.params, &range.name)
                    .is_none()
            }
        });
    (
        selected.into_iter().cloned().collect(),
        skipped.into_iter().map(|c| c.name.clone()).collect(),
    )
}

/// Why [`select`] leaves configurations out.
pub fn skip_reason(kind: &SweepKind) -> String {
    match kind {
        SweepKind::Weights { .. } => {
            "they blend no weighted signals at their parameters (sweep their parameters with --param)".to_owned()
        }
        SweepKind::Param(range) => format!("they do not read {} at their parameters", range.name),
    }
}

/// Whether a weight sweep applies to a configuration of `preset` with `params`: its
/// fusion method blends weighted signals, and reads their weights at these parameters
/// (the list fusions' weights move rankings under wsum only).
fn blends_weights(preset: Preset, params: &Params) -> bool {
    let axes = fusion::method(preset.plan().fusion).spec().weight_axes;
    !axes.is_empty()
        && axes
            .iter()
            .all(|axis| fusion::ignored_parameter(preset, params, axis.parameter).is_none())
}

/// The axes a configuration is swept along: its method's weight axes, or the parameter.
fn axes(spec: &MethodSpec, kind: &SweepKind) -> Vec<String> {
    match kind {
        SweepKind::Param(range) => vec![range.name.clone()],
        SweepKind::Weights { .. } => spec
            .weight_axes
            .iter()
            .map(|axis| axis.name.to_owned())
            .collect(),
    }
}

/// The coordinates of `params` along the axes of a configuration whose method is `spec`.
fn coordinates(spec: &MethodSpec, kind: &SweepKind, params: &Params) -> Vec<f64> {
    match kind {
        SweepKind::Param(range) => vec![param_as_number(params, &range.name)],
        SweepKind::Weights { .. } => spec
            .weight_axes
            .iter()
            .map(|axis| (axis.get)(params))
            .collect(),
    }
}

/// A numeric parameter's value.
fn param_as_number(params: &Params, name: &str) -> f64 {
    let value = serde_json::to_value(params).expect("params serialize");
    value
        .get(name)
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(f64::NAN)
}

/// One point to score: which table set it fuses and with what.
struct PlannedPoint {
    tables: usize,
    params: Params,
    at: Vec<f64>,
}

/// A configuration's default point and sweep points.
struct PlannedConfiguration {
    configuration: Configuration,
    axes: Vec<String>,
    default: PlannedPoint,
    points: Vec<PlannedPoint>,
}

/// Builds the points of every selected configuration and the configurations whose
/// signals must be prepared (one per configuration for weights; one per configuration
/// and value, plus its default, for a parameter).
fn plan_points(
    selected: &[Configuration],
    kind: &SweepKind,
) -> Result<(Vec<PlannedConfiguration>, Vec<Configuration>), Error> {
    let mut planned = Vec::new();
    let mut prepared = Vec::new();
    for configuration in selected {
        let spec = fusion::method(configuration.plan().fusion).spec();
        let axes = axes(&spec, kind);
        let base = configuration.params.clone();
        let default_tables = prepared.len();
        prepared.push(configuration.clone());
        let default = PlannedPoint {
            tables: default_tables,
            at: coordinates(&spec, kind, &base),
            params: base.clone(),
        };
        let points = match kind {
            SweepKind::Weights { steps } => simplex_grid(spec.weight_axes.len(), *steps)
                .into_iter()
                .map(|point| {
                    let mut params = base.clone();
                    for (axis, &coordinate) in spec.weight_axes.iter().zip(&point) {
                        (axis.set)(&mut params, weight(coordinate, *steps));
                    }
                    let at = coordinates(&spec, kind, &params);
                    // Blend weights as `run` would take them from `--set weights=...`:
                    // normalized, which moves a few grid points by a unit in the last
                    // place. The point keeps its grid coordinates.
                    if params.weights != base.weights {
                        params.weights = params.weights.normalized();
                    }
                    PlannedPoint {
                        tables: default_tables,
                        at,
                        params,
                    }
                })
                .collect(),
            SweepKind::Param(range) => {
                let mut points = Vec::new();
                for value in &range.values {
                    let overrides =
                        ParamOverrides::parse(&range.name, &value.text).map_err(|message| {
                            Error::Usage(format!("--param {}: {message}", range.name))
                        })?;
                    let mut params = base.clone();
                    overrides.apply(&mut params);
                    params.validate(&configuration.name)?;
                    points.push(PlannedPoint {
                        tables: prepared.len(),
                        at: vec![value.value],
                        params: params.clone(),
                    });
                    prepared.push(Configuration {
                        name: format!("{}[{}={}]", configuration.name, range.name, value.text),
                        preset: configuration.preset,
                        params,
                    });
                }
                points
            }
        };
        planned.push(PlannedConfiguration {
            configuration: configuration.clone(),
            axes,
            default,
            points,
        });
    }
    Ok((planned, prepared))
}

/// Runs the sweep. Deterministic at any thread count: queries are scored in parallel
/// and collected in query order, points in sweep order.
pub fn run(inputs: &SweepInputs<'_>, settings: &SweepSettings) -> Result<SweepResults, Error> {
    let metric_names = inputs.metrics.metric_names();
    let metric_indices: Vec<usize> = settings
        .metrics
        .iter()
        .map(|metric| {
            metric_names
                .iter()
                .position(|name| name == metric)
                .ok_or_else(|| {
                    Error::Usage(format!(
                        "unknown metric {metric:?}{}; this run computes: {}",
                        crate::hints::suggestion(
                            metric,
                            &metric_names.iter().map(String::as_str).collect::<Vec<_>>()
                        ),
                        metric_names.join(", ")
                    ))
                })
        })
        .collect::<Result<_, _>>()?;
    if settings.folds < 2 {
        return Err(Error::Usage(format!(
            "--folds must be at least 2, got {}",
            settings.folds
        )));
    }
    let (selected, _) = select(inputs.configurations, &settings.kind);
    if selected.is_empty() {
        return Err(Error::Usage(match &settings.kind {
            SweepKind::Weights { .. } => {
                let blending: Vec<&str> = Preset::ALL
                    .iter()
                    .filter(|preset| blends_weights(**preset, &preset.default_params()))
                    .map(|preset| preset.name())
                    .collect();
                format!(
                    "none of the selected configurations blends weighted signals; pick one with --configurations ({})",
                    blending.join(", ")
                )
            }
            SweepKind::Param(range) => {
                let reasons: Vec<String> = inputs
                    .configurations
                    .iter()
                    .filter_map(|configuration| {
                        let reason = fusion::ignored_parameter(
                            configuration.preset,
                            &configuration.params,
                            &range.name,
                        )?;
                        Some(format!("{:?}: {reason}", configuration.name))
                    })
                    .collect();
                format!(
                    "none of the selected configurations reads {} ({}); pick one with --configurations",
                    range.name,
                    reasons.join("; ")
                )
            }
        }));
    }
    let (planned, to_prepare) = plan_points(&selected, &settings.kind)?;

    let needs_vectors = to_prepare.iter().any(|c| c.plan().vector.is_some());
    let indexed = pipeline::index_corpus(
        inputs.dataset,
        &PipelineInputs {
            embedder: inputs.embedder,
            generator: inputs.generator,
            configurations: &to_prepare,
            progress: inputs.progress,
        },
    )?
    .chunking(inputs.chunk);
    let texts = indexed.texts_of(&inputs.dataset.facts);
    let mut prepared = indexed.embed(&texts, &inputs.dataset.queries)?;
    if let (Some((name, engine)), Some(embedder)) = (inputs.engine, inputs.embedder) {
        prepared.serve_checked(
            name,
            engine,
            &inputs.dataset.content_hash,
            embedder,
            &inputs.metrics.cutoffs,
        )?;
    }
    let tables = prepared.candidate_tables()?;
    let judged = JudgedQueries::new(
        inputs.dataset,
        &prepared.fact_ids(),
        inputs.metrics.relevance_level,
    );
    if judged.len() < settings.folds {
        return Err(Error::Usage(format!(
            "{} evaluated queries cannot fill {} folds; lower --folds",
            judged.len(),
            settings.folds
        )));
    }
    let fold_of = folds::assign_folds(judged.len(), settings.folds, settings.seed);

    // Score every point of every configuration, one query at a time in parallel (each
    // query's tables stay in cache while its points are scored), then gather
    // `scored[point][metric][query]` in sweep order and query order.
    let points: Vec<ScoredPoint<'_>> = planned
        .iter()
        .flat_map(|c| std::iter::once(&c.default).chain(&c.points))
        .map(|point| {
            let fusion = tables[point.tables].configuration.plan().fusion;
            ScoredPoint::new(point.tables, fusion, &point.params)
        })
        .collect();
    let per_query: Vec<Vec<Vec<f64>>> = (0..judged.len())
        .into_par_iter()
        .map(|query| {
            score_query(
                query,
                &points,
                &tables,
                &judged,
                inputs.metrics,
                &metric_indices,
            )
        })
        .collect();
    let scored: Vec<Vec<Vec<f64>>> = (0..points.len())
        .map(|point| {
            (0..metric_indices.len())
                .map(|metric| {
                    per_query
                        .iter()
                        .map(|values| values[point][metric])
                        .collect()
                })
                .collect()
        })
        .collect();

    let mut scored = scored.into_iter();
    let configurations = planned
        .into_iter()
        .map(|planned| {
            let default_values = scored.next().expect("one score per point");
            let point_values: Vec<Vec<Vec<f64>>> =
                scored.by_ref().take(planned.points.len()).collect();
            summarize(
                planned,
                &settings.metrics,
                default_values,
                point_values,
                &fold_of,
                settings.folds,
            )
        })
        .collect();

    let mut fold_sizes = vec![0; settings.folds];
    for &fold in &fold_of {
        fold_sizes[fold] += 1;
    }
    Ok(SweepResults {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::current(),
        run_name: inputs.run_name.to_owned(),
        dataset: SweptDataset {
            name: inputs.dataset.manifest.name.clone(),
            content_hash: inputs.dataset.content_hash.clone(),
            queries: inputs.dataset.queries.len(),
        },
        evaluation: SweepEvaluation {
            settings: inputs.metrics.clone(),
            metrics: settings.metrics.clone(),
            evaluated_queries: judged.len(),
        },
        sweep: match &settings.kind {
            SweepKind::Weights { steps } => SweepDescription::Weights { steps: *steps },
            SweepKind::Param(range) => SweepDescription::Param {
                parameter: range.name.clone(),
                values: range.values.iter().map(|value| value.value).collect(),
            },
        },
        cross_validation: CrossValidationSettings {
            folds: settings.folds,
            seed: settings.seed,
            fold_sizes,
            rule: "queries dealt into folds by a ChaCha8 shuffle of the seed; each fold scores the point with the best mean on the other folds (ties: first in sweep order)".to_owned(),
        },
        embedder: needs_vectors
            .then(|| inputs.embedder.map(|embedder| embedder.identity()))
            .flatten(),
        engine: inputs
            .engine
            .filter(|_| needs_vectors)
            .map(|(name, engine)| crate::engine::label(name, engine)),
        configurations,
    })
}

fn metric_map(names: &[String], values: &[Vec<f64>]) -> serde_json::Map<String, serde_json::Value> {
    names
        .iter()
        .zip(values)
        .map(|(name, per_query)| {
            let value = serde_json::Number::from_f64(mean(per_query))
                .map_or(serde_json::Value::Null, serde_json::Value::Number);
            (name.clone(), value)
        })
        .collect()
}

/// Best points and cross-validation of one configuration, per metric.
/// `point_values[point][metric][query]`.
fn summarize(
    planned: PlannedConfiguration,
    metrics: &[String],
    default_values: Vec<Vec<f64>>,
    point_values: Vec<Vec<Vec<f64>>>,
    fold_of: &[usize],
    folds: usize,
) -> ConfigurationSweep {
    let points: Vec<SweepPoint> = planned
        .points
        .iter()
        .zip(&point_values)
        .map(|(point, values)| SweepPoint {
            at: point.at.clone(),
            metrics: metric_map(metrics, values),
        })
        .collect();
    let summaries = metrics
        .iter()
        .enumerate()
        .map(|(index, metric)| {
            let means: Vec<f64> = point_values
                .iter()
                .map(|values| mean(&values[index]))
                .collect();
            let best = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let best_points = means
                .iter()
                .zip(&points)
                .filter(|(value, _)| **value >= best - TIE_TOLERANCE)
                .map(|(_, point)| point.at.clone())
                .collect();
            let per_point: Vec<Vec<f64>> = point_values
                .iter()
                .map(|values| values[index].clone())
                .collect();
            let validation = folds::cross_validate(&per_point, fold_of, folds);
            MetricSummary {
                metric: metric.clone(),
                default: mean(&default_values[index]),
                best,
                best_points,
                cross_validated: validation.held_out_mean,
                folds: validation
                    .folds
                    .iter()
                    .map(|fold| FoldSummary {
                        held_out_queries: fold.size,
                        chosen: points[fold.chosen].at.clone(),
                        train_mean: fold.train_mean,
                        held_out_mean: fold.held_out_mean,
                    })
                    .collect(),
            }
        })
        .collect();
    ConfigurationSweep {
        name: planned.configuration.name.clone(),
        preset: planned.configuration.preset,
        fusion: planned.configuration.plan().fusion,
        params: planned.configuration.params.clone(),
        axes: planned.axes,
        default: SweepPoint {
            at: planned.default.at,
            metrics: metric_map(metrics, &default_values),
        },
        points,
        summaries,
    }
}
