//! Sweep outputs other than charts: the terminal summary, `sweep.csv` (one row per
//! point) and `sweep.json`. Pure: each returns text or bytes.

use comfy_table::{presets, Cell, CellAlignment, ContentArrangement, Table};

use crate::sweep::{ConfigurationSweep, SweepDescription, SweepResults};

/// Short axis names for the terminal.
fn short_axis(axis: &str) -> &str {
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
fn trim_number(value: f64) -> String {
    let text = format!("{value:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "-" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

/// One line saying what was swept.
pub fn sweep_headline(results: &SweepResults) -> String {
    let what = match &results.sweep {
        SweepDescription::Weights { steps } => {
            let points = |c: &ConfigurationSweep| c.points.len();
            let counts: Vec<String> = results
                .configurations
                .iter()
                .map(|c| format!("{} {}", c.name, points(c)))
                .collect();
            format!(
                "blend weights in steps of 1/{steps} (points: {})",
                counts.join(", ")
            )
        }
        SweepDescription::Param { parameter, values } => {
            format!("{parameter} over {} values", values.len())
        }
    };
    format!(
        "{}: sweep of {what}; {} evaluated queries; {}-fold cross-validation (seed {})",
        results.dataset.name,
        results.evaluation.evaluated_queries,
        results.cross_validation.folds,
        results.cross_validation.seed
    )
}

/// The terminal summary: per configuration and metric, the value at the own
/// parameters, the best value and where, the number of tied best points and the
/// cross-validated estimate.
pub fn summary_table(results: &SweepResults) -> String {
    let mut table = Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    table.set_header(vec![
        Cell::new("configuration"),
        Cell::new("metric"),
        right("own".into()),
        right("best".into()),
        Cell::new("best at"),
        right("tied".into()),
        right("cross-validated".into()),
    ]);
    for configuration in &results.configurations {
        for summary in &configuration.summaries {
            let best_at = summary
                .best_points
                .first()
                .map(|at| point_label(configuration, at))
                .unwrap_or_default();
            table.add_row(vec![
                Cell::new(&configuration.name),
                Cell::new(&summary.metric),
                right(format!("{:.4}", summary.default)),
                right(format!("{:.4}", summary.best)),
                Cell::new(best_at),
                right(summary.best_points.len().to_string()),
                right(format!("{:.4}", summary.cross_validated)),
            ]);
        }
    }
    table.to_string()
}

/// How to read the summary.
pub const SUMMARY_NOTE: &str = "own = the configuration's own parameters (what `run` reports); best at = the first best point in sweep order (all tied points are in sweep.json and sweep.csv); cross-validated = mean held-out value of the point chosen on the other folds. best minus cross-validated is how much of the gain is fitted to these queries.";

/// `sweep.csv`: one row per evaluated point (`point` = `own` for the configuration's
/// own parameters, else `grid`), with a column per axis of any configuration (blank
/// where it does not apply) and per swept metric.
pub fn sweep_csv(results: &SweepResults) -> Result<Vec<u8>, csv::Error> {
    let mut axes: Vec<&str> = Vec::new();
    for configuration in &results.configurations {
        for axis in &configuration.axes {
            if !axes.contains(&axis.as_str()) {
                axes.push(axis);
            }
        }
    }
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["configuration", "point"];
    header.extend(&axes);
    header.extend(results.evaluation.metrics.iter().map(String::as_str));
    writer.write_record(&header)?;
    for configuration in &results.configurations {
        let rows = std::iter::once(("own", &configuration.default))
            .chain(configuration.points.iter().map(|point| ("grid", point)));
        for (kind, point) in rows {
            let mut record = vec![configuration.name.clone(), kind.to_owned()];
            for axis in &axes {
                record.push(
                    configuration
                        .axes
                        .iter()
                        .position(|own| own == axis)
                        .map(|index| point.at[index].to_string())
                        .unwrap_or_default(),
                );
            }
            for metric in &results.evaluation.metrics {
                record.push(point.value(metric).to_string());
            }
            writer.write_record(&record)?;
        }
    }
    writer
        .into_inner()
        .map_err(|error| csv::Error::from(error.into_error()))
}

/// `sweep.json`, pretty-printed with a final newline.
pub fn sweep_json(results: &SweepResults) -> Vec<u8> {
    let mut json = serde_json::to_vec_pretty(results).expect("sweep results serialize");
    json.push(b'\n');
    json
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
