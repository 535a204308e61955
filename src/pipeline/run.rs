//! The pipeline's driver: what a run asks for ([`RunSpec`]), running every
//! configuration of it on a dataset ([`execute`]: providers built, corpus indexed, large
//! corpora and vector sets set aside on disk, queries retrieved chunk by chunk into the
//! ranking digests), every configuration over the prepared queries into its ranking
//! sink ([`Prepared::retrieve`], and [`run`] for prepare-then-retrieve), and assembling
//! the results document from what comes out ([`build_results`]).
//!
//! It strings the stages together and counts what they did; it computes no signal and
//! fuses nothing itself. It writes only what [`RankingOutputs`] asks (run files); the
//! report is the caller's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::configuration::Configuration;
use crate::dataset::{Dataset, FactId, Query, QueryId, RecordedHypotheses};
use crate::embed::choice::{CacheAccess, EmbedderChoice};
use crate::embed::{EmbeddingProvider, ProviderIdentity};
use crate::engine::{EngineSpec, SearchEngine};
use crate::error::Error;
use crate::fusion::LexicalMemo;
use crate::generate::choice::GeneratorChoice;
use crate::generate::{GeneratorIdentity, HypothesisGenerator};
use crate::metrics::MetricSettings;
use crate::ranking::{QueryRanking, RankingSink};
use crate::results::details;
use crate::results::digest::{Digest, RankingDigest};
use crate::results::engine::{metric_deltas, EngineConfiguration, EngineRun};
use crate::results::hyde_figures::GenerationTime;
use crate::results::shard::Shard;
use crate::results::{
    metric_map, AdaptiveFloorSummary, Chunking, ConfigurationResult, Counts, DatasetSummary,
    EvaluationSummary, HydeSummary, Results, ToolInfo, SCHEMA_VERSION,
};
use crate::text::ChunkSpec;

use super::accounting::account;
use super::expand::HydeOutcome;
use super::fact_spill::{SpilledFacts, SPILL_MIN_BYTES};
use super::fuse::ConfigurationRanking;
use super::prepare::{index_corpus, prepare};
use super::sources::{apply_weights, SourcePolicy};
use super::state::{
    elapsed_ms, progress_bar, ConfigurationOutput, PipelineInputs, PipelineOutput, Prepared,
};
use super::vector_spill::VECTOR_SPILL_MIN_BYTES;

/// What a run asks for: its configurations, providers, caches and metrics.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub configurations: Vec<Configuration>,
    pub embedder: EmbedderChoice,
    pub generator: GeneratorChoice,
    /// The search engine serving vector candidates (`--engine`), or none: the
    /// in-process index.
    pub engine: Option<EngineSpec>,
    /// `--cache-dir` or the config's `cache_dir` (else the default, resolved when used).
    pub cache_dir: Option<PathBuf>,
    /// Cache misses that would need the network are errors.
    pub offline: bool,
    pub metrics: MetricSettings,
    pub run_name: String,
    /// Stage lines and progress bars on stderr.
    pub progress: bool,
    /// Evaluate only this shard's queries (`run --shard I/N`); `None` evaluates all.
    pub shard: Option<Shard>,
    /// `--chunk`: each fact's windows indexed for vector search; `None`: whole facts.
    pub chunk: Option<ChunkSpec>,
    /// The config file's `sources` and `source_boost`; `None`: every fact as fused.
    pub sources: Option<SourcePolicy>,
}

/// What the provider factories read from a dataset (its fields, so the facts can be
/// set aside while the providers live).
pub struct DatasetInputs<'d> {
    pub concept_lexicon: Option<&'d (PathBuf, String)>,
    pub queries: &'d [Query],
    pub hypotheses: &'d HashMap<QueryId, RecordedHypotheses>,
}

/// An embedding provider (when a configuration needs vectors) and a hypothesis
/// generator.
pub type Providers<'d> = (
    Option<Box<dyn EmbeddingProvider>>,
    Box<dyn HypothesisGenerator + 'd>,
);

impl RunSpec {
    /// Builds the run's providers for `configurations`: an embedder only when one of
    /// them searches vectors.
    pub fn providers<'d>(
        &self,
        configurations: &[Configuration],
        dataset: DatasetInputs<'d>,
    ) -> Result<Providers<'d>, Error> {
        let cache_root = || crate::cache::cache_root(self.cache_dir.as_deref());
        let cache = CacheAccess {
            root: &cache_root,
            offline: self.offline,
        };
        let needs_vectors = configurations
            .iter()
            .any(|configuration| configuration.plan().vector.is_some());
        let embedder = if needs_vectors {
            Some(crate::embed::choice::build(
                &self.embedder,
                dataset.concept_lexicon,
                &cache,
            )?)
        } else {
            None
        };
        let generator = crate::generate::choice::build(
            &self.generator,
            dataset.queries,
            dataset.hypotheses,
            &cache,
        )?;
        Ok((embedder, generator))
    }
}

/// A finished evaluation: the results document and the pipeline output behind it.
pub struct Execution {
    pub results: Results,
    pub output: PipelineOutput,
    /// Each configuration's rankings (dataset order) when [`RankingOutputs::keep`] asked
    /// for them; empty otherwise.
    pub rankings: Vec<Vec<QueryRanking>>,
}

/// What [`execute`] does with the rankings besides evaluating them. By default nothing:
/// each chunk of rankings is dropped once it is evaluated.
#[derive(Default, Clone, Copy)]
pub struct RankingOutputs<'a> {
    /// Keep every ranking in [`Execution::rankings`] (24 bytes per ranked fact).
    pub keep: bool,
    /// Write each configuration's TREC run file, `NAME.run`, into this directory as the
    /// rankings come.
    pub run_files: Option<&'a Path>,
    /// Lines per query in the run files at most (`None`: the whole ranking).
    pub run_depth: Option<usize>,
}

impl RankingOutputs<'_> {
    /// Keep every ranking, write no run file.
    pub fn kept() -> Self {
        RankingOutputs {
            keep: true,
            ..RankingOutputs::default()
        }
    }
}

/// Runs every configuration of `settings` on `dataset` and evaluates them as the
/// rankings stream out of the pipeline; `rankings` says what else happens to them.
/// With a [`RunSpec::shard`], only that shard's queries are retrieved and evaluated
/// (the providers, the corpus and the dataset summary are still the whole dataset's).
/// While the queries are retrieved, a large corpus' facts wait in a temporary file
/// (see [`SpilledFacts`]); `dataset` is whole again when this returns, error or not.
/// Prints nothing. Runs on the current rayon pool.
pub fn execute(
    dataset: &mut Dataset,
    settings: &RunSpec,
    rankings: RankingOutputs<'_>,
) -> Result<Execution, Error> {
    dataset.check_evaluable(settings.metrics.relevance_level)?;
    if let Some(spec) = &settings.engine {
        super::served::check_engine_serves(spec, &settings.configurations)?;
    }
    let (embedder, generator) = settings.providers(
        &settings.configurations,
        DatasetInputs {
            concept_lexicon: dataset.concept_lexicon.as_ref(),
            queries: &dataset.queries,
            hypotheses: &dataset.hypotheses,
        },
    )?;
    // An engine that cannot be reached fails the run before anything is embedded.
    let engine = settings
        .engine
        .as_ref()
        .map(|spec| {
            let engine = crate::engine::connect(spec, settings.progress)?;
            engine.state()?;
            Ok::<_, Error>(engine)
        })
        .transpose()?;
    let selected = settings.shard.map(|shard| shard.select(&dataset.queries));
    let queries: &[Query] = selected.as_deref().unwrap_or(&dataset.queries);
    let mut digests = Vec::with_capacity(settings.configurations.len());
    for configuration in &settings.configurations {
        let mut digest = RankingDigest::new(queries, &dataset.qrels, &settings.metrics);
        if let Some(directory) = rankings.run_files {
            digest = digest.writing_run_file(
                &directory.join(format!("{}.run", configuration.name)),
                &configuration.name,
                rankings.run_depth,
            )?;
        }
        if rankings.keep {
            digest = digest.keeping_rankings();
        }
        digests.push(digest);
    }
    let inputs = PipelineInputs {
        embedder: embedder.as_deref(),
        generator: generator.as_ref(),
        configurations: &settings.configurations,
        progress: settings.progress,
    };
    // Large sets of query and hypothesis vectors wait on disk until their chunk.
    let indexed = index_corpus(dataset, &inputs)?
        .spilling_query_vectors(VECTOR_SPILL_MIN_BYTES)
        .chunking(settings.chunk);
    let source_weights = settings.sources.as_ref().map(|policy| {
        policy.weights(
            indexed
                .fact_order()
                .iter()
                .map(|&position| &dataset.facts[position as usize]),
        )
    });
    let indexed = indexed.weighting_sources(source_weights);
    // A large corpus' facts wait on disk from here until the report; the embedder
    // reads their texts back a chunk at a time.
    let mut spilled = SpilledFacts::take(&mut dataset.facts, SPILL_MIN_BYTES)?;
    let prepared = match &spilled {
        Some(spilled) => {
            let order = indexed.fact_order().to_vec();
            indexed.embed(&spilled.contents(&order), queries)
        }
        None => {
            let texts = indexed.texts_of(&dataset.facts);
            indexed.embed(&texts, queries)
        }
    };
    if let Some(spilled) = &mut spilled {
        spilled.contents_read();
    }
    let output = prepared.and_then(|mut prepared| {
        if let (Some(engine), Some(embedder), Some(spec)) =
            (&engine, embedder.as_deref(), &settings.engine)
        {
            prepared.serve_checked(
                &spec.name,
                engine.as_ref(),
                &dataset.content_hash,
                embedder,
                &settings.metrics.cutoffs,
            )?;
        }
        prepared.retrieve(&mut digests)
    });
    if let Some(spilled) = spilled {
        spilled.restore(&mut dataset.facts)?;
    }
    let output = output?;
    let dataset = &*dataset;
    let mut digests = digests
        .into_iter()
        .map(RankingDigest::finish)
        .collect::<Result<Vec<_>, _>>()?;
    let kept = digests
        .iter_mut()
        .filter_map(|digest| digest.rankings.take())
        .collect();
    let mut results = build_results(
        &settings.run_name,
        dataset,
        queries,
        &settings.metrics,
        embedder.as_ref().map(|embedder| embedder.identity()),
        generator.identity(),
        &output.configurations,
        digests,
    );
    results.backend = output.backend.clone();
    results.chunking = settings
        .chunk
        .zip(output.chunks)
        .map(|(spec, chunks)| Chunking {
            tokens: spec.tokens,
            overlap: spec.overlap,
            chunks,
        });
    if let (Some(spec), Some(engine)) = (&settings.engine, &engine) {
        results.engine = Some(engine_run(
            dataset,
            settings,
            spec,
            engine.as_ref(),
            &output,
            &results,
        )?);
    }
    if results.generator.kind != "recorded" {
        for (detail, hypotheses) in results.queries.iter_mut().zip(&output.hypotheses) {
            detail.hypotheses = hypotheses.clone();
        }
    }
    Ok(Execution {
        results,
        output,
        rankings: kept,
    })
}

/// The engine part of a served run's results: where each configuration's signals came
/// from, ANN recall, and its macro metrics beside the same run on the exact in-process
/// index (run here, on the same dataset, providers and caches, writing nothing).
fn engine_run(
    dataset: &Dataset,
    settings: &RunSpec,
    spec: &EngineSpec,
    engine: &dyn SearchEngine,
    output: &PipelineOutput,
    results: &Results,
) -> Result<EngineRun, Error> {
    crate::progress::stage(
        settings.progress,
        "the same run on the exact in-process index, for comparison",
    );
    let exact_settings = RunSpec {
        engine: None,
        progress: false,
        ..settings.clone()
    };
    let mut dataset = dataset.clone();
    let exact = execute(&mut dataset, &exact_settings, RankingOutputs::default())?.results;
    let cutoffs = &settings.metrics.cutoffs;
    let configurations = results
        .configurations
        .iter()
        .zip(&exact.configurations)
        .zip(&output.ann)
        .zip(&settings.configurations)
        .map(|(((served, exact), tally), configuration)| {
            let plan = served.plan;
            let search_depth = if plan.vector.is_some() {
                crate::fusion::method(plan.fusion).search_depth(&configuration.params)
            } else {
                0
            };
            let spec = crate::fusion::method(plan.fusion).spec();
            let mut signals = Map::new();
            let mut signal = |name: &str, source: &str| {
                signals.insert(name.to_owned(), Value::String(source.to_owned()));
            };
            if plan.vector.is_some() {
                signal("vector search", "engine");
            }
            if spec.keyword_relevance {
                signal("keyword relevance", "in-process");
            }
            if spec.text_ranking && engine.ranks_text() {
                signal("text ranking", "engine");
            } else if spec.bm25 {
                signal("BM25", "in-process");
            }
            if spec.params.contains(&"half_life_days") {
                signal("recency", "in-process");
            }
            let ann_recall = cutoffs
                .iter()
                .zip(tally.means())
                .map(|(k, recall)| {
                    (
                        format!("ann_recall@{k}"),
                        serde_json::Number::from_f64(recall).map_or(Value::Null, Value::Number),
                    )
                })
                .collect();
            EngineConfiguration {
                name: served.name.clone(),
                signals,
                vector_searches: tally.searches,
                search_depth,
                evaluated_depth: cutoffs.iter().copied().max().unwrap_or(0),
                differing_searches: tally.differing,
                differing_searches_at_evaluated_depth: tally.differing_at_evaluated_depth,
                truncated_searches: tally.truncated,
                shortest_truncated: tally.shortest_truncated,
                ann_recall,
                delta: metric_deltas(&served.macro_metrics, &exact.macro_metrics),
                exact_macro: exact.macro_metrics.clone(),
            }
        })
        .collect();
    Ok(EngineRun {
        name: spec.name.clone(),
        kind: spec.kind.name().to_owned(),
        served_by: engine.describe(),
        index: engine.index_report()?,
        configurations,
    })
}

/// Assembles the results document from the pipeline's outputs and the digests of their
/// rankings (aligned with `outputs`) of `queries` (the dataset's, or a shard of them).
#[allow(clippy::too_many_arguments)]
pub fn build_results(
    run_name: &str,
    dataset: &Dataset,
    queries: &[Query],
    settings: &MetricSettings,
    embedder: Option<ProviderIdentity>,
    generator: GeneratorIdentity,
    outputs: &[ConfigurationOutput],
    digests: Vec<Digest>,
) -> Results {
    let names = settings.metric_names();
    let evaluated_queries = digests.first().map_or(0, |digest| digest.per_query.len());
    let queries_without_relevant = digests
        .first()
        .map_or_else(Vec::new, |digest| digest.without_relevant.clone());
    let configurations = outputs
        .iter()
        .zip(digests)
        .map(|(output, digest)| {
            let configuration = &output.configuration;
            let uses_hypotheses = configuration.plan().uses_hypotheses();
            let evaluated = digest.per_query.len();
            let empty_rankings = digest
                .per_query
                .iter()
                .filter(|query| query.returned == 0)
                .count();
            let macro_metrics = metric_map(&names, &digest.means);
            let mut per_query = digest.per_query;
            if uses_hypotheses {
                for (query, &position) in per_query.iter_mut().zip(&digest.positions) {
                    query.hypothesis_used = Some(output.used_hypotheses[position]);
                }
            }
            for (query, &position) in per_query.iter_mut().zip(&digest.positions) {
                query.settled_floor = output.settled_floors[position];
            }
            let adaptive_floor = AdaptiveFloorSummary::of(&configuration.params, &per_query);
            let accounting = &output.accounting;
            ConfigurationResult {
                name: configuration.name.clone(),
                preset: configuration.preset,
                description: configuration.preset.description().to_owned(),
                source: configuration.preset.source().to_owned(),
                plan: configuration.plan(),
                params: configuration.params.clone(),
                macro_metrics,
                // Filled below from the document's queries (`add_tag_breakdowns`).
                by_tag: Vec::new(),
                counts: Counts {
                    queries: digest.queries,
                    evaluated,
                    empty_rankings,
                    abstained_without_relevant: digest.abstained_without_relevant,
                },
                hyde: uses_hypotheses.then(|| HydeSummary {
                    eligible_queries: accounting.eligible_queries,
                    hypotheses_used: accounting.hypotheses_used,
                    usage_rate: accounting.usage_rate(),
                    fallback_no_hypothesis: accounting.fallback_no_hypothesis,
                    skipped_short_query: accounting.skipped_short_query,
                    skipped_code_mention: accounting.skipped_code_mention,
                    skipped_few_characters: accounting.skipped_few_characters,
                    skipped_lookup_intent: accounting.skipped_lookup_intent,
                    hypotheses_generated: accounting.supply.hypotheses_generated,
                    hypotheses_from_cache: accounting.supply.hypotheses_from_cache,
                    hypotheses_recorded: accounting.supply.hypotheses_recorded,
                    cache_hit_rate: accounting.cache_hit_rate(),
                    generation_time: GenerationTime::of(
                        accounting.timed_queries,
                        accounting.generation_time_ms,
                    ),
                    // Set below, once every configuration is in (`add_improvements`).
                    improvement: None,
                }),
                adaptive_floor,
                expectations: digest.expectations,
                backend: output.backend.clone(),
                per_query,
            }
        })
        .collect();
    let mut results = Results {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::current(),
        run_name: run_name.to_owned(),
        dataset: DatasetSummary::of(dataset),
        evaluation: EvaluationSummary {
            settings: settings.clone(),
            metrics: names,
            evaluated_queries,
            queries_without_relevant,
        },
        embedder,
        generator,
        engine: None,
        chunking: None,
        configurations,
        backend: None,
        queries: details::query_details(dataset, queries),
        facts: Vec::new(),
    };
    results.facts = details::fact_details(dataset, &results);
    crate::results::by_tag::add_tag_breakdowns(&mut results);
    crate::results::hyde_figures::add_improvements(&mut results);
    results
}

/// Prepares `dataset` and runs every configuration of `inputs` on it (see
/// [`Prepared::retrieve`]).
pub fn run<S: RankingSink>(
    dataset: &Dataset,
    inputs: &PipelineInputs<'_>,
    sinks: &mut [S],
) -> Result<PipelineOutput, Error> {
    prepare(dataset, inputs)?.retrieve(sinks)
}

impl Prepared<'_> {
    /// Runs every configuration on the prepared queries, handing each configuration's
    /// rankings to its sink (`sinks` is aligned with the configurations).
    pub fn retrieve<S: RankingSink>(mut self, sinks: &mut [S]) -> Result<PipelineOutput, Error> {
        let configurations = self.configurations;
        assert_eq!(
            sinks.len(),
            configurations.len(),
            "one sink per configuration"
        );
        let mut timings = self.timings.clone();
        let started = Instant::now();
        let query_count = self.queries.len();
        crate::progress::stage(
            self.progress,
            &format!(
                "retrieving {query_count} queries x {} configurations",
                configurations.len()
            ),
        );
        let bar = progress_bar(
            self.progress,
            query_count * configurations.len() > 5000,
            query_count,
            "retrieving",
        );
        let embedded_texts = self.embedded_texts;
        let mut outcomes: Vec<Vec<HydeOutcome>> = vec![Vec::new(); configurations.len()];
        let mut settled_floors: Vec<Vec<Option<f64>>> = vec![Vec::new(); configurations.len()];
        let mut retrieval_ms = vec![0.0; configurations.len()];
        self.in_chunks(
            |shared, query, expansion| {
                let lexical_memo = LexicalMemo::default();
                let outcomes = configurations
                    .iter()
                    .zip(&shared.plans)
                    .map(|(configuration, plan)| {
                        let started = Instant::now();
                        let ConfigurationRanking {
                            mut ranking,
                            hyde,
                            settled_floor,
                        } = shared.query_ranking(
                            query,
                            expansion,
                            configuration,
                            *plan,
                            &lexical_memo,
                        );
                        if let Some(weights) = &shared.source_weights {
                            apply_weights(&mut ranking, weights);
                        }
                        QueryOutcome {
                            ranking: ranking
                                .into_iter()
                                .map(|(fact, score)| (shared.fact_id(fact).clone(), score))
                                .collect(),
                            hyde,
                            settled_floor,
                            elapsed_ms: elapsed_ms(started),
                        }
                    })
                    .collect::<Vec<_>>();
                bar.inc(1);
                outcomes
            },
            |queries, per_query| {
                let mut rankings: Vec<Vec<QueryRanking>> = (0..configurations.len())
                    .map(|_| Vec::with_capacity(queries.len()))
                    .collect();
                for (query, query_outcomes) in queries.iter().zip(per_query) {
                    for (index, outcome) in query_outcomes.into_iter().enumerate() {
                        outcomes[index].push(outcome.hyde);
                        settled_floors[index].push(outcome.settled_floor);
                        retrieval_ms[index] += outcome.elapsed_ms;
                        rankings[index].push(QueryRanking {
                            query: query.id.clone(),
                            results: outcome.ranking,
                        });
                    }
                }
                sinks
                    .par_iter_mut()
                    .zip(rankings)
                    .try_for_each(|(sink, rankings)| sink.accept(rankings))
            },
        )?;
        bar.finish_and_clear();
        timings.retrieve_ms = elapsed_ms(started);

        let outputs = configurations
            .iter()
            .zip(outcomes)
            .zip(settled_floors)
            .zip(retrieval_ms)
            .enumerate()
            .map(
                |(index, (((configuration, outcomes), settled_floors), retrieval_ms))| {
                    ConfigurationOutput {
                        configuration: configuration.clone(),
                        used_hypotheses: outcomes
                            .iter()
                            .map(|&outcome| outcome == HydeOutcome::Used)
                            .collect(),
                        settled_floors,
                        accounting: account(outcomes.iter().copied().zip(&self.expansions)),
                        backend: self.backend_accounting(self.plans[index], &outcomes),
                        retrieval_ms,
                    }
                },
            )
            .collect();
        Ok(PipelineOutput {
            configurations: outputs,
            timings,
            embedded_texts,
            chunks: self.chunk_count(),
            backend: self.run_backend_accounting(),
            backend_failures: self.backend_failures(),
            ann: std::mem::take(&mut self.ann),
            hypotheses: self
                .expansions
                .iter()
                .map(|expansion| expansion.hypotheses.clone().unwrap_or_default())
                .collect(),
        })
    }
}

/// What one configuration did for one query.
struct QueryOutcome {
    ranking: Vec<(FactId, f64)>,
    hyde: HydeOutcome,
    settled_floor: Option<f64>,
    elapsed_ms: f64,
}
