//! `hyde-eval engine load | status | drop`: a dataset's facts loaded into a search engine
//! (embedded by the run's embedder, through the cache), what the engine holds, and its
//! removal. A load records the dataset's content hash and the embedder in the engine,
//! resumes where an interrupted load stopped, and does nothing when the same load is
//! complete; a load of other data over it is refused.

use crate::cli::{EngineDropArgs, EngineLoadArgs};
use crate::configuration::{Configuration, Preset};
use crate::embed::{embed_checked, EmbeddingProvider, TextKind};
use crate::engine::{EngineDocument, LoadStamp, LoadState, SearchEngine};
use crate::error::{exit_code, Error};
use crate::pipeline::served::{embedder_stamp, expected_stamp, stamp_differences};
use crate::settings::{self, ConfigFile};

use super::*;

/// The engine, its expected load stamp, the embedder and the facts in id order.
struct EngineLoad {
    engine: Box<dyn SearchEngine>,
    embedder: Box<dyn EmbeddingProvider>,
    dataset: Dataset,
    dataset_hash: String,
}

/// Facts per upsert request when `--batch-size` is not given.
const DEFAULT_BATCH_SIZE: usize = 256;

/// The facts per upsert request of `engine load`.
fn batch_size(args: &EngineLoadArgs) -> Result<usize, Error> {
    let batch_size = args.batch_size.unwrap_or(DEFAULT_BATCH_SIZE);
    if batch_size == 0 || batch_size > 10_000 {
        return Err(Error::Usage(format!(
            "--batch-size must be between 1 and 10000, got {batch_size}"
        )));
    }
    Ok(batch_size)
}

fn open(args: &EngineLoadArgs) -> Result<EngineLoad, Error> {
    let run_args = args.run_args();
    let (file, mut dataset) = load_inputs(&run_args)?;
    let resolved = settings::resolve(&run_args.options(), &file, &dataset.manifest)?;
    let spec = resolved
        .run
        .engine
        .clone()
        .expect("--engine is required by the command line");
    let engine = crate::engine::connect(&spec, !args.quiet)?;
    let vector_configurations: Vec<_> = resolved
        .run
        .configurations
        .iter()
        .filter(|configuration| configuration.plan().vector.is_some())
        .cloned()
        .collect();
    let needing_vectors = if vector_configurations.is_empty() {
        let dense = Preset::Dense;
        vec![Configuration {
            name: dense.name().to_owned(),
            preset: dense,
            params: dense.default_params(),
        }]
    } else {
        vector_configurations
    };
    let (embedder, _) = resolved.run.providers(
        &needing_vectors,
        DatasetInputs {
            concept_lexicon: dataset.concept_lexicon.as_ref(),
            queries: &dataset.queries,
            hypotheses: &dataset.hypotheses,
        },
    )?;
    let embedder = embedder.expect("a configuration that searches vectors gets an embedder");
    dataset
        .facts
        .sort_by(|left, right| left.id.0.cmp(&right.id.0));
    let dataset_hash = dataset.content_hash.clone();
    Ok(EngineLoad {
        engine,
        embedder,
        dataset,
        dataset_hash,
    })
}

/// The stamp a complete load of `load` records (the dimension known once the embedder
/// has answered).
fn stamp(load: &EngineLoad, dimension: usize) -> LoadStamp {
    expected_stamp(
        &load.dataset_hash,
        &embedder_stamp(&load.embedder.identity()),
        dimension,
        load.dataset.facts.len(),
    )
}

/// `hyde-eval engine load`.
pub fn engine_load(args: &EngineLoadArgs) -> Result<u8, Error> {
    let batch_size = batch_size(args)?;
    let load = open(args)?;
    let engine = load.engine.as_ref();
    let label = crate::engine::label(&args.engine, engine);
    let facts = &load.dataset.facts;
    let progress = !args.quiet;
    // The first batch is embedded before anything is created: an HTTP embedder learns
    // its dimension from it.
    let first_batch: Vec<&str> = facts
        .iter()
        .take(batch_size)
        .map(|fact| fact.content.as_str())
        .collect();
    let first_vectors = embed_checked(load.embedder.as_ref(), &first_batch, TextKind::Document)?;
    let dimension = load.embedder.identity().dimension;
    let stamp = stamp(&load, dimension);
    let loaded = match engine.state()? {
        LoadState::Complete {
            stamp: stored,
            loaded,
        } if stored == stamp => {
            println!(
                "{}: already holds this load ({loaded} facts, {}); nothing to do",
                label, stored.embedder
            );
            return Ok(exit_code::OK);
        }
        LoadState::Complete { stamp: stored, .. } | LoadState::Partial { stamp: stored, .. }
            if stored != stamp =>
        {
            return Err(Error::Usage(format!(
                "{}: it holds another load ({}); `hyde-eval engine drop --engine {}` first",
                label,
                stamp_differences(&stored, &stamp).join("; "),
                args.engine
            )));
        }
        LoadState::Missing => {
            engine.create(&stamp)?;
            std::collections::HashSet::new()
        }
        LoadState::Partial { loaded, .. } | LoadState::Complete { loaded, .. } => {
            crate::progress::stage(
                progress,
                &format!("resuming: {loaded} of {} facts are loaded", facts.len()),
            );
            engine.loaded_ids()?
        }
    };
    crate::progress::stage(
        progress,
        &format!("loading {} facts into {}", facts.len(), label),
    );
    let bar = crate::progress::counted(progress, facts.len() > batch_size, facts.len(), "loading");
    let mut upserted = 0;
    for (number, batch) in facts.chunks(batch_size).enumerate() {
        let pending: Vec<usize> = (0..batch.len())
            .filter(|&position| !loaded.contains(batch[position].id.0.as_ref()))
            .collect();
        if !pending.is_empty() {
            let vectors = if number == 0 {
                first_vectors.clone()
            } else {
                let texts: Vec<&str> = batch.iter().map(|fact| fact.content.as_str()).collect();
                embed_checked(load.embedder.as_ref(), &texts, TextKind::Document)?
            };
            let documents: Vec<EngineDocument<'_>> = pending
                .iter()
                .map(|&position| EngineDocument {
                    id: batch[position].id.0.as_ref(),
                    text: &batch[position].content,
                    vector: &vectors[position],
                })
                .collect();
            engine.upsert(&documents)?;
            upserted += documents.len();
        }
        bar.inc(batch.len() as u64);
    }
    bar.finish_and_clear();
    crate::progress::stage(progress, "completing the load (building any index)");
    engine.complete(&stamp)?;
    println!(
        "{}: loaded {upserted} facts ({} already there), {}, dimension {dimension}",
        label,
        facts.len() - upserted,
        stamp.embedder
    );
    Ok(exit_code::OK)
}

/// `hyde-eval engine status`: exit 0 when the engine holds this dataset and embedder
/// completely, 1 otherwise.
pub fn engine_status(args: &EngineLoadArgs) -> Result<u8, Error> {
    if args.batch_size.is_some() {
        return Err(Error::Usage(
            "--batch-size sets the upserts of `engine load`; status loads nothing: drop --batch-size".into(),
        ));
    }
    let load = open(args)?;
    let engine = load.engine.as_ref();
    let label = crate::engine::label(&args.engine, engine);
    let state = engine.state()?;
    let (words, stored, complete) = match &state {
        LoadState::Missing => {
            println!("{}: no collection (run `hyde-eval engine load`)", label);
            return Ok(exit_code::REGRESSION);
        }
        LoadState::Partial { stamp, loaded } => (
            format!("partial load, {loaded} of {} facts", stamp.facts),
            stamp,
            false,
        ),
        LoadState::Complete { stamp, loaded } => {
            (format!("complete load, {loaded} facts"), stamp, true)
        }
    };
    println!("{}: {words}", label);
    println!("  dataset   {}", stored.dataset_hash);
    println!(
        "  embedder  {} (dimension {})",
        stored.embedder, stored.dimension
    );
    let identity = load.embedder.identity();
    let mut expected = stamp(&load, identity.dimension);
    if identity.dimension == 0 {
        // An HTTP embedder knows its dimension only after a request; status makes none.
        expected.dimension = stored.dimension;
    }
    let differences = stamp_differences(stored, &expected);
    if differences.is_empty() && complete {
        println!("  matches this dataset and embedder");
        Ok(exit_code::OK)
    } else {
        if !differences.is_empty() {
            println!("  differs from this run: {}", differences.join("; "));
        }
        Ok(exit_code::REGRESSION)
    }
}

/// `hyde-eval engine drop`.
pub fn engine_drop(args: &EngineDropArgs) -> Result<u8, Error> {
    let file = ConfigFile::load(&args.config)?;
    let spec = settings::engine_spec(&args.engine, &file)?;
    let engine = crate::engine::connect(&spec, true)?;
    let label = crate::engine::label(&args.engine, engine.as_ref());
    if engine.drop_collection()? {
        println!("{}: dropped", label);
    } else {
        println!("{}: nothing to drop", label);
    }
    Ok(exit_code::OK)
}
