//! chatcli's stop-word list: 121 English and Portuguese words, kept verbatim from the
//! seed system (chatcli's `ExtractKeywords`, `retriever.go`). Used by keyword extraction and by the BM25
//! tokenizer, so both lexical signals ignore the same function words.

/// The list, sorted so membership is a binary search.
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
const LONGEST_STOP_WORD: usize = {
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

/// A word of at most 8 bytes as one integer, its bytes big-endian. No byte of a word is
/// 0, so different words get different keys.
const fn packed(word: &[u8]) -> u64 {
    let mut key = 0u64;
    let mut index = 0;
    while index < word.len() {
        key = (key << 8) | word[index] as u64;
        index += 1;
    }
    key
}

/// The stop words packed, ascending: membership is a binary search over integers,
/// without comparing strings.
const PACKED_STOP_WORDS: [u64; STOP_WORDS.len()] = {
    assert!(LONGEST_STOP_WORD <= 8);
    let mut keys = [0u64; STOP_WORDS.len()];
    let mut index = 0;
    while index < keys.len() {
        keys[index] = packed(STOP_WORDS[index].as_bytes());
        // Insertion sort: the list is short and this runs at compile time.
        let mut position = index;
        while position > 0 && keys[position - 1] > keys[position] {
            let swapped = keys[position - 1];
            keys[position - 1] = keys[position];
            keys[position] = swapped;
            position -= 1;
        }
        index += 1;
    }
    keys
};

/// True when `word` (already lower-cased) is one of chatcli's stop words.
pub fn is_stop_word(word: &str) -> bool {
    word.len() <= LONGEST_STOP_WORD
        && PACKED_STOP_WORDS
            .binary_search(&packed(word.as_bytes()))
            .is_ok()
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
    }
}
