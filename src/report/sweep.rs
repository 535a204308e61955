//! What the formats share about sweeps: point labels, file slugs, the sweep's chart
//! files (heatmaps and line charts), and the `--set` flags and config-file table that
//! apply a best point to `run`.

use crate::configuration::PARAM_NAMES;
use crate::fusion::blend::BLEND_AXES;
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

/// The parameters that put a configuration at the point `at`, as `(name, TOML value)`:
/// `weights = { semantic = ..., lexical = ..., temporal = ... }` for the blend's axes,
/// `NAME = VALUE` for any other axis. Numbers are the shortest decimals that read back
/// as the same doubles, so `run` uses exactly the point's values. `None` when an axis is
/// not a parameter or a coordinate is not a finite number.
pub fn point_settings(
    configuration: &ConfigurationSweep,
    at: &[f64],
) -> Option<Vec<(String, String)>> {
    if at.len() != configuration.axes.len() || at.iter().any(|value| !value.is_finite()) {
        return None;
    }
    if configuration.axes == BLEND_AXES {
        let parts: Vec<String> = BLEND_AXES
            .iter()
            .zip(at)
            .map(|(axis, value)| format!("{axis} = {value}"))
            .collect();
        return Some(vec![(
            "weights".to_owned(),
            format!("{{ {} }}", parts.join(", ")),
        )]);
    }
    configuration
        .axes
        .iter()
        .zip(at)
        .map(|(axis, value)| {
            PARAM_NAMES
                .contains(&axis.as_str())
                .then(|| (axis.clone(), value.to_string()))
        })
        .collect()
}

/// A configuration's name as a TOML key: bare when it can be, else quoted.
fn toml_key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        name.to_owned()
    } else {
        format!("{name:?}")
    }
}

/// `text` as one shell word.
fn shell_word(text: &str) -> String {
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.=@/,:+".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// How to apply each configuration's best point to `run`: per configuration and the
/// first best point (in sweep order) of each swept metric, the `--set` flags to add to
/// the sweep's own options and the `[configuration.NAME]` table that does the same from
/// a config file. Empty when no configuration was swept.
pub fn best_point_settings(results: &SweepResults) -> String {
    let mut out = String::new();
    for configuration in &results.configurations {
        // (point, metrics with it as their first best point), in metric order.
        let mut points: Vec<(&[f64], Vec<String>)> = Vec::new();
        for summary in &configuration.summaries {
            let Some(at) = summary.best_points.first() else {
                continue;
            };
            let label = format!("{} {:.4}", summary.metric, summary.best);
            match points.iter_mut().find(|(point, _)| *point == at.as_slice()) {
                Some((_, metrics)) => metrics.push(label),
                None => points.push((at, vec![label])),
            }
        }
        for (at, metrics) in points {
            let Some(settings) = point_settings(configuration, at) else {
                continue;
            };
            out.push_str(&format!(
                "{}: best {} at {}\n",
                configuration.name,
                metrics.join(", "),
                point_label(configuration, at)
            ));
            // `--set` splits CONFIGURATION.NAME at the first dot.
            if !configuration.name.contains('.') {
                let flags: Vec<String> = settings
                    .iter()
                    .map(|(name, value)| {
                        format!(
                            "--set {}",
                            shell_word(&format!("{}.{name}={value}", configuration.name))
                        )
                    })
                    .collect();
                out.push_str(&format!("  run flags:  {}\n", flags.join(" ")));
            }
            out.push_str(&format!(
                "  config file:\n    [configuration.{}]\n",
                toml_key(&configuration.name)
            ));
            for (name, value) in &settings {
                out.push_str(&format!("    {name} = {value}\n"));
            }
        }
    }
    out
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

    #[test]
    fn shell_words_and_toml_keys() {
        assert_eq!(shell_word("bm25.bm25_k1=0.9"), "bm25.bm25_k1=0.9");
        assert_eq!(
            shell_word("b.weights={ semantic = 1, lexical = 0, temporal = 0 }"),
            "'b.weights={ semantic = 1, lexical = 0, temporal = 0 }'"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(toml_key("hyde-3b"), "hyde-3b");
        assert_eq!(toml_key("my blend"), "\"my blend\"");
    }
}
