//! `hyde-eval dataset draft-queries`: drafts queries and grade-2 judgments for a
//! dataset that has only facts, with an LLM through the generator seam (cached,
//! replayable with `--offline`), and writes them with their provenance into the dataset
//! directory, and nowhere else.

use serde_json::json;

use crate::cli::DraftQueriesArgs;
use crate::dataset::{QRELS_FILE, QUERIES_FILE};
use crate::embed::choice::CacheAccess;
use crate::error::{exit_code, Error};
use crate::generate::draft::{self, DraftOptions, Style, NEAR_DUPLICATE_JACCARD};
use crate::generate::{HypothesisGenerator, PromptTemplate};
use crate::settings::{self, ConfigFile};
use crate::write_policy::{self, Earlier, Policy};

use super::*;

/// The provenance file written beside the drafted queries.
pub const PROVENANCE_FILE: &str = "drafted.json";

/// `hyde-eval dataset draft-queries DIR --generator NAME`.
pub fn draft_queries(args: &DraftQueriesArgs) -> Result<u8, Error> {
    let styles = parse_styles(&args.styles)?;
    if args.facts == 0 || args.per_fact == 0 {
        return Err(Error::Usage(
            "--facts and --per-fact must be at least 1".into(),
        ));
    }
    if !(0.0..=1.0).contains(&args.max_overlap) {
        return Err(Error::Usage(format!(
            "--max-overlap {}: a share between 0 and 1",
            args.max_overlap
        )));
    }
    let policy = Policy::new(args.force);
    for file in [QUERIES_FILE, QRELS_FILE, PROVENANCE_FILE] {
        write_policy::check_file(&args.dataset.join(file), policy, Earlier::dataset_file())?;
    }
    let file = match &args.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    let choice = settings::chat_generator(&args.generator, &file)?;
    let facts = crate::dataset::load_facts(&args.dataset)?;
    let prompt = PromptTemplate::draft(args.prompt_file.as_deref())?;
    let cache_dir = settings::cache_dir(args.cache_dir.as_deref(), &file);
    let cache_root = || crate::cache::cache_root(cache_dir.as_deref());
    let cache = CacheAccess {
        root: &cache_root,
        offline: args.offline,
    };
    let mut generators: Vec<Box<dyn HypothesisGenerator>> = Vec::new();
    for &style in &styles {
        let mut styled = choice.clone();
        styled.chat.prompt = prompt.for_style(style);
        generators.push(Box::new(crate::generate::choice::build_chat(
            &styled, &cache,
        )?));
    }
    let options = DraftOptions {
        facts: args.facts,
        seed: args.seed,
        styles: styles.clone(),
        per_fact: args.per_fact,
        prompt: prompt.clone(),
        max_overlap: args.max_overlap,
    };
    crate::progress::stage(
        !args.quiet,
        &format!(
            "drafting {} styles x {} per fact for {} of {} facts with {}",
            styles.len(),
            args.per_fact,
            args.facts.min(facts.len()),
            facts.len(),
            choice.chat.model
        ),
    );
    let drafted = draft::draft(&facts, &generators, &options)?;
    if drafted.queries.is_empty() {
        return Err(Error::Backend(format!(
            "no drafted query survived ({}); nothing written",
            describe_counts(&drafted.counts)
        )));
    }

    let mut queries = String::new();
    let mut qrels = String::new();
    for query in &drafted.queries {
        let line =
            json!({"id": query.id, "text": query.text, "tags": [query.style.tag(), "drafted"]});
        queries.push_str(&serde_json::to_string(&line).expect("serializes"));
        queries.push('\n');
        qrels.push_str(&format!("{}\t{}\t2\n", query.id, query.fact));
    }
    let date = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let provenance = json!({
        "generator": format!("openai-chat ({})", choice.name),
        "model": choice.chat.model,
        "endpoint": choice.http.base_url,
        "temperature": choice.chat.temperature,
        "max_tokens": choice.chat.max_tokens,
        "prompt": {"name": prompt.name, "text": prompt.text},
        "date": date,
        "seed": args.seed,
        "facts_sampled": drafted.sampled_facts,
        "styles": styles.iter().map(|style| style.tag()).collect::<Vec<_>>(),
        "per_fact": args.per_fact,
        "max_overlap": args.max_overlap,
        "near_duplicate_jaccard": NEAR_DUPLICATE_JACCARD,
        "counts": drafted.counts.iter().map(|(style, counts)| (style.tag().to_owned(), json!(counts))).collect::<serde_json::Map<_, _>>(),
        "queries": drafted.queries,
    });
    let mut provenance_text = serde_json::to_string_pretty(&provenance).expect("serializes");
    provenance_text.push('\n');
    for (file, text) in [
        (PROVENANCE_FILE, provenance_text),
        (QRELS_FILE, qrels),
        (QUERIES_FILE, queries),
    ] {
        write_policy::write_file_with(
            &args.dataset.join(file),
            policy,
            Earlier::dataset_file(),
            Box::new(move |writer| writer.write_all(text.as_bytes())),
        )?;
    }
    print_line(&format!(
        "drafted {} queries from {} facts into {} ({}); provenance in {}",
        drafted.queries.len(),
        drafted.sampled_facts.len(),
        args.dataset.join(QUERIES_FILE).display(),
        describe_counts(&drafted.counts),
        PROVENANCE_FILE
    ))?;
    Ok(exit_code::OK)
}

/// `synonym: 5 asked, 4 kept (1 copied wording)`, style by style.
fn describe_counts(counts: &[(Style, draft::StyleCounts)]) -> String {
    counts
        .iter()
        .map(|(style, counts)| {
            format!(
                "{}: {} asked, {} kept ({} copied wording, {} near-duplicates, {} empty or failed)",
                style.tag(),
                counts.asked,
                counts.kept,
                counts.copied_wording,
                counts.near_duplicates,
                counts.empty_or_failed
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The styles named on the command line, distinct, in the order given.
fn parse_styles(names: &[String]) -> Result<Vec<Style>, Error> {
    let mut styles = Vec::new();
    for name in names {
        let Some(style) = Style::parse(name) else {
            let known: Vec<&str> = Style::ALL.iter().map(|style| style.tag()).collect();
            return Err(Error::Usage(format!(
                "unknown style {name:?}{}; styles: {} (paraphrase = synonym)",
                crate::hints::suggestion(name, &known),
                known.join(", ")
            )));
        };
        if !styles.contains(&style) {
            styles.push(style);
        }
    }
    Ok(styles)
}
