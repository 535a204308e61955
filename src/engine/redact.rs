//! Passwords in engine addresses: where they sit, and the address as messages, reports
//! and progress lines show it.
//!
//! An engine's `url` may carry a password in three forms, each of which the clients
//! accept:
//!
//! - a URL's user info: `http://user:PASSWORD@host:8000` (Chroma, sent as HTTP basic
//!   authentication), `postgresql://user:PASSWORD@host/db`;
//! - a URL's query parameter: `postgresql://user@host/db?password=PASSWORD`;
//! - a libpq key=value string: `host=h user=u password=PASSWORD dbname=db`, the value
//!   plain or single-quoted (`password='two words'`), with backslash escapes.
//!
//! [`redacted`] replaces each password with `<redacted>`; [`passwords`] yields them as the
//! server and the client see them (percent-decoded, unescaped, and as written), so
//! messages that quote one can be scrubbed with [`scrub`]. The rules err towards hiding
//! too much: in a URL, everything from the first `:` after the scheme to the last `@` is
//! taken as a password when that `:` comes before that `@` (the PostgreSQL client takes
//! the user info up to the first `@`, HTTP up to the last one of the authority).

use std::ops::Range;

/// What stands where a password was.
pub const REDACTED: &str = "<redacted>";

/// `address` with every password in it replaced by [`REDACTED`].
pub fn redacted(address: &str) -> String {
    let mut shown = String::with_capacity(address.len());
    let mut copied = 0;
    for range in password_ranges(address) {
        shown.push_str(&address[copied..range.start]);
        shown.push_str(REDACTED);
        copied = range.end;
    }
    shown.push_str(&address[copied..]);
    shown
}

/// Every password in `address`: as written, and as the client reads it (percent-decoded
/// in a URL, unquoted and unescaped in a key=value string), without duplicates.
pub fn passwords(address: &str) -> Vec<String> {
    let url = address.contains("://");
    let mut found: Vec<String> = Vec::new();
    for range in password_ranges(address) {
        let written = &address[range];
        let read = if url {
            percent_encoding::percent_decode_str(written)
                .decode_utf8_lossy()
                .into_owned()
        } else {
            unquoted(written)
        };
        for form in [written.to_owned(), read] {
            if !form.is_empty() && !found.contains(&form) {
                found.push(form);
            }
        }
    }
    // Longest first, so a password that contains another is replaced whole.
    found.sort_by_key(|password| std::cmp::Reverse(password.len()));
    found
}

/// `text` with every one of `passwords` replaced by [`REDACTED`].
pub fn scrub(passwords: &[String], text: &str) -> String {
    passwords.iter().fold(text.to_owned(), |text, password| {
        text.replace(password.as_str(), REDACTED)
    })
}

/// Where the passwords sit in `address`, in order, not overlapping.
fn password_ranges(address: &str) -> Vec<Range<usize>> {
    let mut ranges = match address.find("://") {
        Some(scheme_end) => url_passwords(address, scheme_end + 3),
        None => key_value_passwords(address),
    };
    ranges.retain(|range| !range.is_empty());
    ranges.sort_by_key(|range| range.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

/// The user-info password and the `password` query parameters of a URL whose authority
/// starts at byte `start`.
fn url_passwords(url: &str, start: usize) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let rest = &url[start..];
    if let (Some(colon), Some(at)) = (rest.find(':'), rest.rfind('@')) {
        if colon < at {
            ranges.push(start + colon + 1..start + at);
        }
    }
    if let Some(question) = url.find('?') {
        let mut offset = question + 1;
        for pair in url[question + 1..].split('&') {
            if let Some((key, _)) = pair.split_once('=') {
                let decoded = percent_encoding::percent_decode_str(key).decode_utf8_lossy();
                if is_password_key(&decoded) {
                    ranges.push(offset + key.len() + 1..offset + pair.len());
                }
            }
            offset += pair.len() + 1;
        }
    }
    ranges
}

/// The values of the password keys of a libpq key=value string, quotes included. An
/// unterminated value runs to the end.
fn key_value_passwords(text: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    let skip_space = |mut at: usize| {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        at
    };
    loop {
        at = skip_space(at);
        if at >= bytes.len() {
            return ranges;
        }
        let key_start = at;
        while at < bytes.len() && !bytes[at].is_ascii_whitespace() && bytes[at] != b'=' {
            at += 1;
        }
        let key = &text[key_start..at];
        at = skip_space(at);
        if at >= bytes.len() || bytes[at] != b'=' {
            // Not key=value: the client refuses it; hide the rest, which may hold one.
            if at < bytes.len() {
                ranges.push(at..bytes.len());
            }
            return ranges;
        }
        at = skip_space(at + 1);
        let value_start = at;
        if bytes.get(at) == Some(&b'\'') {
            at += 1;
            while at < bytes.len() && bytes[at] != b'\'' {
                at += if bytes[at] == b'\\' { 2 } else { 1 };
            }
            at = (at + 1).min(bytes.len());
        } else {
            while at < bytes.len() && !bytes[at].is_ascii_whitespace() {
                at += if bytes[at] == b'\\' { 2 } else { 1 };
            }
            at = at.min(bytes.len());
        }
        if is_password_key(key) {
            ranges.push(value_start..at);
        }
    }
}

/// `password`, and keys such as `sslpassword` that hold one too.
fn is_password_key(key: &str) -> bool {
    key.to_ascii_lowercase().ends_with("password")
}

/// A key=value string's value as the client reads it: without its quotes, escapes
/// resolved.
fn unquoted(value: &str) -> String {
    let inner = value
        .strip_prefix('\'')
        .map(|inner| inner.strip_suffix('\'').unwrap_or(inner))
        .unwrap_or(value);
    let mut read = String::with_capacity(inner.len());
    let mut characters = inner.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => read.extend(characters.next()),
            other => read.push(other),
        }
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_user_info_passwords_are_redacted() {
        assert_eq!(
            redacted("postgresql://hyde:s3cret@127.0.0.1:5432/db"),
            "postgresql://hyde:<redacted>@127.0.0.1:5432/db"
        );
        assert_eq!(
            redacted("http://admin:chroma-pass@127.0.0.1:8000"),
            "http://admin:<redacted>@127.0.0.1:8000"
        );
        // An '@' or '/' inside the password: the last '@' ends it.
        assert_eq!(
            redacted("http://u:p@ss/w@host:8000"),
            "http://u:<redacted>@host:8000"
        );
        // No password: nothing changes, the port's colon included.
        for address in [
            "postgresql://hyde@127.0.0.1:5432/db",
            "http://127.0.0.1:8000",
            "http://user@host:8000/x",
        ] {
            assert_eq!(redacted(address), address);
            assert!(passwords(address).is_empty(), "{address}");
        }
    }

    #[test]
    fn url_query_passwords_are_redacted_whatever_the_keys_encoding() {
        assert_eq!(
            redacted("postgresql://hyde@127.0.0.1/db?password=s3cret&sslmode=disable"),
            "postgresql://hyde@127.0.0.1/db?password=<redacted>&sslmode=disable"
        );
        assert_eq!(
            redacted("postgres://u:p@h/db?password=x"),
            "postgres://u:<redacted>@h/db?password=<redacted>"
        );
        // %70 is 'p': the client decodes the key, so this is a password too.
        assert_eq!(
            redacted("postgresql://h/db?%70assword=s3cret"),
            "postgresql://h/db?%70assword=<redacted>"
        );
    }

    #[test]
    fn key_value_passwords_are_redacted_plain_quoted_and_escaped() {
        assert_eq!(
            redacted("host=127.0.0.1 user=hyde password=s3cret dbname=db"),
            "host=127.0.0.1 user=hyde password=<redacted> dbname=db"
        );
        assert_eq!(
            redacted("host=h password = 'two words' dbname=db"),
            "host=h password = <redacted> dbname=db"
        );
        assert_eq!(
            redacted(r"password='it\'s here' user=u"),
            "password=<redacted> user=u"
        );
        assert_eq!(
            redacted(r"password=back\ slash user=u"),
            "password=<redacted> user=u"
        );
        // Unterminated: hidden to the end.
        assert_eq!(
            redacted("user=u password='open"),
            "user=u password=<redacted>"
        );
        assert_eq!(redacted("host=h user=u"), "host=h user=u");
    }

    #[test]
    fn passwords_come_as_written_and_as_read() {
        assert_eq!(
            passwords("postgresql://u:two%20words@h/db"),
            vec!["two%20words".to_owned(), "two words".to_owned()]
        );
        assert_eq!(
            passwords(r"user=u password='it\'s' dbname=d"),
            vec![r"'it\'s'".to_owned(), "it's".to_owned()]
        );
        let found = passwords("postgresql://u:first@h/db?password=second");
        assert_eq!(found, vec!["second".to_owned(), "first".to_owned()]);
        assert_eq!(
            scrub(&found, "tried first, then second"),
            "tried <redacted>, then <redacted>"
        );
    }
}
