//! Reads and validates a sentence-transformers model directory: which modules the model
//! chains (`modules.json`), how the transformer truncates (`sentence_bert_config.json`),
//! how token vectors are pooled (`1_Pooling/config.json`) and whether the sentence
//! vector is L2-normalized (a `Normalize` module). Reading only; no inference here.
//!
//! Supported chains are exactly what the local provider can reproduce:
//! `Transformer` (BERT family, `model.safetensors`) → `Pooling` (one mode) → optional
//! `Normalize`. Anything else (Dense layers, several pooling modes, other architectures)
//! is an error naming the file, never silently approximated.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Problem};
use crate::models::DEFAULT_LOCAL_MODEL;

const TRANSFORMER: &str = "sentence_transformers.models.Transformer";
const POOLING: &str = "sentence_transformers.models.Pooling";
const NORMALIZE: &str = "sentence_transformers.models.Normalize";

/// How token vectors become one sentence vector (sentence-transformers' `Pooling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The first token's (`[CLS]`) vector.
    Cls,
    /// The mean of the unmasked token vectors.
    Mean,
    /// The element-wise maximum over the unmasked token vectors.
    Max,
    /// The sum of the unmasked token vectors divided by the square root of their count.
    MeanSqrtLen,
}

/// Everything the provider needs to know about a model directory, validated.
#[derive(Debug, Clone)]
pub struct ModelDirectory {
    pub root: PathBuf,
    pub config: PathBuf,
    pub tokenizer: PathBuf,
    pub weights: PathBuf,
    /// Maximum tokens per text, special tokens included (longer texts are truncated).
    pub max_seq_length: usize,
    /// Lower-case texts before tokenizing (sentence-transformers' own flag; the
    /// tokenizer may lower-case as well).
    pub do_lower_case: bool,
    pub pooling: Pooling,
    pub normalize: bool,
    /// The sentence vector's dimension (the pooled token dimension).
    pub dimension: usize,
}

#[derive(Deserialize)]
struct ModuleEntry {
    path: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: usize,
    #[serde(default)]
    do_lower_case: bool,
}

/// The few fields of the transformer's `config.json` checked here; the BERT loader
/// parses the whole file.
#[derive(Deserialize)]
struct TransformerConfig {
    model_type: Option<String>,
    hidden_size: usize,
    max_position_embeddings: usize,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, Error> {
    let text = crate::input::read_small_text(path)?;
    serde_json::from_str(&text).map_err(|error| {
        Error::problem(Problem::new(
            path,
            Some(error.line()),
            format!("not a valid file of this kind: {error}"),
        ))
    })
}

fn problem(path: &Path, message: impl Into<String>) -> Error {
    Error::problem(Problem::new(path, None, message))
}

const LAYOUT_HINT: &str = "a sentence-transformers directory holds config.json, tokenizer.json, model.safetensors, modules.json, sentence_bert_config.json and 1_Pooling/config.json";

fn missing(path: &Path, hint: &str) -> Error {
    Error::problem(Problem::new(path, None, "missing from the model directory").with_hint(hint))
}

fn required_file(path: PathBuf) -> Result<PathBuf, Error> {
    if path.is_file() {
        Ok(path)
    } else {
        Err(missing(&path, LAYOUT_HINT))
    }
}

impl ModelDirectory {
    /// Reads the directory at `root`. A directory without `modules.json` is reported as a
    /// missing model, with the command that fetches the default one.
    pub fn read(root: &Path) -> Result<ModelDirectory, Error> {
        let modules_path = root.join("modules.json");
        if !modules_path.is_file() {
            return Err(Error::problem(
                Problem::new(root, None, "no sentence-transformers model here (modules.json not found)")
                    .with_hint(format!(
                        "fetch the default model with `hyde-eval models fetch {DEFAULT_LOCAL_MODEL}` (with the run's --cache-dir DIR, if it has one), or pass --model-dir DIR with a sentence-transformers model directory"
                    )),
            ));
        }
        let modules: Vec<ModuleEntry> = read_json(&modules_path)?;
        let kinds: Vec<&str> = modules.iter().map(|module| module.kind.as_str()).collect();
        let normalize = match kinds.as_slice() {
            [TRANSFORMER, POOLING] => false,
            [TRANSFORMER, POOLING, NORMALIZE] => true,
            _ => {
                return Err(problem(
                    &modules_path,
                    format!(
                        "unsupported module chain [{}]; the local provider runs Transformer, Pooling and an optional Normalize",
                        kinds.join(", ")
                    ),
                ))
            }
        };
        let transformer = root.join(&modules[0].path);
        let pooling_dir = root.join(&modules[1].path);

        let config = required_file(transformer.join("config.json"))?;
        let tokenizer = required_file(transformer.join("tokenizer.json"))?;
        let weights = transformer.join("model.safetensors");
        if !weights.is_file() {
            return Err(missing(
                &weights,
                "the local provider reads safetensors weights only; convert pytorch_model.bin with the safetensors package",
            ));
        }
        let sentence_bert_path = required_file(transformer.join("sentence_bert_config.json"))?;
        let pooling_path = required_file(pooling_dir.join("config.json"))?;

        let transformer_config: TransformerConfig = read_json(&config)?;
        if let Some(model_type) = &transformer_config.model_type {
            if model_type != "bert" {
                return Err(problem(
                    &config,
                    format!("model_type {model_type:?} is not supported; the local provider runs BERT-family models (model_type \"bert\")"),
                ));
            }
        }
        let sentence_bert: SentenceBertConfig = read_json(&sentence_bert_path)?;
        if sentence_bert.max_seq_length == 0
            || sentence_bert.max_seq_length > transformer_config.max_position_embeddings
        {
            return Err(problem(
                &sentence_bert_path,
                format!(
                    "max_seq_length {} must be between 1 and the model's max_position_embeddings ({})",
                    sentence_bert.max_seq_length, transformer_config.max_position_embeddings
                ),
            ));
        }
        let pooling_config: serde_json::Map<String, Value> = read_json(&pooling_path)?;
        let pooling = pooling_mode(&pooling_path, &pooling_config)?;
        let dimension = match pooling_config.get("word_embedding_dimension") {
            Some(Value::Number(number)) => number.as_u64().map(|value| value as usize),
            _ => None,
        };
        if dimension != Some(transformer_config.hidden_size) {
            return Err(problem(
                &pooling_path,
                format!(
                    "word_embedding_dimension must equal the transformer's hidden_size ({})",
                    transformer_config.hidden_size
                ),
            ));
        }
        Ok(ModelDirectory {
            root: root.to_path_buf(),
            config,
            tokenizer,
            weights,
            max_seq_length: sentence_bert.max_seq_length,
            do_lower_case: sentence_bert.do_lower_case,
            pooling,
            normalize,
            dimension: transformer_config.hidden_size,
        })
    }
}

/// The one pooling mode a `1_Pooling/config.json` switches on.
fn pooling_mode(path: &Path, config: &serde_json::Map<String, Value>) -> Result<Pooling, Error> {
    let modes: Vec<&str> = config
        .iter()
        .filter(|(key, value)| key.starts_with("pooling_mode_") && value.as_bool() == Some(true))
        .map(|(key, _)| key.as_str())
        .collect();
    match modes.as_slice() {
        ["pooling_mode_cls_token"] => Ok(Pooling::Cls),
        ["pooling_mode_mean_tokens"] => Ok(Pooling::Mean),
        ["pooling_mode_max_tokens"] => Ok(Pooling::Max),
        ["pooling_mode_mean_sqrt_len_tokens"] => Ok(Pooling::MeanSqrtLen),
        _ => Err(problem(
            path,
            format!(
                "unsupported pooling [{}]; the local provider supports exactly one of cls_token, mean_tokens, max_tokens, mean_sqrt_len_tokens",
                modes.join(", ")
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a minimal, valid model directory (weights are an empty placeholder: this
    /// module never reads them).
    fn write_model(root: &Path, modules: &str, pooling: &str) {
        std::fs::create_dir_all(root.join("1_Pooling")).unwrap();
        std::fs::write(root.join("modules.json"), modules).unwrap();
        std::fs::write(
            root.join("config.json"),
            r#"{"model_type": "bert", "hidden_size": 8, "max_position_embeddings": 512}"#,
        )
        .unwrap();
        std::fs::write(root.join("tokenizer.json"), "{}").unwrap();
        std::fs::write(root.join("model.safetensors"), "").unwrap();
        std::fs::write(
            root.join("sentence_bert_config.json"),
            r#"{"max_seq_length": 256, "do_lower_case": false}"#,
        )
        .unwrap();
        std::fs::write(root.join("1_Pooling/config.json"), pooling).unwrap();
    }

    const THREE_MODULES: &str = r#"[
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]"#;
    const MEAN_POOLING: &str = r#"{"word_embedding_dimension": 8, "pooling_mode_cls_token": false,
        "pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false}"#;

    #[test]
    fn reads_a_minilm_shaped_directory() {
        let directory = tempfile::tempdir().unwrap();
        write_model(directory.path(), THREE_MODULES, MEAN_POOLING);
        let model = ModelDirectory::read(directory.path()).unwrap();
        assert_eq!(model.max_seq_length, 256);
        assert_eq!(model.pooling, Pooling::Mean);
        assert!(model.normalize);
        assert!(!model.do_lower_case);
        assert_eq!(model.dimension, 8);
    }

    #[test]
    fn without_normalize_module_vectors_stay_unnormalized() {
        let directory = tempfile::tempdir().unwrap();
        let two = r#"[{"path": "", "type": "sentence_transformers.models.Transformer"},
                      {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]"#;
        let cls = r#"{"word_embedding_dimension": 8, "pooling_mode_cls_token": true}"#;
        write_model(directory.path(), two, cls);
        let model = ModelDirectory::read(directory.path()).unwrap();
        assert!(!model.normalize);
        assert_eq!(model.pooling, Pooling::Cls);
    }

    #[test]
    fn missing_model_names_the_fetch_command() {
        let directory = tempfile::tempdir().unwrap();
        let error = ModelDirectory::read(&directory.path().join("absent")).unwrap_err();
        assert_eq!(error.exit_code(), crate::error::exit_code::INPUT);
        let message = error.to_string();
        assert!(message.contains("modules.json not found"), "{message}");
        assert!(
            message.contains("hyde-eval models fetch all-minilm-l6-v2"),
            "{message}"
        );
    }

    #[test]
    fn unsupported_models_are_named_with_their_file() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path();
        let dense = THREE_MODULES.replace(
            "sentence_transformers.models.Normalize",
            "sentence_transformers.models.Dense",
        );
        write_model(root, &dense, MEAN_POOLING);
        let message = ModelDirectory::read(root).unwrap_err().to_string();
        assert!(
            message.contains("modules.json: unsupported module chain"),
            "{message}"
        );

        write_model(
            root,
            THREE_MODULES,
            r#"{"word_embedding_dimension": 8, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true}"#,
        );
        let message = ModelDirectory::read(root).unwrap_err().to_string();
        assert!(
            message
                .contains("unsupported pooling [pooling_mode_cls_token, pooling_mode_mean_tokens]"),
            "{message}"
        );

        write_model(root, THREE_MODULES, MEAN_POOLING);
        std::fs::write(
            root.join("config.json"),
            r#"{"model_type": "xlm-roberta", "hidden_size": 8, "max_position_embeddings": 512}"#,
        )
        .unwrap();
        let message = ModelDirectory::read(root).unwrap_err().to_string();
        assert!(
            message.contains("config.json: model_type \"xlm-roberta\" is not supported"),
            "{message}"
        );

        write_model(root, THREE_MODULES, MEAN_POOLING);
        std::fs::write(
            root.join("sentence_bert_config.json"),
            r#"{"max_seq_length": 1024}"#,
        )
        .unwrap();
        let message = ModelDirectory::read(root).unwrap_err().to_string();
        assert!(
            message.contains("max_seq_length 1024 must be between 1 and"),
            "{message}"
        );

        write_model(root, THREE_MODULES, MEAN_POOLING);
        std::fs::remove_file(root.join("model.safetensors")).unwrap();
        let message = ModelDirectory::read(root).unwrap_err().to_string();
        assert!(message.contains("model.safetensors: missing"), "{message}");
        assert!(message.contains("safetensors weights only"), "{message}");

        write_model(root, THREE_MODULES, MEAN_POOLING);
        std::fs::write(
            root.join("1_Pooling/config.json"),
            "{\n  \"word_embedding_dimension\": \n",
        )
        .unwrap();
        let message = ModelDirectory::read(root).unwrap_err().to_string();
        assert!(message.contains("1_Pooling/config.json:3:"), "{message}");
    }
}
