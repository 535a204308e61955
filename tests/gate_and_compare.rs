//! The regression gate and `compare` as CI uses them, through the binary: exit codes,
//! verdicts, the Markdown summary and the comparison files.

mod common;

use std::path::Path;

use common::hyde_eval;

/// A config file whose only configuration, `candidate`, is the given preset.
fn config(directory: &Path, name: &str, preset: &str) -> String {
    let path = directory.join(name);
    let dataset = common::repo_path("datasets/devmem");
    std::fs::write(
        &path,
        format!("dataset = {:?}\nconfigurations = [\"candidate\"]\n\n[configuration.candidate]\npreset = \"{preset}\"\n", dataset.display().to_string()),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn gate_fails_on_a_weaker_configuration_passes_on_an_equal_one_and_rejects_another_dataset() {
    let directory = tempfile::tempdir().unwrap();
    let strong = config(directory.path(), "strong.toml", "hyde-3b-hyp");
    let weak = config(directory.path(), "weak.toml", "keyword");
    let baseline = directory.path().join("baseline.json").display().to_string();
    let output = hyde_eval(&[
        "baseline", "update", "--quiet", "--config", &strong, "--output", &baseline,
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // keyword (nDCG@10 0.355) against a hyde-3b-hyp baseline (0.833): a regression, and a
    // significant one.
    let summary = directory.path().join("summary.md");
    let summary_path = summary.display().to_string();
    for extra in [&[][..], &["--require-significant"][..]] {
        let mut args = vec![
            "run",
            "--quiet",
            "--no-report",
            "--config",
            &weak,
            "--baseline",
            &baseline,
            "--max-drop",
            "ndcg@10=0.01,recall@5=0.02",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--summary-file", &summary_path]);
        let output = hyde_eval(&args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains("gate: REGRESSION (2 of 2 checks dropped beyond their threshold"),
            "{stdout}"
        );
        assert!(
            stdout.contains("-0.4783**"),
            "nDCG@10 delta 0.3551 - 0.8334 with ** significance: {stdout}"
        );
    }
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(
        markdown.starts_with("## ❌ hyde-eval gate: REGRESSION"),
        "{markdown}"
    );
    assert_eq!(
        markdown.matches("## ❌ hyde-eval gate: REGRESSION").count(),
        2,
        "the summary file is appended to"
    );
    assert!(
        markdown.contains("| candidate | ndcg@10 | 0.8334 | 0.3551 | -0.4783** |"),
        "{markdown}"
    );

    // The same configuration as the baseline passes, with every metric checked at 0 drop.
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--config",
        &strong,
        "--baseline",
        &baseline,
        "--format",
        "markdown",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.starts_with("## ✅ hyde-eval gate: PASS\n\n17 checks"),
        "{stdout}"
    );

    // A baseline of another dataset is an input error.
    let other = directory.path().join("other.json").display().to_string();
    let made = hyde_eval(&[
        "baseline",
        "update",
        "--quiet",
        "--dataset",
        "datasets/chatcli-ab",
        "--output",
        &other,
    ]);
    assert_eq!(made.status.code(), Some(0));
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--config",
        &strong,
        "--baseline",
        &other,
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("dataset content hash differs"), "{stderr}");
    assert!(
        stderr.contains("baseline update"),
        "the error says how to fix it: {stderr}"
    );
}

#[test]
fn expectations_can_fail_the_gate() {
    let directory = tempfile::tempdir().unwrap();
    let baseline = directory.path().join("baseline.json").display().to_string();
    let dataset = [
        "--dataset",
        "datasets/scenarios",
        "--configurations",
        "keyword",
    ];
    let mut update = vec!["baseline", "update", "--quiet", "--output", &baseline];
    update.extend_from_slice(&dataset);
    assert_eq!(hyde_eval(&update).status.code(), Some(0));
    let mut run = vec!["run", "--quiet", "--no-report", "--baseline", &baseline];
    run.extend_from_slice(&dataset);
    assert_eq!(
        hyde_eval(&run).status.code(),
        Some(0),
        "metrics equal the baseline"
    );
    run.push("--require-expectations");
    let output = hyde_eval(&run);
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("expectations failed"), "{stdout}");
    assert!(
        stdout.contains("sc-q05 {\"kind\":\"in_top\",\"fact\":\"sc-f07\",\"n\":3}"),
        "failures are listed by query: {stdout}"
    );
}

#[test]
fn compare_two_providers_side_by_side() {
    let directory = tempfile::tempdir().unwrap();
    let output_dir = directory.path().display().to_string();
    let output = hyde_eval(&[
        "compare",
        "--quiet",
        "--dataset",
        "datasets/scenarios",
        "--embedder",
        "concept",
        "--embedder",
        "hash",
        "--metric",
        "ndcg@3",
        "--output-dir",
        &output_dir,
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("ndcg@3 on scenarios; differences from concept"),
        "{stdout}"
    );
    let report: serde_json::Value = serde_json::from_slice(
        &std::fs::read(directory.path().join("scenarios-compare/compare.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["runs"].as_array().unwrap().len(), 2);
    assert_eq!(report["rows"].as_array().unwrap().len(), 10);
    // keyword and bm25 use no embeddings: identical under both providers, every query a tie.
    let keyword = &report["rows"][0];
    assert_eq!(keyword["configuration"], "keyword");
    assert_eq!(keyword["comparisons"][0]["delta"], 0.0);
    assert_eq!(keyword["comparisons"][0]["losses"], 0);
    assert_eq!(keyword["comparisons"][0]["wins"], 0);
    assert_eq!(
        report["runs"][0]["accounting"]["embedded_texts"],
        62 + 31 + 93
    );
    let markdown =
        std::fs::read_to_string(directory.path().join("scenarios-compare/compare.md")).unwrap();
    assert!(
        markdown.contains("| configuration | concept | hash |"),
        "{markdown}"
    );

    // Stored runs of different datasets cannot be compared.
    let a = directory.path().join("a");
    let b = directory.path().join("b");
    for (dataset, out) in [("datasets/scenarios", &a), ("datasets/chatcli-ab", &b)] {
        let out = out.display().to_string();
        assert_eq!(
            hyde_eval(&[
                "run",
                "--quiet",
                "--dataset",
                dataset,
                "--output-dir",
                &out,
                "--run-name",
                "r"
            ])
            .status
            .code(),
            Some(0)
        );
    }
    let output = hyde_eval(&[
        "compare",
        &a.join("r/results.json").display().to_string(),
        &b.join("r/results.json").display().to_string(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("compare runs of one dataset"));
}
