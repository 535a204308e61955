//! CSV: `per_query.csv` of a run, the macro metric table (the HTML report's and a run's
//! `--format csv`), `sweep.csv`, a comparison, and `eval`, `dataset stats` and `cache
//! stats` with `--format csv`.

use std::io::Write;

use super::{Document, Exporter};
use crate::error::Error;
use crate::results::Results;
use crate::sweep::SweepResults;
use crate::trec_eval::EvaluatedRun;

/// The CSV exporter.
pub struct Csv;

impl Exporter for Csv {
    fn render(&self, document: &Document<'_>) -> Option<Result<String, Error>> {
        let bytes = match document {
            Document::Run { results, .. } => metric_table(results),
            Document::Sweep(results) => sweep_csv(results),
            Document::Eval {
                runs, per_query, ..
            } => return Some(eval_csv(runs, *per_query).map_err(csv_error)),
            // Rendered by `comparison::render`, to which `report::render` sends it.
            Document::Compare(_) => return None,
            Document::DatasetStats(stats) => rows(
                &["field", "value"],
                super::dataset_stats_fields(stats)
                    .into_iter()
                    .map(|(field, value)| vec![field, value]),
            ),
            Document::CacheStats { namespaces, .. } => rows(
                &super::CACHE_STATS_HEADER,
                super::cache_stats_rows(namespaces),
            ),
        };
        Some(
            bytes
                .map(|bytes| String::from_utf8(bytes).expect("CSV of UTF-8 text is UTF-8"))
                .map_err(csv_error),
        )
    }
}

pub(super) fn csv_error(error: csv::Error) -> Error {
    Error::Write {
        path: "<csv>".into(),
        source: std::io::Error::other(error),
    }
}

/// A metric value as the per-query CSV has always written it: serde_json's number
/// formatting, and `null` for a value that is not a number.
pub(super) fn csv_number(value: f64) -> String {
    serde_json::Number::from_f64(value)
        .map_or_else(|| "null".to_owned(), |number| number.to_string())
}

/// The per-query CSV: one row per (configuration, evaluated query).
pub fn write_per_query_csv(output: &mut dyn Write, results: &Results) -> Result<(), csv::Error> {
    let mut writer = csv::Writer::from_writer(output);
    let mut header = vec![
        "configuration",
        "query",
        "relevant",
        "returned",
        "hypothesis_used",
        "settled_floor",
    ];
    header.extend(results.evaluation.metrics.iter().map(String::as_str));
    writer.write_record(&header)?;
    for configuration in &results.configurations {
        for query in &configuration.per_query {
            let mut record = vec![
                configuration.name.clone(),
                query.query.0.clone(),
                query.relevant.to_string(),
                query.returned.to_string(),
                query
                    .hypothesis_used
                    .map(|used| used.to_string())
                    .unwrap_or_default(),
                query.settled_floor.map(csv_number).unwrap_or_default(),
            ];
            record.extend(
                query
                    .metrics
                    .values()
                    .iter()
                    .map(|&value| csv_number(value)),
            );
            writer.write_record(&record)?;
        }
    }
    writer.flush()?;
    Ok(())
}

/// A header and rows.
pub(super) fn rows(
    header: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(header)?;
    for row in rows {
        writer.write_record(&row)?;
    }
    writer
        .into_inner()
        .map_err(|error| csv::Error::from(error.into_error()))
}

/// `configuration,<metric>...` rows of macro averages.
pub fn metric_table(results: &Results) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["configuration"];
    header.extend(results.evaluation.metrics.iter().map(String::as_str));
    writer.write_record(&header)?;
    for configuration in &results.configurations {
        let mut record = vec![configuration.name.clone()];
        for metric in &results.evaluation.metrics {
            record.push(
                configuration
                    .macro_metrics
                    .get(metric)
                    .map(|value| value.to_string())
                    .unwrap_or_default(),
            );
        }
        writer.write_record(&record)?;
    }
    writer
        .into_inner()
        .map_err(|error| csv::Error::from(error.into_error()))
}

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

/// CSV rows `run,runid,query,measure,value` (query `all` for the averages).
pub fn eval_csv(runs: &[EvaluatedRun], per_query: bool) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(["run", "runid", "query", "measure", "value"])?;
    for run in runs {
        let evaluation = &run.evaluation;
        let mut rows: Vec<(&str, &[f64])> = Vec::new();
        if per_query {
            rows.extend(
                evaluation
                    .per_query
                    .iter()
                    .map(|scores| (scores.query.as_str(), scores.values.as_slice())),
            );
        }
        rows.push(("all", &evaluation.summary));
        for (query, values) in rows {
            for (column, value) in evaluation.columns.iter().zip(values) {
                if query != "all" && !column.is_printed_per_query() {
                    continue;
                }
                let value = if column.is_count() {
                    format!("{}", *value as u64)
                } else {
                    format!("{value}")
                };
                writer.write_record([
                    run.path.as_str(),
                    evaluation.run_id.as_str(),
                    query,
                    &column.name(),
                    &value,
                ])?;
            }
        }
    }
    let bytes = writer.into_inner().map_err(|error| error.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings"))
}
