//! The binary as a user runs it: defaults, determinism across thread counts, exit codes.

mod common;

use std::process::Output;

/// Runs hyde-eval with `--output-dir output_dir` after `args`.
fn hyde_eval(args: &[&str], output_dir: &std::path::Path) -> Output {
    common::command()
        .args(args)
        .arg("--output-dir")
        .arg(output_dir)
        .output()
        .unwrap()
}

#[test]
fn default_run_prints_the_table_and_writes_reports() {
    let output_dir = tempfile::tempdir().unwrap();
    let output = hyde_eval(&["run", "--quiet"], output_dir.path());
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "devmem: 220 facts, 90 queries",
        "nDCG@10",
        "hyde-3b-hyp",
        "multi-hyde",
        "hybrid",
        "HyDE configuration",
    ] {
        assert!(
            stdout.contains(expected),
            "{expected} missing from\n{stdout}"
        );
    }
    let report = output_dir.path().join("devmem");
    for file in [
        "results.json",
        "per_query.csv",
        "timings.json",
        "qrels.trec",
        "runs/keyword.run",
        "runs/hybrid.run",
    ] {
        assert!(report.join(file).is_file(), "{file}");
    }
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["schema_version"], 1);
    assert_eq!(results["configurations"].as_array().unwrap().len(), 10);
    assert!(results["dataset"]["content_hash"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    let csv = std::fs::read_to_string(report.join("per_query.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 10 * 90);
}

#[test]
fn results_json_is_byte_identical_at_one_two_and_eight_threads_and_across_runs() {
    let runs: Vec<Vec<u8>> = ["1", "2", "8", "8"]
        .iter()
        .map(|threads| {
            let output_dir = tempfile::tempdir().unwrap();
            let output = hyde_eval(&["run", "--quiet", "--threads", threads], output_dir.path());
            assert_eq!(output.status.code(), Some(0));
            std::fs::read(output_dir.path().join("devmem/results.json")).unwrap()
        })
        .collect();
    assert!(runs[0].len() > 100_000);
    assert!(runs[0] == runs[1], "1 vs 2 threads differ");
    assert!(runs[0] == runs[2], "1 vs 8 threads differ");
    assert!(runs[2] == runs[3], "two runs at 8 threads differ");
}

#[test]
fn synthetic_results_json_is_byte_identical_at_one_two_and_eight_threads_and_across_runs() {
    let work = tempfile::tempdir().unwrap();
    let dataset = work.path().join("synthetic");
    let output = common::hyde_eval(&[
        "dataset",
        "synth",
        "--facts",
        "2000",
        "--queries",
        "200",
        "--seed",
        "5",
        "--output",
        dataset.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0));
    let runs: Vec<Vec<u8>> = ["1", "2", "8", "8"]
        .iter()
        .map(|threads| {
            let output_dir = tempfile::tempdir().unwrap();
            let output = hyde_eval(
                &[
                    "run",
                    "--quiet",
                    "--dataset",
                    dataset.to_str().unwrap(),
                    "--threads",
                    threads,
                ],
                output_dir.path(),
            );
            assert_eq!(output.status.code(), Some(0));
            std::fs::read(output_dir.path().join("synth-2000/results.json")).unwrap()
        })
        .collect();
    let text = String::from_utf8_lossy(&runs[0]);
    for configuration in [
        "\"keyword\"",
        "\"bm25\"",
        "\"dense\"",
        "\"multi-hyde\"",
        "\"hybrid\"",
    ] {
        assert!(text.contains(configuration), "{configuration} missing");
    }
    assert!(runs[0] == runs[1], "1 vs 2 threads differ");
    assert!(runs[0] == runs[2], "1 vs 8 threads differ");
    assert!(runs[2] == runs[3], "two runs at 8 threads differ");
}

/// `dataset synth`: the same seed gives byte-identical files, another seed other files,
/// and the planted structure is there: BM25 finds the targets far above chance, and
/// hypotheses written in the topic's words beat the synonym-shifted query's embedding.
#[test]
fn dataset_synth_is_seeded_and_plants_retrievable_structure() {
    let work = tempfile::tempdir().unwrap();
    let synth = |seed: &str, name: &str| {
        let directory = work.path().join(name);
        let output = common::hyde_eval(&[
            "dataset",
            "synth",
            "--facts",
            "3000",
            "--queries",
            "150",
            "--seed",
            seed,
            "--output",
            directory.to_str().unwrap(),
        ]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        [
            "facts.jsonl",
            "queries.jsonl",
            "qrels.tsv",
            "hypotheses.jsonl",
        ]
        .map(|file| std::fs::read(directory.join(file)).unwrap())
    };
    let first = synth("11", "a");
    assert_eq!(first, synth("11", "b"), "same seed, different files");
    assert_ne!(first[0], synth("12", "c")[0], "another seed, same facts");
    assert_eq!(
        first[0].iter().filter(|&&byte| byte == b'\n').count(),
        3_000
    );

    let reports = tempfile::tempdir().unwrap();
    let output = hyde_eval(
        &[
            "run",
            "--quiet",
            "--dataset",
            work.path().join("a").to_str().unwrap(),
            "--k",
            "10",
        ],
        reports.path(),
    );
    assert_eq!(output.status.code(), Some(0));
    let results: serde_json::Value = serde_json::from_slice(
        &std::fs::read(reports.path().join("synth-3000/results.json")).unwrap(),
    )
    .unwrap();
    let ndcg = |name: &str| {
        results["configurations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|configuration| configuration["name"] == name)
            .unwrap()["macro"]["ndcg@10"]
            .as_f64()
            .unwrap()
    };
    // Chance is about 1/3000 per rank; the target shares half its topic words with the query.
    assert!(ndcg("bm25") > 0.3, "bm25 {}", ndcg("bm25"));
    assert!(
        ndcg("hyde-mean") > ndcg("dense"),
        "hyde-mean {} dense {}",
        ndcg("hyde-mean"),
        ndcg("dense")
    );
}

#[test]
fn usage_errors_exit_2_with_a_hint() {
    let output_dir = tempfile::tempdir().unwrap();
    let output = hyde_eval(&["run", "--configurations", "hyde3a"], output_dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("did you mean \"hyde-3a\""));
    let output = hyde_eval(&["run", "--dataset", "no/such/dir"], output_dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no/such/dir: no such dataset directory")
    );
}

#[test]
fn configurations_lists_every_preset_with_its_source() {
    let output = common::command().arg("configurations").output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    for name in [
        "keyword",
        "bm25",
        "dense",
        "blend",
        "hyde-3a",
        "hyde-3b",
        "hyde-3b-hyp",
        "hyde-mean",
        "multi-hyde",
        "hybrid",
    ] {
        assert!(stdout.contains(name), "{name}");
    }
    assert!(stdout.contains("Gimli"));
}
