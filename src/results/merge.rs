//! Merging the shards of a run (see [`super::shard`]) into the results document and run
//! files the unsharded run writes. Every per-query record, and what summarizes them
//! (means, counts, expectation checks, queries without relevant facts), comes from the
//! recomputation over the shards' run files ([`super::recompute`]), which reduces the
//! whole dataset's rankings as the unsharded run does; the queries, facts and dataset
//! summary come from the dataset. From the shards come only what they checked to agree
//! on (settings, providers, configuration definitions) and what a run file cannot give:
//! HyDE accounting and backend spend (summed; latency percentiles are the largest
//! shard's) and the hypotheses a generator wrote.
//!
//! Pure over its inputs, except [`merge_run_files`], which streams run files.

use std::io::{BufRead, Write};

use super::accounting::{BackendAccounting, GenerationTotals, RunBackendAccounting};
use super::digest::Digest;
use super::shard::ShardResults;
use super::{
    details, hyde_figures::GenerationTime, metric_map, AdaptiveFloorSummary, ConfigurationResult,
    Counts, DatasetSummary, EvaluationSummary, HydeSummary, Results,
};
use crate::dataset::{Dataset, QueryId};

/// The results document of the complete, checked set of `shards` (in index order; see
/// [`super::shard::check_shards`]) of a run of `dataset`, named `run_name`, from the
/// recomputed records of each configuration (`digests`, in configuration order; see
/// [`super::recompute::recompute`]).
pub fn merge(
    shards: &[ShardResults],
    digests: Vec<Digest>,
    dataset: &Dataset,
    run_name: &str,
) -> Results {
    let first = &shards[0].results;
    let count = shards.len();
    let settings = &first.evaluation.settings;
    let names = settings.metric_names();
    let mut queries = details::query_details(dataset, &dataset.queries);
    if first.generator.kind != "recorded" {
        // The hypotheses the generator wrote for each query (its shard's, checked to
        // list the same queries).
        for (position, query) in queries.iter_mut().enumerate() {
            query.hypotheses = shards[position % count].results.queries[position / count]
                .hypotheses
                .clone();
        }
    }
    let evaluated_queries = digests.first().map_or(0, |digest| digest.per_query.len());
    let queries_without_relevant = digests
        .first()
        .map_or_else(Vec::new, |digest| digest.without_relevant.clone());
    let configurations = digests
        .into_iter()
        .enumerate()
        .map(|(index, digest)| {
            let parts: Vec<&ConfigurationResult> = shards
                .iter()
                .map(|shard| &shard.results.configurations[index])
                .collect();
            merge_configuration(&first.configurations[index], &parts, &names, digest)
        })
        .collect();
    let mut merged = Results {
        schema_version: first.schema_version,
        tool: first.tool.clone(),
        run_name: run_name.to_owned(),
        dataset: DatasetSummary::of(dataset),
        evaluation: EvaluationSummary {
            settings: settings.clone(),
            metrics: names,
            evaluated_queries,
            queries_without_relevant,
        },
        embedder: first.embedder.clone(),
        generator: first.generator.clone(),
        // `run --shard` refuses an engine.
        engine: None,
        chunking: first.chunking.clone(),
        configurations,
        backend: sum_options(shards.iter().map(|shard| &shard.results.backend), add_run),
        queries,
        facts: Vec::new(),
    };
    merged.facts = details::fact_details(dataset, &merged);
    // Over the merged records, in dataset order, as an unsharded run computes it.
    super::by_tag::add_tag_breakdowns(&mut merged);
    super::hyde_figures::add_improvements(&mut merged);
    merged
}

/// One configuration of the merged document: its definition (`configuration`, equal in
/// every shard), its recomputed records (`digest`) and its part in each shard (`parts`)
/// for what only a shard knows.
fn merge_configuration(
    configuration: &ConfigurationResult,
    parts: &[&ConfigurationResult],
    metrics: &[String],
    digest: Digest,
) -> ConfigurationResult {
    let per_query = digest.per_query;
    let counts = Counts {
        queries: digest.queries,
        evaluated: per_query.len(),
        empty_rankings: per_query.iter().filter(|query| query.returned == 0).count(),
        abstained_without_relevant: digest.abstained_without_relevant,
    };
    let hyde = configuration.hyde.as_ref().map(|_| {
        let sum = |field: fn(&HydeSummary) -> usize| {
            parts
                .iter()
                .filter_map(|part| part.hyde.as_ref())
                .map(field)
                .fold(0usize, usize::saturating_add)
        };
        let sum_u64 = |field: fn(&HydeSummary) -> u64| {
            parts
                .iter()
                .filter_map(|part| part.hyde.as_ref())
                .map(field)
                .fold(0u64, u64::saturating_add)
        };
        let eligible_queries = sum(|hyde| hyde.eligible_queries);
        let hypotheses_generated = sum_u64(|hyde| hyde.hypotheses_generated);
        let hypotheses_from_cache = sum_u64(|hyde| hyde.hypotheses_from_cache);
        let hypotheses_recorded = sum_u64(|hyde| hyde.hypotheses_recorded);
        let hypotheses_used = sum(|hyde| hyde.hypotheses_used);
        HydeSummary {
            eligible_queries,
            hypotheses_used,
            usage_rate: HydeSummary::rate(hypotheses_used, eligible_queries),
            fallback_no_hypothesis: sum(|hyde| hyde.fallback_no_hypothesis),
            skipped_short_query: sum(|hyde| hyde.skipped_short_query),
            skipped_code_mention: sum(|hyde| hyde.skipped_code_mention),
            skipped_few_characters: sum(|hyde| hyde.skipped_few_characters),
            skipped_lookup_intent: sum(|hyde| hyde.skipped_lookup_intent),
            hypotheses_generated,
            hypotheses_from_cache,
            hypotheses_recorded,
            cache_hit_rate: HydeSummary::hit_rate(
                hypotheses_from_cache.saturating_add(hypotheses_recorded),
                hypotheses_generated,
            ),
            generation_time: GenerationTime::of(
                sum(|hyde| hyde.generation_time.as_ref().map_or(0, |time| time.queries)),
                parts
                    .iter()
                    .filter_map(|part| part.hyde.as_ref()?.generation_time.as_ref())
                    .map(|time| time.total_ms)
                    .sum(),
            ),
            // Measured over the merged records (`add_improvements`).
            improvement: None,
        }
    });
    ConfigurationResult {
        name: configuration.name.clone(),
        preset: configuration.preset,
        description: configuration.preset.description().to_owned(),
        source: configuration.preset.source().to_owned(),
        plan: configuration.plan,
        params: configuration.params.clone(),
        macro_metrics: metric_map(metrics, &digest.means),
        // Over the merged records (`add_tag_breakdowns`).
        by_tag: Vec::new(),
        counts,
        hyde,
        adaptive_floor: AdaptiveFloorSummary::of(&configuration.params, &per_query),
        expectations: digest.expectations,
        backend: sum_options(parts.iter().map(|part| &part.backend), add_configuration),
        per_query,
    }
}

/// The sum (by `add`) of the values present; `None` when none is.
fn sum_options<'a, T: Clone + 'a>(
    values: impl Iterator<Item = &'a Option<T>>,
    add: fn(&mut T, &T),
) -> Option<T> {
    values.flatten().fold(None, |total, value| match total {
        None => Some(value.clone()),
        Some(mut total) => {
            add(&mut total, value);
            Some(total)
        }
    })
}

/// The larger of two percentiles (a union's percentile is not recoverable from its
/// parts').
fn larger(left: Option<f64>, right: Option<f64>) -> Option<f64> {
    match (left, right) {
        (Some(left), Some(right)) => Some(left.max(right)),
        (one, other) => one.or(other),
    }
}

fn add_configuration(total: &mut BackendAccounting, part: &BackendAccounting) {
    total.llm_requests += part.llm_requests;
    total.hypotheses_generated += part.hypotheses_generated;
    total.hypotheses_from_cache += part.hypotheses_from_cache;
    total.prompt_tokens += part.prompt_tokens;
    total.completion_tokens += part.completion_tokens;
    total.generation_latency_ms_p50 = larger(
        total.generation_latency_ms_p50,
        part.generation_latency_ms_p50,
    );
    total.generation_latency_ms_p95 = larger(
        total.generation_latency_ms_p95,
        part.generation_latency_ms_p95,
    );
    total.generation_failures += part.generation_failures;
    total.hypothesis_embedding_failures += part.hypothesis_embedding_failures;
    total.embedding_requests += part.embedding_requests;
    total.texts_embedded += part.texts_embedded;
    total.texts_from_cache += part.texts_from_cache;
    total.embedding_tokens += part.embedding_tokens;
}

fn add_run(total: &mut RunBackendAccounting, part: &RunBackendAccounting) {
    total.embedding = sum_options([&total.embedding, &part.embedding].into_iter(), |a, b| {
        *a += *b
    });
    total.generation = sum_options(
        [&total.generation, &part.generation].into_iter(),
        add_generation,
    );
}

fn add_generation(total: &mut GenerationTotals, part: &GenerationTotals) {
    total.requests += part.requests;
    total.retries += part.retries;
    total.hypotheses_generated += part.hypotheses_generated;
    total.hypotheses_from_cache += part.hypotheses_from_cache;
    total.prompt_tokens += part.prompt_tokens;
    total.completion_tokens += part.completion_tokens;
    total.failures += part.failures;
    total.corrupt_entries_ignored += part.corrupt_entries_ignored;
    total.latency_ms_p50 = larger(total.latency_ms_p50, part.latency_ms_p50);
    total.latency_ms_p95 = larger(total.latency_ms_p95, part.latency_ms_p95);
}

/// Writes into `out` the TREC run file of the whole run from the run files of its
/// shards (`sources`, in index order), at most `depth` lines per query when given: the
/// lines of the query at dataset position `p` (of `queries`, in dataset order) come
/// from shard `p mod N`, which wrote its queries' whole rankings in dataset order. A
/// line no query claims is an error.
pub fn merge_run_files(
    mut sources: Vec<Box<dyn BufRead + '_>>,
    queries: &[QueryId],
    depth: Option<usize>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let count = sources.len();
    let mut pending: Vec<Option<String>> = vec![None; count];
    let mut next = |source: usize, pending: &mut Vec<Option<String>>| -> std::io::Result<()> {
        if pending[source].is_none() {
            let mut line = String::new();
            if sources[source].read_line(&mut line)? > 0 {
                pending[source] = Some(line);
            }
        }
        Ok(())
    };
    for (position, query) in queries.iter().enumerate() {
        let source = position % count;
        let mut written = 0;
        loop {
            next(source, &mut pending)?;
            match &pending[source] {
                Some(line)
                    if line
                        .strip_prefix(query.0.as_str())
                        .is_some_and(|rest| rest.starts_with(' ')) =>
                {
                    // A run file's lines are its ranking best first: the first `depth`
                    // are the run file `run --run-depth` writes.
                    if depth.is_none_or(|depth| written < depth) {
                        out.write_all(line.as_bytes())?;
                        written += 1;
                    }
                    pending[source] = None;
                }
                _ => break,
            }
        }
    }
    for source in 0..count {
        next(source, &mut pending)?;
        if let Some(line) = &pending[source] {
            return Err(std::io::Error::other(format!(
                "the run file of shard {} has a line for no query of that shard, in order: {}",
                source + 1,
                line.trim_end()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_files_interleave_by_dataset_position() {
        let queries: Vec<QueryId> = ["q1", "q2", "q3", "q10"]
            .iter()
            .map(|id| QueryId(id.to_string()))
            .collect();
        let first = "q1 Q0 f1 1 2 t\nq1 Q0 f2 2 1 t\nq3 Q0 f3 1 1 t\n";
        // q2 returned nothing; q10 must not be taken for q1.
        let second = "q10 Q0 f4 1 1 t\n";
        let mut out = Vec::new();
        merge_run_files(
            vec![Box::new(first.as_bytes()), Box::new(second.as_bytes())],
            &queries,
            None,
            &mut out,
        )
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("{first}{second}"));
        // At depth 1, each query's first line.
        let mut out = Vec::new();
        merge_run_files(
            vec![Box::new(first.as_bytes()), Box::new(second.as_bytes())],
            &queries,
            Some(1),
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "q1 Q0 f1 1 2 t\nq3 Q0 f3 1 1 t\nq10 Q0 f4 1 1 t\n"
        );

        let stray = "q9 Q0 f4 1 1 t\n";
        let error = merge_run_files(
            vec![Box::new(first.as_bytes()), Box::new(stray.as_bytes())],
            &queries,
            None,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(error.to_string().contains("q9 Q0 f4"), "{error}");
    }
}
