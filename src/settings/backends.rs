//! The config file's backend tables: `[embedders.NAME]` (HTTP embedding providers, or a
//! named local / hash / concept provider) and `[generators.NAME]` (LLM hypothesis
//! generators), resolved into settings the commands build providers from.
//!
//! ```toml
//! [embedders.openai-small]
//! kind = "openai"                      # openai | voyage | cohere | local | hash | concept
//! base_url = "https://api.openai.com/v1"
//! model = "text-embedding-3-small"
//! api_key_env = "OPENAI_API_KEY"       # the variable's name, never the key
//! dimensions = 512                     # optional: the API's dimensions / output_dimension
//! batch_size = 128
//! hypothesis_input = "document"        # how hypotheses are presented (query | document)
//!
//! [generators.gpt]
//! kind = "openai-chat"
//! model = "gpt-4o-mini"
//! prompt = "chatcli-3a"                # or prompt_file = "my-prompt.txt"
//! temperature = 0.7
//! max_tokens = 200
//! ```
//!
//! Every HTTP backend also takes `timeout_seconds` (60), `max_retries` (4),
//! `initial_backoff_seconds` (0.5), `max_in_flight` (4) and `requests_per_minute`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::embed::choice::RemoteChoice;
use crate::embed::remote::{InputType, Protocol, RemoteSettings};
use crate::error::{Error, Problem};
use crate::generate::choice::{ChatChoice, GeneratorChoice};
use crate::generate::prompts::{PromptTemplate, BUILTIN_PROMPTS};
use crate::generate::ChatSettings;
use crate::http::HttpSettings;

/// Every field of the backend tables, for "did you mean" hints (serde's message for a
/// flattened table does not list them).
const BACKEND_FIELDS: [&str; 22] = [
    "kind",
    "model",
    "dimensions",
    "batch_size",
    "hypothesis_input",
    "query_prefix",
    "document_prefix",
    "model_dir",
    "lexicon",
    "prompt",
    "prompt_file",
    "temperature",
    "max_tokens",
    "use_n_parameter",
    "stop",
    "base_url",
    "api_key_env",
    "timeout_seconds",
    "max_retries",
    "initial_backoff_seconds",
    "max_in_flight",
    "requests_per_minute",
];

/// For serde's "unknown field `x`" inside a backend table: the closest field name.
pub fn field_hint(message: &str) -> Option<String> {
    let field = message.strip_prefix("unknown field `")?.split('`').next()?;
    if message.contains(", expected") {
        return None;
    }
    let suggestion = crate::hints::suggestion(field, &BACKEND_FIELDS);
    let suggestion = suggestion
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')');
    Some(format!(
        "{}backend tables take: {}",
        if suggestion.is_empty() {
            String::new()
        } else {
            format!("{suggestion} ")
        },
        BACKEND_FIELDS.join(", ")
    ))
}

/// Connection options shared by every HTTP backend table.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionTable {
    base_url: Option<String>,
    api_key_env: Option<String>,
    timeout_seconds: Option<f64>,
    max_retries: Option<u32>,
    initial_backoff_seconds: Option<f64>,
    max_in_flight: Option<usize>,
    requests_per_minute: Option<u32>,
}

/// One `[embedders.NAME]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbedderTable {
    kind: String,
    model: Option<String>,
    dimensions: Option<usize>,
    batch_size: Option<usize>,
    hypothesis_input: Option<InputType>,
    query_prefix: Option<String>,
    document_prefix: Option<String>,
    /// `local`: the sentence-transformers directory.
    model_dir: Option<PathBuf>,
    /// `concept`: the lexicon file.
    lexicon: Option<PathBuf>,
    #[serde(flatten)]
    connection: ConnectionTable,
}

/// One `[generators.NAME]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorTable {
    kind: String,
    model: Option<String>,
    prompt: Option<String>,
    prompt_file: Option<PathBuf>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    use_n_parameter: Option<bool>,
    #[serde(default)]
    stop: Vec<String>,
    #[serde(flatten)]
    connection: ConnectionTable,
}

/// The backend tables of a config file.
pub type EmbedderTables = BTreeMap<String, EmbedderTable>;
pub type GeneratorTables = BTreeMap<String, GeneratorTable>;

/// What an `[embedders.NAME]` table asks for.
#[derive(Debug, Clone)]
pub enum EmbedderTableChoice {
    Remote(Box<RemoteChoice>),
    Local { model_dir: Option<PathBuf> },
    Hash { dimension: Option<usize> },
    Concept { lexicon: Option<PathBuf> },
}

fn table_problem(config: &Path, table: &str, message: String) -> Error {
    Error::problem(Problem::new(config, None, format!("[{table}]: {message}")))
}

/// The table's `model`, which must be set and not blank.
fn required_model(
    config: &Path,
    table: &str,
    model: &Option<String>,
    example: &str,
) -> Result<String, Error> {
    model
        .clone()
        .filter(|model| !model.trim().is_empty())
        .ok_or_else(|| {
            table_problem(
                config,
                table,
                format!("model is required (e.g. model = \"{example}\")"),
            )
        })
}

fn relative(directory: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        directory.join(path)
    }
}

fn seconds(config: &Path, table: &str, field: &str, value: f64) -> Result<Duration, Error> {
    if value.is_finite() && value > 0.0 && value < 86_400.0 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(table_problem(
            config,
            table,
            format!("{field} must be a positive number of seconds, got {value}"),
        ))
    }
}

fn http_settings(
    config: &Path,
    table: &str,
    connection: &ConnectionTable,
    default_base_url: &str,
    default_key_env: impl Fn(&str) -> Option<&'static str>,
) -> Result<HttpSettings, Error> {
    let base_url = connection
        .base_url
        .clone()
        .unwrap_or_else(|| default_base_url.to_owned());
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(table_problem(
            config,
            table,
            format!("base_url must start with http:// or https://, got {base_url:?}"),
        ));
    }
    let mut settings = HttpSettings::new(&base_url);
    settings.api_key_env = connection
        .api_key_env
        .clone()
        .or_else(|| default_key_env(&base_url).map(str::to_owned));
    if let Some(value) = connection.timeout_seconds {
        settings.timeout = seconds(config, table, "timeout_seconds", value)?;
    }
    if let Some(value) = connection.initial_backoff_seconds {
        settings.initial_backoff = seconds(config, table, "initial_backoff_seconds", value)?;
    }
    if let Some(retries) = connection.max_retries {
        settings.max_retries = retries;
    }
    if let Some(in_flight) = connection.max_in_flight {
        if in_flight == 0 {
            return Err(table_problem(
                config,
                table,
                "max_in_flight must be at least 1".into(),
            ));
        }
        settings.max_in_flight = in_flight;
    }
    settings.requests_per_minute = connection.requests_per_minute.filter(|rate| *rate > 0);
    Ok(settings)
}

/// Resolves `[embedders.NAME]` of the config file at `config`.
pub fn embedder_choice(
    config: &Path,
    name: &str,
    table: &EmbedderTable,
) -> Result<EmbedderTableChoice, Error> {
    let label = format!("embedders.{name}");
    let directory = config.parent().unwrap_or(Path::new(""));
    let in_process = matches!(table.kind.as_str(), "local" | "hash" | "concept");
    if in_process && (table.model.is_some() || table.connection.base_url.is_some()) {
        return Err(table_problem(
            config,
            &label,
            format!("model and base_url apply to HTTP providers (openai, voyage, cohere), not to kind {:?}", table.kind),
        ));
    }
    match table.kind.as_str() {
        "local" => Ok(EmbedderTableChoice::Local {
            model_dir: table
                .model_dir
                .as_deref()
                .map(|path| relative(directory, path)),
        }),
        "hash" => Ok(EmbedderTableChoice::Hash {
            dimension: table.dimensions,
        }),
        "concept" => Ok(EmbedderTableChoice::Concept {
            lexicon: table
                .lexicon
                .as_deref()
                .map(|path| relative(directory, path)),
        }),
        kind => {
            let Some(protocol) = Protocol::from_name(kind) else {
                return Err(table_problem(
                    config,
                    &label,
                    format!(
                        "unknown kind {kind:?}{}; kinds: openai, voyage, cohere, local, hash, concept",
                        crate::hints::suggestion(kind, &["openai", "voyage", "cohere", "local", "hash", "concept"])
                    ),
                ));
            };
            if table.model_dir.is_some() || table.lexicon.is_some() {
                return Err(table_problem(
                    config,
                    &label,
                    "model_dir and lexicon apply to kind local and concept only".into(),
                ));
            }
            let model = required_model(config, &label, &table.model, "text-embedding-3-small")?;
            if table.dimensions == Some(0) || table.batch_size == Some(0) {
                return Err(table_problem(
                    config,
                    &label,
                    "dimensions and batch_size must be at least 1".into(),
                ));
            }
            if let Some(dimensions) = table
                .dimensions
                .filter(|&dimensions| dimensions > crate::embed::MAX_DIMENSION)
            {
                return Err(table_problem(
                    config,
                    &label,
                    format!(
                        "dimensions {dimensions} is more than {}, the most hyde-eval accepts",
                        crate::embed::MAX_DIMENSION
                    ),
                ));
            }
            let http = http_settings(
                config,
                &label,
                &table.connection,
                protocol.default_base_url(),
                |base| protocol.default_api_key_env(base),
            )?;
            Ok(EmbedderTableChoice::Remote(Box::new(RemoteChoice {
                name: name.to_owned(),
                remote: RemoteSettings {
                    protocol,
                    model,
                    dimensions: table.dimensions,
                    batch_size: table.batch_size.unwrap_or(match protocol {
                        Protocol::Cohere => 96,
                        Protocol::OpenAi | Protocol::Voyage => 128,
                    }),
                    hypothesis_input: table.hypothesis_input.unwrap_or(InputType::Document),
                    query_prefix: table.query_prefix.clone().unwrap_or_default(),
                    document_prefix: table.document_prefix.clone().unwrap_or_default(),
                },
                http,
            })))
        }
    }
}

/// Resolves `[generators.NAME]` of the config file at `config`.
pub fn generator_choice(
    config: &Path,
    name: &str,
    table: &GeneratorTable,
) -> Result<GeneratorChoice, Error> {
    let label = format!("generators.{name}");
    if table.kind != "openai-chat" {
        return Err(table_problem(
            config,
            &label,
            format!("unknown kind {:?}; kinds: openai-chat", table.kind),
        ));
    }
    let model = required_model(config, &label, &table.model, "gpt-4o-mini")?;
    let prompt = match (&table.prompt, &table.prompt_file) {
        (Some(_), Some(_)) => {
            return Err(table_problem(
                config,
                &label,
                "set prompt or prompt_file, not both".into(),
            ))
        }
        (_, Some(file)) => {
            PromptTemplate::from_file(&relative(config.parent().unwrap_or(Path::new("")), file))?
        }
        (prompt, None) => {
            let prompt = prompt.as_deref().unwrap_or("chatcli-3a");
            PromptTemplate::builtin(prompt).ok_or_else(|| {
                table_problem(
                    config,
                    &label,
                    format!(
                        "unknown prompt {prompt:?}{}; prompts: {} (or prompt_file = \"FILE\")",
                        crate::hints::suggestion(prompt, &BUILTIN_PROMPTS),
                        BUILTIN_PROMPTS.join(", ")
                    ),
                )
            })?
        }
    };
    let temperature = table.temperature.unwrap_or(0.7);
    if !(0.0..=2.0).contains(&temperature) {
        return Err(table_problem(
            config,
            &label,
            format!("temperature must be in [0, 2], got {temperature}"),
        ));
    }
    let max_tokens = table.max_tokens.unwrap_or(200);
    if max_tokens == 0 {
        return Err(table_problem(
            config,
            &label,
            "max_tokens must be at least 1".into(),
        ));
    }
    let http = http_settings(
        config,
        &label,
        &table.connection,
        "https://api.openai.com/v1",
        |base| base.contains("api.openai.com").then_some("OPENAI_API_KEY"),
    )?;
    Ok(GeneratorChoice::Chat(Box::new(ChatChoice {
        name: name.to_owned(),
        chat: ChatSettings {
            model,
            prompt,
            temperature,
            max_tokens,
            use_n_parameter: table.use_n_parameter.unwrap_or(true),
            stop: table.stop.clone(),
        },
        http,
    })))
}
