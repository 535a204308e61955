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
    for section in [
        table::hyde_table(&results),
        table::abstention_line(&results),
        table::scenario_table(&results),
        table::expectation_failures(&results),
    ]
    .into_iter()
    .flatten()
    {
        print(section)?;
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
