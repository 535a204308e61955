//! The rows of the bad-input matrix (docs/reliability.md) that are not a fixture under
//! `fixtures/malformed/` (those are checked by `tests/malformed_datasets.rs`): inputs
//! generated at test time (a 100 MB line), accepted variants (BOM, CRLF, Unicode), and
//! command-line and config-file values. Each asserts the exit code and the message or
//! the documented handling.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{hyde_eval, tiny_copy};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn append(path: &Path, text: &str) {
    let mut content = std::fs::read(path).unwrap();
    content.extend_from_slice(text.as_bytes());
    std::fs::write(path, content).unwrap();
}

/// The report directory that a run into `reports` wrote (named after the dataset's
/// `name`, which for these copies is `tiny`).
fn report_dir(reports: &Path) -> PathBuf {
    reports.join("tiny")
}

/// Runs `run` on `dataset` into a fresh `work/reports-<dataset>` and returns (output,
/// per_query.csv).
fn run_dataset(work: &Path, dataset: &Path, extra: &[&str]) -> (Output, String) {
    let name = dataset.file_name().unwrap().to_str().unwrap();
    let reports = work.join(format!("reports-{name}"));
    let mut args = vec![
        "run",
        "--quiet",
        "--dataset",
        dataset.to_str().unwrap(),
        "--output-dir",
        reports.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = hyde_eval(&args);
    let csv =
        std::fs::read_to_string(report_dir(&reports).join("per_query.csv")).unwrap_or_default();
    (output, csv)
}

/// Runs bm25 on `dataset` and asserts success with `note` on stderr.
fn assert_runs_with_note(dataset: &Path, note: &str) {
    let output = hyde_eval(&[
        "run",
        "--no-report",
        "--dataset",
        dataset.to_str().unwrap(),
        "--configurations",
        "bm25",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains(note), "{}", stderr(&output));
}

#[test]
fn bom_crlf_and_a_missing_final_newline_load_like_the_plain_files() {
    let work = tempfile::tempdir().unwrap();
    let plain = tiny_copy(work.path(), "plain");
    let variant = tiny_copy(work.path(), "variant");
    for file in [
        "facts.jsonl",
        "queries.jsonl",
        "qrels.tsv",
        "hypotheses.jsonl",
    ] {
        let text = std::fs::read_to_string(variant.join(file)).unwrap();
        let crlf = format!("\u{feff}{}", text.trim_end().replace('\n', "\r\n"));
        std::fs::write(variant.join(file), crlf).unwrap();
    }
    let (output, plain_csv) = run_dataset(work.path(), &plain, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let (output, variant_csv) = run_dataset(work.path(), &variant, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(plain_csv.lines().count() > 2);
    assert_eq!(plain_csv, variant_csv);
}

#[test]
fn a_100_mb_single_line_is_reported_by_file_line_and_column_without_echoing_it() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "huge-line");
    append(
        &dataset.join("facts.jsonl"),
        &format!(
            "{{\"id\": \"f9\", \"content\": \"{}\n",
            "x".repeat(100_000_000)
        ),
    );
    let (output, _) = run_dataset(work.path(), &dataset, &[]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("facts.jsonl:3: EOF while parsing a string (column 100000025)"),
        "{message}"
    );
    assert!(message.len() < 2_000, "the error echoes the line");
}

/// `hyde-eval run --quiet --no-report` with a config file holding `text`.
fn run_with_config(text: &str) -> Output {
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("hyde-eval.toml");
    std::fs::write(&config, text).unwrap();
    hyde_eval(&[
        "run",
        "--quiet",
        "--no-report",
        "--config",
        config.to_str().unwrap(),
    ])
}

#[test]
fn unknown_config_keys_are_refused_with_the_closest_name() {
    let output = run_with_config("configurations = [\"bm25\"]\n[params]\nbm25_kk = 1.2\n");
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("hyde-eval.toml:3: unknown field `bm25_kk`"),
        "{message}"
    );
    assert!(message.contains("did you mean `bm25_k1`?"), "{message}");
}

#[test]
fn negative_nan_and_all_zero_weights_are_refused() {
    for (weights, expected) in [
        (
            "-1,0.5,0.5",
            "weights must be finite and >= 0, got [-1.0, 0.5, 0.5]",
        ),
        (
            "NaN,0.5,0.5",
            "weights must be finite and >= 0, got [NaN, 0.5, 0.5]",
        ),
        ("0,0,0", "weights are all zero"),
    ] {
        let output = hyde_eval(&["run", "--quiet", "--no-report", "--weights", weights]);
        assert_eq!(output.status.code(), Some(2), "{weights}");
        assert!(
            stderr(&output).contains(expected),
            "{weights}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn k_zero_is_refused_and_k_beyond_the_corpus_counts_missing_ranks_as_misses() {
    let output = hyde_eval(&["run", "--quiet", "--no-report", "--k", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cut-offs must be positive integers"));

    // An empty list in the config file is refused too (found by fuzzing `k = []`).
    let output = run_with_config("k = []\n");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("cut-offs must be a non-empty list"));

    // tiny has 2 facts: at k = 1000, trec_eval's P@1000 divides by 1000 anyway.
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "tiny");
    let (output, csv) = run_dataset(
        work.path(),
        &dataset,
        &["--k", "1000", "--configurations", "bm25"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let precision = header
        .iter()
        .position(|&name| name == "precision@1000")
        .unwrap();
    let recall = header
        .iter()
        .position(|&name| name == "recall@1000")
        .unwrap();
    for row in csv.lines().skip(1) {
        let fields: Vec<f64> = row
            .split(',')
            .map(|field| field.parse().unwrap_or(f64::NAN))
            .collect();
        assert_eq!(fields[precision], 0.001, "{row}");
        assert_eq!(fields[recall], 1.0, "{row}");
    }
}

#[test]
fn queries_without_judgments_are_counted_and_left_out_of_the_means() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "unjudged");
    append(
        &dataset.join("queries.jsonl"),
        "{\"id\": \"q3\", \"text\": \"nothing is judged for this\"}\n",
    );
    let reports = work.path().join("reports");
    let output = hyde_eval(&[
        "run",
        "--dataset",
        dataset.to_str().unwrap(),
        "--configurations",
        "bm25",
        "--output-dir",
        reports.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("3 queries (2 evaluated, 1 without relevant facts)"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(report_dir(&reports).join("per_query.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2, "{csv}");
}

#[test]
fn combining_characters_rtl_text_and_emoji_load_and_retrieve_unchanged() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "unicode");
    let content = "e\u{301}cole שלום עולם 🚀 launch מבחן";
    append(
        &dataset.join("facts.jsonl"),
        &format!("{{\"id\": \"f3\", \"content\": \"{content}\"}}\n"),
    );
    append(
        &dataset.join("queries.jsonl"),
        "{\"id\": \"q3\", \"text\": \"שלום 🚀\"}\n",
    );
    append(&dataset.join("qrels.tsv"), "q3\tf3\t1\n");
    let (output, csv) = run_dataset(work.path(), &dataset, &["--configurations", "bm25"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let q3 = csv.lines().find(|row| row.starts_with("bm25,q3,")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let mrr = header.iter().position(|&name| name == "mrr").unwrap();
    assert_eq!(
        q3.split(',').nth(mrr).map(str::parse),
        Some(Ok(1.0)),
        "{q3}"
    );
    let results = std::fs::read_to_string(
        report_dir(&work.path().join("reports-unicode")).join("results.json"),
    )
    .unwrap();
    let json: serde_json::Value = serde_json::from_str(&results).unwrap();
    let stored = json["facts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|fact| fact["id"] == "f3")
        .unwrap();
    assert_eq!(stored["content"], content, "text is stored byte for byte");
}

#[test]
fn timestamps_after_the_datasets_now_are_noted_and_count_as_age_zero() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "future");
    std::fs::write(
        dataset.join("dataset.toml"),
        "name = \"future\"\nnow = \"2026-06-01T00:00:00Z\"\n",
    )
    .unwrap();
    append(
        &dataset.join("facts.jsonl"),
        "{\"id\": \"f3\", \"content\": \"from the future\", \"last_accessed\": \"2099-01-01T00:00:00Z\"}\n",
    );
    assert_runs_with_note(
        &dataset,
        "1 fact(s) were last used after the dataset's now (2026-06-01T00:00:00+00:00); their age counts as 0 days",
    );
}

#[test]
fn run_names_that_would_leave_the_output_directory_are_refused() {
    for name in ["../escape", "a/b", ".."] {
        let output = hyde_eval(&["run", "--quiet", "--no-report", "--run-name", name]);
        assert_eq!(output.status.code(), Some(2), "{name}");
        assert!(
            stderr(&output).contains(&format!("run name {name:?} must be a plain directory name")),
            "{name}: {}",
            stderr(&output)
        );
    }
    // `compare` of stored results names its directory from --run-name too; the writer
    // itself refuses any name that is not a plain directory name.
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "tiny");
    let (output, _) = run_dataset(work.path(), &dataset, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = report_dir(&work.path().join("reports-tiny")).join("results.json");
    let results = results.to_str().unwrap();
    let output_dir = work.path().join("out");
    let (first, second) = (format!("a={results}"), format!("b={results}"));
    let output = hyde_eval(&[
        "compare",
        &first,
        &second,
        "--run-name",
        "../escaped",
        "--output-dir",
        output_dir.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("output name \"../escaped\" must be a plain directory name"),
        "{}",
        stderr(&output)
    );
    assert!(!work.path().join("escaped").exists());
}

#[test]
fn a_dataset_without_now_measures_ages_from_its_latest_fact_and_says_so() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "no-now");
    std::fs::write(dataset.join("dataset.toml"), "name = \"no-now\"\n").unwrap();
    // tiny's latest timestamp is f1's last_accessed.
    assert_runs_with_note(
        &dataset,
        "dataset.toml sets no `now`; fact ages are measured from the latest fact timestamp, 2026-02-01T00:00:00+00:00",
    );
}

/// Asserts exit code 2 and that stderr holds every one of `parts`.
fn assert_refused(output: &Output, parts: &[&str]) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    for part in parts {
        assert!(text.contains(part), "expected {part:?} in:\n{text}");
    }
}

/// Writes `text` to `work/name` and returns its path as text.
fn write_file(work: &Path, name: &str, text: &str) -> String {
    let path = work.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Qrels in which no judgment reaches the relevance level score nothing: `eval` and
/// `compare --qrels` refuse them as `run` does, and a gate on them is an input error (2),
/// never a regression (1) or a pass (0).
#[test]
fn qrels_without_a_relevant_judgment_are_refused_by_eval_and_compare() {
    let work = tempfile::tempdir().unwrap();
    let zeros = write_file(work.path(), "zeros.qrels", "q1 0 d1 0\nq1 0 d2 0\n");
    let graded = write_file(work.path(), "graded.qrels", "q1 0 d1 1\nq2 0 d2 2\n");
    let a = write_file(work.path(), "a.run", "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n");
    let b = write_file(work.path(), "b.run", "q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\n");
    let nothing = "no query has a judgment of grade 1 or more, so there is nothing to score (2 judgments, 1 queries)";
    let zeros_problem = format!("{zeros}: {nothing}");
    assert_refused(&hyde_eval(&["eval", &zeros, &a]), &[&zeros_problem]);
    // Gated, the same qrels are an input error before any check.
    assert_refused(
        &hyde_eval(&["eval", &zeros, &a, "--min", "ndcg@10=0.5"]),
        &[&zeros_problem],
    );
    assert_refused(
        &hyde_eval(&["eval", &zeros, &a, "--baseline", &b]),
        &[&zeros_problem],
    );
    let output_dir = work.path().join("out");
    assert_refused(
        &hyde_eval(&[
            "compare",
            "--qrels",
            &zeros,
            &a,
            &b,
            "--output-dir",
            output_dir.to_str().unwrap(),
        ]),
        &[&zeros_problem],
    );
    assert!(!output_dir.exists(), "nothing is written");
    // A relevance level above every grade.
    assert_refused(
        &hyde_eval(&["eval", "-l", "99", &graded, &a]),
        &["no query has a judgment of grade 99 or more, so there is nothing to score (2 judgments, 2 queries)"],
    );
    assert_refused(
        &hyde_eval(&[
            "compare",
            "--qrels",
            &graded,
            &a,
            &b,
            "--relevance-level",
            "3",
            "--output-dir",
            output_dir.to_str().unwrap(),
        ]),
        &["no query has a judgment of grade 3 or more"],
    );
    // At the default level the graded qrels are evaluated.
    let output = hyde_eval(&["eval", &graded, &a]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// An empty target list (an empty value, as an unset CI variable gives, or an empty
/// table in the config file) is a usage error in every command with a gate, never a gate
/// that does not run or checks everything at zero tolerance unasked.
#[test]
fn empty_gate_target_lists_are_usage_errors() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "tiny");
    let dataset = dataset.to_str().unwrap();
    let baseline = work.path().join("base.json");
    let output = hyde_eval(&[
        "baseline",
        "update",
        "--quiet",
        "--dataset",
        dataset,
        "--output",
        baseline.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let baseline = baseline.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--quiet", "--no-report", "--dataset", dataset];
        args.extend_from_slice(extra);
        hyde_eval(&args)
    };
    let empty_min = "--min \"\" names no metric, so the gate would check nothing";
    assert_refused(&run(&["--min", ""]), &[empty_min]);
    assert_refused(&run(&["--min", " , "]), &["--min \" , \" names no metric"]);
    assert_refused(
        &run(&["--baseline", baseline, "--max-drop", ""]),
        &["--max-drop \"\" names no metric, so the gate would check nothing"],
    );
    // An unset CI variable, as a shell expands it.
    let output = std::process::Command::new("sh")
        .args([
            "-c",
            "exec \"$0\" run --quiet --no-report --dataset \"$1\" --min \"$HYDE_EVAL_TEST_MIN\"",
            env!("CARGO_BIN_EXE_hyde-eval"),
            dataset,
        ])
        .env_remove("HYDE_EVAL_TEST_MIN")
        .output()
        .unwrap();
    assert_refused(&output, &[empty_min]);

    let qrels = write_file(work.path(), "q.qrels", "q1 0 d1 1\n");
    let a = write_file(work.path(), "a.run", "q1 Q0 d1 1 2.0 a\n");
    assert_refused(&hyde_eval(&["eval", &qrels, &a, "--min", ""]), &[empty_min]);
    assert_refused(
        &hyde_eval(&["eval", &qrels, &a, "--baseline", &a, "--max-drop", ""]),
        &["--max-drop \"\" names no metric"],
    );
    assert_refused(
        &hyde_eval(&["merge", work.path().to_str().unwrap(), "--min", ""]),
        &[empty_min],
    );

    for (key, example) in [("min", "0.8"), ("max_drop", "0.01")] {
        let config = write_file(
            work.path(),
            "hyde-eval.toml",
            &format!("[gate]\nbaseline = {baseline:?}\n{key} = {{}}\n"),
        );
        assert_refused(
            &run(&["--config", &config]),
            &[
                &format!("{config}: [gate] {key} is an empty table: it names no metric, so the gate would check nothing"),
                &format!("hint: name a metric, e.g. {key} = {{ \"ndcg@10\" = {example} }}, or remove {key}"),
            ],
        );
    }
}

/// Fusion weights that score nothing (all zero), invert a run (negative) or are not
/// numbers are refused wherever weights are read, and so is a fused score that would
/// not be finite.
#[test]
fn fusion_weights_that_score_nothing_and_infinite_fused_scores_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let a = write_file(work.path(), "a.run", "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n");
    let b = write_file(work.path(), "b.run", "q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\n");
    let fuse = |extra: &[&str]| {
        let mut args = vec!["fuse", "--method", "wsum"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[&a, &b]);
        hyde_eval(&args)
    };
    assert_refused(
        &fuse(&["--weights=0,0"]),
        &["--weights: wsum weights are all zero, which scores every document 0"],
    );
    assert_refused(
        &fuse(&["--weights=-1,1"]),
        &["--weights: wsum weights must be finite and >= 0, got -1"],
    );
    assert_refused(
        &fuse(&["--weights=inf,1"]),
        &["wsum weights must be finite and >= 0, got inf"],
    );
    let output = fuse(&["--weights=0,1"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "q1 Q0 d2 1 1 wsum\nq1 Q0 d1 2 0 wsum\n",
        "one run's weight alone ranks by that run"
    );

    // Finite scores whose sum overflows: 1e308 + 1e308.
    let big = write_file(
        work.path(),
        "big.run",
        "q1 Q0 d1 1 1e308 x\nq1 Q0 d2 2 1 x\n",
    );
    let fused = work.path().join("fused.run");
    assert_refused(
        &hyde_eval(&[
            "fuse",
            "--method",
            "combsum",
            "--norm",
            "none",
            &big,
            &big,
            "-o",
            fused.to_str().unwrap(),
        ]),
        &["query q1: the fused score of document d1 would be inf: the runs' scores overflow under combsum with --norm none"],
    );
    assert!(!fused.exists(), "no run file with an infinite score");

    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--quiet", "--no-report"];
        args.extend_from_slice(extra);
        hyde_eval(&args)
    };
    assert_refused(
        &run(&[
            "--configurations",
            "hybrid",
            "--set",
            "hybrid.hybrid_vector_weight=0",
            "--set",
            "hybrid.hybrid_text_weight=0",
        ]),
        &["configuration hybrid: hybrid_vector_weight and hybrid_text_weight are both zero, which scores every fact 0"],
    );
    assert_refused(
        &run(&[
            "--configurations",
            "bm25-dense-wsum",
            "--set",
            "bm25-dense-wsum.fusion_vector_weight=1e300",
        ]),
        &["configuration bm25-dense-wsum: fusion_vector_weight must be at most 1e100 (weights are relative; a larger one could make a fused score infinite), got 1e300"],
    );
    let config = write_file(
        work.path(),
        "hyde-eval.toml",
        "configurations = [\"zero\"]\n[configuration.zero]\npreset = \"bm25-dense-wsum\"\nfusion_vector_weight = 0.0\nfusion_text_weight = 0.0\n",
    );
    assert_refused(
        &run(&["--config", &config]),
        &["configuration zero: fusion_vector_weight and fusion_text_weight are both zero"],
    );
    // A sweep point with both hybrid weights zero.
    let output_dir = work.path().join("sweeps");
    assert_refused(
        &hyde_eval(&[
            "sweep",
            "--quiet",
            "--configurations",
            "hybrid",
            "--set",
            "hybrid.hybrid_text_weight=0",
            "--param",
            "hybrid_vector_weight=0:1:0.5",
            "--output-dir",
            output_dir.to_str().unwrap(),
        ]),
        &["configuration hybrid: hybrid_vector_weight and hybrid_text_weight are both zero"],
    );
}
