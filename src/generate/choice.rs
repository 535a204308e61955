//! Which hypothesis generator a run uses, as the settings resolve it, and the factory
//! that builds it.

use std::collections::HashMap;

use super::{ChatGenerator, ChatSettings, HypothesisGenerator, RecordedGenerator};
use crate::dataset::{Query, QueryId, RecordedHypotheses};
use crate::embed::choice::CacheAccess;
use crate::error::Error;
use crate::http::{HttpClient, HttpSettings, Secret};

/// A hypothesis generator, resolved.
#[derive(Debug, Clone)]
pub enum GeneratorChoice {
    /// The dataset's `hypotheses.jsonl`.
    Recorded,
    Chat(Box<ChatChoice>),
}

/// An OpenAI-compatible chat generator, resolved.
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
    let secret = Secret::for_backend(
        &format!("[generators.{}]", choice.name),
        &choice.http,
        cache.offline,
    )?;
    ChatGenerator::new(
        choice.chat.clone(),
        HttpClient::new(choice.http.clone(), secret),
        &(cache.root)()?,
        cache.offline,
    )
}
