//! The `hash` provider: deterministic feature hashing, identical on every platform.
//!
//! Algorithm (version 1, recorded as the model name `hash-v1`):
//! 1. Tokens: chatcli's tokenizer (lower-case, runs of Unicode letters/digits), without
//!    chatcli's stop words.
//! 2. Features per token `t`: the word feature `w:t` with weight 1.0, and every
//!    character trigram of `<t>` (angle brackets mark the word's edges) as `c:xyz` with
//!    weight 0.5. Trigrams make morphological variants ("compress", "compression")
//!    similar.
//! 3. Each feature's UTF-8 bytes are hashed with XXH3-64 (seed 0); bucket = hash mod
//!    dimension; the top bit of the hash gives the sign (+/-), which keeps collisions
//!    unbiased.
//! 4. The vector is L2-normalized; a text with no tokens gives the zero vector.

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use super::{EmbeddingProvider, ProviderIdentity, TextKind};
use crate::error::Error;
use crate::text::Analyzer;

/// Default dimension, the size of common small sentence-embedding models.
pub const DEFAULT_HASH_DIMENSION: usize = 384;

/// The largest embedding dimension hyde-eval accepts (the widest models are 4,096 to
/// 12,288 wide; a vector of this size is 256 KiB).
pub const MAX_DIMENSION: usize = 65_536;

const WORD_WEIGHT: f32 = 1.0;
const TRIGRAM_WEIGHT: f32 = 0.5;
/// Texts embedded by one task of the thread pool at least: a text takes microseconds.
const EMBED_MIN_TEXTS_PER_TASK: usize = 32;

/// Feature-hashing embedder.
pub struct HashProvider {
    dimension: usize,
}

impl HashProvider {
    pub fn new(dimension: usize) -> Result<HashProvider, Error> {
        if dimension == 0 || dimension > MAX_DIMENSION {
            return Err(Error::Usage(format!(
                "the hash provider's dimension must be between 1 and {MAX_DIMENSION}, got {dimension}"
            )));
        }
        Ok(HashProvider { dimension })
    }

    fn add_feature(&self, vector: &mut [f32], feature: &[u8], weight: f32) {
        let hash = xxh3_64(feature);
        let bucket = (hash % self.dimension as u64) as usize;
        let sign = if hash >> 63 == 1 { -1.0 } else { 1.0 };
        vector[bucket] += sign * weight;
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0f32; self.dimension];
        // Reused for every feature: "w:" or "c:" then the word or trigram, and the word
        // between angle brackets with the byte offset of each of its characters.
        let mut feature: Vec<u8> = Vec::new();
        let mut bounded = String::new();
        let mut char_starts: Vec<usize> = Vec::new();
        // chatcli's analyzer splits as `word_tokens` does and drops the same stop words.
        Analyzer::Chatcli.for_each_term(text, |token| {
            feature.clear();
            feature.extend_from_slice(b"w:");
            feature.extend_from_slice(token.as_bytes());
            self.add_feature(&mut vector, &feature, WORD_WEIGHT);
            bounded.clear();
            bounded.push('<');
            bounded.push_str(token);
            bounded.push('>');
            char_starts.clear();
            char_starts.extend(bounded.char_indices().map(|(start, _)| start));
            char_starts.push(bounded.len());
            for window in char_starts.windows(4) {
                feature.clear();
                feature.extend_from_slice(b"c:");
                feature.extend_from_slice(&bounded.as_bytes()[window[0]..window[3]]);
                self.add_feature(&mut vector, &feature, TRIGRAM_WEIGHT);
            }
        });
        let norm = vector
            .iter()
            .map(|&value| f64::from(value) * f64::from(value))
            .sum::<f64>()
            .sqrt();
        if norm > 0.0 {
            for value in &mut vector {
                *value = (f64::from(*value) / norm) as f32;
            }
        }
        vector
    }
}

impl EmbeddingProvider for HashProvider {
    fn identity(&self) -> ProviderIdentity {
        ProviderIdentity {
            kind: "hash".into(),
            model: "hash-v1".into(),
            dimension: self.dimension,
        }
    }

    fn embed(&self, texts: &[&str], _kind: TextKind) -> Result<Vec<Vec<f32>>, Error> {
        // Each text is embedded on its own, so the vectors are the same on any number of
        // threads.
        Ok(texts
            .par_iter()
            .with_min_len(EMBED_MIN_TEXTS_PER_TASK)
            .map(|text| self.embed_one(text))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn known_bucket_layout_is_stable() {
        // "go" alone: features w:go, c:<go, c:go>; each lands in hash mod dim with sign
        // from the top bit. Recomputing the layout by hand from XXH3 must give the vector.
        let provider = HashProvider::new(16).unwrap();
        let vector = provider.embed_one("Go");
        let mut expected = [0.0f32; 16];
        for (feature, weight) in [("w:go", 1.0f32), ("c:<go", 0.5), ("c:go>", 0.5)] {
            let hash = xxh3_64(feature.as_bytes());
            expected[(hash % 16) as usize] += if hash >> 63 == 1 { -weight } else { weight };
        }
        let norm = expected.iter().map(|x| x * x).sum::<f32>().sqrt();
        for (got, want) in vector.iter().zip(expected) {
            assert!((got - want / norm).abs() < 1e-6);
        }
        // XXH3-64's published value for empty input: pins the hash function itself.
        assert_eq!(format!("{:016x}", xxh3_64(b"")), "2d06800538d394c2");
    }

    /// The module documentation's algorithm, step by step, with a string per token and
    /// a character vector per word.
    fn documented_embedding(text: &str, dimension: usize) -> Vec<f32> {
        let mut vector = vec![0.0f32; dimension];
        let mut add = |feature: String, weight: f32| {
            let hash = xxh3_64(feature.as_bytes());
            let sign = if hash >> 63 == 1 { -1.0 } else { 1.0 };
            vector[(hash % dimension as u64) as usize] += sign * weight;
        };
        for token in crate::text::word_tokens(text)
            .into_iter()
            .filter(|token| !crate::text::is_stop_word(token))
        {
            add(format!("w:{token}"), WORD_WEIGHT);
            let bounded: Vec<char> = format!("<{token}>").chars().collect();
            for trigram in bounded.windows(3) {
                add(
                    format!("c:{}", trigram.iter().collect::<String>()),
                    TRIGRAM_WEIGHT,
                );
            }
        }
        let norm = vector
            .iter()
            .map(|&value| f64::from(value) * f64::from(value))
            .sum::<f64>()
            .sqrt();
        if norm > 0.0 {
            for value in &mut vector {
                *value = (f64::from(*value) / norm) as f32;
            }
        }
        vector
    }

    #[test]
    fn vectors_follow_the_documented_algorithm_bit_for_bit() {
        let texts = [
            "Compress the LOGS before the nightly backup",
            "Configuração é_ótima! Ölçü: 東京タワー, naïve café v2",
            "a I x",
            "",
            "the of and",
            "Straße STRASSE ǅemal ΣΊΣΥΦΟΣ",
        ];
        // Enough texts for the thread pool to split them.
        let many: Vec<&str> = texts.iter().copied().cycle().take(500).collect();
        for dimension in [16, DEFAULT_HASH_DIMENSION] {
            let provider = HashProvider::new(dimension).unwrap();
            let vectors = provider.embed(&many, TextKind::Document).unwrap();
            for (text, vector) in many.iter().zip(&vectors) {
                let expected = documented_embedding(text, dimension);
                let bits = |vector: &[f32]| vector.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(vector), bits(&expected), "{text:?} at {dimension}");
            }
        }
    }

    #[test]
    fn normalized_deterministic_and_morphology_aware() {
        let provider = HashProvider::new(DEFAULT_HASH_DIMENSION).unwrap();
        let a = provider.embed_one("compress the logs");
        let b = provider.embed_one("compression of logs");
        let c = provider.embed_one("kubernetes rollout");
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        assert_eq!(a, provider.embed_one("compress the logs"));
        assert!(dot(&a, &b) > 0.4, "{}", dot(&a, &b));
        assert!(dot(&a, &c).abs() < 0.2);
        assert!(provider
            .embed_one("the of and")
            .iter()
            .all(|&value| value == 0.0));
    }
}
