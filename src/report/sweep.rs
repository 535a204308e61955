//! What the formats share about sweeps: point labels, file slugs, and the sweep's chart
//! files (heatmaps and line charts).

use crate::sweep::{ConfigurationSweep, SweepDescription, SweepResults};

/// Short axis names for the terminal.
pub(super) fn short_axis(axis: &str) -> &str {
    match axis {
        "semantic" => "S",
        "lexical" => "L",
        "temporal" => "T",
        "hybrid_vector_weight" => "vector",
        "hybrid_text_weight" => "text",
        other => other,
    }
}

/// `S 0.55, L 0.30, T 0.15`.
pub fn point_label(configuration: &ConfigurationSweep, at: &[f64]) -> String {
    configuration
        .axes
        .iter()
        .zip(at)
        .map(|(axis, value)| format!("{} {}", short_axis(axis), trim_number(*value)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A coordinate with at most four decimals and no trailing zeros.
pub(super) fn trim_number(value: f64) -> String {
    let text = format!("{value:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "-" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

/// Chart files of a sweep: a heatmap per blend configuration and metric, and one line
/// chart per metric for the hybrid (weights) or for all configurations (a parameter).
pub fn sweep_charts(
    results: &SweepResults,
) -> Result<Vec<(String, Vec<u8>)>, super::charts::ChartError> {
    use super::charts::{sweep_heatmap, sweep_lines};
    let mut charts = Vec::new();
    for metric in &results.evaluation.metrics {
        let slug = file_slug(metric);
        match &results.sweep {
            SweepDescription::Weights { steps } => {
                for configuration in &results.configurations {
                    let name = file_slug(&configuration.name);
                    if configuration.axes.len() == 3 {
                        charts.push((
                            format!("heatmap-{name}-{slug}.png"),
                            sweep_heatmap(configuration, *steps, metric)?,
                        ));
                    } else {
                        charts.push((
                            format!("line-{name}-{slug}.png"),
                            sweep_lines(results, &[configuration], metric)?,
                        ));
                    }
                }
            }
            SweepDescription::Param { parameter, .. } => {
                let all: Vec<&ConfigurationSweep> = results.configurations.iter().collect();
                charts.push((
                    format!("{}-{slug}.png", file_slug(parameter)),
                    sweep_lines(results, &all, metric)?,
                ));
            }
        }
    }
    Ok(charts)
}

/// A file-name-safe form of a metric or configuration name (`ndcg@10` -> `ndcg-10`).
pub fn file_slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_slugs() {
        assert_eq!(trim_number(0.55), "0.55");
        assert_eq!(trim_number(0.3), "0.3");
        assert_eq!(trim_number(1.0), "1");
        assert_eq!(trim_number(0.0), "0");
        assert_eq!(file_slug("ndcg@10"), "ndcg-10");
        assert_eq!(file_slug("hyde-3b"), "hyde-3b");
    }
}
