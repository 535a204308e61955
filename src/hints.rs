//! "Did you mean" hints: the known name closest to a mistyped one, for flags, config
//! keys, metric and configuration names. Pure string functions with no knowledge of
//! where the names come from.

/// " (did you mean X?)" when a known name is within two edits of `name`.
pub fn suggestion(name: &str, known: &[&str]) -> String {
    known
        .iter()
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min()
        .map(|(_, candidate)| format!(" (did you mean {candidate:?}?)"))
        .unwrap_or_default()
}

/// For serde's "unknown field `x`, expected one of `a`, `b`, ..." (or "expected `a` or
/// `b`"), the closest expected name as a hint, when one is within two edits.
pub fn unknown_field_hint(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, expected) = rest.split_once('`')?;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    known
        .iter()
        .map(|candidate| (edit_distance(field, candidate), *candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min()
        .map(|(_, candidate)| format!("did you mean `{candidate}`?"))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    #[test]
    fn unknown_fields_get_the_closest_expected_name() {
        let message = "unknown field `bm25_kk`, expected one of `weights`, `bm25_k1`, `bm25_b`";
        assert_eq!(
            super::unknown_field_hint(message).as_deref(),
            Some("did you mean `bm25_k1`?")
        );
        let message = "unknown field `halflife`, expected `name` or `half_life_days`";
        assert_eq!(super::unknown_field_hint(message), None);
        let message = "unknown field `nme`, expected `name` or `now`";
        assert_eq!(
            super::unknown_field_hint(message).as_deref(),
            Some("did you mean `name`?")
        );
        assert_eq!(super::unknown_field_hint("invalid type: string"), None);
    }

    #[test]
    fn suggestions_come_within_two_edits() {
        assert_eq!(
            super::suggestion("hyde3b", &["hyde-3b", "hybrid"]),
            " (did you mean \"hyde-3b\"?)"
        );
        assert_eq!(super::suggestion("zzz", &["hyde-3b"]), "");
    }
}
