//! `hyde-eval run`: every configuration on a dataset, the terminal (or Markdown) summary,
//! the optional regression gate, and the report directory; with `--shard I/N`, every
//! N-th query only, into a shard directory for `hyde-eval merge`.

use std::path::{Path, PathBuf};

use crate::cli::{GateArgs, OutputFormat, RunCommand};
use crate::error::{exit_code, Error};
use crate::gate::{run_gate, GateOptions};
use crate::pipeline::PipelineOutput;
use crate::report::files::{
    check_report_replacement, write_report, write_shard, ReportParts, RunSpool,
};
use crate::report::html::HtmlOptions;
use crate::report::json::json_bytes;
use crate::report::{render, Document, Format};
use crate::results::shard::{
    file_digest, BuildInfo, DatasetSource, RunFileDigest, Shard, ShardResults,
};
use crate::results::stored::StoredResults;
use crate::results::Results;
use crate::settings::{self};
use crate::write_policy::{self, Policy};

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
    if command.html && command.run.no_report {
        return Err(Error::Usage(
            "--html renders the report directory, which --no-report skips; drop one of them".into(),
        ));
    }
    if let Some(shard) = command.shard {
        return run_shard(command, shard);
    }
    let (file, mut dataset) = load_inputs(&command.run)?;
    let settings = settings::resolve(&command.options(), &file, &dataset.manifest)?;
    let gate_settings = settings::resolve_gate(&command.gate.options(), &file)?;
    // Read the baseline before the (possibly long) run, so a bad path fails fast.
    let baseline = load_baseline(gate_settings.as_ref())?;
    // Run files are written as the rankings stream by, beside the report they join.
    let run_files = if settings.write_reports {
        // Before the (possibly long) run, so a report it may not replace fails fast.
        if !settings.force {
            let configurations: Vec<String> = settings
                .run
                .configurations
                .iter()
                .map(|configuration| configuration.name.clone())
                .collect();
            check_report_replacement(
                &settings.output_dir,
                &settings.run.run_name,
                &dataset.manifest.name,
                &configurations,
            )?;
        }
        Some(RunSpool::create(
            &settings.output_dir,
            &settings.run.run_name,
            Policy::new(settings.force),
        )?)
    } else {
        None
    };
    let outputs = RankingOutputs {
        keep: false,
        run_files: run_files
            .as_ref()
            .filter(|_| settings.write_runs)
            .map(RunSpool::directory),
        run_depth: settings.run_depth,
    };
    let Execution {
        results, output, ..
    } = in_pool(settings.threads, || {
        execute(&mut dataset, &settings.run, outputs)
    })??;
    if !settings.quiet {
        backend_notes(&output);
    }
    let gate = gate_of(gate_settings.as_ref(), baseline.as_ref());
    let write = settings.write_reports.then(|| {
        let write: WriteReport = Box::new(|extra| {
            let mut parts = ReportParts::of_run(
                &dataset,
                results.evaluation.settings.relevance_level,
                &output.configurations,
                &output.timings,
                run_files
                    .as_ref()
                    .expect("spooled when reports are written"),
            );
            if !settings.write_runs {
                parts.run_files.clear();
            }
            parts.extra = extra;
            // Checked again under the output directory's lock, in case another run
            // wrote the report meanwhile.
            parts.policy = Policy::new(settings.force);
            write_report(&settings.output_dir, &results, parts)
        });
        (settings.output_dir.as_path(), write)
    });
    conclude(Conclusion {
        results: &results,
        gate,
        columns: &settings.table_metrics,
        args: &command.gate,
        write,
        html: settings.html,
        quiet: settings.quiet,
    })
}

/// The gate's settings, as `settings::resolve_gate` gives them.
pub(super) type GateSettings = (Option<PathBuf>, GateOptions);

/// The baseline the gate settings name, read (before the run, so a bad path fails fast).
pub(super) fn load_baseline(
    gate_settings: Option<&GateSettings>,
) -> Result<Option<StoredResults>, Error> {
    match gate_settings {
        Some((Some(path), _)) => Ok(Some(StoredResults::load(path)?)),
        _ => Ok(None),
    }
}

/// The gate's options and its baseline with its path, as `conclude` takes them.
pub(super) fn gate_of<'a>(
    gate_settings: Option<&'a GateSettings>,
    baseline: Option<&'a StoredResults>,
) -> Option<Gate<'a>> {
    gate_settings.map(|(path, options)| Gate {
        options,
        baseline: path.as_deref().zip(baseline),
    })
}

/// The gate `conclude` runs: its options and, when given, the baseline with its path.
pub(super) struct Gate<'a> {
    pub options: &'a GateOptions,
    pub baseline: Option<(&'a Path, &'a StoredResults)>,
}

/// Writes a report directory with the given extra files; returns the directory.
pub(super) type WriteReport<'a> =
    Box<dyn FnOnce(Vec<(String, Vec<u8>)>) -> Result<PathBuf, Error> + 'a>;

/// What `run` and `merge` do once the results are in.
pub(super) struct Conclusion<'a> {
    pub results: &'a Results,
    /// The gate, when gated.
    pub gate: Option<Gate<'a>>,
    /// Metric columns of the table.
    pub columns: &'a [String],
    pub args: &'a GateArgs,
    /// The output directory and the report's writer; `None` writes no report.
    pub write: Option<(&'a Path, WriteReport<'a>)>,
    pub html: bool,
    pub quiet: bool,
}

/// Gates the results (when asked), prints the summary, appends it to the summary file,
/// writes the report (with `gate.json`) and its HTML page (when asked), then prints the
/// gate's verdict line on stderr; returns the exit code (1 when the gate fails).
pub(super) fn conclude(conclusion: Conclusion<'_>) -> Result<u8, Error> {
    let Conclusion {
        results,
        gate,
        columns,
        args,
        write,
        html,
        quiet,
    } = conclusion;
    let gate = match gate {
        Some(Gate { options, baseline }) => {
            let failed_expectations = results
                .configurations
                .iter()
                .filter_map(|configuration| configuration.expectations.as_ref())
                .map(|summary| summary.failures.len())
                .sum();
            Some(run_gate(
                &StoredResults::from_results(results),
                baseline.map(|(path, baseline)| (baseline, path)),
                options,
                failed_expectations,
            )?)
        }
        None => None,
    };

    let document = Document::Run {
        results,
        columns,
        gate: gate.as_ref(),
    };
    let mut printer = Printer::new();
    printer.print(render(args.format.format(), &document)?.trim_end_matches('\n'))?;
    judged_warning(quiet, results);
    let written = write_outputs(ConclusionWrites {
        document: &document,
        run_name: &results.run_name,
        gate: gate.as_ref(),
        summary_file: args.summary_file.as_deref(),
        write,
        html,
        quiet,
    });
    // Last, on stderr, in every format and whatever --quiet: the verdict is not progress,
    // and a log whose stdout holds JSON, CSV or nothing still says it, also when writing
    // an output failed.
    let Some(gate) = gate else {
        return written.map(|()| exit_code::OK);
    };
    eprintln!("{}", gate.verdict_line());
    written?;
    Ok(if gate.passed {
        exit_code::OK
    } else {
        exit_code::REGRESSION
    })
}

/// What `conclude` writes after printing: the summary file, the report and its page.
struct ConclusionWrites<'a> {
    document: &'a Document<'a>,
    run_name: &'a str,
    gate: Option<&'a crate::gate::GateReport>,
    summary_file: Option<&'a Path>,
    write: Option<(&'a Path, WriteReport<'a>)>,
    html: bool,
    quiet: bool,
}

/// Appends the Markdown summary to the summary file, writes the report (with
/// `gate.json`) and its HTML page, as asked.
fn write_outputs(writes: ConclusionWrites<'_>) -> Result<(), Error> {
    let ConclusionWrites {
        document,
        run_name,
        gate,
        summary_file,
        write,
        html,
        quiet,
    } = writes;
    if let Some(path) = summary_file {
        write_policy::append(path, &render(Format::Markdown, document)?)?;
    }
    if let Some((output_dir, write)) = write {
        crate::progress::stage(
            !quiet,
            &format!(
                "writing the report to {}",
                output_dir.join(run_name).display()
            ),
        );
        let extra = gate
            .iter()
            .map(|gate| ("gate.json".to_owned(), json_bytes(gate)))
            .collect();
        let directory = write(extra)?;
        note(
            quiet,
            &format!("reports written to {}", directory.display()),
        );
        if html {
            // Into the report just swapped in, which holds none of these files.
            let page = write_html_report(
                &directory.join("results.json"),
                &[],
                &HtmlOptions::default(),
                &directory,
                Policy::default(),
            )?;
            note(quiet, &format!("HTML report written to {}", page.display()));
        }
    }
    Ok(())
}

/// `hyde-eval run --shard I/N`: the shard's queries only, written with what `merge`
/// needs into `<output dir>/<run name>-shard-I-of-N`; no table and no gate.
fn run_shard(command: &RunCommand, shard: Shard) -> Result<u8, Error> {
    let gate = &command.gate;
    if gate.baseline.is_some()
        || gate.max_drop.is_some()
        || gate.min.is_some()
        || gate.require_significant
        || gate.require_expectations
        || !gate.significance.options().given().is_empty()
    {
        return Err(Error::Usage(format!(
            "--shard {shard} evaluates part of the queries, so it is not gated; gate the whole run when merging: hyde-eval merge SHARD_DIR... --baseline FILE [--max-drop ...] [--min ...]"
        )));
    }
    if gate.summary_file.is_some() {
        return Err(Error::Usage(format!(
            "--shard {shard} prints no summary; --summary-file belongs to the merge: hyde-eval merge SHARD_DIR... --summary-file FILE"
        )));
    }
    if command.run.no_report || command.no_runs || command.html {
        return Err(Error::Usage(format!(
            "--shard {shard} writes the shard directory (run files included) that `hyde-eval merge` reads; drop --no-report, --no-runs and --html (merge takes --html)"
        )));
    }
    let (file, mut dataset) = load_inputs(&command.run)?;
    let mut settings = settings::resolve(&command.options(), &file, &dataset.manifest)?;
    if let Some(engine) = &settings.run.engine {
        return Err(Error::Usage(format!(
            "--shard {shard} with engine '{}': a sharded run cannot carry the engine's comparison with the exact index (ANN recall, exact metrics) into the merge yet; run the engine unsharded",
            engine.name
        )));
    }
    settings.run.shard = Some(shard);
    let name = shard.directory_name(&settings.run.run_name);
    let policy = Policy::new(settings.force);
    let run_files = RunSpool::create(&settings.output_dir, &name, policy)?;
    // Whole rankings, whatever --run-depth says: merge recomputes every metric from
    // them, and cuts the merged run files to the depth.
    let outputs = RankingOutputs {
        keep: false,
        run_files: Some(run_files.directory()),
        run_depth: None,
    };
    let Execution {
        results, output, ..
    } = in_pool(settings.threads, || {
        execute(&mut dataset, &settings.run, outputs)
    })??;
    if !settings.quiet {
        backend_notes(&output);
    }
    let mut parts = ReportParts::of_run(
        &dataset,
        results.evaluation.settings.relevance_level,
        &output.configurations,
        &output.timings,
        &run_files,
    );
    parts.policy = policy;
    let evaluated = results.evaluation.evaluated_queries;
    let queries = results.queries.len();
    let source = &command.run.source;
    let shard_results = ShardResults {
        shard,
        build: BuildInfo::current(),
        table_metrics: settings.table_metrics,
        dataset_source: DatasetSource {
            // A built-in set is recorded as `built-in:NAME`, which `merge` reads anywhere.
            path: match dataset.built_in {
                Some(_) => dataset.root.clone(),
                None => settings::dataset_path(&command.run.options(), &file),
            },
            format: source.dataset_format,
            split: source.options.split.clone(),
            docs: source.options.docs.clone(),
            queries: source.options.queries.clone(),
            qrels: source.options.qrels.clone(),
        },
        query_slice: results
            .queries
            .iter()
            .map(|query| query.id.clone())
            .collect(),
        run_depth: settings.run_depth,
        run_files: output
            .configurations
            .iter()
            .map(|output| {
                let configuration = output.configuration.name.clone();
                let digest = file_digest(&run_files.run_file(&configuration))?;
                Ok(RunFileDigest {
                    configuration,
                    digest,
                })
            })
            .collect::<Result<_, Error>>()?,
        results,
    };
    let directory = write_shard(&settings.output_dir, &name, &shard_results, parts)?;
    if command.gate.format == OutputFormat::Table {
        print_line(&format!(
            "shard {shard}: {queries} of {} queries ({evaluated} evaluated) written to {}; combine the shards with `hyde-eval merge`",
            shard_results.results.dataset.queries,
            directory.display()
        ))?;
    }
    Ok(exit_code::OK)
}
