//! The metric table as CSV, for spreadsheets: one row per configuration, one column per
//! metric, full precision.

use crate::results::Results;

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
