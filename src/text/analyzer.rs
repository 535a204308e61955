//! Analyzers for BM25: how text becomes index terms.
//!
//! - `chatcli` (the default): chatcli's letter/digit tokens, lower-cased, minus its 121
//!   English and Portuguese stop words, no stemming;
//! - `english`: Lucene's `EnglishAnalyzer`, which Anserini uses for its BEIR baselines —
//!   Unicode word boundaries (UAX #29, as Lucene's `StandardTokenizer`), lower-case,
//!   trailing possessive `'s` removed, Lucene's 33 English stop words removed, then the
//!   Snowball English (Porter2) stemmer. Lucene stems with the original Porter
//!   algorithm; Porter2 is its revision and agrees on almost every word.

use std::fmt;

use rust_stemmers::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use super::{is_letter_or_digit, is_stop_word};

/// Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`, sorted.
const LUCENE_ENGLISH_STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Which analyzer BM25 indexes and searches with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Analyzer {
    /// chatcli tokens minus chatcli's stop words, no stemming
    #[default]
    Chatcli,
    /// Lucene EnglishAnalyzer: UAX #29 words, possessives, Lucene stop words, Porter2 stems
    English,
}

impl Analyzer {
    /// Every analyzer, with a line on each (for help texts).
    pub const CHOICES: [(Analyzer, &'static str); 2] = [
        (
            Analyzer::Chatcli,
            "chatcli tokens minus chatcli's stop words, no stemming",
        ),
        (
            Analyzer::English,
            "Lucene EnglishAnalyzer: UAX #29 words, possessives, Lucene stop words, Porter2 stems",
        ),
    ];
}

impl fmt::Display for Analyzer {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Analyzer::Chatcli => "chatcli",
            Analyzer::English => "english",
        })
    }
}

impl Analyzer {
    /// The index terms of `text`, in order (repeats kept).
    pub fn terms(self, text: &str) -> Vec<String> {
        match self {
            // word_tokens' split, with stop words dropped before they are allocated.
            Analyzer::Chatcli => text
                .to_lowercase()
                .split(|character: char| !is_letter_or_digit(character))
                .filter(|token| !token.is_empty() && !is_stop_word(token))
                .map(str::to_owned)
                .collect(),
            Analyzer::English => {
                let stemmer = Stemmer::create(Algorithm::English);
                text.unicode_words()
                    .map(|word| {
                        let word = word.to_lowercase();
                        match word
                            .strip_suffix("'s")
                            .or_else(|| word.strip_suffix("\u{2019}s"))
                        {
                            Some(stem) => stem.to_owned(),
                            None => word,
                        }
                    })
                    .filter(|word| {
                        !word.is_empty()
                            && LUCENE_ENGLISH_STOP_WORDS
                                .binary_search(&word.as_str())
                                .is_err()
                    })
                    .map(|word| stemmer.stem(&word).into_owned())
                    .collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_analyzer_follows_lucene_steps() {
        assert!(LUCENE_ENGLISH_STOP_WORDS
            .windows(2)
            .all(|pair| pair[0] < pair[1]));
        assert_eq!(
            Analyzer::English.terms("The patient's Running-costs are RISING, and 3.5 mg/kg isn't"),
            vec!["patient", "run", "cost", "rise", "3.5", "mg", "kg", "isn't"]
        );
        // Words Lucene's list keeps but chatcli's drops, and stems.
        assert_eq!(
            Analyzer::English.terms("what studies"),
            vec!["what", "studi"]
        );
    }

    #[test]
    fn chatcli_analyzer_is_the_unstemmed_default() {
        assert_eq!(Analyzer::default(), Analyzer::Chatcli);
        assert_eq!(
            Analyzer::Chatcli.terms("The running costs, what studies"),
            vec!["running", "costs", "studies"]
        );
    }
}
