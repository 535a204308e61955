//! The `local` provider: a sentence-transformers model (BERT family) run in-process on
//! the CPU, reproducing what sentence-transformers computes.
//!
//! Per call: each text is trimmed (and lower-cased when `sentence_bert_config.json` says
//! so), tokenized with the model's `tokenizer.json` and truncated to `max_seq_length`
//! tokens, special tokens included. Texts are ordered by token count (longest first) and
//! cut into batches of about [`TOKENS_PER_BATCH`] tokens; batches run in parallel on the
//! current rayon pool. Each batch goes through the packed BERT forward pass of
//! [`bert`], then the declared pooling and, when `modules.json` has a `Normalize`
//! module, L2 normalization. Batch boundaries depend only on the texts, never on the
//! thread count, so the vectors are the same at any `--threads`.

mod bert;
mod model_dir;
mod pooling;

use std::path::Path;

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use tokenizers::{Encoding, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use self::bert::{BertConfig, BertEncoder};
use super::{EmbeddingProvider, ProviderIdentity, TextKind};
use crate::error::{Error, Problem};

pub use model_dir::{ModelDirectory, Pooling};

/// Tokens per forward pass (texts are packed, not padded). Large enough that each
/// matrix multiply has hundreds of rows, small enough that a batch's activations
/// (about 3 KB per token for MiniLM) stay in the last-level cache's neighbourhood and
/// that a corpus splits into many batches for the two threads.
const TOKENS_PER_BATCH: usize = 1024;

/// A loaded sentence-transformers model.
pub struct LocalProvider {
    directory: ModelDirectory,
    tokenizer: Tokenizer,
    model: BertEncoder,
    /// The model directory's name and a prefix of the weights' sha256, so results record
    /// which weights produced them.
    model_name: String,
}

fn backend(context: &str, error: impl std::fmt::Display) -> Error {
    Error::Backend(format!("local embedding model: {context}: {error}"))
}

impl LocalProvider {
    /// Loads the model in `root` (see [`ModelDirectory::read`] for what it must hold).
    pub fn load(root: &Path) -> Result<LocalProvider, Error> {
        let directory = ModelDirectory::read(root)?;
        let invalid = |path: &Path, error: &dyn std::fmt::Display| {
            Error::problem(Problem::new(
                path,
                None,
                format!("cannot be loaded: {error}"),
            ))
        };
        let mut tokenizer = Tokenizer::from_file(&directory.tokenizer)
            .map_err(|error| invalid(&directory.tokenizer, &error))?;
        // sentence-transformers truncates at max_seq_length, whatever tokenizer.json
        // says, and pads per batch (done here, not by the tokenizer).
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: directory.max_seq_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|error| invalid(&directory.tokenizer, &error))?;
        tokenizer.with_padding(None);

        let config_text = crate::input::read_small_text(&directory.config)?;
        let config: BertConfig = serde_json::from_str(&config_text)
            .map_err(|error| invalid(&directory.config, &error))?;
        let weights = crate::input::read(&directory.weights)?;
        let digest = format!("{:x}", Sha256::digest(&weights));
        let model = BertEncoder::load(&config, &weights, &directory.weights)?;
        if model.hidden_size() != directory.dimension {
            return Err(invalid(
                &directory.config,
                &format!(
                    "hidden_size {} differs from the pooling dimension {}",
                    model.hidden_size(),
                    directory.dimension
                ),
            ));
        }
        let name = root
            .canonicalize()
            .ok()
            .and_then(|path| {
                path.file_name()
                    .map(|name| name.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "model".into());
        Ok(LocalProvider {
            model_name: format!("{name}@sha256:{}", &digest[..16]),
            directory,
            tokenizer,
            model,
        })
    }

    /// Token counts after truncation, special tokens included (what the model sees).
    pub fn token_counts(&self, texts: &[&str]) -> Result<Vec<usize>, Error> {
        Ok(self.encode(texts)?.iter().map(Encoding::len).collect())
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<Encoding>, Error> {
        let prepared: Vec<String> = texts
            .iter()
            .map(|text| {
                let text = text.trim();
                if self.directory.do_lower_case {
                    text.to_lowercase()
                } else {
                    text.to_owned()
                }
            })
            .collect();
        self.tokenizer
            .encode_batch(prepared, true)
            .map_err(|error| backend("tokenizing", error))
    }

    /// One packed forward pass over `batch`, pooled and normalized as the model
    /// declares.
    fn embed_batch(&self, batch: &[&Encoding]) -> Result<Vec<Vec<f32>>, Error> {
        let sequences: Vec<&[u32]> = batch.iter().map(|encoding| encoding.get_ids()).collect();
        let hidden = self
            .model
            .forward(&sequences)
            .map_err(|error| backend("inference", error))?;
        let dimension = self.directory.dimension;
        let mut start = 0;
        Ok(batch
            .iter()
            .map(|encoding| {
                let rows = encoding.len();
                let mask = encoding.get_attention_mask();
                let mut vector = pooling::pool(
                    self.directory.pooling,
                    &hidden[start * dimension..(start + rows) * dimension],
                    mask,
                    dimension,
                );
                start += rows;
                if self.directory.normalize {
                    pooling::l2_normalize(&mut vector);
                }
                vector
            })
            .collect())
    }
}

impl EmbeddingProvider for LocalProvider {
    fn identity(&self) -> ProviderIdentity {
        ProviderIdentity {
            kind: "local".into(),
            model: self.model_name.clone(),
            dimension: self.directory.dimension,
        }
    }

    /// Keyed by the weights' sha256 prefix (in the model name): another model file is
    /// another space. Batched, so a call's vectors are cached and recomputed together.
    fn cache_scope(&self) -> Option<super::CacheScope> {
        Some(super::CacheScope {
            kind: "local".into(),
            endpoint: "in-process".into(),
            model: self.model_name.clone(),
            dimension: None,
            batch_dependent: true,
        })
    }

    /// Queries, documents and hypotheses are embedded alike (no prompts).
    fn input_key(&self, _kind: TextKind) -> String {
        "text".into()
    }

    /// sentence-transformers models without prompts embed queries and documents alike.
    fn embed(&self, texts: &[&str], _kind: TextKind) -> Result<Vec<Vec<f32>>, Error> {
        let encodings = self.encode(texts)?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&index| std::cmp::Reverse(encodings[index].len()));
        let mut batches: Vec<Vec<&Encoding>> = Vec::new();
        let mut batch_tokens = 0;
        for &index in &order {
            let tokens = encodings[index].len();
            match batches.last_mut() {
                Some(batch) if batch_tokens + tokens <= TOKENS_PER_BATCH => {
                    batch.push(&encodings[index]);
                    batch_tokens += tokens;
                }
                _ => {
                    batches.push(vec![&encodings[index]]);
                    batch_tokens = tokens;
                }
            }
        }
        let pooled: Vec<Vec<Vec<f32>>> = batches
            .par_iter()
            .map(|batch| self.embed_batch(batch))
            .collect::<Result<_, _>>()?;
        let mut vectors = vec![Vec::new(); texts.len()];
        for (index, vector) in order.into_iter().zip(pooled.into_iter().flatten()) {
            vectors[index] = vector;
        }
        Ok(vectors)
    }
}
