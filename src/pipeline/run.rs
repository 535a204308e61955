//! Assembling a run's results document from the pipeline's outputs and the digests of
//! its rankings.

use crate::dataset::Dataset;
use crate::embed::ProviderIdentity;
use crate::generate::GeneratorIdentity;
use crate::metrics::MetricSettings;
use crate::results::details;
use crate::results::digest::Digest;
use crate::results::{
    metric_map, ConfigurationResult, Counts, DatasetSummary, EvaluationSummary, HydeSummary,
    Results, ToolInfo, SCHEMA_VERSION,
};

use super::ConfigurationOutput;

/// Assembles the results document from the pipeline's outputs and the digests of their
/// rankings (aligned with `outputs`).
pub fn build_results(
    run_name: &str,
    dataset: &Dataset,
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
            let accounting = &output.accounting;
            ConfigurationResult {
                name: configuration.name.clone(),
                preset: configuration.preset,
                description: configuration.preset.description().to_owned(),
                source: configuration.preset.source().to_owned(),
                plan: configuration.plan(),
                params: configuration.params.clone(),
                macro_metrics,
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
                }),
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
        dataset: DatasetSummary {
            name: dataset.manifest.name.clone(),
            description: dataset.manifest.description.clone(),
            content_hash: dataset.content_hash.clone(),
            files: dataset.files.clone(),
            now: dataset.manifest.now.to_rfc3339(),
            facts: dataset.facts.len(),
            queries: dataset.queries.len(),
            judgments: dataset.judgment_count(),
            queries_with_hypotheses: dataset.hypotheses.len(),
        },
        evaluation: EvaluationSummary {
            settings: settings.clone(),
            metrics: names,
            evaluated_queries,
            queries_without_relevant,
        },
        embedder,
        generator,
        configurations,
        backend: None,
        queries: details::query_details(dataset),
        facts: Vec::new(),
    };
    results.facts = details::fact_details(dataset, &results);
    results
}
