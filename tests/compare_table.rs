//! `compare` as a paper's table, through the binary: stored results of three runs tested
//! pair by pair on several metrics and configurations, labelled `NAME=FILE`; run files
//! labelled by name, or by path when two names collide; the labels and run counts that
//! cannot make a table are refused before any work; a comparison on more metrics is not
//! replaced by one on fewer. (ranx agreement and the LaTeX table: `compare_reference.rs`.)

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use common::{hyde_eval, repo_path};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts that `args` exit 2 with `says` on stderr.
fn assert_refused(args: &[&str], says: &str) {
    let output = hyde_eval(args);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{args:?}: {}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains(says),
        "{args:?}: {}",
        stderr(&output)
    );
}

/// A devmem run of keyword and BM25 (with `extra` BM25 options) into `output/name`;
/// returns its results.json.
fn devmem_run(output: &Path, name: &str, extra: &[&str]) -> String {
    let output_dir = output.display().to_string();
    let mut args = vec![
        "run",
        "--quiet",
        "--configurations",
        "keyword,bm25",
        "--output-dir",
        &output_dir,
        "--run-name",
        name,
    ];
    args.extend_from_slice(extra);
    let result = hyde_eval(&args);
    assert_eq!(result.status.code(), Some(0), "{}", stderr(&result));
    output.join(name).join("results.json").display().to_string()
}

fn compare_json(args: &[&str]) -> Value {
    let mut all = vec!["compare", "--quiet", "--no-report", "--format", "json"];
    all.extend_from_slice(args);
    let output = hyde_eval(&all);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn stored_results_are_tested_pair_by_pair_on_every_metric_and_configuration() {
    let directory = tempfile::tempdir().unwrap();
    let d = directory.path();
    let base = devmem_run(d, "a", &[]);
    let low = devmem_run(d, "b", &["--bm25-k1", "0.2", "--bm25-b", "0.1"]);
    let high = devmem_run(d, "c", &["--bm25-k1", "3.0", "--bm25-b", "1.0"]);
    let (base_arg, low_arg, high_arg) = (
        format!("base={base}"),
        format!("low={low}"),
        format!("high={high}"),
    );
    let output_dir = d.join("out").display().to_string();
    let compare = |metrics: &[&str], force: bool| {
        let mut args = vec![
            "compare",
            "--quiet",
            base_arg.as_str(),
            low_arg.as_str(),
            high_arg.as_str(),
            "--output-dir",
            output_dir.as_str(),
            "--run-name",
            "three",
        ];
        args.extend_from_slice(metrics);
        if force {
            args.push("--force");
        }
        hyde_eval(&args)
    };
    let output = compare(&["--metrics", "ndcg@10,MRR,nDCG@10"], false);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value =
        serde_json::from_slice(&std::fs::read(d.join("out/three/compare.json")).unwrap()).unwrap();
    assert_eq!(report["kind"], "stored-results");
    // Two spellings of nDCG@10 are one metric.
    assert_eq!(report["metrics"], serde_json::json!(["ndcg@10", "mrr"]));
    let labels: Vec<&str> = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["base", "low", "high"]);
    assert_eq!(report["runs"][2]["key"], "c");
    assert_eq!(report["runs"][1]["source"], low.as_str());
    // 3 pairs x 2 metrics x 2 configurations, corrected together.
    assert_eq!(report["tests"], 12);
    for row in report["rows"].as_array().unwrap() {
        assert_eq!(row["comparisons"].as_array().unwrap().len(), 6, "{row}");
        assert_eq!(row["cells"].as_array().unwrap().len(), 6, "{row}");
    }
    // keyword reads no BM25 parameter: the three runs are one, every pair a tie, nobody
    // beats anybody and all are best.
    let keyword = &report["rows"][0];
    assert_eq!(keyword["configuration"], "keyword");
    for pair in keyword["comparisons"].as_array().unwrap() {
        assert_eq!(pair["delta"], 0.0, "{pair}");
        assert_eq!(pair["p_value"], 1.0, "{pair}");
    }
    for cell in keyword["cells"].as_array().unwrap() {
        assert_eq!(cell["best"], true, "{cell}");
        assert_eq!(cell["beats"], serde_json::json!([]), "{cell}");
    }
    // A pair's p is the same as when the pair is compared alone; only the correction
    // sees the other tests.
    let bm25 = &report["rows"][1];
    let in_three = bm25["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|pair| {
            pair["reference_run"] == "base"
                && pair["candidate_run"] == "high"
                && pair["metric"] == "ndcg@10"
        })
        .unwrap();
    let alone = compare_json(&[
        &base_arg,
        &high_arg,
        "--metric",
        "ndcg@10",
        "--configurations",
        "bm25",
    ]);
    let alone = &alone["rows"][0]["comparisons"][0];
    assert_eq!(in_three["p_value"], alone["p_value"]);
    assert_eq!(in_three["delta"], alone["delta"]);
    assert!(
        in_three["adjusted_p_value"].as_f64() >= alone["adjusted_p_value"].as_f64(),
        "{in_three} {alone}"
    );
    // The Markdown names configuration, letter and label; LaTeX is written beside it.
    let markdown = std::fs::read_to_string(d.join("out/three/compare.md")).unwrap();
    assert!(markdown.contains("| keyword | a | base |"), "{markdown}");
    assert!(markdown.contains("| bm25 | high vs low |"), "{markdown}");
    let latex = std::fs::read_to_string(d.join("out/three/compare.tex")).unwrap();
    assert_eq!(latex.matches("\\midrule").count(), 2, "{latex}");
    assert!(latex.contains("\nkeyword & a & base & "), "{latex}");

    // The comparison on two metrics is not replaced by one on MRR alone, but by --force.
    let output = compare(&["--metric", "mrr"], false);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("holds a comparison on metrics this one lacks (ndcg@10)"),
        "{}",
        stderr(&output)
    );
    let output = compare(&["--metric", "mrr"], true);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn run_files_are_labelled_by_name_by_file_name_or_by_path_when_names_collide() {
    let directory = tempfile::tempdir().unwrap();
    let d = directory.path();
    let fixture = |name: &str| {
        repo_path(&format!("fixtures/compare/{name}"))
            .display()
            .to_string()
    };
    let qrels = fixture("qrels.trec");
    // Another a.run elsewhere, and a file whose name holds '='.
    std::fs::create_dir(d.join("other")).unwrap();
    let other_a = d.join("other/a.run").display().to_string();
    std::fs::copy(fixture("a.run"), &other_a).unwrap();
    let with_sign = d.join("other/k1=0.9.run").display().to_string();
    std::fs::copy(fixture("b.run"), &with_sign).unwrap();
    let labels = |report: &Value| -> Vec<String> {
        report["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|run| run["label"].as_str().unwrap().to_owned())
            .collect()
    };
    let report = compare_json(&["--qrels", &qrels, &fixture("a.run"), &other_a, &with_sign]);
    assert_eq!(
        labels(&report),
        [fixture("a.run"), other_a.clone(), "k1=0.9".to_owned()]
    );
    let (first, second) = (
        format!("bm25={}", fixture("a.run")),
        format!("tuned={other_a}"),
    );
    let report = compare_json(&["--qrels", &qrels, &first, &second]);
    assert_eq!(labels(&report), ["bm25", "tuned"]);
    assert_eq!(report["runs"][1]["source"], other_a.as_str());
}

#[test]
fn labels_and_run_counts_that_cannot_make_a_table_are_refused_before_any_work() {
    let fixture = |name: &str| {
        repo_path(&format!("fixtures/compare/{name}"))
            .display()
            .to_string()
    };
    let (qrels, a, b) = (fixture("qrels.trec"), fixture("a.run"), fixture("b.run"));
    assert_refused(
        &[
            "compare",
            "--no-report",
            "--qrels",
            &qrels,
            &format!("={a}"),
            &b,
        ],
        "the label before '=' is empty",
    );
    assert_refused(
        &[
            "compare",
            "--no-report",
            "--qrels",
            &qrels,
            &format!("x={a}"),
            &format!("x={b}"),
        ],
        "two runs are labelled \"x\"",
    );
    assert_refused(
        &["compare", "--no-report", "--qrels", &qrels, &a, &a],
        "name them: NAME=PATH",
    );
    // 27 files that do not exist: refused for their number, not for the first missing.
    let many: Vec<String> = (0..27).map(|n| format!("missing-{n}.run")).collect();
    let mut args = vec!["compare", "--no-report", "--qrels", qrels.as_str()];
    args.extend(many.iter().map(String::as_str));
    assert_refused(&args, "it compares at most 26 runs, not 27");
    assert_refused(
        &[
            "compare",
            "--no-report",
            "--dataset",
            "datasets/chatcli-ab",
            "--embedder",
            "hash",
            "--embedder",
            "hash",
        ],
        "--embedder hash is given twice",
    );
}
