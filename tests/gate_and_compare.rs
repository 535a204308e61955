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
        markdown.contains("| candidate | nDCG@10 | 0.8334 | 0.3551 | -0.4783** |"),
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
        stdout.starts_with("## ✅ hyde-eval gate: PASS\n\n21 checks"),
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
        stdout.contains(
            "nDCG@3 on scenarios; superscript letters name the runs each run beats significantly"
        ),
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
        markdown.contains("| configuration | # | run | nDCG@3 |"),
        "{markdown}"
    );
    assert!(markdown.contains("| keyword | a | concept |"), "{markdown}");
    assert!(markdown.contains("| keyword | b | hash |"), "{markdown}");

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

/// The macro values of the only configuration, `candidate`, read from a plain run's
/// results.json.
fn plain_run_macro(directory: &Path, config: &str) -> serde_json::Map<String, serde_json::Value> {
    let output_dir = directory.join("plain").display().to_string();
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--config",
        config,
        "--output-dir",
        &output_dir,
        "--run-name",
        "plain",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(directory.join("plain/plain/results.json")).unwrap();
    let results: serde_json::Value = serde_json::from_str(&text).unwrap();
    let configuration = &results["configurations"][0];
    assert_eq!(configuration["name"], "candidate");
    configuration["macro"].as_object().unwrap().clone()
}

#[test]
fn absolute_targets_gate_with_or_without_a_baseline() {
    let directory = tempfile::tempdir().unwrap();
    let strong = config(directory.path(), "strong.toml", "hyde-3b-hyp");
    let values = plain_run_macro(directory.path(), &strong);
    let value = |metric: &str| values[metric].as_f64().unwrap();
    // Gimli's metrics, each target just below the run's own value but nDCG@10's set by
    // `ndcg_offset`.
    let ndcg = value("ndcg@10");
    assert!(ndcg < 0.995, "room above nDCG@10 {ndcg}");
    let targets = |ndcg_offset: f64| {
        ["precision@5", "recall@10", "mrr", "ndcg@10"]
            .iter()
            .map(|metric| {
                let offset = if *metric == "ndcg@10" {
                    ndcg_offset
                } else {
                    -0.005
                };
                format!("{metric}={:.6}", (value(metric) + offset).clamp(0.0, 1.0))
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let below = targets(-0.005);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--quiet", "--no-report", "--config", &strong];
        args.extend_from_slice(extra);
        hyde_eval(&args)
    };
    let stdout =
        |output: &std::process::Output| String::from_utf8_lossy(&output.stdout).into_owned();

    // Targets just below the run's own values pass; no baseline needed.
    let summary = directory.path().join("summary.md");
    let summary_path = summary.display().to_string();
    let output = run(&["--min", &below, "--summary-file", &summary_path]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("gate: PASS (4 targets met)"),
        "{}",
        stdout(&output)
    );
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(
        markdown.starts_with("## ✅ hyde-eval gate: PASS\n\n4 targets met"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| configuration | metric | value | min | |"),
        "{markdown}"
    );
    assert!(
        markdown.contains(&format!(
            "| candidate | nDCG@10 | {:.4} | {:.4} | ✅ |",
            value("ndcg@10"),
            value("ndcg@10") - 0.005
        )),
        "{markdown}"
    );

    // One target just above its value fails the gate, in the table, Markdown and gate.json.
    let above = targets(0.005);
    let output = run(&["--min", &above, "--format", "markdown"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stdout(&output).starts_with("## ❌ hyde-eval gate: REGRESSION\n\n1 of 4 targets missed"),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains(" | ❌ |"), "{}", stdout(&output));
    let output_dir = directory.path().join("gated").display().to_string();
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--config",
        &strong,
        "--output-dir",
        &output_dir,
        "--run-name",
        "g",
        "--min",
        &above,
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let gate: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(directory.path().join("gated/g/gate.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(gate["passed"], false);
    assert!(gate["baseline"].is_null());
    let missed: Vec<_> = gate["target_checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|check| check["failed"] == true)
        .collect();
    assert_eq!(missed.len(), 1, "{gate}");
    assert_eq!(missed[0]["configuration"], "candidate");
    assert_eq!(missed[0]["metric"], "ndcg@10");

    // The config file's [gate] table; the command line wins over it.
    let with_table = directory.path().join("table.toml");
    std::fs::write(
        &with_table,
        format!(
            "{}\n[gate]\nmin = {{ \"ndcg@10\" = {:.6} }}\n",
            std::fs::read_to_string(&strong).unwrap(),
            ndcg + 0.005
        ),
    )
    .unwrap();
    let with_table = with_table.display().to_string();
    let output = hyde_eval(&["run", "--quiet", "--no-report", "--config", &with_table]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("1 of 1 targets missed"),
        "{}",
        stdout(&output)
    );
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--config",
        &with_table,
        "--min",
        &below,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));

    // A metric the run does not compute is an input error naming it; so is a value
    // outside [0, 1].
    let output = run(&["--min", "ndcg@7=0.5"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("\"ndcg@7\""), "{stderr}");
    let output = run(&["--min", "ndcg@10=1.5"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("[0, 1]"));

    // Both kinds together: the baseline checks and the targets in one verdict.
    let baseline = directory.path().join("baseline.json").display().to_string();
    let made = hyde_eval(&[
        "baseline", "update", "--quiet", "--config", &strong, "--output", &baseline,
    ]);
    assert_eq!(made.status.code(), Some(0));
    let both = |targets: &str| {
        run(&[
            "--baseline",
            &baseline,
            "--max-drop",
            "ndcg@10=0.01",
            "--min",
            targets,
        ])
    };
    let output = both(&below);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("gate: PASS (1 checks against"),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains("none dropped beyond its threshold; 4 targets met)"));
    let output = both(&above);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("1 of 4 targets missed"),
        "{}",
        stdout(&output)
    );
}

/// The stderr of `output`, which must have exited with `code`.
fn stderr_of(output: &std::process::Output, code: i32) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    stderr
}

/// With `--format json` or `csv` and `--no-report`, a failing gate used to exit 1 and
/// say nothing. In every format, `--quiet` or not, the verdict is one line on stderr
/// naming what failed (a verdict is not progress), and the JSON carries it as `gate`;
/// `merge` concludes the same way.
#[test]
fn a_gate_says_its_verdict_on_stderr_in_every_format() {
    // bm25's nDCG@10 on devmem is 0.5517 (README), so a floor of 0.99 is missed.
    let failed = "gate: REGRESSION (1 of 1 targets missed): bm25 nDCG@10 0.5517 < min 0.9900\n";
    for format in ["json", "csv", "markdown", "table"] {
        let output = hyde_eval(&[
            "run",
            "--quiet",
            "--no-report",
            "--configurations",
            "bm25",
            "--min",
            "ndcg@10=0.99",
            "--format",
            format,
        ]);
        assert_eq!(stderr_of(&output, 1), failed, "--format {format}");
        if format == "json" {
            let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            let gate = &document["gate"];
            assert_eq!(gate["passed"], false, "{gate}");
            assert_eq!(gate["target_checks"][0]["configuration"], "bm25");
            assert_eq!(gate["target_checks"][0]["target"], 0.99);
            assert_eq!(document["configurations"][0]["name"], "bm25");
        }
    }
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--configurations",
        "bm25",
        "--min",
        "ndcg@10=0.5",
        "--format",
        "csv",
    ]);
    assert_eq!(stderr_of(&output, 0), "gate: PASS (1 targets met)\n");
    // An output that cannot be written fails the command, and the verdict is still said.
    let directory = tempfile::tempdir().unwrap();
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--configurations",
        "bm25",
        "--min",
        "ndcg@10=0.99",
        "--format",
        "csv",
        "--summary-file",
        directory.path().to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !matches!(output.status.code(), Some(0 | 1)),
        "{:?}: {stderr}",
        output.status
    );
    assert!(stderr.contains(failed), "{stderr}");
    // Without a gate, a quiet run says nothing, as before.
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--configurations",
        "bm25",
        "--format",
        "csv",
    ]);
    assert_eq!(stderr_of(&output, 0), "");

    // merge concludes as run does.
    let work = tempfile::tempdir().unwrap();
    let shards_dir = work.path().join("shards");
    let mut shard_dirs = Vec::new();
    for shard in ["1/2", "2/2"] {
        let output = hyde_eval(&[
            "run",
            "--quiet",
            "--configurations",
            "bm25",
            "--shard",
            shard,
            "--output-dir",
            shards_dir.to_str().unwrap(),
        ]);
        stderr_of(&output, 0);
    }
    for entry in std::fs::read_dir(&shards_dir).unwrap() {
        shard_dirs.push(entry.unwrap().path().display().to_string());
    }
    shard_dirs.sort();
    let merged = work.path().join("merged").display().to_string();
    let mut args = vec!["merge", "--quiet", "--format", "csv"];
    args.extend(shard_dirs.iter().map(String::as_str));
    args.extend(["--output-dir", &merged, "--min", "ndcg@10=0.99"]);
    assert_eq!(stderr_of(&hyde_eval(&args), 1), failed);
}
