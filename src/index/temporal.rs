//! chatcli's temporal signal (chatcli's phase 3b and blended ranker, `retriever.go` and `ranking.go`):
//! `(1 + ln(1 + access_count)) x exp(-days x ln2 / half_life) x (0.5 + confidence)`,
//! with `days` the fractional days between the fact's last use and the dataset's fixed
//! "now", never below 0, and confidence 0.6 when unset.

use chrono::{DateTime, Utc};

use crate::dataset::Fact;

/// chatcli's confidence for facts that do not set one.
pub const DEFAULT_CONFIDENCE: f64 = 0.6;

const SECONDS_PER_DAY: f64 = 86_400.0;

/// Fractional days from `fact`'s last use (else its creation) to `now`, never below 0. A
/// fact with no timestamp at all is treated as used at `now` (age 0), so missing dates
/// never zero out a fact.
fn days_since_use(fact: &Fact, now: DateTime<Utc>) -> f64 {
    fact.last_used()
        .map(|used| (now - used).num_milliseconds() as f64 / 1000.0 / SECONDS_PER_DAY)
        .unwrap_or(0.0)
        .max(0.0)
}

/// Gimli's recommended recency factor, `max(0.5, 1 - days / decay_days)`, with `days`
/// as [`temporal_score`] measures them.
pub fn gimli_recency(fact: &Fact, now: DateTime<Utc>, decay_days: f64) -> f64 {
    (1.0 - days_since_use(fact, now) / decay_days).max(0.5)
}

/// The temporal score of `fact` at `now`.
pub fn temporal_score(fact: &Fact, now: DateTime<Utc>, half_life_days: f64) -> f64 {
    let days = days_since_use(fact, now);
    let frequency = 1.0 + (1.0 + fact.access_count as f64).ln();
    let decay = (-days * std::f64::consts::LN_2 / half_life_days).exp();
    let confidence = fact.confidence.unwrap_or(DEFAULT_CONFIDENCE);
    frequency * decay * (0.5 + confidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::FactId;

    fn fact(last_accessed: &str, access_count: u64, confidence: Option<f64>) -> Fact {
        Fact {
            id: FactId("f".into()),
            content: "x".into(),
            tags: vec![],
            category: None,
            created_at: None,
            last_accessed: Some(last_accessed.parse().unwrap()),
            access_count,
            confidence,
            source: None,
        }
    }

    #[test]
    fn matches_the_formula_worked_by_hand() {
        let now: DateTime<Utc> = "2026-11-01T00:00:00Z".parse().unwrap();
        // 30 days old at half-life 30: decay 0.5; access 0: frequency 1; conf 0.6 -> 1.1.
        let score = temporal_score(&fact("2026-10-02T00:00:00Z", 0, None), now, 30.0);
        assert!((score - 0.55).abs() < 1e-12, "{score}");
        // Fresh, e-1 accesses: frequency 1 + ln(e) = 2; conf 1.0 -> 1.5: 3.0.
        let accesses = (std::f64::consts::E - 1.0).round() as u64; // 2 accesses
        let score = temporal_score(
            &fact("2026-11-01T00:00:00Z", accesses, Some(1.0)),
            now,
            30.0,
        );
        assert!((score - (1.0 + 3f64.ln()) * 1.5).abs() < 1e-12, "{score}");
        // 12 hours old: fractional days.
        let score = temporal_score(&fact("2026-10-31T12:00:00Z", 0, Some(0.5)), now, 30.0);
        assert!((score - (-0.5 * std::f64::consts::LN_2 / 30.0).exp()).abs() < 1e-12);
    }

    #[test]
    fn gimli_recency_worked_by_hand() {
        let now: DateTime<Utc> = "2026-11-01T00:00:00Z".parse().unwrap();
        // 2026-10-02 is 30 days back, 2026-08-03 90, 2026-08-04 89, 2026-09-16 46.
        for (used, factor) in [
            ("2026-11-01T00:00:00Z", 1.0),
            ("2026-10-02T00:00:00Z", 1.0 - 30.0 / 180.0),
            ("2026-09-16T00:00:00Z", 1.0 - 46.0 / 180.0),
            ("2026-08-04T00:00:00Z", 1.0 - 89.0 / 180.0),
            ("2026-08-03T00:00:00Z", 0.5),
            ("2025-11-01T00:00:00Z", 0.5),
            ("2027-01-01T00:00:00Z", 1.0),
        ] {
            let got = gimli_recency(&fact(used, 7, Some(0.2)), now, 180.0);
            assert!((got - factor).abs() < 1e-12, "{used}: {got} vs {factor}");
        }
    }

    #[test]
    fn future_timestamps_count_as_age_zero() {
        let now: DateTime<Utc> = "2026-11-01T00:00:00Z".parse().unwrap();
        let score = temporal_score(&fact("2027-01-01T00:00:00Z", 0, Some(0.5)), now, 30.0);
        assert_eq!(score, 1.0);
    }
}
