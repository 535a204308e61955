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
//! [embedders.titan]
//! kind = "bedrock"                     # Amazon Bedrock, signed with AWS credentials
//! model = "amazon.titan-embed-text-v2:0"
//! dimensions = 512                     # Titan v2 only: 256, 512 or 1024
//! region = "eu-central-1"              # else BEDROCK_REGION, else AWS_REGION
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
//! Bedrock tables (`bedrock`, `bedrock-converse`) take `region` and no `api_key_env`;
//! their endpoint is `base_url`, else `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, else the
//! region's `https://bedrock-runtime.REGION.amazonaws.com`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::embed::bedrock::{self, BedrockModel};
use crate::embed::choice::RemoteChoice;
use crate::embed::remote::{InputType, Protocol, RemoteSettings};
use crate::error::{Error, Problem};
use crate::generate::choice::{ChatChoice, GeneratorChoice};
use crate::generate::prompts::{PromptTemplate, BUILTIN_PROMPTS};
use crate::generate::{ChatApi, ChatSettings};
use crate::http::HttpSettings;

/// Every field of the backend tables, for "did you mean" hints (serde's message for a
/// flattened table does not list them).
const BACKEND_FIELDS: [&str; 23] = [
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
    "region",
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
    /// Bedrock: the AWS region requests are signed for.
    region: Option<String>,
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
    if connection.region.is_some() {
        return Err(table_problem(
            config,
            table,
            "region applies to the Bedrock kinds (bedrock, bedrock-converse) only".into(),
        ));
    }
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

/// A non-empty environment variable.
fn environment(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// The region and HTTP settings of a Bedrock table: the region from the table, else
/// `BEDROCK_REGION`, else `AWS_REGION`; the endpoint from `base_url`, else
/// `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, else the region's.
fn bedrock_connection(
    config: &Path,
    table: &str,
    connection: &ConnectionTable,
) -> Result<(String, HttpSettings), Error> {
    if connection.api_key_env.is_some() {
        return Err(table_problem(
            config,
            table,
            "api_key_env does not apply to Bedrock: requests are signed with AWS credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, or AWS_PROFILE)".into(),
        ));
    }
    let (region, source) = match (
        &connection.region,
        environment("BEDROCK_REGION"),
        environment("AWS_REGION"),
    ) {
        (Some(region), _, _) => (region.clone(), "region"),
        (None, Some(region), _) => (region, "BEDROCK_REGION"),
        (None, None, Some(region)) => (region, "AWS_REGION"),
        (None, None, None) => {
            return Err(table_problem(
                config,
                table,
                "no AWS region: set region = \"us-east-1\" (or the region to use) in the table, or BEDROCK_REGION or AWS_REGION".into(),
            ))
        }
    };
    if !bedrock::is_region_name(&region) {
        return Err(table_problem(
            config,
            table,
            format!("{source} {region:?} is not an AWS region name (like us-east-1)"),
        ));
    }
    let mut connection = connection.clone();
    connection.region = None;
    if connection.base_url.is_none() {
        connection.base_url = environment("AWS_ENDPOINT_URL_BEDROCK_RUNTIME");
    }
    let http = http_settings(
        config,
        table,
        &connection,
        &bedrock::default_endpoint(&region),
        |_| None,
    )?;
    Ok((region, http))
}

/// The model family of a `bedrock` embedder and its checked batch size.
fn bedrock_model(
    config: &Path,
    table_label: &str,
    table: &EmbedderTable,
    model: &str,
) -> Result<(BedrockModel, usize), Error> {
    let family = BedrockModel::of(model).ok_or_else(|| {
        table_problem(
            config,
            table_label,
            format!("model {model:?} is not a Bedrock embedding model hyde-eval speaks; models: amazon.titan-embed-text-v2:0, amazon.titan-embed-text-v1, cohere.embed-english-v3, cohere.embed-multilingual-v3"),
        )
    })?;
    if let Some(problem) = table
        .dimensions
        .and_then(|dimensions| family.refuses_dimensions(dimensions))
    {
        return Err(table_problem(config, table_label, problem));
    }
    let batch_size = table.batch_size.unwrap_or(family.max_batch());
    if batch_size > family.max_batch() {
        return Err(table_problem(
            config,
            table_label,
            format!(
                "batch_size {batch_size} is more than {} takes per request ({}); requests run max_in_flight at a time",
                family.description(),
                family.max_batch()
            ),
        ));
    }
    Ok((family, batch_size))
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
            format!("model and base_url apply to HTTP providers (openai, voyage, cohere, bedrock), not to kind {:?}", table.kind),
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
            let kinds = [
                "openai", "voyage", "cohere", "bedrock", "local", "hash", "concept",
            ];
            let classic = Protocol::from_name(kind);
            if classic.is_none() && kind != "bedrock" {
                return Err(table_problem(
                    config,
                    &label,
                    format!(
                        "unknown kind {kind:?}{}; kinds: {}",
                        crate::hints::suggestion(kind, &kinds),
                        kinds.join(", ")
                    ),
                ));
            }
            if table.model_dir.is_some() || table.lexicon.is_some() {
                return Err(table_problem(
                    config,
                    &label,
                    "model_dir and lexicon apply to kind local and concept only".into(),
                ));
            }
            let example = match classic {
                Some(_) => "text-embedding-3-small",
                None => "amazon.titan-embed-text-v2:0",
            };
            let model = required_model(config, &label, &table.model, example)?;
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
            let (protocol, batch_size, aws_region, http) = match classic {
                Some(protocol) => (
                    protocol,
                    table.batch_size.unwrap_or(match protocol {
                        Protocol::Cohere => 96,
                        _ => 128,
                    }),
                    None,
                    http_settings(
                        config,
                        &label,
                        &table.connection,
                        protocol.default_base_url().unwrap_or_default(),
                        |base| protocol.default_api_key_env(base),
                    )?,
                ),
                None => {
                    let (family, batch_size) = bedrock_model(config, &label, table, &model)?;
                    let (region, http) = bedrock_connection(config, &label, &table.connection)?;
                    (Protocol::Bedrock(family), batch_size, Some(region), http)
                }
            };
            Ok(EmbedderTableChoice::Remote(Box::new(RemoteChoice {
                name: name.to_owned(),
                remote: RemoteSettings {
                    protocol,
                    model,
                    dimensions: table.dimensions,
                    batch_size,
                    hypothesis_input: table.hypothesis_input.unwrap_or(InputType::Document),
                    query_prefix: table.query_prefix.clone().unwrap_or_default(),
                    document_prefix: table.document_prefix.clone().unwrap_or_default(),
                    aws_region,
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
    let bedrock = match table.kind.as_str() {
        "openai-chat" => false,
        "bedrock-converse" => true,
        kind => {
            return Err(table_problem(
                config,
                &label,
                format!("unknown kind {kind:?}; kinds: openai-chat, bedrock-converse"),
            ))
        }
    };
    if bedrock && table.use_n_parameter == Some(true) {
        return Err(table_problem(
            config,
            &label,
            "use_n_parameter does not apply to bedrock-converse: Converse returns one answer per request".into(),
        ));
    }
    let example = if bedrock {
        "anthropic.claude-3-haiku-20240307-v1:0"
    } else {
        "gpt-4o-mini"
    };
    let model = required_model(config, &label, &table.model, example)?;
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
    let (api, http) = if bedrock {
        let (region, http) = bedrock_connection(config, &label, &table.connection)?;
        (ChatApi::BedrockConverse { region }, http)
    } else {
        let http = http_settings(
            config,
            &label,
            &table.connection,
            "https://api.openai.com/v1",
            |base| base.contains("api.openai.com").then_some("OPENAI_API_KEY"),
        )?;
        (ChatApi::OpenAiChat, http)
    };
    Ok(GeneratorChoice::Chat(Box::new(ChatChoice {
        name: name.to_owned(),
        chat: ChatSettings {
            api,
            model,
            prompt,
            temperature,
            max_tokens,
            use_n_parameter: !bedrock && table.use_n_parameter.unwrap_or(true),
            stop: table.stop.clone(),
        },
        http,
    })))
}
