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

use super::stopwords::{is_stop_word_key, stop_word_key, LONGEST_STOP_WORD};
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
                // words with a capital are copied. A word short enough to be a stop word
                // is looked up as one integer, read and lower-cased in place.
                let bytes = text.as_bytes();
                let mut lowered = String::new();
                for_each_ascii_word(bytes, |start, end, has_capital| {
                    let length = end - start;
                    if length <= LONGEST_STOP_WORD {
                        let word = if start + 8 <= bytes.len() {
                            u64::from_le_bytes(bytes[start..start + 8].try_into().expect("8 bytes"))
                                & (u64::MAX >> ((8 - length) * 8))
                        } else {
                            bytes[start..end]
                                .iter()
                                .rev()
                                .fold(0, |word, &byte| (word << 8) | u64::from(byte))
                        };
                        let word = word | (ascii_range(word, b'A', b'Z') >> 2);
                        if is_stop_word_key(stop_word_key(word, length)) {
                            return;
                        }
                    }
                    visit(ascii_lower_case(
                        &text[start..end],
                        has_capital,
                        &mut lowered,
                    ));
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

/// Every byte of a word holding `byte`.
const fn bytes_of(byte: u8) -> u64 {
    0x0101_0101_0101_0101 * byte as u64
}

/// The high bit of each byte of `word` (8 ASCII bytes) that is in `low..=high`, others 0:
/// adding `0x80 - low` sets a byte's high bit when it is at least `low`, adding
/// `0x7f - high` when it is above `high`, and no ASCII byte carries into the next.
#[inline]
fn ascii_range(word: u64, low: u8, high: u8) -> u64 {
    word.wrapping_add(bytes_of(0x80 - low))
        & !word.wrapping_add(bytes_of(0x7f - high))
        & bytes_of(0x80)
}

/// The high bits of the bytes of `flags` gathered into its low 8 bits, byte `i`'s as bit `i`.
#[inline]
fn gather_high_bits(flags: u64) -> u64 {
    (flags >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Bit `i` of the first mask is set when byte `i` of `block` is an ASCII letter or digit,
/// of the second when it is an upper-case letter.
#[inline]
fn classify_block(block: &[u8; 64]) -> (u64, u64) {
    let mut words = 0;
    let mut capitals = 0;
    for (index, chunk) in block.chunks_exact(8).enumerate() {
        let bytes = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let upper = ascii_range(bytes, b'A', b'Z');
        let word = upper
            | ascii_range(bytes | bytes_of(0x20), b'a', b'z')
            | ascii_range(bytes, b'0', b'9');
        words |= gather_high_bits(word) << (8 * index);
        capitals |= gather_high_bits(upper) << (8 * index);
    }
    (words, capitals)
}

/// Calls `visit` with the start and end of each maximal run of ASCII letters and digits
/// in `text`, which is ASCII (the words [`for_each_word`] finds there), in order, and
/// whether it holds a capital. The bytes are classified 8 at a time into a bit per byte,
/// 64 bytes at once, and the words are read off the bits.
fn for_each_ascii_word(text: &[u8], mut visit: impl FnMut(usize, usize, bool)) {
    let mut word_start: Option<usize> = None;
    let mut has_capital = false;
    let mut padded = [0u8; 64];
    for (number, chunk) in text.chunks(64).enumerate() {
        let base = number * 64;
        let block: &[u8; 64] = match chunk.try_into() {
            Ok(block) => block,
            Err(_) => {
                // The last, short block, followed by bytes that end any word.
                padded[..chunk.len()].copy_from_slice(chunk);
                &padded
            }
        };
        let (words, capitals) = classify_block(block);
        // The bits before `at` are read.
        let mut at = 0u32;
        loop {
            if let Some(start) = word_start {
                let ends = !words >> at;
                if ends == 0 {
                    // The word goes on into the next block.
                    has_capital |= capitals >> at != 0;
                    break;
                }
                let end = at + ends.trailing_zeros();
                has_capital |= (capitals & ((1u64 << end) - 1)) >> at != 0;
                visit(start, base + end as usize, has_capital);
                word_start = None;
                has_capital = false;
                at = end;
            }
            let starts = if at < 64 { words >> at } else { 0 };
            if starts == 0 {
                break;
            }
            at += starts.trailing_zeros();
            word_start = Some(base + at as usize);
        }
    }
    if let Some(start) = word_start {
        visit(start, text.len(), has_capital);
    }
}

/// The ASCII `word` lower-cased: itself without a capital, else a copy in `lowered`.
fn ascii_lower_case<'w>(word: &'w str, has_capital: bool, lowered: &'w mut String) -> &'w str {
    if !has_capital {
        return word;
    }
    lowered.clear();
    lowered.push_str(word);
    lowered.make_ascii_lowercase();
    lowered
}

/// Calls `visit` with each of [`super::word_tokens`]' tokens of `text` (chatcli's
/// tokens, lower-cased, stop words kept), in order, without a string per token: ASCII
/// words without a capital are slices of `text`.
pub fn for_each_word_token(text: &str, mut visit: impl FnMut(&str)) {
    if text.is_ascii() {
        let mut lowered = String::new();
        for_each_ascii_word(text.as_bytes(), |start, end, has_capital| {
            visit(ascii_lower_case(
                &text[start..end],
                has_capital,
                &mut lowered,
            ));
        });
    } else {
        for_each_word(&text.to_lowercase(), visit);
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
    fn word_token_visits_are_word_tokens() {
        for text in [
            "Use main.go; the Configuração é_ótima! v2",
            "The QUICK brown fox, and the lazy dog's 42 bones",
            "  leading and trailing  ",
            "",
            "ΣΊΣΥΦΟΣ Straße",
        ] {
            let mut visited: Vec<String> = Vec::new();
            for_each_word_token(text, |token| visited.push(token.to_owned()));
            assert_eq!(visited, crate::text::word_tokens(text), "{text:?}");
        }
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
    fn chatcli_ascii_words_match_word_tokens_across_blocks() {
        // Pseudo-random ASCII texts of every byte value, letters and stop words made
        // common, up to three 64-byte blocks long, so words start, end and cross block
        // boundaries everywhere.
        let pieces: Vec<String> = (0u8..128)
            .map(|byte| (byte as char).to_string())
            .chain(["THE", "of", "Quando", "a", "Xy", "don't", "AbC", "is"].map(String::from))
            .collect();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..3000 {
            let mut text = String::new();
            while text.len() < (state >> 40) as usize % 200 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let piece = &pieces[(state >> 33) as usize % pieces.len()];
                text.push_str(piece);
                if state >> 63 == 1 {
                    text.push_str("ab");
                }
            }
            let expected: Vec<String> = crate::text::word_tokens(&text)
                .into_iter()
                .filter(|token| !is_stop_word(token))
                .collect();
            assert_eq!(Analyzer::Chatcli.terms(&text), expected, "{text:?}");
        }
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
