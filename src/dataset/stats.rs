//! `hyde-eval dataset stats`: what a dataset holds — counts, judged queries, the grade
//! histogram and text-length percentiles. Pure: a [`Dataset`] in, a serializable
//! summary and its text rendering out.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Dataset, Grade};

/// Length percentiles of a set of texts, in words (whitespace-separated).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LengthPercentiles {
    pub min: usize,
    pub p50: usize,
    pub p90: usize,
    pub p99: usize,
    pub max: usize,
    pub mean: f64,
}

impl LengthPercentiles {
    /// Nearest-rank percentiles of `lengths`; all zero when empty.
    pub fn of(mut lengths: Vec<usize>) -> LengthPercentiles {
        lengths.sort_unstable();
        let rank = |percent: usize| -> usize {
            if lengths.is_empty() {
                return 0;
            }
            // Nearest rank: the smallest value with at least `percent`% of values <= it.
            let position = (percent * lengths.len()).div_ceil(100).max(1);
            lengths[position - 1]
        };
        let total: usize = lengths.iter().sum();
        LengthPercentiles {
            min: lengths.first().copied().unwrap_or(0),
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            max: lengths.last().copied().unwrap_or(0),
            mean: if lengths.is_empty() {
                0.0
            } else {
                total as f64 / lengths.len() as f64
            },
        }
    }
}

/// A dataset's summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasetStats {
    pub name: String,
    pub facts: usize,
    pub queries: usize,
    pub judgments: usize,
    /// Queries with at least one judgment.
    pub judged_queries: usize,
    /// Queries with at least one judgment of grade >= 1.
    pub queries_with_relevant: usize,
    /// Judgments per grade.
    pub grades: BTreeMap<Grade, usize>,
    pub fact_words: LengthPercentiles,
    pub query_words: LengthPercentiles,
    pub queries_with_hypotheses: usize,
    pub content_hash: String,
}

/// Summarizes `dataset`.
pub fn stats(dataset: &Dataset) -> DatasetStats {
    let mut grades = BTreeMap::new();
    for judgment in dataset.qrels.values().flatten() {
        *grades.entry(judgment.grade).or_insert(0) += 1;
    }
    let words = |text: &str| text.split_whitespace().count();
    DatasetStats {
        name: dataset.manifest.name.clone(),
        facts: dataset.facts.len(),
        queries: dataset.queries.len(),
        judgments: dataset.judgment_count(),
        judged_queries: dataset
            .qrels
            .values()
            .filter(|list| !list.is_empty())
            .count(),
        queries_with_relevant: dataset
            .qrels
            .values()
            .filter(|list| list.iter().any(|judgment| judgment.grade >= 1))
            .count(),
        grades,
        fact_words: LengthPercentiles::of(
            dataset
                .facts
                .iter()
                .map(|fact| words(&fact.content))
                .collect(),
        ),
        query_words: LengthPercentiles::of(
            dataset
                .queries
                .iter()
                .map(|query| words(&query.text))
                .collect(),
        ),
        queries_with_hypotheses: dataset.hypotheses.len(),
        content_hash: dataset.content_hash.clone(),
    }
}

impl DatasetStats {
    /// A few aligned lines for the terminal.
    pub fn render(&self) -> String {
        let histogram: Vec<String> = self
            .grades
            .iter()
            .map(|(grade, count)| format!("{grade}: {count}"))
            .collect();
        let lengths = |label: &str, lengths: &LengthPercentiles| {
            format!(
                "{label:<18}min {}, median {}, p90 {}, p99 {}, max {}, mean {:.1}\n",
                lengths.min, lengths.p50, lengths.p90, lengths.p99, lengths.max, lengths.mean
            )
        };
        format!(
            "{name}\n{:<18}{}\n{:<18}{} ({} judged, {} with a relevant fact, {} with hypotheses)\n{:<18}{}\n{:<18}{}\n{}{}{:<18}{}\n",
            "facts",
            self.facts,
            "queries",
            self.queries,
            self.judged_queries,
            self.queries_with_relevant,
            self.queries_with_hypotheses,
            "judgments",
            self.judgments,
            "grades",
            histogram.join(", "),
            lengths("fact words", &self.fact_words),
            lengths("query words", &self.query_words),
            "content hash",
            self.content_hash,
            name = self.name,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_worked_by_hand() {
        // 1..=10: p50 = 5th value, p90 = 9th, p99 = 10th.
        let lengths = LengthPercentiles::of((1..=10).rev().collect());
        assert_eq!(
            (
                lengths.min,
                lengths.p50,
                lengths.p90,
                lengths.p99,
                lengths.max
            ),
            (1, 5, 9, 10, 10)
        );
        assert_eq!(lengths.mean, 5.5);
        assert_eq!(LengthPercentiles::of(Vec::new()).p50, 0);
    }

    #[test]
    fn chatcli_ab_counts() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/chatcli-ab");
        let summary = stats(&Dataset::load(&root).unwrap());
        // chatcli's A/B set: 5 facts, 7 queries, each query with one relevant fact.
        assert_eq!((summary.facts, summary.queries), (5, 7));
        assert_eq!(summary.queries_with_relevant, 7);
        assert!(summary.render().contains("facts             5\n"));
    }
}
