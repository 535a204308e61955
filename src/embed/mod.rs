//! The embedding-provider seam: anything that turns texts into vectors.
//!
//! Deterministic providers live here (`hash`, `concept`); real backends plug in behind
//! the same trait. [`embed_checked`] is the one place that validates what a provider
//! returns (count, dimension, finiteness), so no stage above it sees a malformed vector.
//! `local` runs a sentence-transformers model in-process.

mod concept;
mod hash;
pub mod local;

use serde::Serialize;

use crate::error::Error;

pub use concept::ConceptProvider;
pub use hash::{HashProvider, DEFAULT_HASH_DIMENSION};
pub use local::LocalProvider;

/// Whether a text is embedded as a search query or as a document. Providers with
/// asymmetric models (query vs passage prefixes, input types) use it; deterministic
/// providers ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TextKind {
    Query,
    Document,
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
    fn identity(&self) -> ProviderIdentity;
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, Error>;
}

/// Embeds `texts` and checks the provider's answer: one vector per text, each of the
/// declared dimension, every value finite.
pub fn embed_checked(
    provider: &dyn EmbeddingProvider,
    texts: &[&str],
    kind: TextKind,
) -> Result<Vec<Vec<f32>>, Error> {
    let identity = provider.identity();
    let vectors = provider.embed(texts, kind)?;
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
