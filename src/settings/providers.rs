//! Which embedding provider and hypothesis generator a run uses: a built-in name or an
//! `[embedders.NAME]` / `[generators.NAME]` table of the config file.

use crate::dataset::Manifest;
use crate::embed::choice::EmbedderChoice;
use crate::error::Error;
use crate::generate::choice::{ChatChoice, GeneratorChoice};

use super::backends::{self, EmbedderTableChoice};
use super::{ConfigFile, RunOptions};

/// The built-in embedder names (config tables add their own).
const BUILTIN_EMBEDDERS: [&str; 3] = ["hash", "concept", "local"];

/// The embedding provider: `--embedder`, the config file's, the dataset's, else hash.
pub(super) fn resolve_embedder(
    args: &RunOptions,
    file: &ConfigFile,
    manifest: &Manifest,
) -> Result<EmbedderChoice, Error> {
    if args.embedder.len() > 1 {
        return Err(Error::Usage(format!(
            "run takes one --embedder (got {}); `hyde-eval compare` compares several",
            args.embedder.join(", ")
        )));
    }
    let embedder_name = args
        .embedder
        .first()
        .cloned()
        .or_else(|| file.embedder.clone())
        .or_else(|| manifest.embedder.clone())
        .unwrap_or_else(|| "hash".into());
    let reads = embedder_option(&embedder_name, file)?;
    if let Some(flag) = given_embedder_options(args)
        .into_iter()
        .find(|flag| Some(*flag) != reads)
    {
        return Err(Error::Usage(format!(
            "{flag} is an option of the {} embedder, and this run embeds with {embedder_name:?}: drop {flag}",
            EMBEDDER_OPTIONS
                .iter()
                .find(|(option, _)| *option == flag)
                .map_or("", |(_, kind)| kind)
        )));
    }
    let local_default = || {
        crate::models::model_dir(
            crate::models::DEFAULT_LOCAL_MODEL,
            super::cache_dir(args.cache_dir.as_deref(), file).as_deref(),
        )
    };
    let embedder = if let Some(table) = file.embedders.get(&embedder_name) {
        match backends::embedder_choice(&file.path, &embedder_name, table)? {
            EmbedderTableChoice::Remote(remote) => EmbedderChoice::Remote(remote),
            EmbedderTableChoice::Local { model_dir } => EmbedderChoice::Local {
                model_dir: match args.model_dir.clone().or(model_dir) {
                    Some(path) => path,
                    None => local_default()?,
                },
            },
            EmbedderTableChoice::Hash { dimension } => EmbedderChoice::Hash {
                dimension: args
                    .dimension
                    .or(dimension)
                    .unwrap_or(crate::embed::DEFAULT_HASH_DIMENSION),
            },
            EmbedderTableChoice::Concept { lexicon } => EmbedderChoice::Concept {
                lexicon: args.lexicon.clone().or(lexicon),
            },
        }
    } else {
        match embedder_name.as_str() {
            "hash" => EmbedderChoice::Hash {
                dimension: args
                    .dimension
                    .or(file.dimension)
                    .unwrap_or(crate::embed::DEFAULT_HASH_DIMENSION),
            },
            "concept" => EmbedderChoice::Concept {
                lexicon: args
                    .lexicon
                    .clone()
                    .or_else(|| file.relative(&file.lexicon)),
            },
            "local" => EmbedderChoice::Local {
                model_dir: match args
                    .model_dir
                    .clone()
                    .or_else(|| file.relative(&file.model_dir))
                {
                    Some(path) => path,
                    None => local_default()?,
                },
            },
            other => {
                let mut known: Vec<&str> = BUILTIN_EMBEDDERS.to_vec();
                known.extend(file.embedders.keys().map(String::as_str));
                let hint = if file.embedders.is_empty() {
                    "; an HTTP provider is an [embedders.NAME] table in the --config file"
                } else {
                    ""
                };
                return Err(Error::Usage(format!(
                    "unknown embedder {other:?}{}; available: {}{hint}",
                    crate::hints::suggestion(other, &known),
                    known.join(", ")
                )));
            }
        }
    };

    Ok(embedder)
}

/// The command-line options only one kind of embedder reads, and that kind.
const EMBEDDER_OPTIONS: [(&str, &str); 3] = [
    ("--dimension", "hash"),
    ("--lexicon", "concept"),
    ("--model-dir", "local"),
];

/// The embedder options of [`EMBEDDER_OPTIONS`] given on the command line.
pub fn given_embedder_options(args: &RunOptions) -> Vec<&'static str> {
    [
        args.dimension.is_some(),
        args.lexicon.is_some(),
        args.model_dir.is_some(),
    ]
    .into_iter()
    .zip(EMBEDDER_OPTIONS)
    .filter_map(|(given, (flag, _))| given.then_some(flag))
    .collect()
}

/// Which option of [`EMBEDDER_OPTIONS`] the embedder `name` (built in, or an
/// `[embedders.NAME]` table of `file`) reads: `None` for an HTTP embedder or an unknown
/// name (refused when the embedder is resolved).
pub fn embedder_option(name: &str, file: &ConfigFile) -> Result<Option<&'static str>, Error> {
    let kind = match file.embedders.get(name) {
        Some(table) => match backends::embedder_choice(&file.path, name, table)? {
            EmbedderTableChoice::Remote(_) => return Ok(None),
            EmbedderTableChoice::Local { .. } => "local",
            EmbedderTableChoice::Hash { .. } => "hash",
            EmbedderTableChoice::Concept { .. } => "concept",
        },
        None => name,
    };
    Ok(EMBEDDER_OPTIONS
        .iter()
        .find(|(_, reader)| *reader == kind)
        .map(|(flag, _)| *flag))
}

/// The hypothesis generator: `--generator`, the config file's, else the recording.
pub(super) fn resolve_generator(
    args: &RunOptions,
    file: &ConfigFile,
) -> Result<GeneratorChoice, Error> {
    let generator_name = args.generator.clone().or_else(|| file.generator.clone());
    let generator = match generator_name.as_deref() {
        None | Some("recorded") => GeneratorChoice::Recorded,
        Some(name) => match file.generators.get(name) {
            Some(table) => backends::generator_choice(&file.path, name, table)?,
            None => {
                let mut known = vec!["recorded"];
                known.extend(file.generators.keys().map(String::as_str));
                return Err(Error::Usage(format!(
                    "unknown generator {name:?}{}; available: {} (a generator is a [generators.NAME] table in the --config file)",
                    crate::hints::suggestion(name, &known),
                    known.join(", ")
                )));
            }
        },
    };

    Ok(generator)
}

/// The `[generators.NAME]` table of `file` as a live chat generator (commands that
/// need an LLM: `dataset draft-queries`, `judge --assist`).
pub fn chat_generator(name: &str, file: &ConfigFile) -> Result<ChatChoice, Error> {
    let options = RunOptions {
        generator: Some(name.to_owned()),
        ..RunOptions::default()
    };
    match resolve_generator(&options, file)? {
        GeneratorChoice::Chat(choice) => Ok(*choice),
        GeneratorChoice::Recorded => Err(Error::Usage(format!(
            "--generator {name:?}: this needs a live generator, a [generators.NAME] table of the --config file"
        ))),
    }
}
