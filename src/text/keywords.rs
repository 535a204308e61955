//! chatcli's keyword extraction (`ExtractKeywords`) and HyDE 3a keyword merge, exactly as
//! the seed system does them (chatcli's `ExtractKeywords` in `retriever.go` and its HyDE phase 3a in `hyde.go`).

use std::collections::{HashMap, HashSet};

use super::stopwords::is_stop_word;

/// Words shorter than this many Unicode characters are dropped.
pub const MIN_KEYWORD_CHARS: usize = 3;
/// chatcli returns at most this many keywords.
pub const MAX_KEYWORDS: usize = 20;

/// Punctuation trimmed from both ends of each whitespace-separated word.
const TRIMMED: &[char] = &[
    '.', ',', ';', ':', '!', '?', '"', '\'', '`', '(', ')', '[', ']', '{', '}', '#', '*', '-', '_',
    '/', '\\', '<', '>',
];

/// Extracts keywords from `texts`: lower-case, split on whitespace, trim punctuation from
/// both ends, drop short words and stop words, count, and sort by count descending then
/// word ascending (byte order, like Go's string comparison). At most [`MAX_KEYWORDS`].
pub fn extract_keywords<S: AsRef<str>>(texts: &[S]) -> Vec<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for text in texts {
        for raw_word in text.as_ref().to_lowercase().split_whitespace() {
            let word = raw_word.trim_matches(TRIMMED);
            if word.chars().count() < MIN_KEYWORD_CHARS || is_stop_word(word) {
                continue;
            }
            *counts.entry(word.to_owned()).or_default() += 1;
        }
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
    ranked.sort_by(|(word_a, count_a), (word_b, count_b)| {
        count_b.cmp(count_a).then_with(|| word_a.cmp(word_b))
    });
    ranked.truncate(MAX_KEYWORDS);
    ranked.into_iter().map(|(word, _)| word).collect()
}

/// chatcli's 3a merge: the original hints first (order and casing kept), then the new
/// keywords; duplicates are detected on the lower-cased, whitespace-trimmed form and
/// blank entries are dropped.
pub fn merge_keywords(original: &[String], expansion: &[String]) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut merged = Vec::with_capacity(original.len() + expansion.len());
    for keyword in original.iter().chain(expansion) {
        let normalized = keyword.trim().to_lowercase();
        if normalized.is_empty() || !seen.insert(normalized) {
            continue;
        }
        merged.push(keyword.clone());
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| word.to_string()).collect()
    }

    #[test]
    fn counts_then_sorts_alphabetically() {
        let keywords = extract_keywords(&["Redis cache: the cache TTL (redis) evicts keys, keys!"]);
        // cache x2, keys x2, redis x2, then evicts, ttl x1; "the" is a stop word.
        assert_eq!(
            keywords,
            strings(&["cache", "keys", "redis", "evicts", "ttl"])
        );
    }

    #[test]
    fn trims_only_the_ends_and_keeps_inner_punctuation() {
        let keywords = extract_keywords(&["Edit `main.go` -- don't touch __init__.py/"]);
        assert_eq!(
            keywords,
            strings(&["edit", "init__.py", "main.go", "touch"])
        );
    }

    #[test]
    fn drops_short_words_by_character_count_not_bytes() {
        // "é" and "çã" are 1 and 2 characters (but more bytes) and are dropped; "são" stays.
        assert_eq!(extract_keywords(&["é çã são go"]), strings(&["são"]));
    }

    #[test]
    fn caps_at_twenty() {
        let text: Vec<String> = (0..30).map(|index| format!("word{index:02}")).collect();
        assert_eq!(extract_keywords(&[text.join(" ")]).len(), MAX_KEYWORDS);
    }

    #[test]
    fn merge_keeps_original_first_and_dedupes_case_insensitively() {
        let merged = merge_keywords(
            &strings(&["Redis", "ttl"]),
            &strings(&["redis", " ", "eviction", "TTL", "policy"]),
        );
        assert_eq!(merged, strings(&["Redis", "ttl", "eviction", "policy"]));
    }
}
