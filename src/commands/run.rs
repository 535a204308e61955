//! `hyde-eval run`: every configuration on a dataset, the terminal (or Markdown) summary,
//! the optional regression gate, and the report directory.

use crate::cli::{OutputFormat, RunCommand};
use crate::error::{exit_code, Error};
use crate::gate::run_gate;
use crate::pipeline::PipelineOutput;
use crate::report::files::{write_report, RunSpool};
use crate::report::html::HtmlOptions;
use crate::report::json::json_bytes;
use crate::report::{render, Document, Format};
use crate::results::stored::StoredResults;
use crate::settings::{self};

use super::report::write_html_report;
use super::*;

/// Notes on stderr about hypotheses that fell back and cache entries that were replaced.
fn backend_notes(output: &PipelineOutput) {
    if let Some(first) = output.backend_failures.first() {
        eprintln!(
            "note: {} queries fell back for want of a hypothesis (counted per configuration); first: {first}",
            output.backend_failures.len()
        );
    }
    let corrupt = output.backend.as_ref().map_or(0, |backend| {
        backend
            .embedding
            .map_or(0, |usage| usage.corrupt_entries_ignored)
            + backend
                .generation
                .as_ref()
                .map_or(0, |generation| generation.corrupt_entries_ignored)
    });
    if corrupt > 0 {
        eprintln!("note: {corrupt} damaged cache entries were ignored and replaced");
    }
}

/// `hyde-eval run`: returns the process exit code (1 when the gate fails).
pub fn run(command: &RunCommand) -> Result<u8, Error> {
    if command.run.html && command.run.no_report {
        return Err(Error::Usage(
            "--html renders the report directory, which --no-report skips; drop one of them".into(),
        ));
    }
    let (file, mut dataset) = load_inputs(&command.run)?;
    let settings = settings::resolve(&command.run.options(), &file, &dataset.manifest)?;
    let gate_settings = settings::resolve_gate(&command.gate.options(), &file)?;
    // Read the baseline before the (possibly long) run, so a bad path fails fast.
    let baseline = match &gate_settings {
        Some((path, _)) => Some(StoredResults::load(path)?),
        None => None,
    };
    // Run files are written as the rankings stream by, beside the report they join.
    let run_files = if settings.write_reports {
        Some(RunSpool::create(
            &settings.output_dir,
            &settings.run.run_name,
        )?)
    } else {
        None
    };
    let outputs = RankingOutputs {
        keep: false,
        run_files: run_files.as_ref().map(RunSpool::directory),
    };
    let Execution {
        results, output, ..
    } = in_pool(settings.threads, || {
        execute(&mut dataset, &settings.run, outputs)
    })??;
    if !settings.quiet {
        backend_notes(&output);
    }
    let gate = match (&gate_settings, &baseline) {
        (Some((path, options)), Some(baseline)) => {
            let failed_expectations = results
                .configurations
                .iter()
                .filter_map(|configuration| configuration.expectations.as_ref())
                .map(|summary| summary.failures.len())
                .sum();
            Some(run_gate(
                &StoredResults::from_results(&results),
                baseline,
                path,
                options,
                failed_expectations,
            )?)
        }
        _ => None,
    };

    let document = Document::Run {
        results: &results,
        columns: &settings.table_metrics,
        gate: gate.as_ref(),
    };
    let format = match command.gate.format {
        OutputFormat::Table => Format::Table,
        OutputFormat::Markdown => Format::Markdown,
    };
    let mut printer = Printer::new();
    printer.print(&render(format, &document)?)?;
    if let Some(path) = &command.gate.summary_file {
        append(path, &render(Format::Markdown, &document)?)?;
    }
    if settings.write_reports {
        crate::progress::stage(
            !settings.quiet,
            &format!(
                "writing the report to {}",
                settings.output_dir.join(&settings.run.run_name).display()
            ),
        );
        let extra = gate
            .iter()
            .map(|gate| ("gate.json".to_owned(), json_bytes(gate)))
            .collect();
        let directory = write_report(
            &settings.output_dir,
            &results,
            &dataset,
            &output.configurations,
            &output.timings,
            run_files
                .as_ref()
                .expect("spooled when reports are written"),
            extra,
        )?;
        if command.gate.format == OutputFormat::Table {
            printer.print(&format!("reports written to {}", directory.display()))?;
        }
        if settings.html {
            let page = write_html_report(
                &directory.join("results.json"),
                &[],
                &HtmlOptions::default(),
                &directory,
            )?;
            if command.gate.format == OutputFormat::Table {
                printer.print(&format!("HTML report written to {}", page.display()))?;
            }
        }
    }
    Ok(match gate {
        Some(gate) if !gate.passed => exit_code::REGRESSION,
        _ => exit_code::OK,
    })
}
