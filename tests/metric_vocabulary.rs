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
