//! Splitting a long text into overlapping windows of words, for passage-level retrieval
//! (`--chunk TOKENS,OVERLAP`).
//!
//! A "token" here is a whitespace-separated word: the unit every provider can see (the
//! local model's WordPiece vocabulary is not available to the hash or HTTP providers).
//! A window is a slice of the original text from its first word's first byte to its
//! last word's last byte, so its inner spacing and punctuation are kept. It knows
//! nothing of facts or embeddings.

use std::fmt;
use std::str::FromStr;

/// Window size and overlap, in whitespace-separated words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkSpec {
    /// Words per window (at least 1).
    pub tokens: usize,
    /// Words each window shares with the next (less than `tokens`).
    pub overlap: usize,
}

impl ChunkSpec {
    /// A spec of `tokens` words per window and `overlap` shared words, checked.
    pub fn new(tokens: usize, overlap: usize) -> Result<ChunkSpec, String> {
        if tokens == 0 {
            return Err("a chunk must hold at least 1 token".into());
        }
        if overlap >= tokens {
            return Err(format!(
                "the overlap ({overlap}) must be less than the chunk size ({tokens})"
            ));
        }
        Ok(ChunkSpec { tokens, overlap })
    }

    /// Words from one window's start to the next's.
    fn stride(self) -> usize {
        self.tokens - self.overlap
    }

    /// The windows of `text`: one when it has at most `tokens` words (the whole text,
    /// untouched, even when empty); otherwise windows starting every `tokens - overlap`
    /// words, the last one the first that reaches the text's last word.
    pub fn windows(self, text: &str) -> Vec<&str> {
        let words: Vec<(usize, usize)> = word_spans(text);
        if words.len() <= self.tokens {
            return vec![text];
        }
        let mut windows = Vec::new();
        let mut first = 0;
        loop {
            let last = (first + self.tokens).min(words.len()) - 1;
            windows.push(&text[words[first].0..words[last].1]);
            if last + 1 == words.len() {
                return windows;
            }
            first += self.stride();
        }
    }
}

impl FromStr for ChunkSpec {
    type Err = String;

    /// `TOKENS,OVERLAP` (e.g. `400,80`), or `TOKENS` alone for no overlap.
    fn from_str(text: &str) -> Result<ChunkSpec, String> {
        let expected = || format!("{text:?} is not TOKENS,OVERLAP (e.g. 400,80)");
        let (tokens, overlap) = text.split_once(',').unwrap_or((text, "0"));
        let tokens = tokens.trim().parse().map_err(|_| expected())?;
        let overlap = overlap.trim().parse().map_err(|_| expected())?;
        ChunkSpec::new(tokens, overlap)
    }
}

impl fmt::Display for ChunkSpec {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{},{}", self.tokens, self.overlap)
    }
}

/// The byte range of every whitespace-separated word of `text`.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (at, character) in text.char_indices() {
        match (character.is_whitespace(), start) {
            (true, Some(begin)) => {
                spans.push((begin, at));
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(begin) = start {
        spans.push((begin, text.len()));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_overlap_by_the_given_words_and_the_last_reaches_the_end() {
        // Ten words, windows of 4 sharing 1: starts at words 0, 3, 6; the window at 6
        // (words 6..=9) reaches the last word, so there is no fourth.
        let text = "w0 w1 w2  w3\tw4 w5\nw6 w7 w8 w9";
        let spec = ChunkSpec::new(4, 1).unwrap();
        assert_eq!(
            spec.windows(text),
            vec!["w0 w1 w2  w3", "w3\tw4 w5\nw6", "w6 w7 w8 w9"]
        );
        // Eleven words: the window at 6 ends at w9, so one more starts at 9 (w9 w10).
        assert_eq!(
            spec.windows("w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10"),
            vec!["w0 w1 w2 w3", "w3 w4 w5 w6", "w6 w7 w8 w9", "w9 w10"]
        );
    }

    #[test]
    fn a_short_text_is_one_window_left_untouched() {
        let spec = ChunkSpec::new(3, 2).unwrap();
        assert_eq!(spec.windows("  a b  c "), vec!["  a b  c "]);
        assert_eq!(spec.windows(""), vec![""]);
        // Overlap 2 of 3: a stride of one word.
        assert_eq!(spec.windows("a b c d"), vec!["a b c", "b c d"]);
    }

    #[test]
    fn specs_parse_and_are_checked() {
        assert_eq!(
            "400,80".parse::<ChunkSpec>().unwrap(),
            ChunkSpec {
                tokens: 400,
                overlap: 80
            }
        );
        assert_eq!("5".parse::<ChunkSpec>().unwrap().overlap, 0);
        assert!("80,80"
            .parse::<ChunkSpec>()
            .unwrap_err()
            .contains("less than"));
        assert!("0,0"
            .parse::<ChunkSpec>()
            .unwrap_err()
            .contains("at least 1"));
        assert!("a,b"
            .parse::<ChunkSpec>()
            .unwrap_err()
            .contains("TOKENS,OVERLAP"));
        assert_eq!(ChunkSpec::new(400, 80).unwrap().to_string(), "400,80");
    }
}
