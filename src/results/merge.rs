//! Merging the shards of a run (see [`super::shard`]) into the results document and run
//! files the unsharded run writes. Per-query parts (records, query details, queries
//! without relevant facts, expectation failures, facts) are put back in dataset order;
//! what summarizes them is recomputed from them in that order (macro means summed query
//! by query as the digest sums them, so the floats come out bit for bit) or summed
//! (counts, HyDE accounting, expectation counts per scenario); backend spend is summed,
//! its latency percentiles are the largest shard's.
//!
//! Pure over the shards, except [`merge_run_files`], which streams run files.

use std::collections::HashMap;
use std::io::{BufRead, Write};

use super::accounting::{BackendAccounting, GenerationTotals, RunBackendAccounting};
use super::shard::ShardResults;
use super::{
    hyde_figures::GenerationTime, metric_map, AdaptiveFloorSummary, ConfigurationResult, Counts,
    EvaluationSummary, HydeSummary, PerQueryResult, Results,
};
use crate::dataset::QueryId;
use crate::error::Error;
use crate::expectations::{ExpectationSummary, ScenarioCount};

/// The results document of the complete, checked set of `shards` (in index order; see
/// [`super::shard::check_shards`]), named `run_name`.
pub fn merge(shards: &[ShardResults], run_name: &str) -> Result<Results, Error> {
    let first = &shards[0].results;
    let count = shards.len();
    let total = first.dataset.queries;
    for (index, shard) in shards.iter().enumerate() {
        let expected = (total + count - 1 - index) / count;
        if shard.results.queries.len() != expected {
            return Err(Error::Usage(format!(
                "shard {} holds {} queries, but shard {index_1} of {count} of a dataset of {total} queries has {expected}",
                shard.shard,
                shard.results.queries.len(),
                index_1 = index + 1
            )));
        }
    }
    let queries: Vec<_> = (0..total)
        .map(|position| shards[position % count].results.queries[position / count].clone())
        .collect();
    let positions: HashMap<&QueryId, usize> = queries
        .iter()
        .enumerate()
        .map(|(position, query)| (&query.id, position))
        .collect();
    let position_of = |query: &QueryId| {
        positions.get(query).copied().ok_or_else(|| {
            Error::Usage(format!(
                "a shard holds a record of query {query}, which no shard lists among its queries"
            ))
        })
    };

    let mut configurations = Vec::with_capacity(first.configurations.len());
    for (index, configuration) in first.configurations.iter().enumerate() {
        let parts: Vec<&ConfigurationResult> = shards
            .iter()
            .map(|shard| &shard.results.configurations[index])
            .collect();
        configurations.push(merge_configuration(
            configuration,
            &parts,
            &first.evaluation.metrics,
            &shards[0].scenarios,
            &position_of,
        )?);
    }

    let mut without_relevant = Vec::new();
    for shard in shards {
        for query in &shard.results.evaluation.queries_without_relevant {
            without_relevant.push((position_of(query)?, query.clone()));
        }
    }
    without_relevant.sort_by_key(|(position, _)| *position);

    let mut facts: Vec<_> = shards
        .iter()
        .flat_map(|shard| shard.fact_positions.iter().zip(&shard.results.facts))
        .collect();
    facts.sort_by_key(|(position, _)| **position);
    facts.dedup_by_key(|(position, _)| **position);

    let mut merged = Results {
        schema_version: first.schema_version,
        tool: first.tool.clone(),
        run_name: run_name.to_owned(),
        dataset: first.dataset.clone(),
        evaluation: EvaluationSummary {
            settings: first.evaluation.settings.clone(),
            metrics: first.evaluation.metrics.clone(),
            evaluated_queries: shards
                .iter()
                .map(|shard| shard.results.evaluation.evaluated_queries)
                .sum(),
            queries_without_relevant: without_relevant
                .into_iter()
                .map(|(_, query)| query)
                .collect(),
        },
        embedder: first.embedder.clone(),
        generator: first.generator.clone(),
        // `run --shard` refuses an engine.
        engine: None,
        chunking: first.chunking.clone(),
        configurations,
        backend: sum_options(shards.iter().map(|shard| &shard.results.backend), add_run),
        queries,
        facts: facts.into_iter().map(|(_, fact)| fact.clone()).collect(),
    };
    // Over the merged records, in dataset order, as an unsharded run computes it.
    super::by_tag::add_tag_breakdowns(&mut merged);
    super::hyde_figures::add_improvements(&mut merged);
    Ok(merged)
}

/// One configuration of the merged document from its part in each shard.
fn merge_configuration(
    configuration: &ConfigurationResult,
    parts: &[&ConfigurationResult],
    metrics: &[String],
    scenarios: &[String],
    position_of: &dyn Fn(&QueryId) -> Result<usize, Error>,
) -> Result<ConfigurationResult, Error> {
    let mut records: Vec<(usize, &PerQueryResult)> = Vec::new();
    for part in parts {
        for record in &part.per_query {
            records.push((position_of(&record.query)?, record));
        }
    }
    records.sort_by_key(|(position, _)| *position);
    let per_query: Vec<PerQueryResult> = records
        .into_iter()
        .map(|(_, record)| record.clone())
        .collect();
    // Summed query by query in dataset order, as the digest of an unsharded run does.
    let mut means = vec![0.0; metrics.len()];
    for record in &per_query {
        for (mean, value) in means.iter_mut().zip(record.metrics.values()) {
            *mean += value;
        }
    }
    if !per_query.is_empty() {
        for mean in &mut means {
            *mean /= per_query.len() as f64;
        }
    }
    let sum = |field: fn(&Counts) -> usize| parts.iter().map(|part| field(&part.counts)).sum();
    let counts = Counts {
        queries: sum(|counts| counts.queries),
        evaluated: sum(|counts| counts.evaluated),
        empty_rankings: sum(|counts| counts.empty_rankings),
        abstained_without_relevant: sum(|counts| counts.abstained_without_relevant),
    };
    let hyde = configuration.hyde.as_ref().map(|_| {
        let sum = |field: fn(&HydeSummary) -> usize| {
            parts
                .iter()
                .filter_map(|part| part.hyde.as_ref())
                .map(field)
                .sum()
        };
        let sum_u64 = |field: fn(&HydeSummary) -> u64| {
            parts
                .iter()
                .filter_map(|part| part.hyde.as_ref())
                .map(field)
                .sum()
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
                hypotheses_from_cache + hypotheses_recorded,
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
    Ok(ConfigurationResult {
        macro_metrics: metric_map(metrics, &means),
        counts,
        hyde,
        adaptive_floor: AdaptiveFloorSummary::of(&configuration.params, &per_query),
        expectations: merge_expectations(parts, scenarios, position_of)?,
        backend: sum_options(parts.iter().map(|part| &part.backend), add_configuration),
        per_query,
        ..configuration.clone()
    })
}

/// The expectations of one configuration: counts summed per scenario in the dataset's
/// first-seen order, failures in dataset order; `None` when no shard checked any.
fn merge_expectations(
    parts: &[&ConfigurationResult],
    scenarios: &[String],
    position_of: &dyn Fn(&QueryId) -> Result<usize, Error>,
) -> Result<Option<ExpectationSummary>, Error> {
    let summaries: Vec<&ExpectationSummary> = parts
        .iter()
        .filter_map(|part| part.expectations.as_ref())
        .collect();
    if summaries.is_empty() {
        return Ok(None);
    }
    let mut failures = Vec::new();
    for summary in &summaries {
        for failure in &summary.failures {
            failures.push((position_of(&failure.query)?, failure));
        }
    }
    // Stable: a query's failures keep their order.
    failures.sort_by_key(|(position, _)| *position);
    let by_scenario = scenarios
        .iter()
        .filter_map(|scenario| {
            let counts: Vec<&ScenarioCount> = summaries
                .iter()
                .flat_map(|summary| &summary.by_scenario)
                .filter(|count| count.scenario == *scenario)
                .collect();
            (!counts.is_empty()).then(|| ScenarioCount {
                scenario: scenario.clone(),
                checked: counts.iter().map(|count| count.checked).sum(),
                passed: counts.iter().map(|count| count.passed).sum(),
            })
        })
        .collect();
    Ok(Some(ExpectationSummary {
        checked: summaries.iter().map(|summary| summary.checked).sum(),
        passed: summaries.iter().map(|summary| summary.passed).sum(),
        by_scenario,
        failures: failures
            .into_iter()
            .map(|(_, failure)| failure.clone())
            .collect(),
    }))
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
/// shards (`sources`, in index order): the lines of the query at dataset position `p`
/// (of `queries`, in dataset order) come from shard `p mod N`, which wrote its queries'
/// lines in dataset order. A line no query claims is an error.
pub fn merge_run_files(
    mut sources: Vec<Box<dyn BufRead + '_>>,
    queries: &[QueryId],
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
        loop {
            next(source, &mut pending)?;
            match &pending[source] {
                Some(line)
                    if line
                        .strip_prefix(query.0.as_str())
                        .is_some_and(|rest| rest.starts_with(' ')) =>
                {
                    out.write_all(line.as_bytes())?;
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
            &mut out,
        )
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("{first}{second}"));

        let stray = "q9 Q0 f4 1 1 t\n";
        let error = merge_run_files(
            vec![Box::new(first.as_bytes()), Box::new(stray.as_bytes())],
            &queries,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(error.to_string().contains("q9 Q0 f4"), "{error}");
    }
}
