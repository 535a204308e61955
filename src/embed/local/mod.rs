//! The `local` provider: a sentence-transformers model (BERT family) run in-process on
//! the CPU with candle, reproducing what sentence-transformers computes.
//!
//! Per call: each text is trimmed (and lower-cased when `sentence_bert_config.json` says
//! so), tokenized with the model's `tokenizer.json` and truncated to `max_seq_length`
//! tokens, special tokens included. Texts are ordered by token count and cut into
//! batches, so a batch pads to similar lengths; batches run in parallel on the current
//! rayon pool. Each batch goes through candle-transformers' BERT with an attention mask,
//! then the declared pooling and, when `modules.json` has a `Normalize` module, L2
//! normalization. Batch boundaries depend only on the texts, never on the thread count,
//! so the vectors are the same at any `--threads`.

mod model_dir;
mod pooling;

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use tokenizers::{Encoding, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::{EmbeddingProvider, ProviderIdentity, TextKind};
use crate::error::{Error, Problem};

pub use model_dir::{ModelDirectory, Pooling};

/// Texts per forward pass. Small batches keep candle's intermediate tensors (the
/// attention scores are batch × 12 × length² floats) out of fresh pages: at 256 tokens,
/// 8 texts used 25% less CPU time than 32 (SciFact abstracts, this 2-core machine).
const BATCH_SIZE: usize = 8;

/// A loaded sentence-transformers model.
pub struct LocalProvider {
    directory: ModelDirectory,
    tokenizer: Tokenizer,
    model: BertModel,
    pad_id: u32,
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

        let config_text =
            std::fs::read_to_string(&directory.config).map_err(|source| Error::Read {
                path: directory.config.clone(),
                source,
            })?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|error| invalid(&directory.config, &error))?;
        let weights = std::fs::read(&directory.weights).map_err(|source| Error::Read {
            path: directory.weights.clone(),
            source,
        })?;
        let digest = format!("{:x}", Sha256::digest(&weights));
        let variables = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|error| invalid(&directory.weights, &error))?;
        let model = BertModel::load(variables, &config)
            .map_err(|error| invalid(&directory.weights, &error))?;
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
            pad_id: config.pad_token_id as u32,
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

    /// One forward pass over `batch` (right-padded to its longest encoding), pooled and
    /// normalized as the model declares.
    fn embed_batch(&self, batch: &[&Encoding]) -> Result<Vec<Vec<f32>>, Error> {
        let length = batch
            .iter()
            .map(|encoding| encoding.len())
            .max()
            .unwrap_or(0);
        let mut ids = vec![self.pad_id; batch.len() * length];
        let mut mask = vec![0u32; batch.len() * length];
        for (row, encoding) in batch.iter().enumerate() {
            let start = row * length;
            ids[start..start + encoding.len()].copy_from_slice(encoding.get_ids());
            mask[start..start + encoding.len()].copy_from_slice(encoding.get_attention_mask());
        }
        let shape = (batch.len(), length);
        let forward = || -> candle_core::Result<Vec<f32>> {
            let input_ids = Tensor::from_slice(&ids, shape, &Device::Cpu)?;
            let attention_mask = Tensor::from_slice(&mask, shape, &Device::Cpu)?;
            let token_type_ids = input_ids.zeros_like()?;
            self.model
                .forward(&input_ids, &token_type_ids, Some(&attention_mask))?
                .flatten_all()?
                .to_vec1::<f32>()
        };
        let hidden = forward().map_err(|error| backend("inference", error))?;
        let dimension = self.directory.dimension;
        let row_size = length * dimension;
        Ok((0..batch.len())
            .map(|row| {
                let mut vector = pooling::pool(
                    self.directory.pooling,
                    &hidden[row * row_size..(row + 1) * row_size],
                    &mask[row * length..(row + 1) * length],
                    dimension,
                );
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

    /// sentence-transformers models without prompts embed queries and documents alike.
    fn embed(&self, texts: &[&str], _kind: TextKind) -> Result<Vec<Vec<f32>>, Error> {
        let encodings = self.encode(texts)?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&index| std::cmp::Reverse(encodings[index].len()));
        let batches: Vec<Vec<&Encoding>> = order
            .chunks(BATCH_SIZE)
            .map(|chunk| chunk.iter().map(|&index| &encodings[index]).collect())
            .collect();
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
