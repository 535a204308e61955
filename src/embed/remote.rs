//! HTTP embedding providers: `openai` (any OpenAI-compatible `/embeddings` endpoint:
//! OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio, TEI), `voyage`, `cohere` and
//! `bedrock` (Amazon Bedrock's Titan and Cohere models, [`super::bedrock`]).
//!
//! One [`RemoteProvider`] sends texts in batches of `batch_size` over the shared
//! [`HttpClient`] (timeouts, retries, requests in flight, rate limit); the wire format of
//! each API is a [`Protocol`]: how a request body is built and how vectors and token
//! usage are read back. Every answer is checked before it is used: one vector per text,
//! numbers only, one dimension throughout (the requested one when `dimensions` is set).
//! A shape it cannot use (llama.cpp's per-token vectors from a model served without
//! pooling, base64 strings) is named plainly.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use serde_json::{json, Value};

use super::bedrock::{self, BedrockModel};
use super::{EmbeddingProvider, ProviderIdentity, TextKind};
use crate::error::Error;
use crate::http::{map_in_parallel, HttpClient, HttpFailure};

/// The embedding APIs hyde-eval speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    OpenAi,
    Voyage,
    Cohere,
    /// Amazon Bedrock's invoke API, one model family's body per request.
    Bedrock(BedrockModel),
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::OpenAi => "openai",
            Protocol::Voyage => "voyage",
            Protocol::Cohere => "cohere",
            Protocol::Bedrock(_) => "bedrock",
        }
    }

    /// The protocols whose only setting is their name (Bedrock's needs the model).
    pub fn from_name(name: &str) -> Option<Protocol> {
        match name {
            "openai" => Some(Protocol::OpenAi),
            "voyage" => Some(Protocol::Voyage),
            "cohere" => Some(Protocol::Cohere),
            _ => None,
        }
    }

    /// The vendor's endpoint, used when the config names none (Bedrock's depends on
    /// the region: [`bedrock::default_endpoint`]).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Protocol::OpenAi => Some("https://api.openai.com/v1"),
            Protocol::Voyage => Some("https://api.voyageai.com/v1"),
            Protocol::Cohere => Some("https://api.cohere.com/v2"),
            Protocol::Bedrock(_) => None,
        }
    }

    /// The API key's environment variable when the config names none (OpenAI's only for
    /// OpenAI's own endpoint: local OpenAI-compatible servers need no key).
    pub fn default_api_key_env(self, base_url: &str) -> Option<&'static str> {
        match self {
            Protocol::OpenAi if base_url.contains("api.openai.com") => Some("OPENAI_API_KEY"),
            Protocol::OpenAi => None,
            Protocol::Voyage => Some("VOYAGE_API_KEY"),
            Protocol::Cohere => Some("CO_API_KEY"),
            Protocol::Bedrock(_) => None,
        }
    }

    /// The API's name for the input type (`None`: the API has none, or Bedrock's model
    /// body places it).
    pub fn input_type(self, kind: InputType) -> Option<&'static str> {
        match (self, kind) {
            (Protocol::OpenAi | Protocol::Bedrock(_), _) => None,
            (Protocol::Voyage, InputType::Query) => Some("query"),
            (Protocol::Voyage, InputType::Document) => Some("document"),
            (Protocol::Cohere, InputType::Query) => Some("search_query"),
            (Protocol::Cohere, InputType::Document) => Some("search_document"),
        }
    }

    fn path(self, model: &str) -> String {
        match self {
            Protocol::OpenAi | Protocol::Voyage => "/embeddings".into(),
            Protocol::Cohere => "/embed".into(),
            Protocol::Bedrock(_) => bedrock::model_path(model, "invoke"),
        }
    }

    fn request(
        self,
        model: &str,
        texts: &[String],
        input_type: InputType,
        dimensions: Option<usize>,
    ) -> Value {
        let (mut body, dimension_field) = match self {
            Protocol::OpenAi => (
                json!({"model": model, "input": texts, "encoding_format": "float"}),
                "dimensions",
            ),
            Protocol::Voyage => (json!({"model": model, "input": texts}), "output_dimension"),
            Protocol::Cohere => (
                json!({"model": model, "texts": texts, "embedding_types": ["float"], "truncate": "END"}),
                "output_dimension",
            ),
            Protocol::Bedrock(family) => {
                return family.request(texts, input_type == InputType::Query, dimensions)
            }
        };
        let object = body.as_object_mut().expect("an object");
        if let Some(input_type) = self.input_type(input_type) {
            object.insert("input_type".into(), json!(input_type));
        }
        if let Some(dimensions) = dimensions {
            object.insert(dimension_field.into(), json!(dimensions));
        }
        body
    }

    /// The vectors of an answer (in input order) and the tokens it reports.
    fn parse(self, answer: &Value) -> Result<(Vec<Vec<f32>>, u64), String> {
        let (items, tokens): (Vec<&Value>, u64) = match self {
            Protocol::OpenAi | Protocol::Voyage => {
                let data = answer
                    .get("data")
                    .and_then(Value::as_array)
                    .ok_or("the answer has no \"data\" list")?;
                let mut indexed: Vec<(u64, &Value)> = Vec::with_capacity(data.len());
                for (position, item) in data.iter().enumerate() {
                    let index = item
                        .get("index")
                        .and_then(Value::as_u64)
                        .unwrap_or(position as u64);
                    let embedding = item
                        .get("embedding")
                        .ok_or_else(|| format!("data[{position}] has no \"embedding\""))?;
                    indexed.push((index, embedding));
                }
                indexed.sort_by_key(|(index, _)| *index);
                if indexed
                    .iter()
                    .enumerate()
                    .any(|(position, (index, _))| *index != position as u64)
                {
                    return Err(
                        "the answer's \"index\" fields do not number the inputs 0, 1, 2, ..."
                            .into(),
                    );
                }
                let usage = answer.get("usage");
                let tokens = usage
                    .and_then(|usage| {
                        usage
                            .get("total_tokens")
                            .or_else(|| usage.get("prompt_tokens"))
                    })
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                (
                    indexed
                        .into_iter()
                        .map(|(_, embedding)| embedding)
                        .collect(),
                    tokens,
                )
            }
            Protocol::Cohere => {
                let embeddings = answer
                    .get("embeddings")
                    .ok_or("the answer has no \"embeddings\"")?;
                // v2 answers {"float": [[...]]}; v1 answers the list itself.
                let list = embeddings
                    .get("float")
                    .unwrap_or(embeddings)
                    .as_array()
                    .ok_or("\"embeddings\" is neither a list nor {\"float\": [...]}")?;
                let tokens = answer
                    .pointer("/meta/billed_units/input_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                (list.iter().collect(), tokens)
            }
            Protocol::Bedrock(_) => bedrock::answer_items(answer)?,
        };
        let vectors = items
            .into_iter()
            .enumerate()
            .map(|(position, item)| {
                vector(item).map_err(|problem| format!("vector {}: {problem}", position + 1))
            })
            .collect::<Result<_, _>>()?;
        Ok((vectors, tokens))
    }
}

/// One embedding as numbers, or why it is not usable.
fn vector(item: &Value) -> Result<Vec<f32>, String> {
    match item {
        Value::Array(values) if values.first().is_some_and(Value::is_array) => Err(format!(
            "a list of {} vectors (one per token): the server runs the model without pooling; \
             start it with pooling (llama.cpp: --pooling mean) so each text gets one vector",
            values.len()
        )),
        Value::Array(values) => values
            .iter()
            .map(|value| {
                value
                    .as_f64()
                    .map(|number| number as f32)
                    .ok_or("holds a value that is not a number")
            })
            .collect::<Result<Vec<f32>, _>>()
            .map_err(str::to_owned)
            .and_then(|vector| {
                if vector.is_empty() {
                    Err("is empty".to_owned())
                } else {
                    Ok(vector)
                }
            }),
        Value::String(_) => {
            Err("a string (base64?): hyde-eval asks for encoding_format \"float\"".into())
        }
        other => Err(format!(
            "is {} instead of a list of numbers",
            json_type(other)
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// How a text is presented to the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    Query,
    Document,
}

/// A configured HTTP embedding provider.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteSettings {
    pub protocol: Protocol,
    pub model: String,
    /// Requested output dimension (`dimensions` / `output_dimension`); `None`: the model's.
    pub dimensions: Option<usize>,
    pub batch_size: usize,
    /// How hypotheses are presented (HyDE text is an answer, so `document` by default).
    pub hypothesis_input: InputType,
    /// Prepended to every query / document text (e.g. nomic's `search_query: `).
    pub query_prefix: String,
    pub document_prefix: String,
    /// The AWS region requests are signed for (`bedrock` only).
    pub aws_region: Option<String>,
}

/// Tokens and texts of one provider (requests are the client's).
#[derive(Debug, Default)]
struct Usage {
    tokens: AtomicU64,
    texts: AtomicU64,
}

/// An embedding API reached over HTTP.
pub struct RemoteProvider {
    settings: RemoteSettings,
    client: HttpClient,
    /// The dimension of the first vectors received (or the requested one).
    dimension: OnceLock<usize>,
    usage: Usage,
}

impl RemoteProvider {
    pub fn new(settings: RemoteSettings, client: HttpClient) -> RemoteProvider {
        let dimension = OnceLock::new();
        if let Some(requested) = settings.dimensions {
            let _ = dimension.set(requested);
        }
        RemoteProvider {
            settings,
            client,
            dimension,
            usage: Usage::default(),
        }
    }

    pub fn settings(&self) -> &RemoteSettings {
        &self.settings
    }

    pub fn base_url(&self) -> &str {
        &self.client.settings().base_url
    }

    /// The input type texts of `kind` are sent as.
    pub fn input_type(&self, kind: TextKind) -> InputType {
        match kind {
            TextKind::Query => InputType::Query,
            TextKind::Document => InputType::Document,
            TextKind::Hypothesis => self.settings.hypothesis_input,
        }
    }

    /// The text prepended to every text sent as `input_type`.
    fn prefix(&self, input_type: InputType) -> &str {
        match input_type {
            InputType::Query => &self.settings.query_prefix,
            InputType::Document => &self.settings.document_prefix,
        }
    }

    fn describe(&self) -> String {
        format!(
            "embedding provider {} ({} at {})",
            self.settings.protocol.name(),
            self.settings.model,
            self.base_url()
        )
    }

    fn failure(&self, what: &str, failure: &HttpFailure) -> Error {
        let message = format!("{}: {what}: {failure}", self.describe());
        if failure.is_fatal() {
            let hint = match &self.settings.aws_region {
                Some(region) => bedrock::credentials_hint(&failure.to_string(), region),
                None => {
                    "the server rejected the credentials; check the API key's environment variable"
                        .into()
                }
            };
            Error::BackendFatal(format!("{message}\n    hint: {hint}"))
        } else {
            Error::Backend(message)
        }
    }

    fn embed_batch(&self, texts: &[String], input_type: InputType) -> Result<Vec<Vec<f32>>, Error> {
        let protocol = self.settings.protocol;
        let body = protocol.request(
            &self.settings.model,
            texts,
            input_type,
            self.settings.dimensions,
        );
        let what = format!("embedding {} texts", texts.len());
        let answer = self
            .client
            .post_json(&protocol.path(&self.settings.model), &body)
            .map_err(|failure| self.failure(&what, &failure))?;
        let unusable = |problem: String| {
            Error::Backend(format!(
                "{}: {what}: unusable answer: {}",
                self.describe(),
                self.client.redact(&problem)
            ))
        };
        let (vectors, tokens) = protocol.parse(&answer).map_err(unusable)?;
        if vectors.len() != texts.len() {
            return Err(unusable(format!(
                "{} vectors for {} texts",
                vectors.len(),
                texts.len()
            )));
        }
        let expected = *self.dimension.get_or_init(|| vectors[0].len());
        if let Some(position) = vectors.iter().position(|vector| vector.len() != expected) {
            return Err(unusable(format!(
                "vector {} has {} dimensions, expected {expected}{}",
                position + 1,
                vectors[position].len(),
                if self.settings.dimensions.is_some() {
                    " (the configured dimensions)"
                } else {
                    " (as the first answer)"
                }
            )));
        }
        if let Some(position) = vectors
            .iter()
            .position(|vector| vector.iter().any(|value| !value.is_finite()))
        {
            return Err(unusable(format!(
                "vector {} holds NaN or infinite values",
                position + 1
            )));
        }
        self.usage.tokens.fetch_add(tokens, Ordering::Relaxed);
        self.usage
            .texts
            .fetch_add(texts.len() as u64, Ordering::Relaxed);
        Ok(vectors)
    }
}

impl EmbeddingProvider for RemoteProvider {
    fn identity(&self) -> ProviderIdentity {
        ProviderIdentity {
            kind: self.settings.protocol.name().to_owned(),
            model: self.settings.model.clone(),
            dimension: self.dimension.get().copied().unwrap_or(0),
        }
    }

    fn cache_scope(&self) -> Option<super::CacheScope> {
        Some(super::CacheScope {
            kind: self.settings.protocol.name().to_owned(),
            endpoint: self.base_url().to_owned(),
            model: self.settings.model.clone(),
            dimension: self.settings.dimensions,
            batch_dependent: false,
        })
    }

    fn input_key(&self, kind: TextKind) -> String {
        let input_type = self.input_type(kind);
        format!("{input_type:?}|{}", self.prefix(input_type))
    }

    fn adopt_dimension(&self, dimension: usize) {
        let _ = self.dimension.set(dimension);
    }

    fn usage(&self) -> Option<super::EmbeddingUsage> {
        let counts = self.client.counts();
        Some(super::EmbeddingUsage {
            requests: counts.requests,
            retries: counts.retries,
            tokens: self.usage.tokens.load(Ordering::Relaxed),
            texts_embedded: self.usage.texts.load(Ordering::Relaxed),
            ..Default::default()
        })
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, Error> {
        let input_type = self.input_type(kind);
        let prefix = self.prefix(input_type);
        let prepared: Vec<String> = texts.iter().map(|text| format!("{prefix}{text}")).collect();
        let batches: Vec<&[String]> = prepared.chunks(self.settings.batch_size.max(1)).collect();
        // After rejected credentials no further batch is sent (`None`): every one would
        // be refused the same way (Titan on Bedrock sends a request per text).
        let refused = AtomicBool::new(false);
        let answers = map_in_parallel(&batches, self.client.settings().max_in_flight, |batch| {
            if refused.load(Ordering::Relaxed) {
                return None;
            }
            let answer = self.embed_batch(batch, input_type);
            if matches!(answer, Err(Error::BackendFatal(_))) {
                refused.store(true, Ordering::Relaxed);
            }
            Some(answer)
        });
        let mut vectors = Vec::with_capacity(texts.len());
        for answer in answers.into_iter().flatten() {
            vectors.extend(answer?);
        }
        Ok(vectors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_protocol_names_its_fields() {
        let texts = vec!["a".to_owned()];
        let openai = Protocol::OpenAi.request("m", &texts, InputType::Query, Some(256));
        assert_eq!(
            openai,
            json!({"model": "m", "input": ["a"], "encoding_format": "float", "dimensions": 256})
        );
        let voyage = Protocol::Voyage.request("m", &texts, InputType::Document, None);
        assert_eq!(
            voyage,
            json!({"model": "m", "input": ["a"], "input_type": "document"})
        );
        let cohere = Protocol::Cohere.request("m", &texts, InputType::Query, Some(512));
        assert_eq!(
            cohere,
            json!({"model": "m", "texts": ["a"], "embedding_types": ["float"], "truncate": "END",
                   "input_type": "search_query", "output_dimension": 512})
        );
    }

    #[test]
    fn answers_are_read_in_index_order_and_bad_shapes_are_named() {
        let answer = json!({"data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]}],
                            "usage": {"prompt_tokens": 7, "total_tokens": 7}});
        let (vectors, tokens) = Protocol::OpenAi.parse(&answer).unwrap();
        assert_eq!(vectors, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert_eq!(tokens, 7);

        let per_token = json!({"data": [{"index": 0, "embedding": [[0.1, 0.2], [0.3, 0.4]]}]});
        let problem = Protocol::OpenAi.parse(&per_token).unwrap_err();
        assert!(
            problem.contains("one per token") && problem.contains("--pooling"),
            "{problem}"
        );
        let base64 = json!({"data": [{"index": 0, "embedding": "AAAA"}]});
        assert!(Protocol::OpenAi
            .parse(&base64)
            .unwrap_err()
            .contains("base64"));
        assert!(Protocol::Voyage
            .parse(&json!({"object": "list"}))
            .unwrap_err()
            .contains("\"data\""));

        let v2 = json!({"embeddings": {"float": [[0.5, 0.5]]}, "meta": {"billed_units": {"input_tokens": 3}}});
        assert_eq!(
            Protocol::Cohere.parse(&v2).unwrap(),
            (vec![vec![0.5, 0.5]], 3)
        );
        let v1 = json!({"embeddings": [[0.25]]});
        assert_eq!(Protocol::Cohere.parse(&v1).unwrap(), (vec![vec![0.25]], 0));
    }
}
