//! "Did you mean" hints: the known name closest to a mistyped one, for flags, config
//! keys, metric and configuration names. Pure string functions with no knowledge of
//! where the names come from.
//!
//! A name is suggested only when it is a plausible typo of the one given: within one
//! edit for names of up to five characters, two for longer ones, where swapping two
//! neighbouring characters is one edit ([`strsim::osa_distance`]). A fixed bound of two
//! edits would turn one short name into another (`Rprec` into `bpref`, `R@5` into
//! `P@1`), which is no typo but a different thing.

/// " (did you mean X?)" when a known name is a plausible typo of `name`.
pub fn suggestion(name: &str, known: &[&str]) -> String {
    closest(name, known.iter().copied())
        .map(|candidate| format!(" (did you mean {candidate:?}?)"))
        .unwrap_or_default()
}

/// The known name `name` is a plausible typo of, the closest when several are.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|candidate| (strsim::osa_distance(name, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= typo_bound(name, candidate))
        .min()
        .map(|(_, candidate)| candidate)
}

/// The most edits a typo of one of two names makes: one when the shorter has up to five
/// characters, else two.
fn typo_bound(a: &str, b: &str) -> usize {
    if a.chars().count().min(b.chars().count()) <= 5 {
        1
    } else {
        2
    }
}

/// For serde's "unknown field `x`, expected one of `a`, `b`, ..." (or "expected `a` or
/// `b`"), the closest expected name as a hint, when one is a plausible typo.
pub fn unknown_field_hint(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (field, expected) = rest.split_once('`')?;
    let known = expected.split('`').skip(1).step_by(2);
    closest(field, known).map(|candidate| format!("did you mean `{candidate}`?"))
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
    fn suggestions_are_plausible_typos() {
        assert_eq!(
            super::suggestion("hyde3b", &["hyde-3b", "hybrid"]),
            " (did you mean \"hyde-3b\"?)"
        );
        assert_eq!(super::suggestion("zzz", &["hyde-3b"]), "");
        // Two neighbouring characters swapped are one edit.
        assert_eq!(
            super::suggestion("ndgc@10", &["ndcg@10", "ndcg@1"]),
            " (did you mean \"ndcg@10\"?)"
        );
        assert_eq!(
            super::suggestion("blnd", &["blend"]),
            " (did you mean \"blend\"?)"
        );
        // Two edits turn a short name into another name, not into its spelling.
        assert_eq!(super::suggestion("rprec", &["bpref", "map", "mrr"]), "");
        assert_eq!(super::suggestion("r@5", &["p@1"]), "");
        assert_eq!(super::closest("baseline", ["engine", "embedder"]), None);
        // Longer names take two edits.
        assert_eq!(
            super::closest("min_cosin", ["min_cosine", "min_query_chars"]),
            Some("min_cosine")
        );
        assert_eq!(
            super::closest("vector_topk", ["vector_top_k"]),
            Some("vector_top_k")
        );
    }
}
