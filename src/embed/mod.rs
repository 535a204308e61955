//! The embedding-provider seam: anything that turns texts into vectors.
//!
//! Deterministic providers live here (`hash`, `concept`); real backends plug in behind
//! the same trait. [`embed_checked`] is the one place that validates what a provider
//! returns (count, dimension, finiteness), so no stage above it sees a malformed vector.
//! `local` runs a sentence-transformers model in-process; `remote` speaks the OpenAI,
//! Voyage, Cohere and Amazon Bedrock embedding APIs (`bedrock`, signed by `sigv4` with
//! the credentials of `aws_credentials`); `cached` puts the on-disk cache in front of
//! either.

pub mod aws_credentials;
pub mod bedrock;
pub mod cached;
pub mod choice;
mod concept;
mod hash;
pub mod local;
pub mod remote;
pub mod segment;
pub mod sigv4;

use serde::Serialize;

use crate::error::Error;
use crate::index::FlatIndex;

pub use cached::{CacheScope, CachedProvider};
pub use concept::ConceptProvider;
pub use hash::{HashProvider, DEFAULT_HASH_DIMENSION, MAX_DIMENSION};
pub use local::LocalProvider;
pub use remote::RemoteProvider;

/// Whether a text is embedded as a search query, a document or a hypothetical answer.
/// Providers with asymmetric models (query vs passage prefixes, input types) use it,
/// presenting hypotheses as their configuration says (as documents by default: HyDE text
/// is an answer); deterministic providers ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TextKind {
    Query,
    Document,
    Hypothesis,
}

/// What a provider has spent so far (cumulative; the pipeline takes differences).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct EmbeddingUsage {
    /// HTTP requests sent, retries included.
    pub requests: u64,
    pub retries: u64,
    /// Tokens the API reported.
    pub tokens: u64,
    /// Texts the provider embedded (cache misses).
    pub texts_embedded: u64,
    pub texts_from_cache: u64,
    /// Cache entries that failed their checks and were replaced.
    pub corrupt_entries_ignored: u64,
}

impl std::ops::Sub for EmbeddingUsage {
    type Output = EmbeddingUsage;

    fn sub(self, before: EmbeddingUsage) -> EmbeddingUsage {
        EmbeddingUsage {
            requests: self.requests - before.requests,
            retries: self.retries - before.retries,
            tokens: self.tokens - before.tokens,
            texts_embedded: self.texts_embedded - before.texts_embedded,
            texts_from_cache: self.texts_from_cache - before.texts_from_cache,
            corrupt_entries_ignored: self.corrupt_entries_ignored - before.corrupt_entries_ignored,
        }
    }
}

impl std::ops::AddAssign for EmbeddingUsage {
    fn add_assign(&mut self, other: EmbeddingUsage) {
        self.requests += other.requests;
        self.retries += other.retries;
        self.tokens += other.tokens;
        self.texts_embedded += other.texts_embedded;
        self.texts_from_cache += other.texts_from_cache;
        self.corrupt_entries_ignored += other.corrupt_entries_ignored;
    }
}

/// What produced a set of vectors; recorded in results so runs are comparable only
/// within one embedding space.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ProviderIdentity {
    pub kind: String,
    pub model: String,
    pub dimension: usize,
}

/// Turns texts into vectors of a fixed dimension.
pub trait EmbeddingProvider: Send + Sync {
    /// Kind, model and dimension (0 while an HTTP provider has not yet learned it).
    fn identity(&self) -> ProviderIdentity;
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, Error>;
    /// The embedding space for the cache; `None` for providers not worth caching.
    fn cache_scope(&self) -> Option<CacheScope> {
        None
    }
    /// How texts of `kind` are presented (input type and prefix), for cache keys.
    fn input_key(&self, kind: TextKind) -> String {
        format!("{kind:?}")
    }
    /// Takes the dimension of vectors found in the cache before any request.
    fn adopt_dimension(&self, _dimension: usize) {}
    /// Requests, tokens and cache use so far; `None` for providers that spend nothing.
    fn usage(&self) -> Option<EmbeddingUsage> {
        None
    }
    /// The index of a corpus (its texts embedded as documents, in order), made by
    /// `build`. Providers that keep indexes between runs return the one they kept
    /// instead, or keep the one `build` made.
    fn corpus_index(
        &self,
        _texts: &dyn CorpusTexts,
        build: &mut dyn FnMut() -> Result<FlatIndex, Error>,
    ) -> Result<FlatIndex, Error> {
        build()
    }
}

/// A corpus' texts in corpus order, read a chunk at a time: they may wait on disk
/// (`pipeline::fact_spill`), so only a chunk of them need be in memory.
pub trait CorpusTexts {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Calls `visit` with consecutive chunks of at most `size` texts, in order.
    fn for_each_chunk(
        &self,
        size: usize,
        visit: &mut dyn FnMut(&[&str]) -> Result<(), Error>,
    ) -> Result<(), Error>;
}

impl CorpusTexts for Vec<&str> {
    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn for_each_chunk(
        &self,
        size: usize,
        visit: &mut dyn FnMut(&[&str]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.chunks(size).try_for_each(visit)
    }
}

/// Embeds `texts` and checks the provider's answer: one vector per text, each of the
/// declared dimension, every value finite.
pub fn embed_checked(
    provider: &dyn EmbeddingProvider,
    texts: &[&str],
    kind: TextKind,
) -> Result<Vec<Vec<f32>>, Error> {
    let vectors = provider.embed(texts, kind)?;
    // Read after the call: an HTTP provider learns its dimension from its first answer.
    let identity = provider.identity();
    if vectors.len() != texts.len() {
        return Err(Error::Backend(format!(
            "embedding provider {} returned {} vectors for {} texts",
            identity.kind,
            vectors.len(),
            texts.len()
        )));
    }
    for (position, vector) in vectors.iter().enumerate() {
        if vector.len() != identity.dimension {
            return Err(Error::Backend(format!(
                "embedding provider {} returned a {}-dimensional vector for text {} (expected {})",
                identity.kind,
                vector.len(),
                position + 1,
                identity.dimension
            )));
        }
        if vector.iter().any(|value| !value.is_finite()) {
            return Err(Error::Backend(format!(
                "embedding provider {} returned NaN or infinite values for text {}",
                identity.kind,
                position + 1
            )));
        }
    }
    Ok(vectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A provider that answers with fixed vectors, standing in for a misbehaving backend.
    struct Scripted {
        dimension: usize,
        answer: Vec<Vec<f32>>,
    }

    impl EmbeddingProvider for Scripted {
        fn identity(&self) -> ProviderIdentity {
            ProviderIdentity {
                kind: "scripted".into(),
                model: "test".into(),
                dimension: self.dimension,
            }
        }

        fn embed(&self, _texts: &[&str], _kind: TextKind) -> Result<Vec<Vec<f32>>, Error> {
            Ok(self.answer.clone())
        }
    }

    fn check(answer: Vec<Vec<f32>>) -> Result<Vec<Vec<f32>>, String> {
        let provider = Scripted {
            dimension: 3,
            answer,
        };
        embed_checked(&provider, &["a", "b"], TextKind::Document).map_err(|error| {
            assert_eq!(error.exit_code(), crate::error::exit_code::BACKEND);
            error.to_string()
        })
    }

    #[test]
    fn nan_and_infinite_values_are_backend_errors_naming_the_text() {
        let error = check(vec![vec![0.1, 0.2, 0.3], vec![0.1, f32::NAN, 0.3]]).unwrap_err();
        assert!(
            error.contains("NaN or infinite values for text 2"),
            "{error}"
        );
        let error = check(vec![vec![f32::INFINITY, 0.2, 0.3], vec![0.1; 3]]).unwrap_err();
        assert!(
            error.contains("NaN or infinite values for text 1"),
            "{error}"
        );
    }

    #[test]
    fn a_wrong_dimension_or_count_is_a_backend_error() {
        let error = check(vec![vec![0.1, 0.2, 0.3], vec![0.1, 0.2]]).unwrap_err();
        assert!(
            error.contains("a 2-dimensional vector for text 2 (expected 3)"),
            "{error}"
        );
        let error = check(vec![vec![0.1, 0.2, 0.3]]).unwrap_err();
        assert!(error.contains("returned 1 vectors for 2 texts"), "{error}");
    }

    #[test]
    fn zero_vectors_pass_and_score_zero_against_everything() {
        let vectors = check(vec![vec![0.0; 3], vec![1.0, 0.0, 0.0]]).unwrap();
        let index = crate::index::FlatIndex::build(3, &vectors);
        assert_eq!(index.cosine_all(&[1.0, 0.0, 0.0]), vec![0.0, 1.0]);
        assert_eq!(index.cosine_all(&[0.0, 0.0, 0.0]), vec![0.0, 0.0]);
    }
}
