//! Which hypothesis generator a run uses, as the settings resolve it, and the factory
//! that builds it.

use std::collections::HashMap;

use super::{ChatApi, ChatGenerator, ChatSettings, HypothesisGenerator, RecordedGenerator};
use crate::dataset::{Query, QueryId, RecordedHypotheses};
use crate::embed::choice::CacheAccess;
use crate::embed::sigv4::bedrock_client;
use crate::error::Error;
use crate::http::{HttpClient, HttpSettings, Secret};

/// A hypothesis generator, resolved.
#[derive(Debug, Clone)]
pub enum GeneratorChoice {
    /// The dataset's `hypotheses.jsonl`.
    Recorded,
    Chat(Box<ChatChoice>),
}

/// A chat generator (OpenAI-compatible or Bedrock Converse), resolved.
#[derive(Debug, Clone)]
pub struct ChatChoice {
    /// The table's name (`[generators.NAME]`).
    pub name: String,
    pub chat: ChatSettings,
    pub http: HttpSettings,
}

/// Builds the generator `choice` names; the recorded one borrows the dataset's
/// `queries` and `hypotheses`.
pub fn build<'a>(
    choice: &GeneratorChoice,
    queries: &[Query],
    hypotheses: &'a HashMap<QueryId, RecordedHypotheses>,
    cache: &CacheAccess<'_>,
) -> Result<Box<dyn HypothesisGenerator + 'a>, Error> {
    match choice {
        GeneratorChoice::Recorded => Ok(Box::new(RecordedGenerator::new(queries, hypotheses))),
        GeneratorChoice::Chat(choice) => Ok(Box::new(build_chat(choice, cache)?)),
    }
}

/// The chat generator `choice` names, behind the cache.
pub fn build_chat(choice: &ChatChoice, cache: &CacheAccess<'_>) -> Result<ChatGenerator, Error> {
    let table = format!("[generators.{}]", choice.name);
    let client = match &choice.chat.api {
        ChatApi::BedrockConverse { region } => {
            bedrock_client(&table, &choice.http, region, cache.offline)?
        }
        ChatApi::OpenAiChat => HttpClient::new(
            choice.http.clone(),
            Secret::for_backend(&table, &choice.http, cache.offline)?,
        ),
    };
    ChatGenerator::new(choice.chat.clone(), client, &(cache.root)()?, cache.offline)
}
