//! Text processing shared by every lexical signal and the deterministic embedders.
//!
//! Owns tokenization (chatcli's Unicode letter/digit split), the English + Portuguese
//! stop-word list, the BM25 analyzers and chatcli's keyword extraction and 3a keyword merge. It must stay
//! free of I/O and of any notion of facts or queries: it only turns strings into tokens.

mod analyzer;
mod chunk;
mod keywords;
mod stopwords;
mod tokenize;

pub use analyzer::{for_each_word_token, Analyzer};
pub use chunk::ChunkSpec;
pub use keywords::{extract_keywords, merge_keywords, MAX_KEYWORDS, MIN_KEYWORD_CHARS};
pub use stopwords::is_stop_word;
pub use tokenize::{is_letter_or_digit, word_tokens};
