//! chatcli's stop-word list: 121 English and Portuguese words, kept verbatim from the
//! seed system (chatcli's `ExtractKeywords`, `retriever.go`). Used by keyword extraction and by the BM25
//! tokenizer, so both lexical signals ignore the same function words.

/// The list, sorted (for reading; lookups go through [`STOP_WORD_TABLE`]).
const STOP_WORDS: [&str; 121] = [
    "a", "about", "ali", "an", "and", "aqui", "are", "as", "at", "be", "been", "being", "but",
    "by", "can", "com", "como", "could", "da", "das", "de", "did", "do", "does", "don't", "dos",
    "ela", "ele", "eles", "em", "esse", "esta", "eu", "for", "from", "had", "has", "have", "he",
    "her", "him", "his", "how", "i", "if", "in", "into", "is", "isso", "isto", "it", "its", "just",
    "mais", "mas", "may", "me", "meu", "might", "my", "na", "nas", "no", "nor", "nos", "not", "of",
    "on", "onde", "or", "os", "ou", "our", "out", "para", "por", "qual", "quando", "que", "quem",
    "se", "seu", "she", "should", "sim", "so", "sua", "than", "that", "the", "their", "them",
    "then", "these", "they", "this", "those", "to", "too", "tu", "um", "uma", "up", "us", "very",
    "voce", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will",
    "with", "would", "you", "your",
];

/// The longest stop word, in bytes: longer words skip the search (most words of a
/// technical text are longer).
pub const LONGEST_STOP_WORD: usize = {
    let mut longest = 0;
    let mut index = 0;
    while index < STOP_WORDS.len() {
        if STOP_WORDS[index].len() > longest {
            longest = STOP_WORDS[index].len();
        }
        index += 1;
    }
    longest
};

/// A word of at most 7 bytes as one integer: its bytes little-endian (the first byte
/// lowest) and its length in the top byte, so different words get different keys.
const fn packed(word: &[u8]) -> u64 {
    let mut key = 0u64;
    let mut index = 0;
    while index < word.len() {
        key |= (word[index] as u64) << (8 * index);
        index += 1;
    }
    stop_word_key(key, word.len())
}

/// The key [`is_stop_word_key`] takes for a word of `length` bytes (at most
/// [`LONGEST_STOP_WORD`]), given its bytes little-endian in `bytes`, 0 above them.
pub const fn stop_word_key(bytes: u64, length: usize) -> u64 {
    bytes | (length as u64) << 56
}

/// Slots of [`STOP_WORD_TABLE`]: a power of two, about twice the list.
const STOP_WORD_SLOTS: usize = 256;

/// The slot where the search for packed word `key` starts.
const fn home_slot(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % STOP_WORD_SLOTS
}

/// The stop words packed, in an open-addressing table (linear probing, 0 for an empty
/// slot): membership is a probe or two over integers, without comparing strings.
const STOP_WORD_TABLE: [u64; STOP_WORD_SLOTS] = {
    assert!(LONGEST_STOP_WORD <= 7);
    assert!(STOP_WORDS.len() * 2 <= STOP_WORD_SLOTS);
    let mut table = [0u64; STOP_WORD_SLOTS];
    let mut index = 0;
    while index < STOP_WORDS.len() {
        let key = packed(STOP_WORDS[index].as_bytes());
        let mut slot = home_slot(key);
        while table[slot] != 0 {
            slot = (slot + 1) % STOP_WORD_SLOTS;
        }
        table[slot] = key;
        index += 1;
    }
    table
};

/// True when `word` (already lower-cased) is one of chatcli's stop words.
pub fn is_stop_word(word: &str) -> bool {
    if word.is_empty() || word.len() > LONGEST_STOP_WORD {
        return false;
    }
    is_stop_word_key(packed(word.as_bytes()))
}

/// True when the word [`stop_word_key`] made `key` of is one of chatcli's stop words.
#[inline]
pub fn is_stop_word_key(key: u64) -> bool {
    let mut slot = home_slot(key);
    loop {
        match STOP_WORD_TABLE[slot] {
            0 => return false,
            stored if stored == key => return true,
            _ => slot = (slot + 1) % STOP_WORD_SLOTS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_sorted_unique_and_complete() {
        assert!(STOP_WORDS.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(is_stop_word("don't"));
        assert!(is_stop_word("voce"));
        assert!(is_stop_word("the"));
        assert!(!is_stop_word("você"));
        assert!(!is_stop_word("rust"));
        assert_eq!(LONGEST_STOP_WORD, "quando".len());
        assert!(!is_stop_word("quandoo"));
        // Every listed word is found, and no prefix or extension of one that is not listed.
        for word in STOP_WORDS {
            assert!(is_stop_word(word), "{word}");
            let longer = format!("{word}x");
            assert_eq!(is_stop_word(&longer), STOP_WORDS.contains(&longer.as_str()));
            let shorter = &word[..word.len() - 1];
            assert_eq!(is_stop_word(shorter), STOP_WORDS.contains(&shorter));
        }
        assert!(!is_stop_word(""));
        // A trailing 0 byte makes another word.
        assert!(is_stop_word("a") && !is_stop_word("a\0"));
    }
}
