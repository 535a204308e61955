//! The `bedrock-converse` generator's wire format: Amazon Bedrock's Converse API
//! (`POST /model/{modelId}/converse`), one user message per request, answered with the
//! assistant message's text and its token usage.
//!
//! The generator itself (cache, samples, fallbacks) is `openai_chat.rs`'s; this
//! file knows only the request body and the answer. Converse has no `n` and no seed, so
//! every sample is a request of its own.

use serde_json::{json, Value};

/// `/model/{modelId}/converse`.
pub fn path(model: &str) -> String {
    crate::embed::bedrock::model_path(model, "converse")
}

/// How a Converse request samples: `inferenceConfig`.
pub struct Inference<'a> {
    pub max_tokens: u32,
    pub temperature: f64,
    pub stop: &'a [String],
}

/// The Converse body for `prompt`.
pub fn request_body(prompt: &str, inference: &Inference<'_>) -> Value {
    let mut config = json!({
        "maxTokens": inference.max_tokens,
        "temperature": inference.temperature,
    });
    if !inference.stop.is_empty() {
        config["stopSequences"] = json!(inference.stop);
    }
    json!({
        "messages": [{"role": "user", "content": [{"text": prompt}]}],
        "inferenceConfig": config,
    })
}

/// The answer's text (its text blocks joined, trimmed; empty when it has none) and its
/// input and output tokens.
pub fn parse(answer: &Value) -> Result<(String, u64, u64), String> {
    let content = answer
        .pointer("/output/message/content")
        .and_then(Value::as_array)
        .ok_or("the answer has no output.message.content list")?;
    let text: String = content
        .iter()
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    let usage = |field: &str| {
        answer
            .pointer(&format!("/usage/{field}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok((
        text.trim().to_owned(),
        usage("inputTokens"),
        usage("outputTokens"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_carries_the_prompt_and_the_inference_settings() {
        let stop = vec!["\n\n".to_owned()];
        let inference = Inference {
            max_tokens: 120,
            temperature: 0.5,
            stop: &stop,
        };
        assert_eq!(
            request_body("Question: x", &inference),
            json!({"messages": [{"role": "user", "content": [{"text": "Question: x"}]}],
                   "inferenceConfig": {"maxTokens": 120, "temperature": 0.5, "stopSequences": ["\n\n"]}})
        );
        assert_eq!(
            path("anthropic.claude-3-haiku-20240307-v1:0"),
            "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
        );
    }

    #[test]
    fn answers_give_their_text_and_usage() {
        let answer = json!({"output": {"message": {"role": "assistant",
                              "content": [{"text": " Deploys run "}, {"text": "on Fridays. "}]}},
                            "stopReason": "end_turn",
                            "usage": {"inputTokens": 31, "outputTokens": 9, "totalTokens": 40}});
        assert_eq!(
            parse(&answer).unwrap(),
            ("Deploys run on Fridays.".to_owned(), 31, 9)
        );
        assert!(parse(&json!({"message": "x"}))
            .unwrap_err()
            .contains("output.message"));
    }
}
