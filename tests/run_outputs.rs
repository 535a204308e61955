//! What `run` leaves on disk: a later run never silently loses an earlier report's
//! results, run files carry the fused scores, and their depth is set apart from the
//! metrics' (`--run-depth`, `--no-runs`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

/// Three facts over words no analyzer changes: lengths 2, 3 and 1 tokens (avgdl 2).
fn write_fruit_dataset(directory: &Path) -> PathBuf {
    std::fs::create_dir_all(directory).unwrap();
    let write = |name: &str, text: &str| std::fs::write(directory.join(name), text).unwrap();
    write("dataset.toml", "name = \"fruit\"\nk = [1, 2]\n");
    write(
        "facts.jsonl",
        "{\"id\": \"f1\", \"content\": \"apple banana\"}\n\
         {\"id\": \"f2\", \"content\": \"apple apple cherry\"}\n\
         {\"id\": \"f3\", \"content\": \"durian\"}\n",
    );
    write(
        "queries.jsonl",
        "{\"id\": \"q1\", \"text\": \"apple\"}\n{\"id\": \"q2\", \"text\": \"banana cherry\"}\n",
    );
    write(
        "qrels.tsv",
        "query_id\tfact_id\tgrade\nq1\tf2\t1\nq2\tf1\t1\n",
    );
    directory.to_path_buf()
}

/// `hyde-eval run` on `dataset` into `output_dir`, quietly, with `args`.
fn run(dataset: &Path, output_dir: &Path, args: &[&str]) -> Output {
    common::command()
        .arg("run")
        .arg("--quiet")
        .arg("--dataset")
        .arg(dataset)
        .arg("--output-dir")
        .arg(output_dir)
        .args(args)
        .output()
        .unwrap()
}

fn succeeded(output: &Output) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn configuration_names(results_json: &Path) -> Vec<String> {
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results_json).unwrap()).unwrap();
    results["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|configuration| configuration["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `(query, fact, rank, score)` of each line of a run file.
fn run_lines(path: &Path) -> Vec<(String, String, usize, f64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields.len(), 6, "{line}");
            (
                fields[0].to_owned(),
                fields[2].to_owned(),
                fields[3].parse().unwrap(),
                fields[4].parse().unwrap(),
            )
        })
        .collect()
}

/// A full run, then `--configurations bm25` into the same report: refused (exit 2,
/// naming --force and --run-name), the full report untouched byte for byte. Rerunning
/// the full set replaces it, as CI reruns do; `--force` lets the narrower run replace it.
#[test]
fn a_narrower_run_does_not_replace_a_report_without_force() {
    let work = tempfile::tempdir().unwrap();
    let dataset = write_fruit_dataset(&work.path().join("fruit"));
    let reports = work.path().join("reports");
    let full = ["--configurations", "bm25,keyword"];
    succeeded(&run(&dataset, &reports, &full));
    let results_json = reports.join("fruit/results.json");
    let before = std::fs::read(&results_json).unwrap();
    let run_file = std::fs::read(reports.join("fruit/runs/keyword.run")).unwrap();

    let narrower = run(&dataset, &reports, &["--configurations", "bm25"]);
    assert_eq!(narrower.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&narrower.stderr);
    assert!(stderr.contains("results.json"), "{stderr}");
    assert!(stderr.contains("keyword"), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert!(stderr.contains("--run-name"), "{stderr}");
    assert_eq!(std::fs::read(&results_json).unwrap(), before);
    assert_eq!(
        std::fs::read(reports.join("fruit/runs/keyword.run")).unwrap(),
        run_file
    );

    // Named, the narrower run sits beside the full one.
    succeeded(&run(
        &dataset,
        &reports,
        &["--configurations", "bm25", "--run-name", "fruit-bm25"],
    ));
    assert_eq!(std::fs::read(&results_json).unwrap(), before);
    assert_eq!(
        configuration_names(&reports.join("fruit-bm25/results.json")),
        ["bm25"]
    );

    succeeded(&run(&dataset, &reports, &full));
    assert_eq!(std::fs::read(&results_json).unwrap(), before);

    succeeded(&run(
        &dataset,
        &reports,
        &["--configurations", "bm25", "--force"],
    ));
    assert_eq!(configuration_names(&results_json), ["bm25"]);
    assert!(!reports.join("fruit/runs/keyword.run").exists());
}

/// A report of another dataset under the same run name is not replaced either.
#[test]
fn a_run_of_another_dataset_does_not_replace_a_report_without_force() {
    let work = tempfile::tempdir().unwrap();
    let fruit = write_fruit_dataset(&work.path().join("fruit"));
    let tiny = common::tiny_copy(work.path(), "tiny");
    let reports = work.path().join("reports");
    let args = ["--configurations", "bm25", "--run-name", "shared"];
    succeeded(&run(&fruit, &reports, &args));
    let other = run(&tiny, &reports, &args);
    assert_eq!(other.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(
        stderr.contains("dataset \"fruit\", not \"tiny\""),
        "{stderr}"
    );
    let forced = [&args[..], &["--force"]].concat();
    succeeded(&run(&tiny, &reports, &forced));
}

/// BM25 (Lucene idf `ln(1 + (N - df + 0.5) / (df + 0.5))`, term weight
/// `tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))`), worked out by hand for the fruit
/// set with k1 = 1.2, b = 0.75 (N = 3, avgdl = 2):
/// - q1 "apple" (df 2, idf ln 1.6): f2 (tf 2, dl 3) weighs 4.4 / 3.65, f1 (tf 1, dl 2) 1;
/// - q2 "banana cherry" (df 1 each, idf ln(8/3)): f1 weighs 1, f2 2.2 / 2.65.
#[test]
fn bm25_run_files_carry_the_bm25_scores() {
    let work = tempfile::tempdir().unwrap();
    let dataset = write_fruit_dataset(&work.path().join("fruit"));
    let reports = work.path().join("reports");
    succeeded(&run(
        &dataset,
        &reports,
        &[
            "--configurations",
            "bm25",
            "--set",
            "bm25_k1=1.2",
            "--set",
            "bm25_b=0.75",
        ],
    ));
    let lines = run_lines(&reports.join("fruit/runs/bm25.run"));
    let apple = 1.6f64.ln();
    let single = (8.0f64 / 3.0).ln();
    let expected = [
        ("q1", "f2", 1, apple * 4.4 / 3.65),
        ("q1", "f1", 2, apple),
        ("q2", "f1", 1, single),
        ("q2", "f2", 2, single * 2.2 / 2.65),
    ];
    assert_eq!(lines.len(), expected.len(), "{lines:?}");
    for ((query, fact, rank, score), (want_query, want_fact, want_rank, want_score)) in
        lines.iter().zip(expected)
    {
        assert_eq!(
            (query.as_str(), fact.as_str(), *rank),
            (want_query, want_fact, want_rank)
        );
        assert!(
            (score - want_score).abs() < 1e-12,
            "{query} {fact}: {score} != {want_score}"
        );
    }
}

/// `--run-depth 1` writes one line per query while the metrics still see whole
/// rankings (results.json is byte-identical to a full-depth run's); `--no-runs` writes
/// no run file and the same results.json.
#[test]
fn run_depth_and_no_runs_leave_the_metrics_alone() {
    let work = tempfile::tempdir().unwrap();
    let dataset = write_fruit_dataset(&work.path().join("fruit"));
    let configurations = ["--configurations", "bm25,keyword"];
    let full = work.path().join("full");
    succeeded(&run(&dataset, &full, &configurations));
    let cut = work.path().join("cut");
    succeeded(&run(
        &dataset,
        &cut,
        &[&configurations[..], &["--run-depth", "1"]].concat(),
    ));
    let none = work.path().join("none");
    succeeded(&run(
        &dataset,
        &none,
        &[&configurations[..], &["--no-runs"]].concat(),
    ));
    let results = std::fs::read(full.join("fruit/results.json")).unwrap();
    // Both queries' metrics count the fact at rank 2 (q1's relevant f2 is first under
    // bm25, but recall@2 and map still need the second line).
    for directory in [&cut, &none] {
        assert_eq!(
            std::fs::read(directory.join("fruit/results.json")).unwrap(),
            results
        );
    }
    for configuration in ["bm25", "keyword"] {
        let full_lines = run_lines(&full.join(format!("fruit/runs/{configuration}.run")));
        let cut_lines = run_lines(&cut.join(format!("fruit/runs/{configuration}.run")));
        assert_eq!(full_lines.len(), 4, "{configuration}: {full_lines:?}");
        let firsts: Vec<_> = full_lines
            .iter()
            .filter(|(_, _, rank, _)| *rank == 1)
            .cloned()
            .collect();
        assert_eq!(cut_lines, firsts, "{configuration}");
        assert_eq!(cut_lines.len(), 2);
    }
    assert!(!none.join("fruit/runs").exists());
    assert!(none.join("fruit/qrels.trec").exists());
}

/// `--run-depth 0` is refused: `--no-runs` is the way to write none.
#[test]
fn run_depth_zero_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let dataset = write_fruit_dataset(&work.path().join("fruit"));
    let output = run(
        &dataset,
        &work.path().join("reports"),
        &["--run-depth", "0"],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--no-runs"), "{stderr}");
}
