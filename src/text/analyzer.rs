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
        let mut terms = Vec::new();
        self.for_each_term(text, |term| terms.push(term.to_owned()));
        terms
    }

    /// Calls `visit` with each index term of `text`, in order (repeats kept), as
    /// [`Self::terms`] lists them but without a string per term: chatcli's terms are
    /// slices of the lower-cased text.
    pub fn for_each_term(self, text: &str, mut visit: impl FnMut(&str)) {
        match self {
            // word_tokens' split, with stop words dropped.
            Analyzer::Chatcli if text.is_ascii() => {
                // Lower-casing ASCII maps each byte to one byte: the words of the
                // lower-cased text are the text's words, each lower-cased, so only the
                // words with a capital are copied.
                let mut lowered = String::new();
                for_each_ascii_word(text, |word, has_capital| {
                    let word = if has_capital {
                        lowered.clear();
                        lowered.push_str(word);
                        lowered.make_ascii_lowercase();
                        lowered.as_str()
                    } else {
                        word
                    };
                    if !is_stop_word(word) {
                        visit(word);
                    }
                });
            }
            Analyzer::Chatcli => {
                for_each_word(&text.to_lowercase(), |word| {
                    if !is_stop_word(word) {
                        visit(word);
                    }
                });
            }
            Analyzer::English => {
                let stemmer = Stemmer::create(Algorithm::English);
                for word in text.unicode_words() {
                    let word = word.to_lowercase();
                    let word = word
                        .strip_suffix("'s")
                        .or_else(|| word.strip_suffix("\u{2019}s"))
                        .unwrap_or(&word);
                    if !word.is_empty() && LUCENE_ENGLISH_STOP_WORDS.binary_search(&word).is_err() {
                        visit(&stemmer.stem(word));
                    }
                }
            }
        }
    }
}

/// What [`for_each_ascii_word`] reads off each ASCII byte: [`WORD`] for a letter or
/// digit, with [`CAPITAL`] for an upper-case letter; 0 for any other byte.
const ASCII_CLASSES: [u8; 128] = {
    let mut classes = [0u8; 128];
    let mut byte = 0;
    while byte < 128 {
        let character = byte as u8;
        if character.is_ascii_alphanumeric() {
            classes[byte] = WORD;
        }
        if character.is_ascii_uppercase() {
            classes[byte] |= CAPITAL;
        }
        byte += 1;
    }
    classes
};
const WORD: u8 = 1;
const CAPITAL: u8 = 2;

/// Calls `visit` with each maximal run of ASCII letters and digits in `text`, which is
/// ASCII (the words [`for_each_word`] finds there), in order, and whether it holds a
/// capital. Each byte is classified by one table look-up.
fn for_each_ascii_word(text: &str, mut visit: impl FnMut(&str, bool)) {
    let bytes = text.as_bytes();
    let class = |position: usize| ASCII_CLASSES[usize::from(bytes[position] & 0x7f)];
    let mut position = 0;
    while position < bytes.len() {
        let mut classes = class(position);
        if classes == 0 {
            position += 1;
            continue;
        }
        let start = position;
        position += 1;
        while position < bytes.len() {
            let next = class(position);
            if next == 0 {
                break;
            }
            classes |= next;
            position += 1;
        }
        visit(&text[start..position], classes & CAPITAL != 0);
    }
}

/// Calls `visit` with each maximal run of letters and decimal digits in `text` (the
/// tokens of [`super::word_tokens`], without lower-casing), in order. ASCII bytes are
/// classified without decoding a character.
fn for_each_word(text: &str, mut visit: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    // Whether the character at `position` is a letter or digit, and its length.
    let classify = |position: usize| {
        let byte = bytes[position];
        if byte.is_ascii() {
            (byte.is_ascii_alphanumeric(), 1)
        } else {
            let character = text[position..]
                .chars()
                .next()
                .expect("a char boundary starts here");
            (is_letter_or_digit(character), character.len_utf8())
        }
    };
    let mut position = 0;
    while position < bytes.len() {
        let (in_word, width) = classify(position);
        if !in_word {
            position += width;
            continue;
        }
        let start = position;
        position += width;
        while position < bytes.len() {
            let (in_word, width) = classify(position);
            if !in_word {
                break;
            }
            position += width;
        }
        visit(&text[start..position]);
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
    fn chatcli_terms_are_word_tokens_minus_stop_words() {
        // word_tokens is chatcli's tokenizer; the analyzer must split exactly as it does,
        // non-ASCII letters, digits, combining marks and other numbers included.
        let text = "Über-cafe\u{301}s: the v\u{661}\u{662} x\u{b2}y, İstanbul's 3.5mg \
                    Configuração é_ótima!!  para você -- ΑΒΓ δ 日本語テキスト end";
        let expected: Vec<String> = crate::text::word_tokens(text)
            .into_iter()
            .filter(|token| !is_stop_word(token))
            .collect();
        assert!(expected.len() > 15);
        assert_eq!(Analyzer::Chatcli.terms(text), expected);
        assert!(Analyzer::Chatcli.terms("").is_empty());
        assert_eq!(Analyzer::Chatcli.terms("é"), vec!["é"]);
    }

    #[test]
    fn chatcli_ascii_fast_path_equals_lower_casing_first() {
        let text = "The RUNNING-costs of X2y, 3.5mg/kg; ABC's a\tb\nQUANDO quandoo Rust";
        assert!(text.is_ascii());
        let mut expected = Vec::new();
        for_each_word(&text.to_lowercase(), |word| {
            if !is_stop_word(word) {
                expected.push(word.to_owned());
            }
        });
        assert_eq!(Analyzer::Chatcli.terms(text), expected);
        assert_eq!(
            expected,
            vec!["running", "costs", "x2y", "3", "5mg", "kg", "abc", "s", "b", "quandoo", "rust"]
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
