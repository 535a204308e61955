//! Amazon Bedrock's embedding models, as the `bedrock` protocol of `remote.rs`
//! speaks them through `POST /model/{modelId}/invoke`: Titan Text Embeddings v2 (one
//! text per request, `dimensions` 256, 512 or 1024, normalized), Titan v1 (one text,
//! 1536 dimensions) and Cohere Embed v3 (up to 96 texts, `search_query` /
//! `search_document`).
//!
//! This file knows the models' request bodies, answers and limits, and the hints for
//! Bedrock's errors; signing is `sigv4.rs`'s, transport the shared HTTP client's.

use serde_json::{json, Value};

/// The Bedrock embedding model families hyde-eval speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BedrockModel {
    TitanV2,
    TitanV1,
    CohereV3,
}

/// The dimensions Titan Text Embeddings v2 accepts.
pub const TITAN_V2_DIMENSIONS: [usize; 3] = [256, 512, 1024];

/// Cohere Embed on Bedrock takes at most this many texts per request.
pub const COHERE_MAX_TEXTS: usize = 96;

/// Bedrock's runtime endpoint in `region`.
pub fn default_endpoint(region: &str) -> String {
    format!("https://bedrock-runtime.{region}.amazonaws.com")
}

/// Whether `region` looks like an AWS region name (`us-east-1`, `eu-central-2`, ...).
pub fn is_region_name(region: &str) -> bool {
    let parts: Vec<&str> = region.split('-').collect();
    parts.len() >= 3
        && parts[..parts.len() - 1]
            .iter()
            .all(|part| !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_lowercase()))
        && parts[parts.len() - 1]
            .bytes()
            .all(|byte| byte.is_ascii_digit())
        && !parts[parts.len() - 1].is_empty()
}

/// `/model/{modelId}/{action}`, the model id percent-encoded as AWS's SDKs send it.
pub fn model_path(model: &str, action: &str) -> String {
    let encoded: String = model
        .bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
                (byte as char).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect();
    format!("/model/{encoded}/{action}")
}

impl BedrockModel {
    /// The family of model id `model` (a cross-region profile's `us.` / `eu.` / `apac.`
    /// prefix allowed); `None` for models hyde-eval does not speak.
    pub fn of(model: &str) -> Option<BedrockModel> {
        let base = ["us.", "eu.", "apac.", "global."]
            .iter()
            .find_map(|prefix| model.strip_prefix(prefix))
            .unwrap_or(model);
        if base.starts_with("amazon.titan-embed-text-v2") {
            Some(BedrockModel::TitanV2)
        } else if base.starts_with("amazon.titan-embed-text-v1")
            || base.starts_with("amazon.titan-embed-g1-text")
        {
            Some(BedrockModel::TitanV1)
        } else if base.starts_with("cohere.embed-english-v3")
            || base.starts_with("cohere.embed-multilingual-v3")
        {
            Some(BedrockModel::CohereV3)
        } else {
            None
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            BedrockModel::TitanV2 => "Titan Text Embeddings v2",
            BedrockModel::TitanV1 => "Titan Embeddings v1",
            BedrockModel::CohereV3 => "Cohere Embed v3",
        }
    }

    /// Texts per request: Titan embeds one, Cohere up to 96.
    pub fn max_batch(self) -> usize {
        match self {
            BedrockModel::TitanV2 | BedrockModel::TitanV1 => 1,
            BedrockModel::CohereV3 => COHERE_MAX_TEXTS,
        }
    }

    /// Why `dimensions` cannot be asked of this model, if it cannot.
    pub fn refuses_dimensions(self, dimensions: usize) -> Option<String> {
        match self {
            BedrockModel::TitanV2 if TITAN_V2_DIMENSIONS.contains(&dimensions) => None,
            BedrockModel::TitanV2 => Some(format!(
                "dimensions {dimensions} is not one {} accepts: 256, 512 or 1024",
                self.description()
            )),
            BedrockModel::TitanV1 => Some(format!(
                "{} has a fixed dimension (1536) and takes no dimensions setting",
                self.description()
            )),
            BedrockModel::CohereV3 => Some(format!(
                "{} has a fixed dimension (1024) and takes no dimensions setting",
                self.description()
            )),
        }
    }

    /// The body of one invoke request (Titan: exactly one text); `as_queries` tells
    /// Cohere the texts are search queries rather than documents.
    pub fn request(self, texts: &[String], as_queries: bool, dimensions: Option<usize>) -> Value {
        match self {
            BedrockModel::TitanV2 => {
                let mut body = json!({"inputText": texts[0], "normalize": true});
                if let Some(dimensions) = dimensions {
                    body["dimensions"] = json!(dimensions);
                }
                body
            }
            BedrockModel::TitanV1 => json!({"inputText": texts[0]}),
            BedrockModel::CohereV3 => json!({
                "texts": texts,
                "input_type": if as_queries { "search_query" } else { "search_document" },
                "truncate": "END",
            }),
        }
    }
}

/// The embeddings of an invoke answer, as values, and the tokens it reports (Titan's
/// `inputTextTokenCount`; Cohere's answer on Bedrock counts none).
pub fn answer_items(answer: &Value) -> Result<(Vec<&Value>, u64), String> {
    if let Some(embedding) = answer.get("embedding") {
        let tokens = answer
            .get("inputTextTokenCount")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        return Ok((vec![embedding], tokens));
    }
    let list = answer
        .get("embeddings")
        .ok_or("the answer has neither \"embedding\" (Titan) nor \"embeddings\" (Cohere)")?;
    let list = list
        .get("float")
        .unwrap_or(list)
        .as_array()
        .ok_or("\"embeddings\" is not a list")?;
    Ok((list.iter().collect(), 0))
}

/// What to do about a 403 from Bedrock, from its message.
pub fn credentials_hint(message: &str, region: &str) -> String {
    let lower = message.to_ascii_lowercase();
    if lower.contains("expired") {
        "the AWS session token has expired: get fresh credentials (a new STS session, `aws sso login`) and export them again".into()
    } else if lower.contains("security token included in the request is invalid")
        || lower.contains("unrecognizedclient")
    {
        "AWS does not recognise the access key: check AWS_ACCESS_KEY_ID / AWS_PROFILE, and that a session token is set with temporary keys".into()
    } else if lower.contains("region") || lower.contains("scoped") {
        format!("the request was signed for region {region}, which is not the endpoint's: set region (or BEDROCK_REGION / AWS_REGION) to the endpoint's region")
    } else {
        format!("AWS refused the signature or the access: check the secret access key, that region {region} is the endpoint's, and that the account has access to the model")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_name_their_family() {
        assert_eq!(
            BedrockModel::of("amazon.titan-embed-text-v2:0"),
            Some(BedrockModel::TitanV2)
        );
        assert_eq!(
            BedrockModel::of("amazon.titan-embed-text-v1"),
            Some(BedrockModel::TitanV1)
        );
        assert_eq!(
            BedrockModel::of("us.cohere.embed-multilingual-v3"),
            Some(BedrockModel::CohereV3)
        );
        assert_eq!(BedrockModel::of("anthropic.claude-3-haiku"), None);
    }

    #[test]
    fn bodies_follow_each_models_schema() {
        let one = vec!["a".to_owned()];
        assert_eq!(
            BedrockModel::TitanV2.request(&one, true, Some(256)),
            json!({"inputText": "a", "dimensions": 256, "normalize": true})
        );
        assert_eq!(
            BedrockModel::TitanV1.request(&one, true, None),
            json!({"inputText": "a"})
        );
        let two = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(
            BedrockModel::CohereV3.request(&two, false, None),
            json!({"texts": ["a", "b"], "input_type": "search_document", "truncate": "END"})
        );
    }

    #[test]
    fn only_titan_v2_takes_dimensions_and_only_three_of_them() {
        for allowed in TITAN_V2_DIMENSIONS {
            assert_eq!(BedrockModel::TitanV2.refuses_dimensions(allowed), None);
        }
        let refused = BedrockModel::TitanV2.refuses_dimensions(384).unwrap();
        assert!(refused.contains("384") && refused.contains("256, 512 or 1024"));
        assert!(BedrockModel::TitanV1
            .refuses_dimensions(1536)
            .unwrap()
            .contains("fixed dimension (1536)"));
        assert!(BedrockModel::CohereV3.refuses_dimensions(1024).is_some());
    }

    #[test]
    fn model_ids_are_percent_encoded_in_the_path_and_regions_checked() {
        assert_eq!(
            model_path("amazon.titan-embed-text-v2:0", "invoke"),
            "/model/amazon.titan-embed-text-v2%3A0/invoke"
        );
        assert!(is_region_name("us-east-1") && is_region_name("ap-southeast-2"));
        assert!(!is_region_name("us-east") && !is_region_name("US-EAST-1"));
        assert!(!is_region_name("us-east-1/x"));
    }

    #[test]
    fn answers_of_both_families_are_read() {
        let titan = json!({"embedding": [0.5, 0.25], "inputTextTokenCount": 7});
        let (items, tokens) = answer_items(&titan).unwrap();
        assert_eq!((items.len(), tokens), (1, 7));
        let cohere =
            json!({"embeddings": [[1.0], [2.0]], "id": "x", "response_type": "embeddings_floats"});
        let (items, tokens) = answer_items(&cohere).unwrap();
        assert_eq!((items.len(), tokens), (2, 0));
        assert!(answer_items(&json!({"message": "x"}))
            .unwrap_err()
            .contains("neither"));
    }
}
