//! The commands behind the CLI, one file each: every command loads its inputs, calls the
//! layers below and prints or writes what they return. Process-level concerns (stdout,
//! stderr notes, thread pools, exit codes) stay here and in `main`; the helpers below
//! are the ones several commands share.

mod baseline;
mod cache;
mod compare;
mod configurations;
mod dataset;
mod draft_queries;
mod engine;
mod eval;
mod fuse;
mod judge;
mod merge;
mod models;
mod record;
mod report;
mod run;
mod shell;
mod sweep;

pub use baseline::baseline_update;
pub use cache::{cache_clear, cache_stats};
pub use compare::compare;
pub use configurations::configurations;
pub use dataset::dataset;
pub use draft_queries::draft_queries;
pub use engine::{engine_drop, engine_load, engine_status};
pub use eval::eval;
pub use fuse::fuse;
pub use judge::judge;
pub use merge::merge;
pub use models::models_fetch;
pub use record::record;
pub use report::report;
pub use run::run;
pub use shell::{completions, man};
pub use sweep::{execute_sweep, sweep};

use std::io::Write;
use std::path::Path;

use crate::cli::RunArgs;
use crate::dataset::built_in::Location;
use crate::dataset::Dataset;
use crate::error::{Error, Problem};
use crate::pipeline::run::DatasetInputs;
use crate::results::kind::DocumentKind;
use crate::settings::{self, ConfigFile};

/// Loads the config file and the dataset on a pool of `--threads` workers (a BEIR
/// corpus is parsed in parallel). The pool is the loading's own: the caller's thread
/// goes on with what was loaded.
fn load_inputs(args: &RunArgs) -> Result<(ConfigFile, Dataset), Error> {
    settings::check_threads(args.threads)?;
    in_pool(args.threads, || read_inputs(args))?
}

/// The config file and the dataset `args` name, with their notes printed.
fn read_inputs(args: &RunArgs) -> Result<(ConfigFile, Dataset), Error> {
    let file = match &args.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    let native = args.source.dataset_format == crate::dataset::import::Format::Native;
    let (location, defaulted) = settings::dataset_location(&args.options(), &file, native)?;
    if let Location::Directory(path) = &location {
        if !path.exists() {
            return Err(Error::problem(Problem::new(path, None, "no such dataset directory").with_hint(
                "pass --dataset DIR (the default is datasets/devmem where that directory exists, else the built-in devmem)",
            )));
        }
    }
    if defaulted && !args.quiet {
        eprintln!(
            "hyde-eval: dataset: built-in devmem (no ./{} here; `hyde-eval dataset export devmem DIR` writes it out)",
            settings::DEFAULT_DATASET
        );
    }
    crate::progress::stage(!args.quiet, &format!("loading {location}"));
    let dataset = load_dataset(&location, args.source.dataset_format, &args.source.options)?;
    if !args.quiet {
        for note in &dataset.notes {
            eprintln!("note: {note}");
        }
    }
    Ok((file, dataset))
}

/// Runs `work` on a rayon pool of the requested size.
fn in_pool<T: Send>(threads: Option<usize>, work: impl FnOnce() -> T + Send) -> Result<T, Error> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(threads) = threads {
        builder = builder.num_threads(threads);
    }
    let pool = builder
        .build()
        .map_err(|error| Error::Usage(format!("cannot start worker threads: {error}")))?;
    Ok(pool.install(work))
}

/// What the provider factories read of `dataset`.
fn dataset_inputs(dataset: &Dataset) -> DatasetInputs<'_> {
    DatasetInputs {
        concept_lexicon: dataset.concept_lexicon.as_ref(),
        queries: &dataset.queries,
        hypotheses: &dataset.hypotheses,
    }
}

// The pipeline's driver, for `tests/devmem_rankings.rs`, which pins every ranking through
// this path; everything else imports it from `pipeline::run`.
pub use crate::pipeline::run::{execute, Execution, RankingOutputs};

/// Prints to stdout; a closed pipe (`| head`) only stops the printing.
struct Printer {
    reader_gone: bool,
}

impl Printer {
    fn new() -> Printer {
        Printer { reader_gone: false }
    }

    fn print(&mut self, text: &str) -> Result<(), Error> {
        if self.reader_gone {
            return Ok(());
        }
        match writeln!(std::io::stdout().lock(), "{text}") {
            Err(source) if source.kind() == std::io::ErrorKind::BrokenPipe => {
                self.reader_gone = true;
                Ok(())
            }
            other => other.map_err(|source| Error::Write {
                path: "<stdout>".into(),
                source,
            }),
        }
    }
}

/// A note for the person at the terminal (where outputs went): on stderr, so that
/// stdout holds only data; nothing when `quiet`.
fn note(quiet: bool, text: &str) {
    if !quiet {
        eprintln!("{text}");
    }
}

/// The judged@k warning of `results` on stderr (see [`crate::report::JudgedWarning`]),
/// unless `quiet`; printed once per command, after its table.
fn judged_warning(quiet: bool, results: &crate::results::Results) {
    if let Some(warning) = crate::report::JudgedWarning::of(results) {
        note(quiet, &warning.text());
    }
}

/// Writes `text` and a newline to stdout; a closed pipe only stops the printing.
fn print_line(text: &str) -> Result<(), Error> {
    Printer::new().print(text)
}

/// Reads the JSON document of kind `expected` that hyde-eval wrote, naming the file and
/// line on failure; another of its documents is named for what it is, with `hint` (given
/// the kind found) saying where it goes.
fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    expected: DocumentKind,
    hint: &dyn Fn(DocumentKind) -> String,
) -> Result<T, Error> {
    let bytes = crate::input::read(path)?;
    serde_json::from_slice(&bytes).map_err(|error| {
        let what = expected.file_name();
        Error::problem(
            crate::results::kind::wrong_document(path, &bytes, expected, hint).unwrap_or_else(
                || {
                    Problem::new(
                        path,
                        Some(error.line()),
                        format!("not a hyde-eval {what}: {error}"),
                    )
                    .with_hint(format!("pass the {what} that hyde-eval wrote"))
                },
            ),
        )
    })
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

/// Loads the dataset at `location` (a directory in `format`, or a built-in set).
fn load_dataset(
    location: &Location,
    format: crate::dataset::import::Format,
    options: &crate::cli::FormatOptions,
) -> Result<Dataset, Error> {
    use crate::dataset::import::{self, Format, ImportOptions};
    let name = |format: Format| {
        serde_json::to_value(format)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .expect("a format serializes as its name")
    };
    let format_options = [
        ("--split", options.split.is_some(), Format::Beir),
        ("--docs", options.docs.is_some(), Format::Trec),
        ("--queries", options.queries.is_some(), Format::Trec),
        ("--qrels", options.qrels.is_some(), Format::Trec),
    ];
    if let Some((flag, _, reader)) = format_options
        .iter()
        .find(|(_, given, reader)| *given && *reader != format)
    {
        return Err(Error::Usage(format!(
            "{flag} is an option of the {reader} format, and {} is read as {}, which has no use for it: drop {flag}, or read the directory as {reader} (--dataset-format {reader}; dataset import --from {reader})",
            location,
            name(format),
            reader = name(*reader),
        )));
    }
    let path = match location {
        Location::Directory(path) => path,
        Location::BuiltIn(built_in) => return Dataset::load_built_in(built_in),
    };
    let defaults = ImportOptions::default();
    import::load(
        format,
        path,
        &ImportOptions {
            split: options.split.clone().unwrap_or(defaults.split),
            trec: crate::dataset::trec::TrecFiles {
                docs: options.docs.clone().unwrap_or(defaults.trec.docs),
                queries: options.queries.clone().unwrap_or(defaults.trec.queries),
                qrels: options.qrels.clone().unwrap_or(defaults.trec.qrels),
            },
        },
    )
}
