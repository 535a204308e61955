//! `hyde-eval report`: the HTML report of a results.json (with sweeps).

use std::path::{Path, PathBuf};

use crate::cli::ReportArgs;
use crate::error::{Error, Problem};
use crate::report::html::HtmlOptions;
use crate::report::{self};
use crate::results::Results;
use crate::sweep::SweepResults;
use crate::write_policy::{self, Policy};

use super::*;

/// `hyde-eval report`: returns the process exit code.
pub fn report(args: &ReportArgs) -> Result<u8, Error> {
    let directory = match &args.output_dir {
        Some(directory) => directory.clone(),
        None => args
            .results
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    let options = HtmlOptions {
        reference: args.reference.clone(),
        metric: args.metric.clone(),
    };
    let page = write_html_report(
        &args.results,
        &args.sweep,
        &options,
        &directory,
        Policy::new(args.force),
    )?;
    let results: Results = read_json(&args.results, DocumentKind::Results, &|found| {
        results_hint(&args.results, found)
    })?;
    let columns = table_columns(&results);
    let document = report::Document::Run {
        results: &results,
        columns: &columns,
        gate: None,
    };
    print_line(report::render(args.format.format(), &document)?.trim_end_matches('\n'))?;
    judged_warning(args.quiet, &results);
    note(args.quiet, &format!("report written to {}", page.display()));
    Ok(crate::error::exit_code::OK)
}

/// Where a document of kind `found`, passed as report's RESULTS at `path`, goes instead.
fn results_hint(path: &Path, found: DocumentKind) -> String {
    match found {
        DocumentKind::Sweep => format!(
            "a sweep.json goes into the report of its run's results: hyde-eval report RESULTS --sweep {}",
            path.display()
        ),
        _ => "pass the results.json that `hyde-eval run` wrote".into(),
    }
}

/// The columns `run` shows by default, of those the results hold: recall, precision and
/// nDCG at every cut-off, MRR and MAP.
fn table_columns(results: &Results) -> Vec<String> {
    let shown = |metric: &str| {
        ["recall@", "precision@", "ndcg@"]
            .iter()
            .any(|family| metric.starts_with(family))
            || metric == "mrr"
            || metric == "map"
    };
    results
        .evaluation
        .metrics
        .iter()
        .filter(|metric| shown(metric))
        .cloned()
        .collect()
}

/// Renders the report of the results at `results_path` (with `sweep_paths`) into
/// `directory` under the write policy; returns the page's path.
pub(super) fn write_html_report(
    results_path: &Path,
    sweep_paths: &[PathBuf],
    options: &HtmlOptions,
    directory: &Path,
    policy: Policy,
) -> Result<PathBuf, Error> {
    let results: Results = read_json(results_path, DocumentKind::Results, &|found| {
        results_hint(results_path, found)
    })?;
    if results.schema_version != crate::results::SCHEMA_VERSION {
        return Err(Error::problem(Problem::new(
            results_path,
            None,
            format!(
                "schema version {} is not the {} this hyde-eval reads",
                results.schema_version,
                crate::results::SCHEMA_VERSION
            ),
        )));
    }
    let mut sweeps = Vec::new();
    for path in sweep_paths {
        let sweep: SweepResults = read_json(path, DocumentKind::Sweep, &|found| {
            match found {
            DocumentKind::Results => format!(
                "--sweep takes a sweep.json; a results.json is the report's RESULTS: hyde-eval report {}",
                path.display()
            ),
            _ => "--sweep takes a sweep.json written by `hyde-eval sweep`".into(),
        }
        })?;
        if sweep.schema_version != crate::sweep::SCHEMA_VERSION {
            return Err(Error::problem(Problem::new(
                path,
                None,
                format!(
                    "schema version {} is not the {} this hyde-eval reads",
                    sweep.schema_version,
                    crate::sweep::SCHEMA_VERSION
                ),
            )));
        }
        if sweep.dataset.content_hash != results.dataset.content_hash {
            return Err(Error::problem(
                Problem::new(
                    path,
                    None,
                    format!(
                        "this sweep ran on dataset {} ({}), the results on {} ({})",
                        sweep.dataset.name,
                        sweep.dataset.content_hash,
                        results.dataset.name,
                        results.dataset.content_hash
                    ),
                )
                .with_hint("re-run the sweep on the same dataset files as the run"),
            ));
        }
        sweeps.push(sweep);
    }
    let files =
        report::html::report_files(&results, &sweeps, options).map_err(|error| match error {
            report::html::ReportError::Usage(message) => Error::Usage(message),
            report::html::ReportError::Chart(error) => Error::Write {
                path: directory.join("charts"),
                source: std::io::Error::other(error.to_string()),
            },
        })?;
    write_policy::write_files(directory, &files, policy)?;
    Ok(directory.join(report::html::PAGE))
}
