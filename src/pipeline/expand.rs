//! Expand: once per query, for all configurations, its keywords and its hypotheses
//! (fetched from the generator in one call), and the HyDE decisions one configuration
//! makes for one query: the skip heuristics (short queries, code mentions) and how it
//! used hypotheses (`HydeOutcome`).
//!
//! It embeds nothing (`embed.rs` does, after it) and searches nothing.

use rustc_hash::FxHashMap;

use crate::configuration::{Configuration, Params};
use crate::dataset::Query;
use crate::error::Error;
use crate::fusion;
use crate::generate::{GenerationCost, GenerationFailure, HypothesisGenerator};
use crate::index::FactIndex;
use crate::text::extract_keywords;

/// A search vector's bits (see `retrieve::vector_key`).
pub(super) type VectorKey = Vec<u32>;

/// Per-query work shared by every configuration.
pub(super) struct QueryExpansion {
    pub(super) keywords: Vec<String>,
    pub(super) hypotheses: Result<Vec<String>, GenerationFailure>,
    /// chatcli `ExtractKeywords([first hypothesis])`.
    pub(super) first_hypothesis_keywords: Vec<String>,
    pub(super) query_vector: Option<Vec<f32>>,
    pub(super) hypothesis_vectors: Vec<Vec<f32>>,
    /// What generating the hypotheses cost.
    pub(super) generation_cost: GenerationCost,
    /// Why the hypotheses could not be embedded (their vector searches fall back).
    pub(super) hypothesis_embedding_failure: Option<String>,
    /// Nearest facts of every vector some configuration searches, by the vector's bits.
    pub(super) search_hits: FxHashMap<VectorKey, Vec<(FactIndex, f64)>>,
    /// The engine's text ranking of the query, when an engine that ranks text serves
    /// the run and some configuration ranks text.
    pub(super) text_hits: Option<Vec<(FactIndex, f64)>>,
}

/// Why a query skipped HyDE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SkipReason {
    ShortQuery,
    FewCharacters,
    CodeMention,
    LookupIntent,
}

/// The most hypotheses any of `configurations` reads per query (0 when none uses them):
/// `num_hypotheses` of those that read it, 1 for those that read the first hypothesis
/// only (whatever their `num_hypotheses`).
pub fn max_hypotheses(configurations: &[Configuration]) -> usize {
    configurations
        .iter()
        .filter(|configuration| configuration.plan().uses_hypotheses())
        .map(|configuration| {
            if fusion::plan_reads(&configuration.plan(), "num_hypotheses") {
                configuration.params.num_hypotheses
            } else {
                1
            }
        })
        .max()
        .unwrap_or(0)
}

/// Extracts keywords and fetches hypotheses, once per query for all configurations
/// (their vectors follow, in `embed.rs`).
pub(super) fn expand_queries(
    queries: &[Query],
    generator: &dyn HypothesisGenerator,
    max_hypotheses: usize,
) -> Result<Vec<QueryExpansion>, Error> {
    let generations = if max_hypotheses == 0 {
        Vec::new()
    } else {
        generator.generate_all(queries, max_hypotheses)?
    };
    let mut generations = generations.into_iter();
    let expansions: Vec<QueryExpansion> = queries
        .iter()
        .map(|query| {
            let (hypotheses, generation_cost) = match generations.next() {
                Some(generation) => (generation.hypotheses, generation.cost),
                None => (
                    Err(GenerationFailure::NotRecorded),
                    GenerationCost::default(),
                ),
            };
            let first_hypothesis_keywords = match &hypotheses {
                Ok(texts) if !texts.is_empty() => extract_keywords(&texts[..1]),
                _ => Vec::new(),
            };
            QueryExpansion {
                keywords: extract_keywords(&[query.text.as_str()]),
                hypotheses,
                first_hypothesis_keywords,
                query_vector: None,
                hypothesis_vectors: Vec::new(),
                generation_cost,
                hypothesis_embedding_failure: None,
                search_hits: FxHashMap::default(),
                text_hits: None,
            }
        })
        .collect();
    Ok(expansions)
}

/// Whether and how a configuration used hypotheses for one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HydeOutcome {
    NotApplicable,
    Used,
    Skipped(SkipReason),
    Fallback,
}

/// The seeds' skip heuristics: very short queries and queries that name code entities
/// are answered without HyDE.
pub(super) fn skip_reason(query: &str, params: &Params) -> Option<SkipReason> {
    if params.skip_short_queries > 0
        && query.split_whitespace().count() <= params.skip_short_queries
    {
        return Some(SkipReason::ShortQuery);
    }
    if params.min_query_chars > 0 && query.chars().count() < params.min_query_chars {
        return Some(SkipReason::FewCharacters);
    }
    if params.skip_code_mentions && mentions_code(query) {
        return Some(SkipReason::CodeMention);
    }
    if params.intent_gate && query_intent(query) == QueryIntent::Lookup {
        return Some(SkipReason::LookupIntent);
    }
    None
}

/// What a query asks for, as ctx-sys's HyDE gate reads it: HyDE serves explain, how, why
/// and general questions, never lookups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryIntent {
    /// Asks where something is or to show it: a verbatim match serves it better.
    Lookup,
    Explain,
    How,
    Why,
    General,
}

/// First words of a lookup.
const LOOKUP_VERBS: [&str; 8] = [
    "find", "show", "list", "locate", "grep", "search", "open", "lookup",
];

/// Classifies `query` by these rules, in order, on its lower-cased words (each trimmed
/// of punctuation but `'`):
/// 1. a backtick or a code mention ([`mentions_code`]: a symbol or a file path), or a
///    first word in [`LOOKUP_VERBS`], or a start of "where is", "where are", "where's" or
///    "which file": [`QueryIntent::Lookup`];
/// 2. a first word "how": [`QueryIntent::How`]; "why": [`QueryIntent::Why`];
/// 3. a first word "explain" or "describe", or a start of "what is", "what are" or
///    "what's": [`QueryIntent::Explain`];
/// 4. anything else: [`QueryIntent::General`].
pub fn query_intent(query: &str) -> QueryIntent {
    let words: Vec<String> = query
        .split_whitespace()
        .map(|word| {
            word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase()
        })
        .filter(|word| !word.is_empty())
        .take(2)
        .collect();
    let first = words.first().map_or("", String::as_str);
    let second = words.get(1).map_or("", String::as_str);
    let lookup_start = LOOKUP_VERBS.contains(&first)
        || first == "where's"
        || (first == "where" && matches!(second, "is" | "are"))
        || (first == "which" && second == "file");
    if mentions_code(query) || lookup_start {
        QueryIntent::Lookup
    } else if first == "how" {
        QueryIntent::How
    } else if first == "why" {
        QueryIntent::Why
    } else if matches!(first, "explain" | "describe" | "what's")
        || (first == "what" && matches!(second, "is" | "are"))
    {
        QueryIntent::Explain
    } else {
        QueryIntent::General
    }
}

/// A backtick, or a word shaped like code: `snake_case`, `camelCase`, `a::b`, `call()`,
/// `file.ext`.
pub fn mentions_code(query: &str) -> bool {
    if query.contains('`') {
        return true;
    }
    query.split_whitespace().any(|word| {
        let word =
            word.trim_matches(|c: char| !c.is_alphanumeric() && c != '(' && c != ')' && c != '_');
        let chars: Vec<char> = word.chars().collect();
        let inner_underscore = chars
            .windows(3)
            .any(|w| w[0].is_alphanumeric() && w[1] == '_' && w[2].is_alphanumeric());
        let camel = chars
            .windows(2)
            .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
        let file_extension = word.rsplit_once('.').is_some_and(|(stem, extension)| {
            stem.chars().count() >= 2
                && (1..=4).contains(&extension.len())
                && extension.chars().all(|c| c.is_ascii_lowercase())
        });
        inner_underscore || camel || word.contains("::") || word.ends_with("()") || file_extension
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-labelled queries, ctx-sys's own examples first.
    #[test]
    fn query_intents() {
        use QueryIntent::*;
        for (query, intent) in [
            ("How do I reset my password?", How),
            ("How does caching work?", How),
            ("Find `AuthService.authenticate()`", Lookup),
            ("where is parse_config defined", Lookup),
            ("Where's the retry limit set?", Lookup),
            ("where are user rows stored", Lookup),
            ("show me the deploy settings", Lookup),
            ("List every migration", Lookup),
            ("which file holds the schema", Lookup),
            ("what does src/main.rs do", Lookup),
            ("why does the build fail on CI", Why),
            ("explain cache invalidation policy", Explain),
            ("What is the cache policy?", Explain),
            ("what's our logging format", Explain),
            ("where does observability trace output go", General),
            ("redis eviction ttl", General),
            ("finding a flat to rent", General),
            ("", General),
        ] {
            assert_eq!(query_intent(query), intent, "{query:?}");
        }
    }

    #[test]
    fn skip_rules_in_characters_and_intents() {
        let params = Params {
            min_query_chars: 10,
            ..Params::default()
        };
        assert_eq!(
            skip_reason("short q", &params),
            Some(SkipReason::FewCharacters)
        );
        // 9 characters, 14 bytes: characters are counted.
        assert_eq!(
            skip_reason("açãoçãoç", &params),
            Some(SkipReason::FewCharacters)
        );
        assert_eq!(skip_reason("exactly 10", &params), None);
        let gated = Params {
            intent_gate: true,
            ..Params::default()
        };
        assert_eq!(
            skip_reason("find the retry limit", &gated),
            Some(SkipReason::LookupIntent)
        );
        assert_eq!(skip_reason("how are retries limited", &gated), None);
        // The word rule runs first: a two-word lookup is a short query.
        let both = Params {
            skip_short_queries: 2,
            ..gated
        };
        assert_eq!(
            skip_reason("find retries", &both),
            Some(SkipReason::ShortQuery)
        );
    }

    #[test]
    fn code_mentions() {
        for query in [
            "why does `go vet` fail",
            "where is parse_config defined",
            "what does getUserName return",
            "std::mem::take semantics",
            "who calls init()",
            "edit main.go",
        ] {
            assert!(mentions_code(query), "{query}");
        }
        for query in [
            "how do we deploy to staging",
            "what is the cache policy?",
            "e.g. the usual setup",
        ] {
            assert!(!mentions_code(query), "{query}");
        }
    }
}
