//! `hyde-eval record`: generates hypotheses for every query with a live generator and
//! writes them, with their provenance, as a `hypotheses.jsonl`.

use crate::cli::RecordArgs;
use crate::dataset::Query;
use crate::error::{exit_code, Error};
use crate::generate::choice::GeneratorChoice;
use crate::generate::{Generation, HypothesisGenerator};
use crate::pipeline::{self};
use crate::settings::{self};
use crate::write_policy::{self, Earlier, Policy};

use super::*;

/// `hyde-eval record`: generates hypotheses for every query and writes them, with
/// their provenance, as a `hypotheses.jsonl`.
pub fn record(args: &RecordArgs) -> Result<u8, Error> {
    if args.n.is_some() {
        let defaults = [
            ("--configurations", !args.configurations.is_empty()),
            ("--set", !args.set.is_empty()),
        ];
        if let Some((flag, _)) = defaults.iter().find(|(_, given)| *given) {
            return Err(Error::Usage(format!(
                "{flag} sets the default of --n (the most hypotheses a configuration reads), and --n is given: drop one of them"
            )));
        }
    }
    let run = args.run_args();
    let (file, dataset) = load_inputs(&run)?;
    let settings = settings::resolve(&run.options(), &file, &dataset.manifest)?;
    let GeneratorChoice::Chat(choice) = &settings.run.generator else {
        return Err(Error::Usage(
            "record needs a live generator: --generator NAME naming a [generators.NAME] table of the --config file".into(),
        ));
    };
    let n = match args.n {
        Some(0) => return Err(Error::Usage("--n must be at least 1".into())),
        Some(n) => n,
        None => pipeline::max_hypotheses(&settings.run.configurations).max(1),
    };
    let output = match (&args.output, dataset.built_in) {
        (Some(output), _) => output.clone(),
        (None, Some(name)) => {
            return Err(Error::Usage(format!(
                "the built-in {name} has no directory to record into: pass --output FILE, or write the set out with `hyde-eval dataset export {name} DIR` and record into it with --dataset DIR"
            )))
        }
        (None, None) => settings::dataset_path(&run.options(), &file).join("hypotheses.jsonl"),
    };
    // Before any request, so hypotheses that may not be replaced fail fast.
    let policy = Policy::new(args.force);
    let recorded = dataset.root.join(crate::dataset::HYPOTHESES_FILE);
    let earlier = Earlier::dataset_file().replacing_input(&recorded);
    write_policy::check_file(&output, policy, earlier)?;
    let (_, generator) = settings.run.providers(&[], dataset_inputs(&dataset))?;
    let generations = in_pool(settings.threads, || {
        generate_with_progress(
            generator.as_ref(),
            &choice.name,
            &dataset.queries,
            n,
            !args.quiet,
        )
    })??;
    let source = choice.chat.source(
        &format!("{} ({})", choice.chat.api.kind(), choice.name),
        Some(chrono::Utc::now().format("%Y-%m-%d").to_string()),
    );
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    let mut cost = crate::generate::GenerationCost::default();
    for (query, generation) in dataset.queries.iter().zip(&generations) {
        cost += &generation.cost;
        match &generation.hypotheses {
            Ok(texts) => {
                // The time measured when the hypotheses were generated; none for
                // hypotheses served from the cache.
                let source = crate::dataset::HypothesisSource {
                    generation_time_ms: generation.cost.latency_ms,
                    ..source.clone()
                };
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
    write_policy::write_file_with(
        &output,
        policy,
        earlier,
        Box::new(|writer| writer.write_all(&bytes)),
    )?;
    if !args.quiet {
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

/// Queries handed to the generator at a time, so that the progress count moves while
/// each batch keeps the generator's requests in flight together.
const QUERIES_PER_BATCH: usize = 64;

/// Every query's hypotheses, in order, under a stage line naming the generator and a
/// count of the queries done (the heartbeat's `generating ...: 64/300`) when `progress`.
fn generate_with_progress(
    generator: &dyn HypothesisGenerator,
    name: &str,
    queries: &[Query],
    n: usize,
    progress: bool,
) -> Result<Vec<Generation>, Error> {
    crate::progress::stage(
        progress,
        &format!(
            "generating {} queries' hypotheses ({n} each) with generator {name}",
            queries.len()
        ),
    );
    let count = crate::progress::counted(progress, true, queries.len(), "generating");
    let mut generations = Vec::with_capacity(queries.len());
    for batch in queries.chunks(QUERIES_PER_BATCH) {
        generations.extend(generator.generate_all(batch, n)?);
        count.inc(batch.len() as u64);
    }
    count.finish_and_clear();
    Ok(generations)
}
