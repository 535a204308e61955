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

/// True when `word` (already lower-cased) is one of chatcli's stop words.
pub fn is_stop_word(word: &str) -> bool {
    word.len() <= LONGEST_STOP_WORD && STOP_WORDS.binary_search(&word).is_ok()
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
    }
}
