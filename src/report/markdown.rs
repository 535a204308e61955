//! The metric table as Markdown, for pull-request comments: one row per configuration,
//! one column per metric, the best value of each column in bold.

use super::Results;

/// Escapes the characters that would break a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// The value of `metric` for the configuration at `index`, 0 when missing.
pub fn metric_value(results: &Results, index: usize, metric: &str) -> f64 {
    results.configurations[index]
        .macro_metrics
        .get(metric)
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0)
}

/// For each metric of the run, the best value as printed (4 decimals): a value that
/// prints the same is marked best, as in the terminal table.
pub fn best_printed(results: &Results) -> Vec<String> {
    results
        .evaluation
        .metrics
        .iter()
        .map(|metric| {
            let best = (0..results.configurations.len())
                .map(|index| metric_value(results, index, metric))
                .fold(f64::NEG_INFINITY, f64::max);
            format!("{best:.4}")
        })
        .collect()
}

/// The metric table of `results` as a Markdown document.
pub fn metric_table(results: &Results) -> String {
    let metrics = &results.evaluation.metrics;
    let best = best_printed(results);
    let mut out = format!(
        "**{}**: {} queries evaluated, relevance >= {}, {:?} semantics; **bold** = best in column\n\n",
        cell(&results.dataset.name),
        results.evaluation.evaluated_queries,
        results.evaluation.settings.relevance_level,
        results.evaluation.settings.semantics
    );
    out.push_str("| configuration |");
    for metric in metrics {
        out.push_str(&format!(" {} |", cell(metric)));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(metrics.len()));
    out.push('\n');
    for (index, configuration) in results.configurations.iter().enumerate() {
        out.push_str(&format!("| {} |", cell(&configuration.name)));
        for (metric, best) in metrics.iter().zip(&best) {
            let shown = format!("{:.4}", metric_value(results, index, metric));
            if shown == *best && results.configurations.len() > 1 {
                out.push_str(&format!(" **{shown}** |"));
            } else {
                out.push_str(&format!(" {shown} |"));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_escape_table_syntax() {
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(cell("line\nbreak"), "line break");
    }
}
