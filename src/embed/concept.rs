//! The `concept` provider: a lexicon maps words to concept axes, equivalent to chatcli's
//! test provider (chatcli's A/B test, `ranking_test.go`). Tokens are runs of ASCII letters, lower-cased;
//! each token found in the lexicon adds 1 on its axis; other tokens are ignored.
//!
//! Lexicon file (TOML), one table per axis, in axis order:
//! ```toml
//! [[axis]]
//! name = "auth"
//! words = ["oauth", "login", "token"]
//! ```

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::{EmbeddingProvider, ProviderIdentity, TextKind};
use crate::error::{Error, Problem};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LexiconFile {
    axis: Vec<AxisRecord>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AxisRecord {
    name: String,
    words: Vec<String>,
}

/// Concept-lexicon embedder.
pub struct ConceptProvider {
    axes: Vec<String>,
    axis_of_word: HashMap<String, usize>,
    /// XXH3-64 of the axes and their words, in order: names the embedding space.
    fingerprint: u64,
}

impl ConceptProvider {
    /// Parses a lexicon; `path` is only used in error messages.
    pub fn parse(path: &Path, text: &str) -> Result<ConceptProvider, Error> {
        let problem = |line: Option<usize>, message: String| {
            Error::problem(Problem::new(path, line, message))
        };
        let file: LexiconFile = toml::from_str(text).map_err(|error| {
            let line = error
                .span()
                .map(|span| text[..span.start].matches('\n').count() + 1);
            problem(line, error.message().to_owned())
        })?;
        if file.axis.is_empty() {
            return Err(problem(None, "the lexicon defines no [[axis]]".into()));
        }
        let mut axis_of_word = HashMap::new();
        let mut axes = Vec::new();
        let mut canonical = String::new();
        for (axis_index, axis) in file.axis.into_iter().enumerate() {
            for word in axis.words {
                let normalized = word.to_ascii_lowercase();
                if normalized.is_empty() || !normalized.chars().all(|c| c.is_ascii_alphabetic()) {
                    return Err(problem(None, format!(
                        "axis {:?}: word {word:?} is not a run of ASCII letters, so no token can match it",
                        axis.name
                    )));
                }
                if let Some(&previous) = axis_of_word.get(&normalized) {
                    let previous_name: &String = &axes[previous];
                    return Err(problem(
                        None,
                        format!(
                            "word {normalized:?} is on two axes: {previous_name:?} and {:?}",
                            axis.name
                        ),
                    ));
                }
                canonical.push_str(&normalized);
                canonical.push(' ');
                axis_of_word.insert(normalized, axis_index);
            }
            canonical.push_str(&format!("| {}\n", axis.name));
            axes.push(axis.name);
        }
        let fingerprint = xxhash_rust::xxh3::xxh3_64(canonical.as_bytes());
        Ok(ConceptProvider {
            axes,
            axis_of_word,
            fingerprint,
        })
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0f32; self.axes.len()];
        for token in text
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|token| !token.is_empty())
        {
            if let Some(&axis) = self.axis_of_word.get(&token.to_ascii_lowercase()) {
                vector[axis] += 1.0;
            }
        }
        vector
    }
}

impl EmbeddingProvider for ConceptProvider {
    fn identity(&self) -> ProviderIdentity {
        ProviderIdentity {
            kind: "concept".into(),
            model: format!("concept-lexicon-{:016x}", self.fingerprint),
            dimension: self.axes.len(),
        }
    }

    fn embed(&self, texts: &[&str], _kind: TextKind) -> Result<Vec<Vec<f32>>, Error> {
        Ok(texts.iter().map(|text| self.embed_one(text)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEXICON: &str = "[[axis]]\nname = \"auth\"\nwords = [\"oauth\", \"login\"]\n\n[[axis]]\nname = \"cache\"\nwords = [\"redis\", \"ttl\"]\n";

    #[test]
    fn counts_ascii_letter_tokens_per_axis() {
        let provider = ConceptProvider::parse(Path::new("c.toml"), LEXICON).unwrap();
        let vectors = provider
            .embed(&["OAuth2 login; redis-ttl TTL café"], TextKind::Query)
            .unwrap();
        // "OAuth2" -> "oauth" (digits split), login, redis, ttl, ttl; "caf" unknown.
        assert_eq!(vectors[0], vec![2.0, 3.0]);
        assert_eq!(provider.identity().dimension, 2);
    }

    #[test]
    fn rejects_a_word_on_two_axes_and_reports_toml_lines() {
        let doubled = format!("{LEXICON}\n[[axis]]\nname = \"x\"\nwords = [\"Redis\"]\n");
        let error = ConceptProvider::parse(Path::new("c.toml"), &doubled)
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("\"redis\" is on two axes: \"cache\" and \"x\""),
            "{error}"
        );
        let error =
            ConceptProvider::parse(Path::new("c.toml"), "[[axis]]\nname = \"a\"\nwordz = []\n")
                .err()
                .unwrap()
                .to_string();
        assert!(error.contains("c.toml:3: unknown field `wordz`"), "{error}");
    }
}
