//! `hyde-eval eval` against trec_eval's own outputs: every line of `out.test`,
//! `out.test.a`, `out.test.aq`, `out.test.aqc`, `out.test.aqcM` and `out.test.aql` is
//! reproduced exactly (same lines, same order) with the
//! matching flags; the CACM Solr runs score as their stored trec_eval output says; `-J`
//! and `-l` give what trec_eval's C code gives (pytrec_eval-terrier's reference values)
//! and `-J` equals scoring the judged results alone; `-N` reaches utility as trec_eval's
//! m_utility.c reads it; and input defects exit with code 2 naming file and line.

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::process::Output;

/// Runs `hyde-eval eval` with `args`.
fn hyde_eval(args: &[&str]) -> Output {
    common::command().arg("eval").args(args).output().unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let output = hyde_eval(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Compares hyde-eval's output with the expected trec_eval output restricted to the
/// measures hyde-eval printed; returns how many lines matched.
fn assert_same_lines(expected_file: &Path, ours: &str) -> usize {
    let expected = std::fs::read_to_string(expected_file).unwrap();
    let measure = |line: &str| line.split('\t').next().unwrap_or("").trim().to_owned();
    let ours: Vec<&str> = ours.lines().collect();
    let printed: HashSet<String> = ours.iter().map(|line| measure(line)).collect();
    let expected: Vec<&str> = expected
        .lines()
        .filter(|line| printed.contains(&measure(line)))
        .collect();
    assert_eq!(ours, expected, "{}", expected_file.display());
    ours.len()
}

fn fixture(name: &str) -> std::path::PathBuf {
    common::shared_datasets(name).join("runs/trec_eval_test")
}

macro_rules! trec_eval_fixture {
    ($test:ident, $expected:literal, $lines:literal, [$($flag:literal),*], $qrels:literal, $run:literal) => {
        #[test]
        #[ignore = "needs ../shared/datasets; .ci/run runs it by name"]
        fn $test() {
            let directory = fixture(stringify!($test));
            let qrels = directory.join($qrels);
            let run = directory.join($run);
            let ours = stdout_of(&[
                $($flag,)*
                qrels.to_str().unwrap(),
                run.to_str().unwrap(),
            ]);
            assert_eq!(assert_same_lines(&directory.join($expected), &ours), $lines);
        }
    };
}

// Line counts: out.test has 30 lines, all of which hyde-eval computes (runid, num_q,
// 3 counts, map, gm_map, Rprec, bpref, recip_rank, 11 iprec_at_recall, 9 P_k); all_trec
// adds recall, ndcg_cut, map_cut and relative_P (9 each), infAP, gm_bpref, Rprec_mult
// (10), utility, 11pt_avg, binG, G, ndcg, ndcg_rel, Rndcg, success (3), set_P,
// set_relative_P, set_recall, set_map, set_F, num_nonrel_judged_ret, rbp, rbp_resid and
// unj (3): all 99 summary lines; per query (3 queries) 96 more each (everything but
// runid, num_q, gm_map and gm_bpref, plus the per-query-only `relstring`): all 387.
trec_eval_fixture!(out_test, "out.test", 30, [], "qrels.test", "results.test");
trec_eval_fixture!(
    out_test_a,
    "out.test.a",
    99,
    ["-m", "all_trec"],
    "qrels.test",
    "results.test"
);
trec_eval_fixture!(
    out_test_aq,
    "out.test.aq",
    387,
    ["-m", "all_trec", "-q"],
    "qrels.test",
    "results.test"
);
trec_eval_fixture!(
    out_test_aqc,
    "out.test.aqc",
    387,
    ["-m", "all_trec", "-q", "-c"],
    "qrels.test",
    "results.trunc"
);
trec_eval_fixture!(
    out_test_aqcm,
    "out.test.aqcM",
    387,
    ["-m", "all_trec", "-q", "-c", "-M100"],
    "qrels.test",
    "results.trunc"
);
trec_eval_fixture!(
    out_test_aql,
    "out.test.aql",
    387,
    ["-m", "all_trec", "-m", "relstring.20", "-q", "-l2"],
    "qrels.rel_level",
    "results.test"
);

/// The CACM Solr runs against their stored (old-style) `trec_eval -q` output: every
/// value of every measure hyde-eval computes, per query and averaged.
#[test]
#[ignore = "needs ../shared/datasets; .ci/run runs it by name"]
fn cacm_solr_runs_match_stored_trec_eval_output() {
    let datasets = common::shared_datasets("cacm_solr_runs_match_stored_trec_eval_output");
    let directory = datasets.join("runs/cacm_solr");
    let qrels = directory.join("cacm.qrels");
    // Old trec_eval names -> trec_eval 9 names.
    let rename = |name: &str| -> Option<String> {
        match name {
            "num_q" | "num_ret" | "num_rel" | "num_rel_ret" | "map" | "recip_rank" => {
                Some(name.to_owned())
            }
            "R-prec" => Some("Rprec".into()),
            _ => name
                .strip_prefix('P')
                .filter(|k| k.parse::<usize>().is_ok())
                .map(|k| format!("P_{k}")),
        }
    };
    for (run, stored, expected_map) in [
        ("cacm_core_1", "trec_eval_result_1.txt", "0.2208"),
        ("cacm_core_2", "trec_eval_result_2.txt", "0.2681"),
    ] {
        let ours = stdout_of(&[
            "-q",
            qrels.to_str().unwrap(),
            directory.join(run).to_str().unwrap(),
        ]);
        let ours: HashSet<(String, String, String)> = ours
            .lines()
            .map(|line| {
                let fields: Vec<&str> = line.split('\t').collect();
                (
                    fields[0].trim().to_owned(),
                    fields[1].to_owned(),
                    fields[2].to_owned(),
                )
            })
            .collect();
        assert!(ours.contains(&("map".into(), "all".into(), expected_map.into())));
        let stored = std::fs::read_to_string(directory.join(stored)).unwrap();
        let mut compared = 0;
        for line in stored.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let Some(name) = rename(fields[0]) else {
                continue;
            };
            let key = (name, fields[1].to_owned(), fields[2].to_owned());
            assert!(ours.contains(&key), "{run}: {key:?} not reproduced");
            compared += 1;
        }
        // 52 judged queries in the stored files x 15 per-query measures + 16 averages;
        // run 1 has no query 64, so its stored file lists 51 queries.
        let queries = if run == "cacm_core_1" { 51 } else { 52 };
        assert_eq!(compared, queries * 15 + 16, "{run}");
    }
}

/// Per-query values of `eval -q --format json` (the first run): query -> measure -> value.
fn per_query_values(json: &str) -> serde_json::Map<String, serde_json::Value> {
    let document: serde_json::Value = serde_json::from_str(json).unwrap();
    document["runs"][0]["per_query"]
        .as_object()
        .unwrap()
        .clone()
}

/// trec_eval's `-J` and `-l`, as its C code computes them: pytrec_eval-terrier wrote
/// `fixtures/trec_eval/judged-only/reference.json` (scripts/judged_only_reference.py;
/// .ci/run checks that it still does) for a seeded collection with graded, zero and
/// negative judgments, unlisted results and tied scores. Every per-query value of every
/// all_trec measure it computes must be reproduced, with and without -J, at levels 1
/// and 2 (but `iprec_at_recall` and `11pt_avg`, whose recall levels that trec_eval
/// build translates to ranks before the rounding fix hyde-eval follows).
#[test]
fn judged_only_and_relevance_levels_match_trec_eval_on_the_reference_collection() {
    let directory = common::repo_path("fixtures/trec_eval/judged-only");
    let reference: serde_json::Value =
        serde_json::from_slice(&std::fs::read(directory.join("reference.json")).unwrap()).unwrap();
    let (qrels, run) = (directory.join("qrels"), directory.join("run"));
    let mut compared = 0;
    for case in reference["cases"].as_array().unwrap() {
        let level = case["relevance_level"].to_string();
        let mut args = vec!["--quiet", "-q", "-m", "all_trec", "--format", "json"];
        args.extend(["-l", &level]);
        if case["judged_only"] == true {
            args.push("-J");
        }
        args.extend([qrels.to_str().unwrap(), run.to_str().unwrap()]);
        let ours = per_query_values(&stdout_of(&args));
        let expected = case["per_query"].as_object().unwrap();
        assert_eq!(ours.len(), expected.len(), "{args:?}");
        for (query, values) in expected {
            for (measure, value) in values.as_object().unwrap() {
                let ours = ours[query][measure]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{args:?}: {query} {measure} missing"));
                let value = value.as_f64().unwrap();
                assert!(
                    (ours - value).abs() <= 1e-9,
                    "{args:?}: {query} {measure}: hyde-eval {ours}, trec_eval {value}"
                );
                compared += 1;
            }
        }
    }
    // 4 cases x 4 judged queries x 78 values.
    assert_eq!(compared, 4 * 4 * 78);
}

/// `-N` is the collection size that utility's fourth coefficient reads (trec_eval's
/// m_utility.c: `p4 * (num_docs_in_coll + rel_ret - ret - rel)`); an `-N` parsed but
/// not passed on would score the nonrelevant documents not retrieved as 0 - 2 - 3 + ... .
/// Query 1 judges a=2, c=1, d=1 relevant, b=0, e=-1; the run ranks x(unlisted) a c e b.
/// Without -J: 5 retrieved, 2 relevant of 3: 1*2 - 1*3 - 3*1 + 1*(100 + 2 - 5 - 3) = 90,
/// and 2 - 3 - 3 + (0 + 2 - 5 - 3) = -10 without -N. With -J (x and e leave): 3
/// retrieved: 2 - 1 - 3 + (100 + 2 - 3 - 3) = 94.
#[test]
fn collection_size_reaches_utility_with_and_without_judged_only() {
    let directory = tempfile::tempdir().unwrap();
    let qrels = directory.path().join("qrels");
    let run = directory.path().join("run");
    std::fs::write(&qrels, "1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 d 1\n1 0 e -1\n").unwrap();
    std::fs::write(
        &run,
        "1 Q0 a 1 0.5 t\n1 Q0 b 2 0.1 t\n1 Q0 c 3 0.5 t\n1 Q0 e 4 0.4 t\n1 Q0 x 5 0.9 t\n",
    )
    .unwrap();
    let (qrels, run) = (qrels.to_str().unwrap(), run.to_str().unwrap());
    let utility = |flags: &[&str]| {
        let mut args = flags.to_vec();
        args.extend(["-m", "utility.1,-1,-3,1", qrels, run]);
        stdout_of(&args)
    };
    assert_eq!(utility(&[]), "utility               \tall\t-10.0000\n");
    assert_eq!(
        utility(&["-N", "100"]),
        "utility               \tall\t90.0000\n"
    );
    assert_eq!(
        utility(&["-J", "-N", "100"]),
        "utility               \tall\t94.0000\n"
    );
}

/// `-J` on trec_eval's own fixtures and the CACM runs equals scoring, without `-J`, the
/// run with every result the qrels do not judge removed: the ranking of the judged
/// results is unchanged (same scores, same tie-breaking), and the scoring without `-J` is
/// the one the stored outputs check above. .ci/run also compares `-J` with trec_eval's
/// C code on these files (scripts/judged_only_reference.py --compare).
#[test]
#[ignore = "needs ../shared/datasets; .ci/run runs it by name"]
fn judged_only_equals_scoring_the_judged_results_alone_on_the_shared_runs() {
    let datasets = common::shared_datasets(
        "judged_only_equals_scoring_the_judged_results_alone_on_the_shared_runs",
    );
    let work = tempfile::tempdir().unwrap();
    let tests = datasets.join("runs/trec_eval_test");
    let cacm = datasets.join("runs/cacm_solr");
    for (qrels, run, level) in [
        (tests.join("qrels.test"), tests.join("results.test"), "1"),
        (
            tests.join("qrels.rel_level"),
            tests.join("results.test"),
            "2",
        ),
        (cacm.join("cacm.qrels"), cacm.join("cacm_core_1"), "1"),
        (cacm.join("cacm.qrels"), cacm.join("cacm_core_2"), "1"),
    ] {
        let judged: HashSet<(String, String)> = std::fs::read_to_string(&qrels)
            .unwrap()
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let grade: i64 = fields.get(3)?.parse().ok()?;
                (grade >= 0).then(|| (fields[0].to_owned(), fields[2].to_owned()))
            })
            .collect();
        let text = std::fs::read_to_string(&run).unwrap();
        let kept: Vec<&str> = text
            .lines()
            .filter(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                judged.contains(&(fields[0].to_owned(), fields[2].to_owned()))
            })
            .collect();
        assert!(
            kept.len() < text.lines().count(),
            "{}: nothing to drop",
            run.display()
        );
        let filtered = work.path().join("judged-only.run");
        std::fs::write(&filtered, kept.join("\n") + "\n").unwrap();
        let args = |run: &Path, judged_only: bool| {
            let mut args = vec![
                "--quiet".to_owned(),
                "-q".into(),
                // A query whose results are all unjudged keeps no result under -J, and
                // leaves the filtered run: -c scores both the same way.
                "-c".into(),
                "-m".into(),
                "all_trec".into(),
                "-l".into(),
                level.into(),
                "--format".into(),
                "json".into(),
            ];
            if judged_only {
                args.push("-J".into());
            }
            args.extend([qrels.display().to_string(), run.display().to_string()]);
            args
        };
        let with_flag = args(&run, true);
        let without = args(&filtered, false);
        let with_flag = per_query_values(&stdout_of(
            &with_flag.iter().map(String::as_str).collect::<Vec<_>>(),
        ));
        let without = per_query_values(&stdout_of(
            &without.iter().map(String::as_str).collect::<Vec<_>>(),
        ));
        assert_eq!(with_flag, without, "{}", run.display());
    }
}

#[test]
fn json_and_csv_carry_the_same_numbers() {
    let directory = tempfile::tempdir().unwrap();
    let qrels = directory.path().join("qrels");
    let run = directory.path().join("run");
    std::fs::write(&qrels, "1 0 a 1\n1 0 b 0\n2 0 c 2\n").unwrap();
    std::fs::write(
        &run,
        "1 Q0 b 1 2.0 mine\n1 Q0 a 2 1.0 mine\n2 Q0 c 1 5 mine\n",
    )
    .unwrap();
    let paths = [qrels.to_str().unwrap(), run.to_str().unwrap()];
    let json = stdout_of(&[
        "-m", "map", "-m", "P.1", "-q", "--format", "json", paths[0], paths[1],
    ]);
    let document: serde_json::Value = serde_json::from_str(&json).unwrap();
    let first = &document["runs"][0];
    assert_eq!(first["runid"], "mine");
    assert_eq!(first["num_q"], 2);
    assert_eq!(first["all"]["map"], 0.75);
    assert_eq!(first["all"]["P_1"], 0.5);
    assert_eq!(first["per_query"]["1"]["map"], 0.5);
    let csv = stdout_of(&["-m", "map", "--format", "csv", paths[0], paths[1]]);
    assert_eq!(
        csv,
        format!(
            "run,runid,query,measure,value\n{},mine,all,map,0.75\n",
            paths[1]
        )
    );
}

#[test]
fn input_defects_exit_2_with_file_and_line() {
    let directory = tempfile::tempdir().unwrap();
    let qrels = directory.path().join("qrels");
    let run = directory.path().join("run");
    std::fs::write(&qrels, "1 0 a 1\n").unwrap();
    let check = |run_text: &str, expected: &str| {
        std::fs::write(&run, run_text).unwrap();
        let output = hyde_eval(&[qrels.to_str().unwrap(), run.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "{expected} not in {stderr}");
    };
    check(
        "1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n1 Q0 a 3 0 t\n",
        "run:3: document a appears twice for query 1 (first on line 1)",
    );
    check("1 Q0 a 1 2.x t\n", "run:1: score \"2.x\" is not a number");
    check("2 Q0 a 1 2 t\n", "no query of this run is judged");
    let output = hyde_eval(&["-m", "yaap", qrels.to_str().unwrap(), run.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("does not compute"));
}

#[test]
fn missing_queries_are_noted_and_results_identical_at_any_thread_count() {
    let directory = tempfile::tempdir().unwrap();
    let qrels = directory.path().join("qrels");
    let run = directory.path().join("run");
    let mut qrels_text = String::new();
    let mut run_text = String::new();
    for query in 0..200 {
        for doc in 0..30 {
            if (query + doc) % 4 == 0 {
                qrels_text.push_str(&format!("q{query} 0 d{doc} {}\n", (query * doc) % 3));
            }
            if query % 10 != 0 {
                run_text.push_str(&format!(
                    "q{query} Q0 d{doc} 0 {} t\n",
                    (query * 7 + doc * 13) % 17
                ));
            }
        }
    }
    std::fs::write(&qrels, qrels_text).unwrap();
    std::fs::write(&run, run_text).unwrap();
    let paths = [qrels.to_str().unwrap(), run.to_str().unwrap()];
    let one = hyde_eval(&["-m", "all_trec", "-q", "-j", "1", paths[0], paths[1]]);
    let two = hyde_eval(&["-m", "all_trec", "-q", "-j", "2", paths[0], paths[1]]);
    assert_eq!(one.stdout, two.stdout);
    let stderr = String::from_utf8_lossy(&one.stderr);
    assert!(
        stderr
            .contains("20 qrels queries without results (q0, q10, q100, q110, q120, ...) left out"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&one.stdout);
    assert!(
        stdout.contains("num_q                 \tall\t180\n"),
        "{stdout}"
    );
}
