//! Which embedding provider a run uses, as the settings resolve it, and the factory that
//! builds it: deterministic providers as they are, slow and paid ones behind the cache.

use std::path::{Path, PathBuf};

use super::remote::RemoteSettings;
use super::{
    CachedProvider, ConceptProvider, EmbeddingProvider, HashProvider, LocalProvider, RemoteProvider,
};
use crate::error::Error;
use crate::http::{HttpClient, HttpSettings, Secret};

/// Which embedding provider to build.
#[derive(Debug, Clone, PartialEq)]
pub enum EmbedderChoice {
    Hash {
        dimension: usize,
    },
    Concept {
        lexicon: Option<PathBuf>,
    },
    /// A sentence-transformers model directory, run in-process.
    Local {
        model_dir: PathBuf,
    },
    /// An HTTP embedding API (`[embedders.NAME]`).
    Remote(Box<RemoteChoice>),
}

/// An HTTP embedding provider, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteChoice {
    /// The table's name (`[embedders.NAME]`).
    pub name: String,
    pub remote: RemoteSettings,
    pub http: HttpSettings,
}

/// Where and how the built provider may cache.
pub struct CacheAccess<'a> {
    /// The cache root (resolved only when a provider caches).
    pub root: &'a dyn Fn() -> Result<PathBuf, Error>,
    /// Cache misses that would need the network are errors.
    pub offline: bool,
}

/// Builds the provider `choice` names. `dataset_lexicon` is the dataset's own concept
/// lexicon (path and text), for `concept` without a `--lexicon`.
pub fn build(
    choice: &EmbedderChoice,
    dataset_lexicon: Option<&(PathBuf, String)>,
    cache: &CacheAccess<'_>,
) -> Result<Box<dyn EmbeddingProvider>, Error> {
    match choice {
        EmbedderChoice::Hash { dimension } => Ok(Box::new(HashProvider::new(*dimension)?)),
        EmbedderChoice::Concept { lexicon: Some(path) } => {
            let text = crate::input::read_small_text(path)?;
            Ok(Box::new(ConceptProvider::parse(path, &text)?))
        }
        EmbedderChoice::Concept { lexicon: None } => match dataset_lexicon {
            Some((path, text)) => Ok(Box::new(ConceptProvider::parse(path, text)?)),
            None => Err(Error::Usage(
                "the concept embedder needs a lexicon: pass --lexicon FILE or set concept_lexicon in the dataset's dataset.toml".into(),
            )),
        },
        EmbedderChoice::Local { model_dir } => cached(Box::new(LocalProvider::load(model_dir)?), cache),
        EmbedderChoice::Remote(choice) => {
            let table = format!("[embedders.{}]", choice.name);
            let client = match &choice.remote.aws_region {
                Some(region) => {
                    super::sigv4::bedrock_client(&table, &choice.http, region, cache.offline)?
                }
                None => HttpClient::new(
                    choice.http.clone(),
                    Secret::for_backend(&table, &choice.http, cache.offline)?,
                ),
            };
            let provider = RemoteProvider::new(choice.remote.clone(), client);
            cached(Box::new(provider), cache)
        }
    }
}

fn cached(
    provider: Box<dyn EmbeddingProvider>,
    cache: &CacheAccess<'_>,
) -> Result<Box<dyn EmbeddingProvider>, Error> {
    let root = (cache.root)()?;
    Ok(Box::new(CachedProvider::new(
        provider,
        Path::new(&root),
        cache.offline,
    )?))
}
