//! The commands behind the CLI: each loads its inputs, calls the pure stages and prints
//! or writes what they return. All process-level concerns (exit codes, stderr notes,
//! thread pools) stay here and in `main`.

use std::io::Write;

use comfy_table::{presets, Table};

use crate::cli::RunArgs;
use crate::dataset::Dataset;
use crate::embed::{ConceptProvider, EmbeddingProvider, HashProvider};
use crate::error::{Error, Problem};
use crate::generate::{HypothesisGenerator, RecordedGenerator};
use crate::metrics::{evaluate, Evaluation};
use crate::pipeline::config::Preset;
use crate::pipeline::{self, PipelineInputs, PipelineOutput};
use crate::report::{build_results, files::write_report, table, Results};
use crate::settings::{self, ConfigFile, EmbedderChoice, RunSettings};

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

/// `hyde-eval run`: returns the process exit code.
pub fn run(args: &RunArgs) -> Result<u8, Error> {
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
    let dataset = load_dataset(&dataset_path, args.source.format, &args.source.options)?;
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
    pool.install(|| run_in_pool(&dataset, &settings))
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
    }
    Ok(crate::error::exit_code::OK)
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

/// Writes `text` to stdout; a reader that went away (`| head`) is not an error.
fn print_to_stdout(text: &str) -> Result<(), Error> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(source) if source.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Write {
            path: "<stdout>".into(),
            source,
        }),
        _ => Ok(()),
    }
}

/// An input file's bytes: memory-mapped (large runs are read without a copy), or read
/// when mapping is not possible (empty files, pipes).
enum InputBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for InputBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            InputBytes::Mapped(map) => map,
            InputBytes::Read(bytes) => bytes,
        }
    }
}

fn read_input(path: &std::path::Path) -> Result<InputBytes, Error> {
    let file = std::fs::File::open(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let is_regular = file
        .metadata()
        .is_ok_and(|meta| meta.is_file() && meta.len() > 0);
    if is_regular {
        // SAFETY: the map is read-only and lives while the file is evaluated; like
        // trec_eval (which maps its inputs too), we assume nobody truncates the file
        // meanwhile.
        if let Ok(map) = unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
            return Ok(InputBytes::Mapped(map));
        }
    }
    Ok(InputBytes::Read(crate::dataset::read_file(path)?))
}

/// `hyde-eval eval`: scores TREC runs against TREC qrels (trec_eval semantics).
pub fn eval(args: &crate::cli::EvalArgs) -> Result<u8, Error> {
    use crate::report::eval::{self as output, EvaluatedRun};
    use crate::trec_eval::{evaluate_run, parse, EvalOptions, MeasureSet};

    let measures = if args.measures.is_empty() {
        MeasureSet::official()
    } else {
        MeasureSet::parse(&args.measures)
            .map_err(|message| Error::Usage(format!("-m: {message}")))?
    };
    if args.relevance_level < 0 {
        return Err(Error::Usage(
            "-l: the relevance level must be >= 0 (negative grades mean judged but unjudged)"
                .into(),
        ));
    }
    if args.max_results == Some(0) || args.threads == Some(0) {
        return Err(Error::Usage("-M and --threads must be at least 1".into()));
    }
    let options = EvalOptions {
        relevance_level: args.relevance_level,
        complete: args.complete,
        max_results: args.max_results.unwrap_or(usize::MAX),
        measures,
    };
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(threads) = args.threads {
        builder = builder.num_threads(threads);
    }
    let pool = builder
        .build()
        .map_err(|error| Error::Usage(format!("cannot start worker threads: {error}")))?;
    pool.install(|| {
        let qrels_bytes = read_input(&args.qrels)?;
        let qrels_text = parse::as_text(&args.qrels, &qrels_bytes)?;
        let qrels = parse::parse_qrels(&args.qrels, qrels_text)?;
        let mut runs = Vec::with_capacity(args.runs.len());
        for path in &args.runs {
            let bytes = read_input(path)?;
            let run = parse::parse_run(path, &bytes)?;
            let evaluation = evaluate_run(&qrels, run, &options).map_err(|duplicate| {
                let text = String::from_utf8_lossy(&bytes);
                let lines = parse::lines_naming(&text, &duplicate.query, &duplicate.document);
                Error::problem(
                    Problem::new(
                        path,
                        lines.get(1).copied(),
                        format!(
                            "document {} appears twice for query {} (first on line {})",
                            duplicate.document,
                            duplicate.query,
                            lines.first().copied().unwrap_or(0)
                        ),
                    )
                    .with_hint("trec_eval rejects duplicate documents: keep one line per document and query"),
                )
            })?;
            if evaluation.per_query.is_empty() {
                return Err(Error::problem(
                    Problem::new(path, None, format!("no query of this run is judged in {}", args.qrels.display()))
                        .with_hint("check that the run and the qrels use the same query ids"),
                ));
            }
            if !args.quiet {
                let missing = &evaluation.missing_from_run;
                if !missing.is_empty() && !args.complete {
                    eprintln!(
                        "note: {}: {} qrels quer{} without results ({}{}) left out of the averages, as trec_eval 9 does; pass -c to score {} as 0",
                        path.display(),
                        missing.len(),
                        if missing.len() == 1 { "y" } else { "ies" },
                        missing.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
                        if missing.len() > 5 { ", ..." } else { "" },
                        if missing.len() == 1 { "it" } else { "them" },
                    );
                }
                if evaluation.unjudged_queries > 0 {
                    eprintln!(
                        "note: {}: {} run quer{} without judgments ignored",
                        path.display(),
                        evaluation.unjudged_queries,
                        if evaluation.unjudged_queries == 1 { "y" } else { "ies" },
                    );
                }
            }
            runs.push(EvaluatedRun {
                path: path.display().to_string(),
                evaluation,
            });
        }
        let text = match args.format {
            crate::cli::EvalFormat::Trec => output::trec_text(&runs, &options, args.per_query),
            crate::cli::EvalFormat::Json => output::json(
                &args.qrels.display().to_string(),
                &runs,
                &options,
                args.per_query,
            ),
            crate::cli::EvalFormat::Csv => output::csv(&runs, args.per_query)
                .map_err(|error| Error::Usage(format!("cannot format CSV: {error}")))?,
        };
        print_to_stdout(&text)?;
        Ok(crate::error::exit_code::OK)
    })
}

/// Loads a dataset directory in `format`.
fn load_dataset(
    path: &std::path::Path,
    format: crate::dataset::import::Format,
    options: &crate::cli::FormatOptions,
) -> Result<Dataset, Error> {
    use crate::dataset::import::{self, ImportOptions};
    import::load(
        format,
        path,
        &ImportOptions {
            split: options.split.clone(),
            trec_docs: options.docs.clone(),
            trec_queries: options.queries.clone(),
            trec_qrels: options.qrels.clone(),
        },
    )
}

/// `hyde-eval dataset import|stats|validate`.
pub fn dataset(command: &crate::cli::DatasetCommand) -> Result<u8, Error> {
    use crate::cli::DatasetCommand;
    use crate::dataset::{import, stats};
    let print_notes = |dataset: &Dataset, quiet: bool| {
        if !quiet {
            for note in &dataset.notes {
                eprintln!("note: {note}");
            }
        }
    };
    match command {
        DatasetCommand::Import(args) => {
            let dataset = load_dataset(&args.source, args.from, &args.options)?;
            print_notes(&dataset, args.quiet);
            import::write_native(&dataset, &args.destination)?;
            print_to_stdout(&format!(
                "imported {} facts, {} queries and {} judgments into {}\n",
                dataset.facts.len(),
                dataset.queries.len(),
                dataset.judgment_count(),
                args.destination.display()
            ))?;
        }
        DatasetCommand::Stats(args) => {
            let dataset = load_dataset(&args.dataset, args.source.format, &args.source.options)?;
            print_notes(&dataset, args.quiet);
            let summary = stats::stats(&dataset);
            let text = if args.json {
                let mut text = serde_json::to_string_pretty(&summary).expect("serializable stats");
                text.push('\n');
                text
            } else {
                summary.render()
            };
            print_to_stdout(&text)?;
        }
        DatasetCommand::Validate(args) => {
            let dataset = load_dataset(&args.dataset, args.source.format, &args.source.options)?;
            print_notes(&dataset, args.quiet);
            print_to_stdout(&format!(
                "{}: valid ({} facts, {} queries, {} judgments)\n",
                args.dataset.display(),
                dataset.facts.len(),
                dataset.queries.len(),
                dataset.judgment_count()
            ))?;
        }
    }
    Ok(crate::error::exit_code::OK)
}
