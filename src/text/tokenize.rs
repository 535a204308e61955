//! chatcli's fact tokenizer: lower-case, then split on every character that is not a
//! Unicode letter (general category L*) or decimal digit (Nd).
//!
//! Rust's `char::is_alphabetic` / `is_numeric` use different Unicode properties
//! (Alphabetic includes combining marks and letter numbers; Numeric includes No/Nl), so
//! the general category is looked up explicitly to match Go's `unicode.IsLetter` and
//! `unicode.IsDigit` exactly.

use unicode_general_category::{get_general_category, GeneralCategory};

/// True for characters in Unicode categories Lu, Ll, Lt, Lm, Lo and Nd.
pub fn is_letter_or_digit(character: char) -> bool {
    if character.is_ascii() {
        return character.is_ascii_alphanumeric();
    }
    matches!(
        get_general_category(character),
        GeneralCategory::UppercaseLetter
            | GeneralCategory::LowercaseLetter
            | GeneralCategory::TitlecaseLetter
            | GeneralCategory::ModifierLetter
            | GeneralCategory::OtherLetter
            | GeneralCategory::DecimalNumber
    )
}

/// Lower-cases `text` and returns its maximal runs of letters and decimal digits.
pub fn word_tokens(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|character: char| !is_letter_or_digit(character))
        .filter(|token| !token.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_punctuation_and_keeps_unicode_letters() {
        assert_eq!(
            word_tokens("Use main.go; Configuração é_ótima! v2"),
            vec!["use", "main", "go", "configuração", "é", "ótima", "v2"]
        );
    }

    #[test]
    fn combining_marks_and_other_numbers_split_like_go() {
        // U+0301 COMBINING ACUTE ACCENT is Mn, not a letter: Go splits there.
        assert_eq!(word_tokens("cafe\u{301}s"), vec!["cafe", "s"]);
        // U+00B2 SUPERSCRIPT TWO is No, not Nd.
        assert_eq!(word_tokens("x\u{b2}y"), vec!["x", "y"]);
        // Arabic-Indic digits are Nd.
        assert_eq!(word_tokens("v\u{661}\u{662}"), vec!["v\u{661}\u{662}"]);
    }
}
