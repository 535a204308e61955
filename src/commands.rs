//! The commands behind the CLI: each loads its inputs, calls the pure stages and prints
//! or writes what they return. All process-level concerns (exit codes, stderr notes,
//! thread pools) stay here and in `main`.

use std::io::Write;

use comfy_table::{presets, Table};

use std::path::{Path, PathBuf};

use crate::cli::{ReportArgs, RunArgs, SweepArgs};
use crate::dataset::Dataset;
use crate::embed::{ConceptProvider, EmbeddingProvider, HashProvider};
use crate::error::{Error, Problem};
use crate::generate::{HypothesisGenerator, RecordedGenerator};
use crate::metrics::{evaluate, Evaluation};
use crate::pipeline::config::Preset;
use crate::pipeline::{self, PipelineInputs, PipelineOutput};
use crate::report::files::{replace_directory, write_files};
use crate::report::html::HtmlOptions;
use crate::report::{self, build_results, files::write_report, table, Results};
use crate::settings::{self, ConfigFile, EmbedderChoice, RunSettings};
use crate::sweep::grid::{self, ParamRange};
use crate::sweep::{self, SweepInputs, SweepKind, SweepResults, SweepSettings};

/// Builds the embedding provider a run asked for.
fn build_embedder(
    choice: &EmbedderChoice,
    dataset: &Dataset,
) -> Result<Box<dyn EmbeddingProvider>, Error> {
    match choice {
        EmbedderChoice::Hash { dimension } => Ok(Box::new(HashProvider::new(*dimension)?)),
        EmbedderChoice::Concept { lexicon: Some(path) } => {
            let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.clone(), source })?;
            Ok(Box::new(ConceptProvider::parse(path, &text)?))
        }
        EmbedderChoice::Concept { lexicon: None } => match &dataset.concept_lexicon {
            Some((path, text)) => Ok(Box::new(ConceptProvider::parse(path, text)?)),
            None => Err(Error::Usage(
                "the concept embedder needs a lexicon: pass --lexicon FILE or set concept_lexicon in the dataset's dataset.toml".into(),
            )),
        },
    }
}

/// A command's inputs: the dataset, the resolved settings and the worker pool.
struct Loaded {
    dataset: Dataset,
    settings: RunSettings,
    pool: rayon::ThreadPool,
}

/// `hyde-eval run`: returns the process exit code.
pub fn run(args: &RunArgs) -> Result<u8, Error> {
    if args.html && args.no_report {
        return Err(Error::Usage(
            "--html renders the report directory, which --no-report skips; drop one of them".into(),
        ));
    }
    let Loaded {
        dataset,
        settings,
        pool,
    } = load(args)?;
    pool.install(|| run_in_pool(&dataset, &settings))
}

/// Loads the config file, the dataset and the settings, and starts the worker pool.
fn load(args: &RunArgs) -> Result<Loaded, Error> {
    let file = match &args.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    let dataset_path = settings::dataset_path(args, &file);
    if !dataset_path.exists() {
        return Err(Error::problem(Problem::new(&dataset_path, None, "no such dataset directory").with_hint(
            "run from the repository root (the default is datasets/devmem) or pass --dataset DIR",
        )));
    }
    let dataset = Dataset::load(&dataset_path)?;
    let settings = settings::resolve(args, &file, &dataset.manifest)?;
    if !settings.quiet {
        for note in &dataset.notes {
            eprintln!("note: {note}");
        }
    }
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(threads) = settings.threads {
        builder = builder.num_threads(threads);
    }
    let pool = builder
        .build()
        .map_err(|error| Error::Usage(format!("cannot start worker threads: {error}")))?;
    Ok(Loaded {
        dataset,
        settings,
        pool,
    })
}

/// A finished evaluation: the results document and the pipeline output behind it.
pub struct Execution {
    pub results: Results,
    pub output: PipelineOutput,
}

/// Runs every configuration of `settings` on `dataset` and evaluates them; prints and
/// writes nothing. Runs on the current rayon pool.
pub fn execute(dataset: &Dataset, settings: &RunSettings) -> Result<Execution, Error> {
    let needs_vectors = settings
        .configurations
        .iter()
        .any(|configuration| configuration.plan().vector.is_some());
    let embedder = if needs_vectors {
        Some(build_embedder(&settings.embedder, dataset)?)
    } else {
        None
    };
    let generator = RecordedGenerator::from_dataset(dataset);
    let output = pipeline::run(&PipelineInputs {
        dataset,
        embedder: embedder.as_deref(),
        generator: &generator,
        configurations: &settings.configurations,
        progress: !settings.quiet,
    })?;
    let query_ids: Vec<_> = dataset
        .queries
        .iter()
        .map(|query| query.id.clone())
        .collect();
    let evaluations: Vec<Evaluation> = output
        .configurations
        .iter()
        .map(|configuration| {
            evaluate(
                &query_ids,
                &configuration.rankings,
                &dataset.qrels,
                &settings.metrics,
            )
        })
        .collect();
    let results = build_results(
        &settings.run_name,
        dataset,
        &settings.metrics,
        embedder.as_ref().map(|embedder| embedder.identity()),
        generator.identity(),
        &output.configurations,
        &evaluations,
    );
    Ok(Execution { results, output })
}

fn run_in_pool(dataset: &Dataset, settings: &RunSettings) -> Result<u8, Error> {
    let Execution { results, output } = execute(dataset, settings)?;
    let mut stdout = std::io::stdout().lock();
    let mut reader_gone = false;
    // A closed pipe (`| head`) only stops the printing; reports are still written.
    let mut print = |text: String| -> Result<(), Error> {
        if reader_gone {
            return Ok(());
        }
        match writeln!(stdout, "{text}") {
            Err(source) if source.kind() == std::io::ErrorKind::BrokenPipe => {
                reader_gone = true;
                Ok(())
            }
            other => other.map_err(|source| Error::Write {
                path: "<stdout>".into(),
                source,
            }),
        }
    };
    print(table::summary_line(&results))?;
    print(table::metric_table(&results, &settings.table_metrics))?;
    if let Some(hyde) = table::hyde_table(&results) {
        print(hyde)?;
    }
    if settings.write_reports {
        let directory = write_report(
            &settings.output_dir,
            &results,
            dataset,
            settings.metrics.relevance_level,
            &output.configurations,
            &output.timings,
        )?;
        print(format!("reports written to {}", directory.display()))?;
        if settings.html {
            let page = write_html_report(
                &directory.join("results.json"),
                &[],
                &HtmlOptions::default(),
                &directory,
            )?;
            print(format!("HTML report written to {}", page.display()))?;
        }
    }
    Ok(crate::error::exit_code::OK)
}

/// Writes `text` and a newline to stdout; a closed pipe only stops the printing.
fn print_line(text: &str) -> Result<(), Error> {
    match writeln!(std::io::stdout().lock(), "{text}") {
        Err(source) if source.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|source| Error::Write {
            path: "<stdout>".into(),
            source,
        }),
    }
}

/// `hyde-eval sweep`: returns the process exit code.
pub fn sweep(args: &SweepArgs) -> Result<u8, Error> {
    if args.run.html {
        return Err(Error::Usage(
            "--html applies to run; put a sweep in a report with `hyde-eval report RESULTS --sweep SWEEP.json`".into(),
        ));
    }
    let kind = match &args.param {
        Some(param) => SweepKind::Param(ParamRange::parse(param)?),
        None => {
            grid::check_steps(args.steps)?;
            SweepKind::Weights { steps: args.steps }
        }
    };
    let Loaded {
        dataset,
        settings,
        pool,
    } = load(&args.run)?;
    let metrics = if args.run.metrics.is_empty() {
        let largest = settings.metrics.cutoffs.last().copied().unwrap_or(10);
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
    pool.install(|| sweep_in_pool(&dataset, &settings, &sweep_settings))
}

/// Runs a sweep of `settings`' configurations; prints and writes nothing. Runs on the
/// current rayon pool.
pub fn execute_sweep(
    dataset: &Dataset,
    settings: &RunSettings,
    sweep_settings: &SweepSettings,
) -> Result<SweepResults, Error> {
    let (selected, _) = sweep::select(&settings.configurations, &sweep_settings.kind);
    let embedder = if selected.iter().any(|c| c.plan().vector.is_some()) {
        Some(build_embedder(&settings.embedder, dataset)?)
    } else {
        None
    };
    let generator = RecordedGenerator::from_dataset(dataset);
    sweep::run(
        &SweepInputs {
            dataset,
            embedder: embedder.as_deref(),
            generator: &generator,
            run_name: &settings.run_name,
            metrics: &settings.metrics,
            configurations: &settings.configurations,
            progress: !settings.quiet,
        },
        sweep_settings,
    )
}

fn sweep_in_pool(
    dataset: &Dataset,
    settings: &RunSettings,
    sweep_settings: &SweepSettings,
) -> Result<u8, Error> {
    let (_, skipped) = sweep::select(&settings.configurations, &sweep_settings.kind);
    if !settings.quiet && !skipped.is_empty() {
        eprintln!(
            "note: not swept, {}: {}",
            sweep::skip_reason(&sweep_settings.kind),
            skipped.join(", ")
        );
    }
    let results = execute_sweep(dataset, settings, sweep_settings)?;
    print_line(&report::sweep::sweep_headline(&results))?;
    print_line(&report::sweep::summary_table(&results))?;
    print_line(report::sweep::SUMMARY_NOTE)?;
    if !settings.write_reports {
        return Ok(crate::error::exit_code::OK);
    }
    let name = match &sweep_settings.kind {
        SweepKind::Weights { .. } => format!("{}-sweep", settings.run_name),
        SweepKind::Param(range) => format!("{}-sweep-{}", settings.run_name, range.name),
    };
    let csv = report::sweep::sweep_csv(&results).map_err(|error| Error::Write {
        path: settings.output_dir.join(&name).join("sweep.csv"),
        source: std::io::Error::other(error),
    })?;
    let charts = report::sweep::sweep_charts(&results).map_err(|error| Error::Write {
        path: settings.output_dir.join(&name),
        source: std::io::Error::other(error.to_string()),
    })?;
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        ("sweep.json".into(), report::sweep::sweep_json(&results)),
        ("sweep.csv".into(), csv),
    ];
    files.extend(
        charts
            .into_iter()
            .map(|(file, png)| (PathBuf::from(file), png)),
    );
    let directory = replace_directory(&settings.output_dir, &name, |partial| {
        write_files(partial, &files)
    })?;
    print_line(&format!("sweep written to {}", directory.display()))?;
    Ok(crate::error::exit_code::OK)
}

/// Reads a JSON document that hyde-eval wrote, naming the file and line on failure.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> Result<T, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|error| {
        Error::problem(
            Problem::new(
                path,
                Some(error.line()),
                format!("not a hyde-eval {what}: {error}"),
            )
            .with_hint(format!("pass the {what} that hyde-eval wrote")),
        )
    })
}

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
        baseline: args.baseline.clone(),
        metric: args.metric.clone(),
    };
    let page = write_html_report(&args.results, &args.sweep, &options, &directory)?;
    print_line(&format!("report written to {}", page.display()))?;
    Ok(crate::error::exit_code::OK)
}

/// Renders the report of the results at `results_path` (with `sweep_paths`) into
/// `directory`; returns the page's path.
fn write_html_report(
    results_path: &Path,
    sweep_paths: &[PathBuf],
    options: &HtmlOptions,
    directory: &Path,
) -> Result<PathBuf, Error> {
    let results: Results = read_json(results_path, "results.json")?;
    if results.schema_version != crate::report::SCHEMA_VERSION {
        return Err(Error::problem(Problem::new(
            results_path,
            None,
            format!(
                "schema version {} is not the {} this hyde-eval reads",
                results.schema_version,
                crate::report::SCHEMA_VERSION
            ),
        )));
    }
    let mut sweeps = Vec::new();
    for path in sweep_paths {
        let sweep: SweepResults = read_json(path, "sweep.json")?;
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
    write_files(directory, &files)?;
    Ok(directory.join(report::html::PAGE))
}

/// `hyde-eval configurations`: the built-in presets.
pub fn list_configurations() -> String {
    let mut table = Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    table.set_header(vec!["configuration", "what it does", "reproduces"]);
    for preset in Preset::ALL {
        table.add_row(vec![preset.name(), preset.description(), preset.source()]);
    }
    table.to_string()
}
