//! `hyde-eval eval`: scores external TREC runs with trec_eval's semantics, using the
//! metric definitions of [`crate::metrics`] (one [`RankingProfile`] per query).
//!
//! trec_eval's rules, followed exactly:
//! - each query's results are sorted by score descending, then docno descending (the
//!   rank column is ignored), then cut to `-M` results;
//! - a document is relevant when its grade >= the relevance level `-l`; negative grades
//!   (judged but unjudged) are never relevant and never counted; nDCG gains are the
//!   positive grades whatever the level; results the qrels do not list and results they
//!   list with a negative grade are told apart (trec_eval's nonpool and unjudged), as
//!   `infAP` and `unj` need;
//! - `-J` removes the results the qrels do not judge (not listed, or listed with a
//!   negative grade) from each ranking after the `-M` cut, keeping the others' order;
//! - queries are those of the qrels, in byte order of their ids; a qrels query absent
//!   from the run is left out (trec_eval 9), or scores 0 with `-c`; run queries without
//!   judgments are ignored;
//! - a document listed twice for a query, in the run or the qrels, is an error;
//! - averages are means over the evaluated queries; `num_ret`, `num_rel` and
//!   `num_rel_ret` are sums, except that with `-c` the `num_rel` total counts every
//!   positive judgment of the qrels whatever `-l` (trec_eval's `te_calc_avg_num_rel`).
//!
//! Parsing borrows from the file bytes ([`crate::trec::parse`]); a run file is evaluated
//! as it is read, in parallel chunks ([`stream`]), each query ranked from the ranks of its
//! judged results alone ([`ranking`]). Queries are collected in qrels order, so output
//! does not depend on the thread count.

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::dataset::Grade;
use crate::metrics::RankingProfile;
use crate::trec::parse::{QrelsData, QueryJudgments, RunData};

mod measures;
mod ranking;
mod stream;

use measures::QueryFacts;
pub use measures::{
    Column, Family, MeasureSet, DEFAULT_CUTOFFS, DEFAULT_RECALL_LEVELS, DEFAULT_R_MULTIPLES,
    DEFAULT_SUCCESS_CUTOFFS, DEFAULT_UNJUDGED_CUTOFFS, DEFAULT_UTILITY_COEFFICIENTS,
};
use ranking::{JudgedQuery, Scratch};
pub use stream::{evaluate_run_file, RunFailure};

/// Grade of a retrieved document that the qrels do not list (trec_eval's
/// `RELVALUE_NONPOOL`); never relevant, never a gain.
const NOT_JUDGED: Grade = -1;
/// Grade of a retrieved document that the qrels list with a negative grade, in the pool
/// but not judged (trec_eval's `RELVALUE_UNJUDGED`); never relevant, never a gain.
const POOL_UNJUDGED: Grade = -2;

/// How to evaluate (trec_eval's flags).
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// `-l`: minimum grade that counts as relevant.
    pub relevance_level: Grade,
    /// `-c`: average over every qrels query; queries missing from the run score 0.
    pub complete: bool,
    /// `-M`: results kept per query after sorting.
    pub max_results: usize,
    /// `-J`: results the qrels do not judge are removed from each ranking (after `-M`).
    pub judged_only: bool,
    /// `-N`: documents in the collection (read by `utility` alone).
    pub collection_size: u64,
    pub measures: MeasureSet,
}

/// One evaluated query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryScores {
    pub query: String,
    /// Aligned with [`RunEvaluation::columns`].
    pub values: Vec<f64>,
    /// `relstring`, when requested (printed in the text layout only).
    #[serde(skip)]
    pub relstring: Option<String>,
}

/// A run's scores.
#[derive(Debug, Clone)]
pub struct RunEvaluation {
    pub run_id: String,
    pub columns: Vec<Column>,
    /// Evaluated queries, in qrels order.
    pub per_query: Vec<QueryScores>,
    /// Sums (counts) and means (the rest) over `per_query`, aligned with `columns`.
    pub summary: Vec<f64>,
    /// Qrels queries with no results in the run (left out unless `-c`).
    pub missing_from_run: Vec<String>,
    /// Run queries that have no judgments (ignored, as by trec_eval).
    pub unjudged_queries: usize,
}

/// A run defect found while evaluating: a document listed twice for a query.
#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateResult {
    pub query: String,
    pub document: String,
}

/// One query's column values and its `relstring`, if requested.
type Scores = (Vec<f64>, Option<String>);

/// A run query's evaluation: `None` when the qrels do not judge the query.
type QueryOutcome = Option<Result<Scores, DuplicateResult>>;

/// The buffers one worker reuses from query to query.
#[derive(Default)]
struct Worker<'a> {
    judged: JudgedQuery<'a>,
    scratch: Scratch,
}

/// What evaluating a run needs of the qrels and the options, prepared once per run.
struct Context<'a> {
    qrels: &'a QrelsData<'a>,
    index_of: FxHashMap<&'a str, usize>,
    columns: Vec<Column>,
    relstring: Option<(String, usize)>,
    options: &'a EvalOptions,
}

impl<'a> Context<'a> {
    fn new(qrels: &'a QrelsData<'a>, options: &'a EvalOptions) -> Context<'a> {
        Context {
            qrels,
            index_of: qrels
                .queries
                .iter()
                .enumerate()
                .map(|(index, judgments)| (judgments.query, index))
                .collect(),
            columns: options.measures.columns(),
            relstring: options.measures.relstring(),
            options,
        }
    }

    /// The qrels' judgments of `query`, if it has any.
    fn judgments_of(&self, query: &str) -> Option<&QueryJudgments<'a>> {
        Some(&self.qrels.queries[*self.index_of.get(query)?])
    }

    /// Evaluates one query's results (`documents` and their [`ranking::descending_key`]s,
    /// in file order); `None` when the qrels do not judge the query.
    fn evaluate(
        &self,
        query: &str,
        documents: &[&str],
        keys: &[u64],
        worker: &mut Worker<'a>,
    ) -> QueryOutcome {
        let judgments = self.judgments_of(query)?;
        Some(self.evaluate_judged(judgments, documents, keys, worker))
    }

    /// [`Context::evaluate`] of a query the qrels judge, given its `judgments`.
    fn evaluate_judged(
        &self,
        judgments: &QueryJudgments<'a>,
        documents: &[&str],
        keys: &[u64],
        worker: &mut Worker<'a>,
    ) -> Result<Scores, DuplicateResult> {
        let Worker { judged, scratch } = worker;
        judged.fill(self.qrels.grades(judgments));
        match ranking::rank(documents, keys, judged, self.options.max_results, scratch) {
            Ok(()) => {
                if self.options.judged_only {
                    // trec_eval's -J: the judged results keep their order (and ties
                    // their docno order); the others leave the ranking.
                    scratch.grades.retain(|&grade| grade >= 0);
                }
                Ok(self.scores(&scratch.grades, &judged.grades))
            }
            Err(position) => Err(DuplicateResult {
                query: judgments.query.to_owned(),
                document: documents[position].to_owned(),
            }),
        }
    }

    /// The column values (and `relstring`) of one query's grades in rank order.
    fn scores(&self, grades: &[Grade], judged: &[Grade]) -> Scores {
        let level = self.options.relevance_level;
        let profile = RankingProfile::new(grades, judged, level);
        let below_level = |grade: &&Grade| (0..level).contains(*grade);
        let mut ideal_gains: Vec<Grade> = judged.iter().copied().filter(|&g| g > 0).collect();
        ideal_gains.sort_unstable_by(|a, b| b.cmp(a));
        let facts = QueryFacts {
            grades,
            ideal_gains,
            level,
            judged_nonrelevant_returned: grades.iter().filter(below_level).count(),
            judged_nonrelevant: judged.iter().filter(below_level).count(),
            collection_size: self.options.collection_size as f64,
        };
        let values = self
            .columns
            .iter()
            .map(|column| column.value(&profile, &facts))
            .collect();
        (
            values,
            self.relstring
                .as_ref()
                .map(|(_, length)| facts.relstring(*length)),
        )
    }

    /// The run's evaluation from the outcome of each of its queries, in first-seen
    /// order: the first duplicate found in that order is the error.
    fn finish(
        self,
        run_id: &str,
        outcomes: Vec<(&str, QueryOutcome)>,
    ) -> Result<RunEvaluation, DuplicateResult> {
        let mut unjudged_queries = 0;
        let mut scores_by_query: FxHashMap<&str, Scores> = FxHashMap::default();
        for (query, outcome) in outcomes {
            match outcome {
                None => unjudged_queries += 1,
                Some(Err(duplicate)) => return Err(duplicate),
                Some(Ok(scores)) => {
                    scores_by_query.insert(query, scores);
                }
            }
        }
        let mut per_query = Vec::with_capacity(self.qrels.queries.len());
        let mut missing_from_run = Vec::new();
        for judgments in &self.qrels.queries {
            let (values, relstring) = match scores_by_query.remove(judgments.query) {
                Some(values) => values,
                None => {
                    missing_from_run.push(judgments.query.to_owned());
                    if !self.options.complete {
                        continue;
                    }
                    let judged: Vec<Grade> = self
                        .qrels
                        .grades(judgments)
                        .iter()
                        .map(|&(_, grade)| grade)
                        .collect();
                    let (mut values, relstring) = self.scores(&[], &judged);
                    // trec_eval scores a missing query's `utility` 0, whatever the
                    // coefficients and -N (it zeroes the value after the fact).
                    for (value, column) in values.iter_mut().zip(&self.columns) {
                        if column.family == Family::Utility {
                            *value = 0.0;
                        }
                    }
                    (values, relstring)
                }
            };
            per_query.push(QueryScores {
                query: judgments.query.to_owned(),
                values,
                relstring,
            });
        }
        let mut summary = vec![0.0; self.columns.len()];
        for scores in &per_query {
            for (total, value) in summary.iter_mut().zip(&scores.values) {
                *total += value;
            }
        }
        for (total, column) in summary.iter_mut().zip(&self.columns) {
            *total = column.summarize(*total, per_query.len());
            if self.options.complete && column.family == Family::NumRel {
                // trec_eval's -c total: every positive judgment of the qrels, whatever -l.
                *total = self
                    .qrels
                    .queries
                    .iter()
                    .flat_map(|judgments| self.qrels.grades(judgments))
                    .filter(|&&(_, grade)| grade > 0)
                    .count() as f64;
            }
        }
        Ok(RunEvaluation {
            run_id: run_id.to_owned(),
            columns: self.columns,
            per_query,
            summary,
            missing_from_run,
            unjudged_queries,
        })
    }
}

/// Evaluates a parsed `run` against `qrels`. Runs on the current rayon pool.
pub fn evaluate_run(
    qrels: &QrelsData<'_>,
    run: RunData<'_>,
    options: &EvalOptions,
) -> Result<RunEvaluation, DuplicateResult> {
    let context = Context::new(qrels, options);
    let outcomes = run
        .queries
        .par_iter()
        .map_init(Worker::default, |worker, results| {
            let documents: Vec<&str> = results
                .results
                .iter()
                .map(|&(document, _)| document)
                .collect();
            let keys: Vec<u64> = results
                .results
                .iter()
                .map(|&(_, score)| ranking::descending_key(score))
                .collect();
            let outcome = context.evaluate(results.query, &documents, &keys, worker);
            (results.query, outcome)
        })
        .collect();
    context.finish(run.run_id, outcomes)
}

/// An evaluated run and the file it came from.
pub struct EvaluatedRun {
    pub path: String,
    pub evaluation: RunEvaluation,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::parse;
    use std::path::Path;

    fn options(measures: &[&str]) -> EvalOptions {
        EvalOptions {
            relevance_level: 1,
            complete: false,
            max_results: usize::MAX,
            judged_only: false,
            collection_size: 0,
            measures: MeasureSet::parse(
                &measures.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            )
            .unwrap(),
        }
    }

    fn value(evaluation: &RunEvaluation, query: &str, name: &str) -> f64 {
        let column = evaluation
            .columns
            .iter()
            .position(|column| column.name() == name)
            .unwrap();
        if query == "all" {
            return evaluation.summary[column];
        }
        evaluation
            .per_query
            .iter()
            .find(|scores| scores.query == query)
            .unwrap()
            .values[column]
    }

    #[test]
    fn measures_worked_by_hand_with_trec_eval_ordering() {
        // Query 1 judged: a=2, b=0, c=1, d=1 (3 relevant), e=-1 (judged-unjudged).
        // Run scores: x 0.9, c 0.5, a 0.5, e 0.4, b 0.1 -> ties by docno descending:
        // x(unjudged) c(1) a(2) e(-1) b(0). Relevant at ranks 2 and 3.
        let qrels = parse::parse_qrels(
            Path::new("q"),
            "1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 d 1\n1 0 e -1\n2 0 z 1\n",
        )
        .unwrap();
        let run = parse::parse_run(
            Path::new("r"),
            b"1 Q0 a 1 0.5 t\n1 Q0 b 2 0.1 t\n1 Q0 c 3 0.5 t\n1 Q0 e 4 0.4 t\n1 Q0 x 5 0.9 t\n",
        )
        .unwrap();
        let evaluation = evaluate_run(
            &qrels,
            run,
            &options(&["all_trec", "P.2,5", "success.1,3", "map_cut.2"]),
        )
        .unwrap();
        assert_eq!(evaluation.missing_from_run, vec!["2".to_owned()]);
        assert_eq!(evaluation.per_query.len(), 1);
        assert_eq!(value(&evaluation, "1", "num_ret"), 5.0);
        assert_eq!(value(&evaluation, "1", "num_rel"), 3.0);
        assert_eq!(value(&evaluation, "1", "num_rel_ret"), 2.0);
        assert_eq!(value(&evaluation, "1", "P_2"), 0.5);
        assert_eq!(value(&evaluation, "1", "P_5"), 0.4);
        assert_eq!(value(&evaluation, "1", "recip_rank"), 0.5);
        assert_eq!(value(&evaluation, "1", "success_1"), 0.0);
        assert_eq!(value(&evaluation, "1", "success_3"), 1.0);
        // AP = (1/2 + 2/3) / 3; map_cut_2 = (1/2) / 3; Rprec = 2 relevant in top 3 / 3.
        assert!((value(&evaluation, "1", "map") - (0.5 + 2.0 / 3.0) / 3.0).abs() < 1e-12);
        assert!((value(&evaluation, "1", "map_cut_2") - 0.5 / 3.0).abs() < 1e-12);
        assert!((value(&evaluation, "1", "Rprec") - 2.0 / 3.0).abs() < 1e-12);
        // bpref: judged results only (x unjudged, e judged-unjudged skipped); c and a come
        // before the one judged nonrelevant b, so each scores 1: 2 / 3.
        assert!((value(&evaluation, "1", "bpref") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(value(&evaluation, "1", "num_nonrel_judged_ret"), 1.0);
        // nDCG@5: gains 1 (rank 2), 2 (rank 3); ideal 2, 1, 1.
        let dcg = 1.0 / 3f64.log2() + 2.0 / 4f64.log2();
        let ideal = 2.0 + 1.0 / 3f64.log2() + 1.0 / 4f64.log2();
        assert!((value(&evaluation, "1", "ndcg_cut_5") - dcg / ideal).abs() < 1e-12);
    }

    #[test]
    fn complete_flag_scores_missing_queries_as_zero_and_max_results_cuts() {
        let qrels = parse::parse_qrels(Path::new("q"), "1 0 a 1\n2 0 b 1\n").unwrap();
        let run = parse::parse_run(Path::new("r"), b"1 Q0 c 1 2 t\n1 Q0 a 2 1 t\n").unwrap();
        let mut complete = options(&["map", "num_ret", "num_rel_ret"]);
        complete.complete = true;
        let evaluation = evaluate_run(&qrels, run, &complete).unwrap();
        assert_eq!(evaluation.per_query.len(), 2);
        assert_eq!(value(&evaluation, "all", "map"), 0.25);
        assert_eq!(value(&evaluation, "2", "num_ret"), 0.0);
        assert_eq!(value(&evaluation, "all", "num_ret"), 2.0);
        complete.max_results = 1;
        let run = parse::parse_run(Path::new("r"), b"1 Q0 c 1 2 t\n1 Q0 a 2 1 t\n").unwrap();
        let cut = evaluate_run(&qrels, run, &complete).unwrap();
        assert_eq!(value(&cut, "all", "num_rel_ret"), 0.0);
        assert_eq!(value(&cut, "all", "num_ret"), 1.0);
    }

    #[test]
    fn complete_num_rel_total_counts_positive_judgments_whatever_the_level() {
        let qrels = parse::parse_qrels(Path::new("q"), "1 0 a 1\n1 0 b 1\n2 0 c 1\n").unwrap();
        let run = parse::parse_run(Path::new("r"), b"1 Q0 a 1 2 t\n").unwrap();
        let mut options = options(&["num_rel"]);
        options.relevance_level = 2;
        options.complete = true;
        let evaluation = evaluate_run(&qrels, run, &options).unwrap();
        assert_eq!(value(&evaluation, "1", "num_rel"), 0.0);
        assert_eq!(value(&evaluation, "all", "num_rel"), 3.0);
    }

    #[test]
    fn relevance_level_changes_binary_measures_only() {
        let qrels = parse::parse_qrels(Path::new("q"), "1 0 a 1\n1 0 b 2\n").unwrap();
        let run = parse::parse_run(Path::new("r"), b"1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n").unwrap();
        let mut level_two = options(&["recip_rank", "ndcg_cut.2", "num_rel"]);
        level_two.relevance_level = 2;
        let evaluation = evaluate_run(&qrels, run, &level_two).unwrap();
        assert_eq!(value(&evaluation, "1", "recip_rank"), 0.5);
        assert_eq!(value(&evaluation, "1", "num_rel"), 1.0);
        let expected = (1.0 + 2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2());
        assert!((value(&evaluation, "1", "ndcg_cut_2") - expected).abs() < 1e-12);
    }

    #[test]
    fn parameters_of_rprec_mult_unj_and_utility() {
        // R = 2 relevant (a, b); ranking x(unlisted) a c(listed -1) b.
        let qrels = parse::parse_qrels(Path::new("q"), "1 0 a 1\n1 0 b 1\n1 0 c -1\n").unwrap();
        let run = parse::parse_run(
            Path::new("r"),
            b"1 Q0 x 1 4 t\n1 Q0 a 2 3 t\n1 Q0 c 3 2 t\n1 Q0 b 4 1 t\n",
        )
        .unwrap();
        let evaluation = evaluate_run(
            &qrels,
            run,
            &options(&["Rprec_mult.1.5,0.5", "unj.2,4,8", "utility.2,-1,-3,0"]),
        )
        .unwrap();
        let names: Vec<String> = evaluation.columns.iter().map(Column::name).collect();
        assert_eq!(
            names,
            [
                "Rprec_mult_0.50",
                "Rprec_mult_1.50",
                "utility",
                "unj_2",
                "unj_4",
                "unj_8"
            ]
        );
        // Cut-offs (long)(m * R + 0.9): 1 and 3.
        assert_eq!(value(&evaluation, "1", "Rprec_mult_0.50"), 0.0);
        assert!((value(&evaluation, "1", "Rprec_mult_1.50") - 1.0 / 3.0).abs() < 1e-12);
        // 2 relevant retrieved, 2 not relevant retrieved, 0 relevant missed.
        assert_eq!(value(&evaluation, "1", "utility"), 2.0);
        // Unlisted x and listed-unjudged c both count as unjudged.
        assert_eq!(value(&evaluation, "1", "unj_2"), 0.5);
        assert_eq!(value(&evaluation, "1", "unj_4"), 0.5);
        assert_eq!(value(&evaluation, "1", "unj_8"), 0.25);
        let parse = |names: &[&str]| {
            MeasureSet::parse(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        };
        assert!(parse(&["utility.1,2"])
            .unwrap_err()
            .contains("four coefficients"));
        assert!(parse(&["Rprec_mult.0"]).unwrap_err().contains("positive"));
    }

    #[test]
    fn duplicate_run_documents_are_errors() {
        let qrels = parse::parse_qrels(Path::new("q"), "1 0 a 1\n").unwrap();
        let run = parse::parse_run(Path::new("r"), b"1 Q0 a 1 2 t\n1 Q0 a 2 1 t\n").unwrap();
        let error = evaluate_run(&qrels, run, &options(&["map"])).unwrap_err();
        assert_eq!(
            error,
            DuplicateResult {
                query: "1".into(),
                document: "a".into()
            }
        );
    }

    #[test]
    fn printed_and_ir_measures_names_select_the_same_measures() {
        let parse = |names: &[&str]| {
            MeasureSet::parse(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        };
        for (aliases, trec_eval) in [
            (
                &["ndcg_cut_10", "nDCG@10", "NDCG_CUT.10"][..],
                "ndcg_cut.10",
            ),
            (&["P_5", "P@5", "p.5"], "P.5"),
            (&["recall_100", "R@100"], "recall.100"),
            (&["success_1", "Success@1"], "success.1"),
            (&["RR", "RECIP_RANK"], "recip_rank"),
            (&["AP", "MAP"], "map"),
            (&["map_cut_10", "AP@10"], "map_cut.10"),
            (
                &["iprec_at_recall_0.10", "IPrec@0.1"],
                "iprec_at_recall.0.1",
            ),
            (&["Rprec_mult_0.20", "rprec_mult.0.2"], "Rprec_mult.0.2"),
            (&["relstring_20"], "relstring.20"),
        ] {
            let expected = parse(&[trec_eval]).unwrap();
            for alias in aliases {
                let alias_set = parse(&[alias]).unwrap();
                assert_eq!(alias_set.columns(), expected.columns(), "{alias}");
                assert_eq!(alias_set.relstring(), expected.relstring(), "{alias}");
            }
        }
        let columns = |names: &[&str]| -> Vec<String> {
            parse(names)
                .unwrap()
                .columns()
                .iter()
                .map(Column::name)
                .collect()
        };
        assert_eq!(
            columns(&[
                "NumQ", "NumRet", "NumRel", "SetP", "SetR", "SetF", "SetAP", "Bpref", "rprec",
                "INFAP"
            ]),
            [
                "num_ret",
                "num_rel",
                "Rprec",
                "bpref",
                "infAP",
                "set_P",
                "set_recall",
                "set_map",
                "set_F"
            ]
        );
        for rr_at_k in ["RR@10", "mrr@10", "MRR@5"] {
            assert!(
                parse(&[rr_at_k])
                    .unwrap_err()
                    .contains("no trec_eval counterpart"),
                "{rr_at_k}"
            );
        }
        assert!(parse(&["nDCG@0"]).unwrap_err().contains("positive integer"));
        assert!(parse(&["judged"]).unwrap_err().contains("needs a cut-off"));
    }

    /// The names of the columns `measures` select.
    fn column_names(measures: &[&str]) -> Vec<String> {
        MeasureSet::parse(&measures.iter().map(|m| m.to_string()).collect::<Vec<_>>())
            .unwrap()
            .columns()
            .iter()
            .map(Column::name)
            .collect()
    }

    #[test]
    fn hyde_eval_names_select_trec_eval_measures() {
        // As every other flag reads them (src/metric_names.rs), in any case.
        assert_eq!(
            column_names(&[
                "mrr",
                "MRR",
                "precision@5",
                "recall@10",
                "hit@5",
                "ndcg@10",
                "map",
                "bpref",
                "judged@10",
                "Judged@5"
            ]),
            [
                "map",
                "bpref",
                "recip_rank",
                "P_5",
                "recall_10",
                "ndcg_cut_10",
                "success_5",
                "judged_5",
                "judged_10"
            ]
        );
    }

    #[test]
    fn a_measure_named_twice_is_one_column() {
        assert_eq!(
            column_names(&[
                "ndcg_cut.10",
                "nDCG@10",
                "NDCG@10",
                "ndcg@10",
                "ndcg_cut_10"
            ]),
            ["ndcg_cut_10"]
        );
        // Cut-offs given twice are merged; given cut-offs win over the defaults in either
        // order, as in trec_eval.
        assert_eq!(
            column_names(&["P.5", "P@10", "precision@5", "P_5"]),
            ["P_5", "P_10"]
        );
        assert_eq!(column_names(&["P.7", "P"]), ["P_7"]);
        assert_eq!(column_names(&["P", "P.7"]), ["P_7"]);
        assert_eq!(
            column_names(&["official", "P@7", "P.3"])
                .into_iter()
                .filter(|name| name.starts_with("P_"))
                .collect::<Vec<_>>(),
            ["P_3", "P_7"]
        );
        // A measure that prints one value cannot take two parameter lists.
        let parse = |names: &[&str]| {
            MeasureSet::parse(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        };
        let message = parse(&["utility.1,-1,0,0", "utility.2,-1,0,0"]).unwrap_err();
        assert!(
            message.contains(
                "utility is given twice with different parameters (1,-1,0,0 and 2,-1,0,0)"
            ),
            "{message}"
        );
        assert_eq!(
            column_names(&["utility.1,-1,0,0", "utility.1,-1,0,0"]),
            ["utility"]
        );
        let message = parse(&["relstring.10", "relstring_20"]).unwrap_err();
        assert!(
            message.contains("different lengths (10 and 20)"),
            "{message}"
        );
    }

    #[test]
    fn ir_measures_rel_sets_the_relevance_level_or_is_refused_with_the_reason() {
        let parse = |names: &[&str]| {
            MeasureSet::parse(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        };
        let set = parse(&["P(rel=2)@5", "AP(rel=2)", "nDCG@10", "Judged@10"]).unwrap();
        let names: Vec<String> = set.columns().iter().map(Column::name).collect();
        assert_eq!(names, ["map", "P_5", "ndcg_cut_10", "judged_10"]);
        assert_eq!(set.relevance_level(None), Ok(2));
        assert_eq!(set.relevance_level(Some(2)), Ok(2));
        let message = set.relevance_level(Some(1)).unwrap_err();
        assert!(
            message.contains("\"P(rel=2)@5\" asks for relevance level 2, and -l 1 for 1"),
            "{message}"
        );
        // Two levels: trec_eval computes every measure at one.
        let message = parse(&["P(rel=2)@5", "AP(rel=3)"])
            .unwrap()
            .relevance_level(None)
            .unwrap_err();
        assert!(
            message.contains("\"P(rel=2)@5\" asks for relevance level 2 and \"AP(rel=3)\" for 3"),
            "{message}"
        );
        // R@100 without rel= is rel=1 to ir_measures and -l to trec_eval: ambiguous beside
        // rel=2, unless -l says which.
        let set = parse(&["P(rel=2)@5", "R@100"]).unwrap();
        let message = set.relevance_level(None).unwrap_err();
        assert!(
            message.contains("\"R@100\" names no level") && message.contains("give -l 2"),
            "{message}"
        );
        assert_eq!(set.relevance_level(Some(2)), Ok(2));
        assert_eq!(
            parse(&["P(rel=1)@5", "map"]).unwrap().relevance_level(None),
            Ok(1)
        );
        assert_eq!(parse(&["map"]).unwrap().relevance_level(Some(3)), Ok(3));
        assert_eq!(parse(&["map"]).unwrap().relevance_level(None), Ok(1));
        // nDCG's gains do not depend on the level (trec_eval's ndcg_cut), and ir_measures'
        // nDCG takes no rel=: refused rather than computed unchanged.
        let message = parse(&["nDCG(rel=2)@10"]).unwrap_err();
        assert!(
            message.contains("ir_measures' nDCG takes no rel="),
            "{message}"
        );
        assert!(parse(&["Judged(rel=2)@10"])
            .unwrap_err()
            .contains("does not depend on the relevance level"));
        // ir_measures' cutoff= is @k; NumRet(rel=N) counts relevant results retrieved.
        assert_eq!(
            column_names(&["P(cutoff=5)", "NumRet(rel=1)"]),
            ["num_rel_ret", "P_5"]
        );
        assert!(parse(&["P(rel=2,cutoff=5)@10"])
            .unwrap_err()
            .contains("two cut-offs (5 and 10)"));
        assert!(parse(&["P(judged_only=True)@5"])
            .unwrap_err()
            .contains("-J"));
        assert!(parse(&["P(rel=x)@5"])
            .unwrap_err()
            .contains("rel=x is not a relevance level"));
        assert!(parse(&["official(rel=2)"]).unwrap_err().contains("rel="));
    }

    #[test]
    fn judged_only_drops_unjudged_results_after_the_cut() {
        // The first test's query: trec_eval's order x(unlisted) c(1) a(2) e(listed -1) b(0).
        // -J keeps c a b: relevant at ranks 1 and 2, 3 relevant judged (a, c, d).
        let qrels = parse::parse_qrels(
            Path::new("q"),
            "1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 d 1\n1 0 e -1\n",
        )
        .unwrap();
        let run_bytes: &[u8] =
            b"1 Q0 a 1 0.5 t\n1 Q0 b 2 0.1 t\n1 Q0 c 3 0.5 t\n1 Q0 e 4 0.4 t\n1 Q0 x 5 0.9 t\n";
        let measures = [
            "num_ret",
            "P.2,5",
            "recip_rank",
            "map",
            "unj.5",
            "judged.5",
            "bpref",
        ];
        let mut judged_only = options(&measures);
        judged_only.judged_only = true;
        let run = parse::parse_run(Path::new("r"), run_bytes).unwrap();
        let evaluation = evaluate_run(&qrels, run, &judged_only).unwrap();
        assert_eq!(value(&evaluation, "1", "num_ret"), 3.0);
        assert_eq!(value(&evaluation, "1", "P_2"), 1.0);
        assert_eq!(value(&evaluation, "1", "P_5"), 0.4);
        assert_eq!(value(&evaluation, "1", "recip_rank"), 1.0);
        assert!((value(&evaluation, "1", "map") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(value(&evaluation, "1", "unj_5"), 0.0);
        assert_eq!(value(&evaluation, "1", "judged_5"), 1.0);
        assert!((value(&evaluation, "1", "bpref") - 2.0 / 3.0).abs() < 1e-12);
        // Without -J: 2 of the 5 unjudged, judged@5 3/5; relevant at ranks 2 and 3.
        let run = parse::parse_run(Path::new("r"), run_bytes).unwrap();
        let evaluation = evaluate_run(&qrels, run, &options(&measures)).unwrap();
        assert_eq!(value(&evaluation, "1", "unj_5"), 0.4);
        assert_eq!(value(&evaluation, "1", "judged_5"), 0.6);
        assert_eq!(value(&evaluation, "1", "P_2"), 0.5);
        // -M cuts first (x c), then -J drops x: c alone.
        judged_only.max_results = 2;
        let run = parse::parse_run(Path::new("r"), run_bytes).unwrap();
        let evaluation = evaluate_run(&qrels, run, &judged_only).unwrap();
        assert_eq!(value(&evaluation, "1", "num_ret"), 1.0);
        assert_eq!(value(&evaluation, "1", "P_2"), 0.5);
    }

    #[test]
    fn collection_size_counts_the_nonrelevant_not_retrieved() {
        // 5 retrieved, 2 of them relevant, 3 relevant judged: with -N 100 the
        // nonrelevant not retrieved are 100 + 2 - 5 - 3 = 94 (trec_eval's m_utility.c).
        let qrels = parse::parse_qrels(
            Path::new("q"),
            "1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 d 1\n1 0 e -1\n2 0 z 1\n",
        )
        .unwrap();
        let run_bytes: &[u8] =
            b"1 Q0 a 1 0.5 t\n1 Q0 b 2 0.1 t\n1 Q0 c 3 0.5 t\n1 Q0 e 4 0.4 t\n1 Q0 x 5 0.9 t\n";
        let mut sized = options(&["utility.1,-1,-3,1"]);
        sized.collection_size = 100;
        sized.complete = true;
        let run = parse::parse_run(Path::new("r"), run_bytes).unwrap();
        let evaluation = evaluate_run(&qrels, run, &sized).unwrap();
        // 1*2 - 1*3 - 3*1 + 1*94.
        assert_eq!(value(&evaluation, "1", "utility"), 90.0);
        // A query missing from the run scores 0 under -c, as trec_eval zeroes it.
        assert_eq!(value(&evaluation, "2", "utility"), 0.0);
        sized.collection_size = 0;
        let run = parse::parse_run(Path::new("r"), run_bytes).unwrap();
        let evaluation = evaluate_run(&qrels, run, &sized).unwrap();
        assert_eq!(value(&evaluation, "1", "utility"), -10.0);
    }

    #[test]
    fn measure_selection_errors_are_helpful() {
        let parse = |names: &[&str]| {
            MeasureSet::parse(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        };
        assert!(parse(&["yaap"]).unwrap_err().contains("does not compute"));
        let names: Vec<String> = parse(&["iprec_at_recall.0.25,0.5", "11pt_avg"])
            .unwrap()
            .columns()
            .iter()
            .map(Column::name)
            .collect();
        assert_eq!(
            names,
            vec!["iprec_at_recall_0.25", "iprec_at_recall_0.50", "11pt_avg"]
        );
        assert!(parse(&["ndcg_cutt"])
            .unwrap_err()
            .contains("did you mean \"ndcg_cut\"?"));
        assert!(parse(&["P.0"]).unwrap_err().contains("positive integer"));
        assert!(parse(&["map.5"])
            .unwrap_err()
            .contains("takes no parameters"));
        assert!(parse(&["iprec_at_recall.1.5"])
            .unwrap_err()
            .contains("in [0, 1]"));
        let names: Vec<String> = parse(&["success.10,1", "map"])
            .unwrap()
            .columns()
            .iter()
            .map(Column::name)
            .collect();
        assert_eq!(names, vec!["map", "success_1", "success_10"]);
    }
}
