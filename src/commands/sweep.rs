//! `hyde-eval sweep`: blend weights or one parameter over a grid, with cross-validation.

use crate::cli::{OutputFormat, SweepArgs};
use crate::dataset::Dataset;
use crate::error::Error;
use crate::report::files::{check_destination, check_results_replacement, write_directory_keeping};
use crate::report::{self};
use crate::settings::{self, RunSettings};
use crate::sweep::grid::{self, ParamRange};
use crate::sweep::{self, SweepInputs, SweepKind, SweepResults, SweepSettings};
use crate::write_policy::Policy;

use super::*;
use crate::report::{render, Document, Format};

/// `hyde-eval sweep`: returns the process exit code.
pub fn sweep(args: &SweepArgs) -> Result<u8, Error> {
    if args.force && args.run.no_report {
        return Err(Error::Usage(
            "--force lets the sweep replace an existing one, and --no-report writes none; drop one of them".into(),
        ));
    }
    let kind = match &args.param {
        Some(param) => {
            if args.steps.is_some() {
                return Err(Error::Usage(
                    "--steps sets the grid of a weight sweep; --param sweeps the range it is given (NAME=START:STOP:STEP): drop --steps".into(),
                ));
            }
            SweepKind::Param(ParamRange::parse(param)?)
        }
        None => {
            let steps = args.steps.unwrap_or(sweep::DEFAULT_STEPS);
            grid::check_steps(steps)?;
            SweepKind::Weights { steps }
        }
    };
    let (file, dataset) = load_inputs(&args.run)?;
    let settings = settings::resolve(&args.run.options(), &file, &dataset.manifest)?;
    let metrics = if args.run.metrics.is_empty() {
        let largest = settings.run.metrics.cutoffs.last().copied().unwrap_or(10);
        vec![format!("ndcg@{largest}")]
    } else {
        settings.table_metrics.clone()
    };
    let sweep_settings = SweepSettings {
        kind,
        metrics,
        folds: args.folds,
        seed: args.seed,
    };
    in_pool(settings.threads, || {
        sweep_in_pool(
            &dataset,
            &settings,
            &sweep_settings,
            args.format,
            Policy::new(args.force),
        )
    })?
}

/// Runs a sweep of `settings`' configurations; prints and writes nothing. Runs on the
/// current rayon pool.
pub fn execute_sweep(
    dataset: &Dataset,
    settings: &RunSettings,
    sweep_settings: &SweepSettings,
) -> Result<SweepResults, Error> {
    dataset.check_evaluable(settings.run.metrics.relevance_level)?;
    if settings.run.sources.is_some() {
        return Err(Error::Usage(
            "sweep ranks every source as fused: drop the config file's sources and source_boost"
                .into(),
        ));
    }
    let (selected, _) = sweep::select(&settings.run.configurations, &sweep_settings.kind);
    if let Some(spec) = &settings.run.engine {
        crate::pipeline::served::check_engine_serves(spec, &selected)?;
    }
    let engine = settings
        .run
        .engine
        .as_ref()
        .map(|spec| {
            crate::engine::connect(spec, !settings.quiet).map(|engine| (spec.name.as_str(), engine))
        })
        .transpose()?;
    let (embedder, generator) = settings.run.providers(&selected, dataset_inputs(dataset))?;
    sweep::run(
        &SweepInputs {
            dataset,
            embedder: embedder.as_deref(),
            generator: generator.as_ref(),
            run_name: &settings.run.run_name,
            metrics: &settings.run.metrics,
            configurations: &settings.run.configurations,
            progress: !settings.quiet,
            chunk: settings.run.chunk,
            engine: engine
                .as_ref()
                .map(|(name, engine)| (*name, engine.as_ref())),
        },
        sweep_settings,
    )
}

fn sweep_in_pool(
    dataset: &Dataset,
    settings: &RunSettings,
    sweep_settings: &SweepSettings,
    format: OutputFormat,
    policy: Policy,
) -> Result<u8, Error> {
    let (_, skipped) = sweep::select(&settings.run.configurations, &sweep_settings.kind);
    if !settings.quiet && !skipped.is_empty() {
        eprintln!(
            "note: not swept, {}: {}",
            sweep::skip_reason(&sweep_settings.kind),
            skipped.join(", ")
        );
    }
    let name = match &sweep_settings.kind {
        SweepKind::Weights { .. } => format!("{}-sweep", settings.run.run_name),
        SweepKind::Param(range) => format!("{}-sweep-{}", settings.run.run_name, range.name),
    };
    let (selected, _) = sweep::select(&settings.run.configurations, &sweep_settings.kind);
    let swept: Vec<String> = selected
        .iter()
        .map(|configuration| configuration.name.clone())
        .collect();
    // A sweep replaces an earlier one of the same name only when it sweeps the same
    // dataset and at least its configurations.
    let keep = || {
        if policy.force {
            return Ok(());
        }
        check_results_replacement(
            &settings.output_dir.join(&name).join("sweep.json"),
            &dataset.manifest.name,
            &swept,
            &format!(
                "keep both by naming this sweep (--run-name NAME), or pass --force to replace {}",
                settings.output_dir.join(&name).display()
            ),
        )
    };
    if settings.write_reports {
        // Before the sweep, so a destination that may not be replaced fails fast.
        check_destination(&settings.output_dir, &name, policy)?;
        keep()?;
    }
    let results = execute_sweep(dataset, settings, sweep_settings)?;
    let document = Document::Sweep(&results);
    print_line(render(format.format(), &document)?.trim_end_matches('\n'))?;
    let best = report::sweep::best_point_settings(&results);
    if format == OutputFormat::Table && !best.is_empty() {
        print_line(&format!(
            "To run a best point: add its flags to this sweep's options in `hyde-eval run`, or put its table in the config file (merged into an existing one of that name).\n{}",
            best.trim_end()
        ))?;
    }
    if !settings.write_reports {
        return Ok(crate::error::exit_code::OK);
    }
    let csv = render(Format::Csv, &document)?.into_bytes();
    let charts = report::sweep::sweep_charts(&results).map_err(|error| Error::Write {
        path: settings.output_dir.join(&name),
        source: std::io::Error::other(error.to_string()),
    })?;
    let mut files: Vec<(String, Vec<u8>)> = vec![
        (
            "sweep.json".into(),
            render(Format::Json, &document)?.into_bytes(),
        ),
        ("sweep.csv".into(), csv),
    ];
    files.extend(
        charts
            .into_iter()
            .map(|(file, png)| (file.to_string(), png)),
    );
    let directory = write_directory_keeping(&settings.output_dir, &name, files, policy, &keep)?;
    note(
        settings.quiet,
        &format!("sweep written to {}", directory.display()),
    );
    Ok(crate::error::exit_code::OK)
}
