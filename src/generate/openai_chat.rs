//! The chat generators: hypotheses from any OpenAI-compatible `/chat/completions`
//! endpoint (`openai-chat`: OpenAI, Ollama, vLLM, llama.cpp's server, LM Studio) or from
//! Amazon Bedrock's Converse API (`bedrock-converse`, its wire format in
//! [`super::bedrock_converse`]), through the on-disk cache.
//!
//! Each hypothesis is a sample with its own cache entry, keyed by endpoint, model, the
//! rendered prompt, temperature, n, max tokens, stop sequences and the sample's index.
//! Missing samples are asked for with the API's `n` when the prompt is the same for all
//! of them and `use_n_parameter` is on; samples a server did not return (many ignore
//! `n`) are asked for one call each, with the sample index as the seed. A query whose
//! calls all fail (error after retries, timeout, empty text) gets a
//! [`GenerationFailure::Failed`] and falls back in the pipeline; rejected credentials and
//! `--offline` misses stop the run instead.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::bedrock_converse;
use super::prompts::PromptTemplate;
use super::{
    Generation, GenerationCost, GenerationFailure, GeneratorIdentity, HypothesisGenerator,
};
use crate::cache::{entry_key, Lookup, Namespace, NamespaceDescription};
use crate::dataset::{HypothesisSource, Query};
use crate::error::Error;
use crate::http::{map_in_parallel, HttpClient, HttpFailure};

/// The chat API a generator speaks.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatApi {
    /// OpenAI's `/chat/completions`.
    OpenAiChat,
    /// Amazon Bedrock's Converse, requests signed for `region`.
    BedrockConverse { region: String },
}

impl ChatApi {
    /// The generator kind, as config tables, results and the cache name it.
    pub fn kind(&self) -> &'static str {
        match self {
            ChatApi::OpenAiChat => "openai-chat",
            ChatApi::BedrockConverse { .. } => "bedrock-converse",
        }
    }
}

/// A configured chat generator.
#[derive(Debug, Clone)]
pub struct ChatSettings {
    pub api: ChatApi,
    pub model: String,
    pub prompt: PromptTemplate,
    pub temperature: f64,
    pub max_tokens: u32,
    pub use_n_parameter: bool,
    pub stop: Vec<String>,
}

impl ChatSettings {
    /// The provenance recorded with hypotheses written under these settings.
    pub fn source(&self, generator: &str, date: Option<String>) -> HypothesisSource {
        HypothesisSource {
            generator: generator.to_owned(),
            model: Some(self.model.clone()),
            prompt: Some(self.prompt.name.clone()),
            temperature: Some(self.temperature),
            date,
            note: None,
            generation_time_ms: None,
        }
    }
}

/// One cached hypothesis with what it cost when it was generated.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CachedSample {
    text: String,
    prompt_tokens: u64,
    completion_tokens: u64,
}

/// Hypotheses from a chat endpoint.
pub struct ChatGenerator {
    settings: ChatSettings,
    client: HttpClient,
    namespace: Namespace,
    offline: bool,
}

/// The answer to one request: choices' texts (empty ones kept, to be rejected) and usage.
struct ChatAnswer {
    texts: Vec<String>,
    prompt_tokens: u64,
    completion_tokens: u64,
}

impl ChatGenerator {
    pub fn new(
        settings: ChatSettings,
        client: HttpClient,
        cache_root: &Path,
        offline: bool,
    ) -> Result<ChatGenerator, Error> {
        let namespace = Namespace::open(
            cache_root,
            &NamespaceDescription {
                family: "hypotheses".into(),
                kind: settings.api.kind().into(),
                endpoint: client.settings().base_url.clone(),
                model: settings.model.clone(),
                dimension: None,
            },
        )?;
        Ok(ChatGenerator {
            settings,
            client,
            namespace,
            offline,
        })
    }

    fn describe(&self) -> String {
        format!(
            "generator {} ({} at {})",
            self.settings.api.kind(),
            self.settings.model,
            self.client.settings().base_url
        )
    }

    fn key(&self, prompt: &str, n: usize, sample: usize) -> [u8; 32] {
        let settings = &self.settings;
        entry_key(&[
            b"hypothesis",
            self.client.settings().base_url.as_bytes(),
            settings.model.as_bytes(),
            prompt.as_bytes(),
            settings.temperature.to_string().as_bytes(),
            n.to_string().as_bytes(),
            settings.max_tokens.to_string().as_bytes(),
            settings.stop.join("\u{1f}").as_bytes(),
            sample.to_string().as_bytes(),
        ])
    }

    fn request(
        &self,
        prompt: &str,
        choices: usize,
        seed: Option<usize>,
    ) -> Result<ChatAnswer, HttpFailure> {
        let settings = &self.settings;
        if let ChatApi::BedrockConverse { .. } = settings.api {
            let answer = self.client.post_json(
                &bedrock_converse::path(&settings.model),
                &bedrock_converse::request_body(
                    prompt,
                    &bedrock_converse::Inference {
                        max_tokens: settings.max_tokens,
                        temperature: settings.temperature,
                        stop: &settings.stop,
                    },
                ),
            )?;
            let (text, prompt_tokens, completion_tokens) =
                bedrock_converse::parse(&answer).map_err(HttpFailure::Malformed)?;
            return Ok(ChatAnswer {
                texts: vec![text],
                prompt_tokens,
                completion_tokens,
            });
        }
        let mut body = json!({
            "model": settings.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
        });
        let object = body.as_object_mut().expect("an object");
        if choices > 1 {
            object.insert("n".into(), json!(choices));
        }
        if let Some(seed) = seed {
            object.insert("seed".into(), json!(seed));
        }
        if !settings.stop.is_empty() {
            object.insert("stop".into(), json!(settings.stop));
        }
        let answer = self.client.post_json("/chat/completions", &body)?;
        let list = answer
            .get("choices")
            .and_then(Value::as_array)
            .ok_or_else(|| HttpFailure::Malformed("the answer has no \"choices\" list".into()))?;
        let texts = list
            .iter()
            .map(|choice| {
                choice
                    .pointer("/message/content")
                    .or_else(|| choice.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim()
                    .to_owned()
            })
            .collect();
        let usage = |field: &str| {
            answer
                .pointer(&format!("/usage/{field}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        Ok(ChatAnswer {
            texts,
            prompt_tokens: usage("prompt_tokens"),
            completion_tokens: usage("completion_tokens"),
        })
    }

    /// Stores a good sample and puts it in its slot.
    fn keep(
        &self,
        prompts: &[String],
        samples: &mut [Option<String>],
        sample: usize,
        text: String,
        tokens: (u64, u64),
    ) -> Result<(), Error> {
        let payload = serde_json::to_vec(&CachedSample {
            text: text.clone(),
            prompt_tokens: tokens.0,
            completion_tokens: tokens.1,
        })
        .expect("serializes");
        self.namespace
            .put(&self.key(&prompts[sample], samples.len(), sample), &payload)?;
        samples[sample] = Some(text);
        Ok(())
    }

    /// Records a failed request, or stops the run when retrying elsewhere cannot help.
    fn note_failure(&self, failure: HttpFailure, problems: &mut Vec<String>) -> Result<(), Error> {
        if failure.is_fatal() {
            let hint = match &self.settings.api {
                ChatApi::BedrockConverse { region } => {
                    crate::embed::bedrock::credentials_hint(&failure.to_string(), region)
                }
                ChatApi::OpenAiChat => {
                    "the server rejected the credentials; check the API key's environment variable"
                        .into()
                }
            };
            return Err(Error::BackendFatal(format!(
                "{}: {failure}\n    hint: {hint}",
                self.describe()
            )));
        }
        problems.push(failure.to_string());
        Ok(())
    }

    /// Generates the missing samples of one query (`samples.len()` = n), storing the
    /// good ones; failures go to `problems`.
    fn fill(
        &self,
        prompts: &[String],
        samples: &mut [Option<String>],
        cost: &mut GenerationCost,
        problems: &mut Vec<String>,
    ) -> Result<(), Error> {
        let n = samples.len();
        let missing: Vec<usize> = (0..n).filter(|&i| samples[i].is_none()).collect();
        let mut server_failing = false;
        if self.settings.use_n_parameter
            && missing.len() > 1
            && !self.settings.prompt.varies_per_sample()
        {
            cost.requests += 1;
            match self.request(&prompts[missing[0]], missing.len(), None) {
                Ok(answer) => {
                    cost.prompt_tokens += answer.prompt_tokens;
                    cost.completion_tokens += answer.completion_tokens;
                    let share = answer.texts.len().max(1) as u64;
                    let tokens = (
                        answer.prompt_tokens / share,
                        answer.completion_tokens / share,
                    );
                    for (&sample, text) in missing.iter().zip(answer.texts) {
                        if text.is_empty() {
                            problems.push("empty hypothesis".into());
                            continue;
                        }
                        cost.hypotheses_generated += 1;
                        self.keep(prompts, samples, sample, text, tokens)?;
                    }
                }
                Err(failure) => {
                    server_failing = true;
                    self.note_failure(failure, problems)?;
                }
            }
        }
        // Samples the server did not return (many ignore `n`): one call each, seeded by
        // the sample index. A failed call (after its retries) ends the query's attempts.
        let still_missing: Vec<usize> = (0..n).filter(|&i| samples[i].is_none()).collect();
        for sample in still_missing {
            if server_failing {
                break;
            }
            cost.requests += 1;
            let seed = (n > 1).then_some(sample);
            match self.request(&prompts[sample], 1, seed) {
                Ok(answer) => {
                    cost.prompt_tokens += answer.prompt_tokens;
                    cost.completion_tokens += answer.completion_tokens;
                    let tokens = (answer.prompt_tokens, answer.completion_tokens);
                    match answer
                        .texts
                        .into_iter()
                        .next()
                        .filter(|text| !text.is_empty())
                    {
                        Some(text) => {
                            cost.hypotheses_generated += 1;
                            self.keep(prompts, samples, sample, text, tokens)?;
                        }
                        None => problems.push("empty hypothesis".into()),
                    }
                }
                Err(failure) => {
                    server_failing = true;
                    self.note_failure(failure, problems)?;
                }
            }
        }
        Ok(())
    }
}

impl HypothesisGenerator for ChatGenerator {
    fn identity(&self) -> GeneratorIdentity {
        let kind = self.settings.api.kind();
        GeneratorIdentity {
            kind: kind.into(),
            sources: vec![self.settings.source(kind, None)],
        }
    }

    fn generate(&self, query: &Query, n: usize) -> Result<Generation, Error> {
        let started = Instant::now();
        let mut cost = GenerationCost::default();
        let prompts: Vec<String> = (0..n)
            .map(|sample| self.settings.prompt.render(&query.text, n, sample))
            .collect();
        let mut samples: Vec<Option<String>> = vec![None; n];
        for (sample, slot) in samples.iter_mut().enumerate() {
            match self.namespace.get(&self.key(&prompts[sample], n, sample)) {
                Lookup::Hit(bytes) => match serde_json::from_slice::<CachedSample>(&bytes) {
                    Ok(cached) if !cached.text.trim().is_empty() => {
                        cost.hypotheses_from_cache += 1;
                        *slot = Some(cached.text);
                    }
                    _ => cost.corrupt_entries_ignored += 1,
                },
                Lookup::Corrupt(_) => cost.corrupt_entries_ignored += 1,
                Lookup::Miss => {}
            }
        }
        let missing = samples.iter().filter(|sample| sample.is_none()).count();
        if missing > 0 && self.offline {
            return Err(Error::BackendFatal(format!(
                "--offline: {missing} of {n} hypotheses for query {:?} are not cached for {} (prompt {}, temperature {}, max_tokens {})\n    hint: run once without --offline (or `hyde-eval record`) to fill the cache in {}",
                query.id.0,
                self.describe(),
                self.settings.prompt.name,
                self.settings.temperature,
                self.settings.max_tokens,
                self.namespace.directory().display()
            )));
        }
        let mut problems = Vec::new();
        if missing > 0 {
            self.fill(&prompts, &mut samples, &mut cost, &mut problems)?;
            cost.latency_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
        }
        let texts: Vec<String> = samples.into_iter().flatten().collect();
        let hypotheses = if texts.is_empty() {
            Err(GenerationFailure::Failed(
                problems
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "no hypothesis".into()),
            ))
        } else {
            Ok(texts)
        };
        Ok(Generation { hypotheses, cost })
    }

    fn generate_all(&self, queries: &[Query], n: usize) -> Result<Vec<Generation>, Error> {
        map_in_parallel(queries, self.client.settings().max_in_flight, |query| {
            self.generate(query, n)
        })
        .into_iter()
        .collect()
    }

    fn requests(&self) -> (u64, u64) {
        let counts = self.client.counts();
        (counts.requests, counts.retries)
    }
}
