//! One metric vocabulary: every place a metric is named (`--metrics`, `--max-drop`,
//! `--min`, the config file's `metrics` and `[gate]`, `report --metric`, `compare
//! --metric` and `--metrics`, `sweep --metrics`, `eval -m`) accepts hyde-eval's names,
//! its table headers, trec_eval's and ir_measures' spellings in any case, and refuses an
//! unknown name with a "did you mean".

mod common;

use std::path::Path;
use std::process::Output;

fn hyde_eval(args: &[&str]) -> Output {
    common::hyde_eval(args)
}

fn succeeded(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn macro_value(results: &Path, configuration: &str, metric: &str) -> f64 {
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results).unwrap()).unwrap();
    results["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == configuration)
        .unwrap()["macro"][metric]
        .as_f64()
        .unwrap()
}

#[test]
fn every_place_a_metric_is_named_takes_every_vocabulary() {
    let directory = tempfile::tempdir().unwrap();
    let output_dir = directory.path().to_str().unwrap();
    // --metrics: a table header, trec_eval's printed and -m names, ir_measures' RR.
    let stdout = succeeded(&hyde_eval(&[
        "run",
        "--quiet",
        "--configurations",
        "keyword,bm25",
        "--output-dir",
        output_dir,
        "--metrics",
        "nDCG@10,R@5,RR,P_5,success.1",
    ]));
    let header = stdout
        .lines()
        .find(|line| line.starts_with("│ configuration"))
        .unwrap();
    let columns: Vec<&str> = header
        .split(['│', '┆'])
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
        .collect();
    assert_eq!(
        columns,
        ["configuration", "nDCG@10", "R@5", "MRR", "P@5", "Hit@1"]
    );
    let results = directory.path().join("devmem").join("results.json");
    let results_arg = results.to_str().unwrap();

    // --max-drop and --min against the run itself as baseline: 2 metrics x 2
    // configurations checked, 2 targets x 2 configurations met.
    let stdout = succeeded(&hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--configurations",
        "keyword,bm25",
        "--baseline",
        results_arg,
        "--max-drop",
        "NDCG@10=0,RR=0",
        "--min",
        "P@5=0.01,Success@1=0.01",
    ]));
    assert!(stdout.contains("gate: PASS (4 checks against"), "{stdout}");
    assert!(stdout.contains("4 targets met"), "{stdout}");
    // A target above bm25's MRR, named the trec_eval way, fails the gate.
    let mrr = macro_value(&results, "bm25", "mrr");
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--configurations",
        "bm25",
        "--min",
        &format!("recip_rank={:.4}", (mrr + 0.01).min(1.0)),
    ]);
    assert_eq!(output.status.code(), Some(1));

    // The config file's metrics and [gate] tables.
    let config = directory.path().join("hyde-eval.toml");
    std::fs::write(
        &config,
        format!(
            "metrics = [\"NDCG_CUT_10\", \"AP\"]\n[gate]\nbaseline = {results_arg:?}\nmax_drop = {{ \"nDCG@10\" = 0.0 }}\nmin = {{ \"R@5\" = 0.01 }}\n"
        ),
    )
    .unwrap();
    let stdout = succeeded(&hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--configurations",
        "keyword,bm25",
        "--config",
        config.to_str().unwrap(),
    ]));
    assert!(stdout.contains("┆ nDCG@10 ┆     MAP │"), "{stdout}");
    assert!(
        stdout.contains("gate: PASS (2 checks against") && stdout.contains("2 targets met"),
        "{stdout}"
    );

    // report --metric and compare --metric.
    let report_dir = directory.path().join("report");
    succeeded(&hyde_eval(&[
        "report",
        results_arg,
        "--metric",
        "RR",
        "--output-dir",
        report_dir.to_str().unwrap(),
    ]));
    let html = std::fs::read_to_string(report_dir.join("report.html")).unwrap();
    assert!(
        html.contains("compared on <code>mrr</code>"),
        "the report compares on mrr"
    );
    // One results file compared with itself needs two labels.
    let (first, second) = (format!("a={results_arg}"), format!("b={results_arg}"));
    let stdout = succeeded(&hyde_eval(&[
        "compare",
        &first,
        &second,
        "--metric",
        "ap",
        "--output-dir",
        directory.path().join("compare").to_str().unwrap(),
    ]));
    assert!(stdout.starts_with("MAP on devmem"), "{stdout}");

    // eval -m: ir_measures' and trec_eval's printed names select trec_eval's measures,
    // whose values are the run's (the agreement docs/metrics-and-eval.md states).
    let report = directory.path().join("devmem");
    let stdout = succeeded(&hyde_eval(&[
        "eval",
        "-m",
        "nDCG@10",
        "-m",
        "RR",
        "-m",
        "p_5",
        report.join("qrels.trec").to_str().unwrap(),
        report.join("runs").join("bm25.run").to_str().unwrap(),
    ]));
    for (measure, metric) in [
        ("recip_rank", "mrr"),
        ("P_5", "precision@5"),
        ("ndcg_cut_10", "ndcg@10"),
    ] {
        let expected = format!("{:.4}", macro_value(&results, "bm25", metric));
        let line = stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(measure))
            .unwrap_or_else(|| panic!("{measure} missing from\n{stdout}"));
        assert!(line.ends_with(&expected), "{line} vs {expected}");
    }
}

#[test]
fn sweep_objectives_take_every_vocabulary() {
    let directory = tempfile::tempdir().unwrap();
    let stdout = succeeded(&hyde_eval(&[
        "sweep",
        "--quiet",
        "--configurations",
        "blend",
        "--steps",
        "2",
        "--folds",
        "2",
        "--metrics",
        "nDCG@10,RR",
        "--output-dir",
        directory.path().to_str().unwrap(),
    ]));
    for metric in ["┆ nDCG@10 ┆", "┆ MRR "] {
        assert!(stdout.contains(metric), "{metric} missing from\n{stdout}");
    }
}

#[test]
fn unknown_names_get_the_closest_computed_name() {
    for args in [
        vec!["run", "--no-report", "--quiet", "--metrics", "ndgc@10"],
        vec!["run", "--no-report", "--quiet", "--min", "ndgc@10=0.5"],
    ] {
        let output = hyde_eval(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("unknown metric \"ndgc@10\" (did you mean \"ndcg@10\"?)"),
            "{stderr}"
        );
    }
    let output = hyde_eval(&["eval", "-m", "RR@10", "qrels", "run"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no trec_eval counterpart"));
}

/// Two spellings of one metric are one metric: `--max-drop ndcg@10=0,nDCG@10=0.5` made
/// two checks with different thresholds (and a larger correction family). Now
/// conflicting numbers are refused naming both spellings (flags and the config file's
/// `[gate]` tables), equal ones merged into one check, and a column is printed once.
#[test]
fn two_spellings_of_one_metric_are_one_metric() {
    let directory = tempfile::tempdir().unwrap();
    let output_dir = directory.path().to_str().unwrap();
    // --metrics: one column per metric.
    let stdout = succeeded(&hyde_eval(&[
        "run",
        "--quiet",
        "--configurations",
        "keyword,bm25",
        "--output-dir",
        output_dir,
        "--metrics",
        "ndcg@10,nDCG@10,R@5,NDCG_CUT_10,recall@5",
    ]));
    let header = stdout
        .lines()
        .find(|line| line.starts_with("│ configuration"))
        .unwrap();
    let columns: Vec<&str> = header
        .split(['│', '┆'])
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
        .collect();
    assert_eq!(columns, ["configuration", "nDCG@10", "R@5"]);
    let results = directory.path().join("devmem").join("results.json");
    let results_arg = results.to_str().unwrap();
    let gated = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--quiet",
            "--no-report",
            "--configurations",
            "keyword,bm25",
            "--baseline",
            results_arg,
        ];
        args.extend_from_slice(extra);
        hyde_eval(&args)
    };
    // Different drops for one metric: refused, naming both spellings.
    let output = gated(&["--max-drop", "ndcg@10=0,nDCG@10=0.5"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "--max-drop: \"ndcg@10\" and \"nDCG@10\" name one metric, ndcg@10, with different drops (0 and 0.5); give it once"
        ),
        "{stderr}"
    );
    let output = gated(&["--min", "P@5=0.1,precision@5=0.2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("\"P@5\" and \"precision@5\" name one metric, precision@5, with different targets (0.1 and 0.2)"));
    // The same drop twice: one check per configuration (2, not 4).
    let stdout = succeeded(&gated(&[
        "--max-drop",
        "ndcg@10=0,NDCG_CUT_10=0,nDCG@10=0.0",
    ]));
    assert!(stdout.contains("gate: PASS (2 checks against"), "{stdout}");
    // The config file's [gate] tables, whose keys may spell one metric twice.
    let config = directory.path().join("gate.toml");
    std::fs::write(
        &config,
        format!("[gate]\nbaseline = {results_arg:?}\nmax_drop = {{ \"nDCG@10\" = 0.0, \"ndcg@10\" = 0.5 }}\n"),
    )
    .unwrap();
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--configurations",
        "keyword,bm25",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "[gate] max_drop in {}: \"nDCG@10\" and \"ndcg@10\" name one metric, ndcg@10, with different drops (0 and 0.5)",
            config.display()
        )),
        "{stderr}"
    );
    // eval -m: one line per measure, whatever the spellings.
    let report = directory.path().join("devmem");
    let stdout = succeeded(&hyde_eval(&[
        "eval",
        "-m",
        "nDCG@10",
        "-m",
        "ndcg_cut.10",
        "-m",
        "ndcg@10",
        "-m",
        "NDCG_CUT_10",
        report.join("qrels.trec").to_str().unwrap(),
        report.join("runs").join("bm25.run").to_str().unwrap(),
    ]));
    let measures: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(measures, ["ndcg_cut_10"], "{stdout}");
}

/// `eval -m` takes hyde-eval's own names as every other flag does, and ir_measures'
/// parameterised forms mapped to trec_eval's measures and `-l`. Graded qrels: a=2, b=1,
/// c=0, d=1; the run ranks x(unjudged) b a c y(unjudged). Values by hand (and as
/// trec_eval's C code gives them): at level 1 the relevant b, a sit at ranks 2 and 3 of 3
/// relevant: P@5 = 2/5, MRR = 1/2, AP = (1/2 + 2/3) / 3, recall@10 = 2/3, hit@5 = 1,
/// judged@5 = 3/5; at level 2 only a (rank 3) is relevant: P@5 = 1/5, AP = 1/3.
#[test]
fn eval_takes_hyde_eval_names_and_ir_measures_parameters() {
    let directory = tempfile::tempdir().unwrap();
    let qrels = directory.path().join("qrels");
    let run = directory.path().join("run");
    std::fs::write(&qrels, "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq1 0 d 1\n").unwrap();
    std::fs::write(
        &run,
        "q1 Q0 x 1 5 r\nq1 Q0 b 2 4 r\nq1 Q0 a 3 3 r\nq1 Q0 c 4 2 r\nq1 Q0 y 5 1 r\n",
    )
    .unwrap();
    let (qrels, run) = (qrels.to_str().unwrap(), run.to_str().unwrap());
    let values = |args: &[&str]| -> Vec<(String, String)> {
        let mut all = vec!["eval"];
        all.extend_from_slice(args);
        all.extend([qrels, run]);
        succeeded(&hyde_eval(&all))
            .lines()
            .map(|line| {
                let fields: Vec<&str> = line.split('\t').collect();
                (fields[0].trim().to_owned(), fields[2].to_owned())
            })
            .collect()
    };
    let pairs = |expected: &[(&str, &str)]| -> Vec<(String, String)> {
        expected
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    };
    assert_eq!(
        values(&[
            "-m",
            "mrr",
            "-m",
            "MRR",
            "-m",
            "precision@5",
            "-m",
            "recall@10",
            "-m",
            "hit@5",
            "-m",
            "map",
            "-m",
            "judged@5"
        ]),
        pairs(&[
            ("map", "0.3889"),
            ("recip_rank", "0.5000"),
            ("P_5", "0.4000"),
            ("recall_10", "0.6667"),
            ("success_5", "1.0000"),
            ("judged_5", "0.6000"),
        ])
    );
    // rel=2 sets the level of every measure: the same as trec_eval's -l 2.
    let level_two = pairs(&[("map", "0.3333"), ("P_5", "0.2000")]);
    assert_eq!(values(&["-m", "P(rel=2)@5", "-m", "AP(rel=2)"]), level_two);
    assert_eq!(values(&["-l", "2", "-m", "P.5", "-m", "map"]), level_two);
    assert_eq!(
        values(&["-l", "2", "-m", "P(rel=2)@5", "-m", "AP(rel=2)"]),
        level_two
    );
    // R@100 and Judged@10 (ir_measures' spellings).
    assert_eq!(
        values(&["-m", "R@100", "-m", "Judged@10"]),
        pairs(&[("recall_100", "0.6667"), ("judged_10", "0.6000")])
    );
    // Refused with the reason: a rel= that -l contradicts, two levels, a rel= beside a
    // measure without one, and rel= on nDCG, whose gains ignore the level.
    for (args, reason) in [
        (
            vec!["-l", "1", "-m", "P(rel=2)@5"],
            "\"P(rel=2)@5\" asks for relevance level 2, and -l 1 for 1",
        ),
        (
            vec!["-m", "P(rel=2)@5", "-m", "AP(rel=3)"],
            "eval computes every measure at one relevance level",
        ),
        (
            vec!["-m", "P(rel=2)@5", "-m", "R@100"],
            "\"R@100\" names no level, which ir_measures reads as rel=1",
        ),
        (
            vec!["-m", "nDCG(rel=2)@10"],
            "nDCG's gains are the grades whatever the relevance level",
        ),
        (vec!["-m", "RR@10"], "no trec_eval counterpart"),
    ] {
        let mut all = vec!["eval"];
        all.extend_from_slice(&args);
        all.extend([qrels, run]);
        let output = hyde_eval(&all);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    }
}
