//! Per-query and macro-averaged retrieval metrics.
//!
//! Default semantics are trec_eval's (verified against its own regression fixtures):
//! - a fact is relevant when its grade >= the relevance level (default 1);
//! - `precision@k` = relevant in the top k / k (trec_eval `P_k`);
//! - `recall@k` = relevant in the top k / relevant judged (`recall_k`);
//! - `ndcg@k` = DCG / ideal DCG with gain = grade (every positive grade, whatever the
//!   relevance level, as trec_eval's `ndcg_cut`), discount log2(rank + 1), ideal from
//!   all judged grades (`ndcg_cut_k`);
//! - `hit@k` = 1 when a relevant fact is in the top k (`success_k`);
//! - `mrr@k` = 1 / rank of the first relevant fact within the top k, else 0;
//! - `mrr` = the same over the whole ranking (`recip_rank`);
//! - `map` = average precision over the whole ranking (`map`);
//! - `judged@k` = judged facts (any grade, 0 included) among the top k / min(k, returned),
//!   0 when nothing was returned (ir_measures' `Judged@k`): how far the other measures can
//!   be trusted, since an unjudged fact scores as not relevant;
//! - `bpref` = trec_eval's `bpref`, which reads judged facts only, so it is robust to
//!   incomplete judgments.
//!
//! chatcli semantics (its eval harness, chatcli's eval harness, `eval/eval.go`) change two definitions:
//! `precision@k` divides by min(k, returned) (0 when nothing returned) and `ndcg@k` uses
//! binary gains with the ideal over min(relevant, k) positions.
//!
//! Macro averages are plain means over queries with at least one relevant fact; a query
//! with relevant facts but no results scores 0 (trec_eval `-c`). Queries without relevant
//! facts are counted and reported, never averaged.

use std::collections::HashMap;

use serde::Serialize;

use crate::dataset::{FactId, Grade, Qrels, QueryId};
use crate::ranking::QueryRanking;

/// Which definitions of precision and nDCG to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Semantics {
    /// trec_eval's definitions (default).
    Trec,
    /// chatcli eval harness: precision / min(k, returned), binary nDCG.
    Chatcli,
}

impl Semantics {
    /// Every definition set, with a line on each (for help texts).
    pub const CHOICES: [(Semantics, &'static str); 2] = [
        (Semantics::Trec, "trec_eval's definitions (default)"),
        (
            Semantics::Chatcli,
            "chatcli eval harness: precision / min(k, returned), binary nDCG",
        ),
    ];

    /// The name results.json and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            Semantics::Trec => "trec",
            Semantics::Chatcli => "chatcli",
        }
    }
}

/// What to compute.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct MetricSettings {
    /// Sorted, distinct, positive cut-offs.
    pub cutoffs: Vec<usize>,
    pub relevance_level: Grade,
    pub semantics: Semantics,
}

/// Metrics computed at every cut-off, in output order.
pub const CUTOFF_METRICS: [&str; 6] = ["recall", "precision", "ndcg", "hit", "mrr", "judged"];
/// Metrics over the whole ranking.
pub const WHOLE_RANKING_METRICS: [&str; 3] = ["mrr", "map", "bpref"];

/// The grade a ranking carries for a returned fact the qrels do not list: never
/// relevant, never a gain, and not counted by `judged@k` or `bpref`.
pub const NOT_JUDGED: Grade = -1;

/// Below this `judged@k`, reports warn that the configuration's scores count many
/// unjudged facts as not relevant (documented in docs/metrics-and-eval.md).
pub const JUDGED_WARNING_THRESHOLD: f64 = 0.8;

impl MetricSettings {
    /// Metric names in output order: per cut-off `recall@k precision@k ndcg@k hit@k
    /// mrr@k judged@k`, then `mrr map bpref`.
    pub fn metric_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for k in &self.cutoffs {
            for metric in CUTOFF_METRICS {
                names.push(format!("{metric}@{k}"));
            }
        }
        names.extend(WHOLE_RANKING_METRICS.iter().map(|name| name.to_string()));
        names
    }
}

// Sums below fold from +0.0: `Iterator::sum` of nothing is -0.0 for f64, which would
// print as "-0.0000".
fn discount(position: usize) -> f64 {
    ((position + 2) as f64).log2()
}

/// Cumulative statistics of one ranking, from which every cut-off measure is read in
/// O(log n): one pass over the ranking serves all cut-offs (trec_eval's `P`, `recall`,
/// `ndcg_cut`, `map_cut`, `success`, plus `map`, `Rprec` and `recip_rank`).
///
/// Grades: a result is relevant when its grade >= the relevance level; every positive
/// grade counts as gain (trec_eval's nDCG), whatever the level. Unjudged results carry a
/// grade that is never relevant (0 in hyde-eval's runs, negative in `eval`).
///
/// Only the ranks where a sum changes are kept (the relevant results and those with a
/// gain, few in a ranking of mostly unjudged results), each with the sums up to it; a
/// cut-off's value is the sums at the last such rank within it. The sums are added in
/// rank order, as a running sum over every result adds them.
pub struct RankingProfile {
    returned: usize,
    /// The rank (1-based) of each relevant result, ascending.
    relevant_ranks: Vec<u32>,
    /// `precision_sums[i]`: the sum of the precision at the first `i + 1` relevant ranks.
    precision_sums: Vec<f64>,
    /// The rank of each result with a positive grade, ascending.
    gain_ranks: Vec<u32>,
    /// `dcg_sums[i]`: DCG of the results up to `gain_ranks[i]`.
    dcg_sums: Vec<f64>,
    /// `ideal_prefix[i]`: DCG of the `i` best judged grades.
    ideal_prefix: Vec<f64>,
    relevant_total: usize,
    /// `precision_suffix_max[i]`: the best precision at any relevant rank from the
    /// `i + 1`-th on, built on first use by [`RankingProfile::interpolated_precision`].
    precision_suffix_max: std::cell::OnceCell<Vec<f64>>,
}

impl RankingProfile {
    /// `ranked` holds the grade of each returned result in rank order; `judged` every
    /// judged grade of the query.
    pub fn new(ranked: &[Grade], judged: &[Grade], level: Grade) -> RankingProfile {
        let relevant_total = judged.iter().filter(|&&grade| grade >= level).count();
        let mut ideal_gains: Vec<Grade> =
            judged.iter().copied().filter(|&grade| grade > 0).collect();
        ideal_gains.sort_unstable_by(|a, b| b.cmp(a));
        let mut ideal_prefix = Vec::with_capacity(ideal_gains.len() + 1);
        ideal_prefix.push(0.0);
        let mut ideal = 0.0;
        for (position, &grade) in ideal_gains.iter().enumerate() {
            ideal += f64::from(grade) / discount(position);
            ideal_prefix.push(ideal);
        }
        let mut profile = RankingProfile {
            returned: ranked.len(),
            relevant_ranks: Vec::new(),
            precision_sums: Vec::new(),
            gain_ranks: Vec::new(),
            dcg_sums: Vec::new(),
            ideal_prefix,
            relevant_total,
            precision_suffix_max: std::cell::OnceCell::new(),
        };
        let (mut dcg, mut precision_sum) = (0.0, 0.0);
        let threshold = level.min(1);
        for (position, &grade) in ranked.iter().enumerate() {
            // Most results change no sum: one comparison passes them.
            if grade < threshold {
                continue;
            }
            let rank = position as u32 + 1;
            if grade > 0 {
                dcg += f64::from(grade) / discount(position);
                profile.gain_ranks.push(rank);
                profile.dcg_sums.push(dcg);
            }
            if grade >= level {
                profile.relevant_ranks.push(rank);
                let relevant = profile.relevant_ranks.len() as u32;
                precision_sum += f64::from(relevant) / (position + 1) as f64;
                profile.precision_sums.push(precision_sum);
            }
        }
        profile
    }

    /// Results in the ranking.
    pub fn returned(&self) -> usize {
        self.returned
    }

    /// Judged results with a grade >= the relevance level (trec_eval `num_rel`).
    pub fn relevant_total(&self) -> usize {
        self.relevant_total
    }

    /// Relevant results in the top `k` (trec_eval `num_rel_ret` for the whole ranking).
    pub fn relevant_in_top(&self, k: usize) -> usize {
        self.relevant_ranks
            .partition_point(|&rank| rank as usize <= k)
    }

    fn share_of_relevant(&self, value: f64) -> f64 {
        if self.relevant_total == 0 {
            0.0
        } else {
            value / self.relevant_total as f64
        }
    }

    /// Relevant in the top k / k (`P_k`).
    pub fn precision(&self, k: usize) -> f64 {
        self.relevant_in_top(k) as f64 / k as f64
    }

    /// Relevant in the top k / relevant judged (`recall_k`).
    pub fn recall(&self, k: usize) -> f64 {
        self.share_of_relevant(self.relevant_in_top(k) as f64)
    }

    /// DCG@k / ideal DCG@k (`ndcg_cut_k`); 0 when no judged grade is positive.
    pub fn ndcg(&self, k: usize) -> f64 {
        let ideal = self.ideal_prefix[k.min(self.ideal_prefix.len() - 1)];
        if ideal > 0.0 {
            let gains = self.gain_ranks.partition_point(|&rank| rank as usize <= k);
            gains.checked_sub(1).map_or(0.0, |last| self.dcg_sums[last]) / ideal
        } else {
            0.0
        }
    }

    /// 1 when a relevant result is in the top k (`success_k`).
    pub fn success(&self, k: usize) -> f64 {
        if self.relevant_in_top(k) > 0 {
            1.0
        } else {
            0.0
        }
    }

    /// 1 / rank of the first relevant result within the top k, else 0.
    pub fn reciprocal_rank_within(&self, k: usize) -> f64 {
        match self.relevant_ranks.first() {
            Some(&rank) if (rank as usize) <= k => 1.0 / f64::from(rank),
            _ => 0.0,
        }
    }

    /// 1 / rank of the first relevant result (`recip_rank`).
    pub fn reciprocal_rank(&self) -> f64 {
        self.reciprocal_rank_within(usize::MAX)
    }

    /// Average precision over the top k, divided by all relevant (`map_cut_k`).
    pub fn average_precision_at(&self, k: usize) -> f64 {
        let sum =
            (self.relevant_in_top(k).checked_sub(1)).map_or(0.0, |last| self.precision_sums[last]);
        self.share_of_relevant(sum)
    }

    /// Average precision over the whole ranking (`map`).
    pub fn average_precision(&self) -> f64 {
        self.average_precision_at(usize::MAX)
    }

    /// Interpolated precision at recall `level` (trec_eval's `iprec_at_recall`, after
    /// v9): with c = round(level x relevant), the best precision at or after the rank of
    /// the c-th relevant result (the first, when c = 0); 0 when fewer than c relevant
    /// results were returned, or nothing was.
    pub fn interpolated_precision(&self, level: f64) -> f64 {
        let returned = self.returned();
        if returned == 0 {
            return 0.0;
        }
        let wanted = (level * self.relevant_total as f64).round();
        if wanted > self.relevant_in_top(returned) as f64 {
            return 0.0;
        }
        let wanted = (wanted as usize).max(1);
        // The best precision at or after the rank of the `wanted`-th relevant result:
        // precision falls between relevant ranks, so the best is at one of them.
        let suffix_max = self.precision_suffix_max.get_or_init(|| {
            let mut best = vec![0.0f64; self.relevant_ranks.len()];
            let mut running = f64::NEG_INFINITY;
            for (index, &rank) in self.relevant_ranks.iter().enumerate().rev() {
                running = running.max((index + 1) as f64 / f64::from(rank));
                best[index] = running;
            }
            best
        });
        // No relevant result returned: the precision at every rank is 0.
        suffix_max.get(wanted - 1).copied().unwrap_or(0.0)
    }

    /// Precision at rank R = relevant judged (`Rprec`); 0 when nothing is relevant.
    pub fn r_precision(&self) -> f64 {
        if self.relevant_total == 0 {
            0.0
        } else {
            self.relevant_in_top(self.relevant_total) as f64 / self.relevant_total as f64
        }
    }
}

/// Computes every metric for one query. `ranked` holds the grade of each returned fact
/// in rank order ([`NOT_JUDGED`] for unjudged); `judged` holds every judged grade of the
/// query.
/// Values align with [`MetricSettings::metric_names`].
pub fn query_metrics(ranked: &[Grade], judged: &[Grade], settings: &MetricSettings) -> Vec<f64> {
    let level = settings.relevance_level;
    let profile = RankingProfile::new(ranked, judged, level);
    let relevant_total = profile.relevant_total();
    let mut values = Vec::with_capacity(settings.cutoffs.len() * CUTOFF_METRICS.len() + 2);
    for &k in &settings.cutoffs {
        let (precision, ndcg) = match settings.semantics {
            Semantics::Trec => (profile.precision(k), profile.ndcg(k)),
            Semantics::Chatcli => {
                let top = &ranked[..k.min(ranked.len())];
                let precision = if top.is_empty() {
                    0.0
                } else {
                    profile.relevant_in_top(k) as f64 / top.len() as f64
                };
                let dcg: f64 = top
                    .iter()
                    .enumerate()
                    .filter(|(_, &grade)| grade >= level)
                    .map(|(position, _)| 1.0 / discount(position))
                    .fold(0.0, |total, gain| total + gain);
                let ideal: f64 = (0..relevant_total.min(k))
                    .map(|position| 1.0 / discount(position))
                    .sum();
                (precision, if ideal > 0.0 { dcg / ideal } else { 0.0 })
            }
        };
        values.extend([
            profile.recall(k),
            precision,
            ndcg,
            profile.success(k),
            profile.reciprocal_rank_within(k),
            judged_share(ranked, k),
        ]);
    }
    values.push(profile.reciprocal_rank());
    values.push(profile.average_precision());
    let judged_nonrelevant = judged
        .iter()
        .filter(|&&grade| (0..level).contains(&grade))
        .count();
    values.push(bpref(ranked, level, relevant_total, judged_nonrelevant));
    values
}

/// `judged@k`: judged results (grade >= 0) among the first k / min(k, returned); 0 when
/// nothing was returned (ir_measures' `Judged@k`).
pub fn judged_share(ranked: &[Grade], k: usize) -> f64 {
    let top = &ranked[..k.min(ranked.len())];
    if top.is_empty() {
        return 0.0;
    }
    top.iter().filter(|&&grade| grade >= 0).count() as f64 / top.len() as f64
}

/// trec_eval's `bpref` over `ranked` (negative grades are unjudged and skipped): each
/// relevant result scores 1 - min(judged non-relevant above it, R) / min(N, R), where R
/// is `relevant` and N `judged_nonrelevant`; the sum over R (0 when R = 0).
pub fn bpref(ranked: &[Grade], level: Grade, relevant: usize, judged_nonrelevant: usize) -> f64 {
    let mut nonrelevant_so_far = 0usize;
    let mut sum = 0.0;
    for &grade in ranked {
        if grade < 0 {
            continue;
        }
        if grade < level {
            nonrelevant_so_far += 1;
        } else if nonrelevant_so_far > 0 {
            // The judgments count at least the nonrelevant facts ranked so far; a ranking
            // that holds more than its judgments (inconsistent input) keeps bpref in [0, 1].
            let judged_nonrelevant = judged_nonrelevant.max(nonrelevant_so_far);
            sum += 1.0
                - nonrelevant_so_far.min(relevant) as f64 / judged_nonrelevant.min(relevant) as f64;
        } else {
            sum += 1.0;
        }
    }
    if relevant > 0 {
        sum / relevant as f64
    } else {
        0.0
    }
}

/// One query's metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryEvaluation {
    pub query: QueryId,
    /// Aligned with [`MetricSettings::metric_names`].
    pub values: Vec<f64>,
    pub relevant: usize,
    pub returned: usize,
}

/// A run's metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub names: Vec<String>,
    /// Queries with at least one relevant fact, in the order given.
    pub per_query: Vec<QueryEvaluation>,
    /// Means over `per_query`, aligned with `names`.
    pub means: Vec<f64>,
    /// Queries skipped because they have no relevant fact at this relevance level.
    pub without_relevant: Vec<QueryId>,
}

/// Evaluates `rankings` against `qrels` for the queries in `queries` (in that order).
/// A query absent from `rankings` has returned nothing.
pub fn evaluate(
    queries: &[QueryId],
    rankings: &[QueryRanking],
    qrels: &Qrels,
    settings: &MetricSettings,
) -> Evaluation {
    let ranking_of: HashMap<&QueryId, &QueryRanking> = rankings
        .iter()
        .map(|ranking| (&ranking.query, ranking))
        .collect();
    let mut per_query = Vec::new();
    let mut without_relevant = Vec::new();
    for query in queries {
        let results = ranking_of
            .get(query)
            .map(|ranking| ranking.results.as_slice())
            .unwrap_or(&[]);
        match evaluate_query(query, results, qrels, settings) {
            Some(evaluation) => per_query.push(evaluation),
            None => without_relevant.push(query.clone()),
        }
    }
    Evaluation::from_queries(settings, per_query, without_relevant)
}

/// Evaluates one query's ranked `results`; `None` when the query has no relevant fact
/// at the settings' relevance level (it is not averaged).
pub fn evaluate_query(
    query: &QueryId,
    results: &[(FactId, f64)],
    qrels: &Qrels,
    settings: &MetricSettings,
) -> Option<QueryEvaluation> {
    let judgments = qrels.get(query).map(Vec::as_slice).unwrap_or(&[]);
    let relevant = judgments
        .iter()
        .filter(|judgment| judgment.grade >= settings.relevance_level)
        .count();
    if relevant == 0 {
        return None;
    }
    let grade_of: rustc_hash::FxHashMap<&FactId, Grade> = judgments
        .iter()
        .map(|judgment| (&judgment.fact, judgment.grade))
        .collect();
    let ranked: Vec<Grade> = results
        .iter()
        .map(|(fact, _)| grade_of.get(fact).copied().unwrap_or(NOT_JUDGED))
        .collect();
    let judged: Vec<Grade> = judgments.iter().map(|judgment| judgment.grade).collect();
    Some(QueryEvaluation {
        query: query.clone(),
        values: query_metrics(&ranked, &judged, settings),
        relevant,
        returned: results.len(),
    })
}

impl Evaluation {
    /// A run's evaluation from its evaluated queries (in order) and the queries that
    /// had no relevant fact.
    pub fn from_queries(
        settings: &MetricSettings,
        per_query: Vec<QueryEvaluation>,
        without_relevant: Vec<QueryId>,
    ) -> Evaluation {
        let names = settings.metric_names();
        let mut means = vec![0.0; names.len()];
        for evaluation in &per_query {
            for (mean, value) in means.iter_mut().zip(&evaluation.values) {
                *mean += value;
            }
        }
        if !per_query.is_empty() {
            for mean in &mut means {
                *mean /= per_query.len() as f64;
            }
        }
        Evaluation {
            names,
            per_query,
            means,
            without_relevant,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Judgment;

    /// Every reading of a profile, worked out from running sums over every rank (the
    /// definitions), for `ranked` and `judged`.
    fn dense_readings(ranked: &[Grade], judged: &[Grade], level: Grade) -> Vec<f64> {
        let relevant_total = judged.iter().filter(|&&grade| grade >= level).count();
        let mut ideal_gains: Vec<Grade> = judged.iter().copied().filter(|&g| g > 0).collect();
        ideal_gains.sort_unstable_by(|a, b| b.cmp(a));
        let (mut relevant, mut dcg, mut precision_sum) = (vec![0u32], vec![0.0], vec![0.0]);
        for (position, &grade) in ranked.iter().enumerate() {
            let gain = if grade > 0 {
                f64::from(grade) / discount(position)
            } else {
                0.0
            };
            let hit = grade >= level;
            relevant.push(relevant[position] + u32::from(hit));
            dcg.push(if grade > 0 {
                dcg[position] + gain
            } else {
                dcg[position]
            });
            let precision = f64::from(relevant[position + 1]) / (position + 1) as f64;
            let sum = precision_sum[position];
            precision_sum.push(if hit { sum + precision } else { sum });
        }
        let returned = ranked.len();
        let share = |value: f64| {
            if relevant_total == 0 {
                0.0
            } else {
                value / relevant_total as f64
            }
        };
        let mut readings = Vec::new();
        for k in [0, 1, 2, 3, 5, 10, 17, 100, usize::MAX] {
            let top = k.min(returned);
            let mut ideal = 0.0;
            for (position, &grade) in ideal_gains.iter().take(k).enumerate() {
                ideal += f64::from(grade) / discount(position);
            }
            let first = (0..top).find(|&position| ranked[position] >= level);
            readings.extend([
                f64::from(relevant[top]),
                share(f64::from(relevant[top])),
                if ideal > 0.0 { dcg[top] / ideal } else { 0.0 },
                share(precision_sum[top]),
                first.map_or(0.0, |position| 1.0 / (position + 1) as f64),
            ]);
        }
        for tenth in 0..=10 {
            let wanted = (f64::from(tenth) / 10.0 * relevant_total as f64).round();
            readings.push(if returned == 0 || wanted > f64::from(relevant[returned]) {
                0.0
            } else {
                let wanted = (wanted as u32).max(1);
                let from = relevant
                    .partition_point(|&count| count < wanted)
                    .min(returned);
                (from.max(1)..=returned)
                    .map(|rank| f64::from(relevant[rank]) / rank as f64)
                    .fold(f64::NEG_INFINITY, f64::max)
            });
        }
        readings
    }

    /// The same readings from a [`RankingProfile`].
    fn profile_readings(ranked: &[Grade], judged: &[Grade], level: Grade) -> Vec<f64> {
        let profile = RankingProfile::new(ranked, judged, level);
        let mut readings = Vec::new();
        for k in [0, 1, 2, 3, 5, 10, 17, 100, usize::MAX] {
            readings.extend([
                profile.relevant_in_top(k) as f64,
                profile.recall(k),
                profile.ndcg(k),
                profile.average_precision_at(k),
                profile.reciprocal_rank_within(k),
            ]);
        }
        for tenth in 0..=10 {
            readings.push(profile.interpolated_precision(f64::from(tenth) / 10.0));
        }
        readings
    }

    proptest::proptest! {
        /// The profile keeps only the ranks where a sum changes; every reading equals the
        /// running sums over every rank, to the bit.
        #[test]
        fn sparse_profiles_read_as_running_sums_over_every_rank(
            ranked in proptest::collection::vec(-2..4i32, 0..60),
            judged in proptest::collection::vec(-1..4i32, 0..30),
            level in 0..3i32,
        ) {
            let bits = |values: Vec<f64>| values.into_iter().map(f64::to_bits).collect::<Vec<_>>();
            proptest::prop_assert_eq!(
                bits(profile_readings(&ranked, &judged, level)),
                bits(dense_readings(&ranked, &judged, level))
            );
        }
    }

    fn settings(cutoffs: &[usize], semantics: Semantics) -> MetricSettings {
        MetricSettings {
            cutoffs: cutoffs.to_vec(),
            relevance_level: 1,
            semantics,
        }
    }

    fn metric(settings: &MetricSettings, values: &[f64], name: &str) -> f64 {
        values[settings
            .metric_names()
            .iter()
            .position(|n| n == name)
            .unwrap()]
    }

    #[test]
    fn graded_trec_metrics_worked_by_hand() {
        // Ranking: [grade 0, grade 2, unjudged, grade 1]; judged grades {2, 1, 1, 0}.
        let settings = settings(&[2, 4], Semantics::Trec);
        let values = query_metrics(&[0, 2, 0, 1], &[2, 1, 1, 0], &settings);
        assert_eq!(metric(&settings, &values, "precision@2"), 0.5);
        assert_eq!(metric(&settings, &values, "recall@4"), 2.0 / 3.0);
        assert_eq!(metric(&settings, &values, "hit@2"), 1.0);
        assert_eq!(metric(&settings, &values, "mrr@2"), 0.5);
        assert_eq!(metric(&settings, &values, "mrr"), 0.5);
        // DCG@4 = 2/log2(3) + 1/log2(5); ideal@4 = 2 + 1/log2(3) + 1/log2(4).
        let dcg = 2.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let ideal = 2.0 + 1.0 / 3f64.log2() + 0.5;
        assert!((metric(&settings, &values, "ndcg@4") - dcg / ideal).abs() < 1e-12);
        // AP = (1/2 + 2/4) / 3.
        assert!((metric(&settings, &values, "map") - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn judged_share_and_bpref_worked_by_hand() {
        // Ranking: [grade 0, unjudged, grade 2, unjudged, grade 1]; judged {2, 1, 0, 0}.
        let settings = settings(&[1, 2, 4, 10], Semantics::Trec);
        let ranked = [0, NOT_JUDGED, 2, NOT_JUDGED, 1];
        let values = query_metrics(&ranked, &[2, 1, 0, 0], &settings);
        assert_eq!(metric(&settings, &values, "judged@1"), 1.0);
        assert_eq!(metric(&settings, &values, "judged@2"), 0.5);
        assert_eq!(metric(&settings, &values, "judged@4"), 0.5);
        // Only 5 returned: 3 judged of 5.
        assert_eq!(metric(&settings, &values, "judged@10"), 0.6);
        // R = 2, N = 2: the grade-2 fact has 1 judged non-relevant above it (1 - 1/2),
        // the grade-1 fact too (1 - 1/2): (0.5 + 0.5) / 2.
        assert_eq!(metric(&settings, &values, "bpref"), 0.5);
        // Unjudged results change nothing else: they score as grade 0 would.
        let as_zero = query_metrics(&[0, 0, 2, 0, 1], &[2, 1, 0, 0], &settings);
        for (name, (a, b)) in settings
            .metric_names()
            .iter()
            .zip(values.iter().zip(&as_zero))
        {
            if !name.starts_with("judged@") && name != "bpref" {
                assert_eq!(a, b, "{name}");
            }
        }
        assert_eq!(judged_share(&[], 10), 0.0);
    }

    #[test]
    fn interpolated_precision_worked_by_hand() {
        // Relevant at ranks 1 and 3 of 4; 3 relevant judged. Precision by rank: 1, 1/2,
        // 2/3, 1/2. Level x needs c = round(3x) relevant: the best precision from the
        // rank of the c-th relevant result on (the first for c = 0); 0 when c > 2.
        let profile = RankingProfile::new(&[1, 0, 1, 0], &[1, 1, 1, 0], 1);
        for (level, expected) in [
            (0.0, 1.0),
            (0.3, 1.0),
            (0.5, 2.0 / 3.0),
            (0.7, 2.0 / 3.0),
            (0.9, 0.0),
        ] {
            assert_eq!(profile.interpolated_precision(level), expected, "{level}");
        }
        // Nothing relevant returned: 0 at level 0 (precision at the last rank), and
        // nothing returned at all: 0.
        assert_eq!(
            RankingProfile::new(&[0, 0], &[1], 1).interpolated_precision(0.0),
            0.0
        );
        assert_eq!(
            RankingProfile::new(&[], &[1], 1).interpolated_precision(0.0),
            0.0
        );
    }

    #[test]
    fn relevance_level_affects_binary_metrics_but_not_ndcg_gains() {
        let mut level_two = settings(&[2], Semantics::Trec);
        level_two.relevance_level = 2;
        let values = query_metrics(&[1, 2], &[2, 1], &level_two);
        assert_eq!(metric(&level_two, &values, "mrr"), 0.5);
        assert_eq!(metric(&level_two, &values, "recall@2"), 1.0);
        // Both grades still count as gains: DCG = 1 + 2/log2(3), ideal = 2 + 1/log2(3).
        let expected = (1.0 + 2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2());
        assert!((metric(&level_two, &values, "ndcg@2") - expected).abs() < 1e-12);
    }

    #[test]
    fn chatcli_eval_harness_numbers() {
        // chatcli eval.go test (chatcli's eval harness, `eval/eval.go`), k = 3, tolerance 1e-4:
        // sample {A,B} ranked [A,X,B] -> recall 1, precision 2/3, RR 1, nDCG 0.919721.
        let settings = settings(&[3], Semantics::Chatcli);
        let values = query_metrics(&[1, 0, 1], &[1, 1], &settings);
        assert!((metric(&settings, &values, "recall@3") - 1.0).abs() < 1e-4);
        assert!((metric(&settings, &values, "precision@3") - 2.0 / 3.0).abs() < 1e-4);
        assert!((metric(&settings, &values, "mrr@3") - 1.0).abs() < 1e-4);
        assert!((metric(&settings, &values, "ndcg@3") - 0.919721).abs() < 1e-4);

        // With a total miss and a sample with no relevant ids (skipped, not counted):
        // means recall 0.5, precision 0.3333, MRR 0.5, nDCG 0.459860.
        let id = |s: &str| QueryId(s.into());
        let fact = |s: &str| FactId(s.into());
        let qrels: Qrels = [
            (
                id("hit"),
                vec![
                    Judgment {
                        fact: fact("A"),
                        grade: 1,
                    },
                    Judgment {
                        fact: fact("B"),
                        grade: 1,
                    },
                ],
            ),
            (
                id("miss"),
                vec![Judgment {
                    fact: fact("C"),
                    grade: 1,
                }],
            ),
        ]
        .into_iter()
        .collect();
        let ranking = |query: &str, facts: &[&str]| QueryRanking {
            query: id(query),
            results: facts.iter().map(|f| (fact(f), 1.0)).collect(),
        };
        let rankings = vec![
            ranking("hit", &["A", "X", "B"]),
            ranking("miss", &["X", "Y", "Z"]),
            ranking("none", &["A"]),
        ];
        let evaluation = evaluate(
            &[id("hit"), id("miss"), id("none")],
            &rankings,
            &qrels,
            &settings,
        );
        assert_eq!(evaluation.per_query.len(), 2);
        assert_eq!(evaluation.without_relevant, vec![id("none")]);
        let mean =
            |name: &str| evaluation.means[evaluation.names.iter().position(|n| n == name).unwrap()];
        assert!((mean("recall@3") - 0.5).abs() < 1e-4);
        assert!((mean("precision@3") - 0.3333).abs() < 1e-4);
        assert!((mean("mrr@3") - 0.5).abs() < 1e-4);
        assert!((mean("ndcg@3") - 0.459860).abs() < 1e-4);
    }

    #[test]
    fn chatcli_precision_divides_by_returned_and_empty_scores_zero() {
        let chatcli = settings(&[5], Semantics::Chatcli);
        let trec = settings(&[5], Semantics::Trec);
        assert_eq!(
            metric(
                &chatcli,
                &query_metrics(&[1, 0], &[1], &chatcli),
                "precision@5"
            ),
            0.5
        );
        assert_eq!(
            metric(&trec, &query_metrics(&[1, 0], &[1], &trec), "precision@5"),
            0.2
        );
        assert_eq!(
            metric(&chatcli, &query_metrics(&[], &[1], &chatcli), "precision@5"),
            0.0
        );
    }
}
