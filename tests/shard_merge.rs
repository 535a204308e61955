//! `run --shard I/N` and `merge`, through the binary: N shards merged give the results,
//! run files, tables and gate verdict of one unsharded run of the same inputs; shards
//! that do not belong together are refused with exit code 2 and say why.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Runs hyde-eval with `args` and returns its output, after checking the exit code.
fn hyde_eval(args: &[&str], code: i32) -> Output {
    let output = common::command().args(args).output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(code),
        "hyde-eval {}\nstdout: {}\nstderr: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// `value` without the fields that hold wall-clock times (`*_ms`, latencies).
fn without_timings(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(key, _)| !key.ends_with("_ms") && !key.contains("latency"))
                .map(|(key, value)| (key, without_timings(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_timings).collect()),
        other => other,
    }
}

/// The path of the first place where `left` and `right` differ, with both values there.
fn first_difference(left: &Value, right: &Value, path: &str) -> Option<String> {
    match (left, right) {
        (Value::Object(a), Value::Object(b)) if a.keys().eq(b.keys()) => a
            .iter()
            .find_map(|(key, value)| first_difference(value, &b[key], &format!("{path}.{key}"))),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(index, (a, b))| first_difference(a, b, &format!("{path}[{index}]"))),
        _ if left == right => None,
        _ => {
            let shown = |value: &Value| value.to_string().chars().take(300).collect::<String>();
            Some(format!("{path}: {} vs {}", shown(left), shown(right)))
        }
    }
}

/// The files under `directory`, as sorted relative paths.
fn files_under(directory: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(path) = pending.pop() {
        for entry in std::fs::read_dir(&path).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(directory).unwrap();
                files.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files.sort();
    files
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Writes `count` shards of the run `args` (a `run` command line without its output
/// options) into `directory` as run `name`; returns the shard directories.
fn shards(args: &[&str], directory: &Path, name: &str, count: usize) -> Vec<PathBuf> {
    (1..=count)
        .map(|index| {
            let shard = format!("{index}/{count}");
            let mut full = vec!["run", "--quiet", "--shard", &shard];
            full.extend_from_slice(args);
            let directory_text = text(directory);
            full.extend_from_slice(&["--output-dir", &directory_text, "--run-name", name]);
            hyde_eval(&full, 0);
            directory.join(format!("{name}-shard-{index}-of-{count}"))
        })
        .collect()
}

/// Timings of one unsharded run and of the sharded run with its merge.
struct Timing {
    unsharded: Duration,
    shards: Vec<Duration>,
    merge: Duration,
}

/// Runs `args` once unsharded and as `count` merged shards (with `both`, the gate and
/// report options, given to the run and to merge), and checks that the merge wrote what
/// the run wrote: results.json equal after the timing fields are removed, every other
/// file but timings.json byte for byte, the same Markdown summary and exit code.
fn check_merge_equals_run(args: &[&str], both: &[&str], count: usize, code: i32) -> Timing {
    let work = tempfile::tempdir().unwrap();
    let (single, sharded, merged) = (
        work.path().join("single"),
        work.path().join("shards"),
        work.path().join("merged"),
    );
    let mut run = vec!["run", "--quiet", "--format", "markdown"];
    run.extend_from_slice(args);
    let single_text = text(&single);
    run.extend_from_slice(&["--output-dir", &single_text, "--run-name", "x"]);
    run.extend_from_slice(both);
    let started = Instant::now();
    let run_output = hyde_eval(&run, code);
    let unsharded = started.elapsed();

    let mut shard_times = Vec::new();
    let mut directories = Vec::new();
    for index in 1..=count {
        let started = Instant::now();
        let shard = format!("{index}/{count}");
        let mut full = vec!["run", "--quiet", "--shard", &shard];
        full.extend_from_slice(args);
        let sharded_text = text(&sharded);
        full.extend_from_slice(&["--output-dir", &sharded_text, "--run-name", "x"]);
        hyde_eval(&full, 0);
        shard_times.push(started.elapsed());
        directories.push(text(&sharded.join(format!("x-shard-{index}-of-{count}"))));
    }
    // Given out of order: merge puts them in index order.
    directories.reverse();
    let merged_text = text(&merged);
    let mut merge = vec!["merge", "--quiet", "--format", "markdown"];
    merge.extend(directories.iter().map(String::as_str));
    merge.extend_from_slice(&["--output-dir", &merged_text]);
    merge.extend_from_slice(both);
    let started = Instant::now();
    let merge_output = hyde_eval(&merge, code);
    let merge_time = started.elapsed();

    assert_eq!(
        String::from_utf8_lossy(&merge_output.stdout),
        String::from_utf8_lossy(&run_output.stdout),
        "the same summary"
    );
    let (single, merged) = (single.join("x"), merged.join("x"));
    let (have, want) = (
        without_timings(json(&merged.join("results.json"))),
        without_timings(json(&single.join("results.json"))),
    );
    if let Some(difference) = first_difference(&have, &want, "results.json") {
        panic!("merged vs unsharded: {difference}");
    }
    // Every other file of the report (run files, qrels.trec, per_query.csv, gate.json,
    // the HTML report and its charts) byte for byte.
    let (files, merged_files) = (files_under(&single), files_under(&merged));
    assert_eq!(merged_files, files, "the same files");
    assert!(files.iter().any(|file| file.starts_with("runs/")));
    for file in files
        .iter()
        .filter(|file| !["results.json", "timings.json"].contains(&file.as_str()))
    {
        assert!(
            std::fs::read(merged.join(file)).unwrap() == std::fs::read(single.join(file)).unwrap(),
            "{file} differs"
        );
    }
    let timings = json(&merged.join("timings.json"));
    assert_eq!(timings["shards"].as_array().unwrap().len(), count);
    Timing {
        unsharded,
        shards: shard_times,
        merge: merge_time,
    }
}

#[test]
fn three_shards_of_devmem_merge_into_the_unsharded_run_and_gate_alike() {
    let gate = [
        "--baseline",
        "reports/baseline.json",
        "--max-drop",
        "ndcg@10=0.01",
    ];
    check_merge_equals_run(&["--dataset", "datasets/devmem"], &gate, 3, 0);
}

#[test]
fn shards_of_the_scenarios_merge_their_expectations_and_abstentions() {
    // Expectations per scenario, failures, queries without relevant facts; seven shards
    // of 31 queries leave some shards without a query of some scenario. With the HTML
    // report (per-tag breakdowns, charts).
    check_merge_equals_run(&["--dataset", "datasets/scenarios"], &["--html"], 7, 0);
}

#[test]
fn a_failing_gate_fails_the_merge_as_it_fails_the_run() {
    let work = tempfile::tempdir().unwrap();
    let baseline = work.path().join("baseline.json");
    hyde_eval(
        &[
            "baseline",
            "update",
            "--quiet",
            "--configurations",
            "hyde-3b-hyp",
            "--output",
            &text(&baseline),
        ],
        0,
    );
    // Renamed so the keyword run is compared with the stronger configuration.
    let mut stored = json(&baseline);
    stored["configurations"][0]["name"] = Value::from("keyword");
    std::fs::write(&baseline, serde_json::to_vec(&stored).unwrap()).unwrap();
    check_merge_equals_run(
        &["--configurations", "keyword"],
        &["--baseline", &text(&baseline), "--max-drop", "ndcg@10=0.01"],
        3,
        1,
    );
    // merge takes absolute targets too (keyword's nDCG@10 is 0.3551 on devmem).
    check_merge_equals_run(
        &["--configurations", "keyword"],
        &["--min", "ndcg@10=0.9"],
        3,
        1,
    );
}

/// A synthetic dataset written by `hyde-eval dataset synth` into `directory`.
fn synth(directory: &Path, facts: usize, queries: usize) -> PathBuf {
    let path = directory.join(format!("synth-{facts}"));
    hyde_eval(
        &[
            "dataset",
            "synth",
            "--facts",
            &facts.to_string(),
            "--queries",
            &queries.to_string(),
            "--output",
            &text(&path),
        ],
        0,
    );
    path
}

#[test]
fn three_shards_of_a_synthetic_set_merge_into_the_unsharded_run() {
    let work = tempfile::tempdir().unwrap();
    let dataset = synth(work.path(), 2_000, 300);
    check_merge_equals_run(&["--dataset", &text(&dataset)], &[], 3, 0);
}

#[test]
#[ignore = "20,000 facts: about a minute in a release build, longer in a debug one; .ci/run runs it by name"]
fn three_shards_of_a_20k_synthetic_set_merge_into_the_unsharded_run() {
    let work = tempfile::tempdir().unwrap();
    let dataset = synth(work.path(), 20_000, 2_000);
    let timing = check_merge_equals_run(&["--dataset", &text(&dataset)], &[], 3, 0);
    let shards: Duration = timing.shards.iter().sum();
    eprintln!(
        "20,000 facts, 2,000 queries: one run {:.1} s; 3 shards {:.1} s in sequence ({}), merge {:.1} s",
        timing.unsharded.as_secs_f64(),
        shards.as_secs_f64(),
        timing
            .shards
            .iter()
            .map(|time| format!("{:.1} s", time.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", "),
        timing.merge.as_secs_f64()
    );
}

/// `merge` of `shards` with exit code 2; returns stderr.
fn refused(shards: &[&PathBuf]) -> String {
    let mut args = vec!["merge".to_owned(), "--quiet".to_owned()];
    args.extend(shards.iter().map(|path| text(path)));
    let output = common::command().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    stderr
}

#[test]
fn shards_that_do_not_belong_together_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let directory = work.path();
    let devmem = shards(&["--dataset", "datasets/devmem"], directory, "dev", 3);
    let tiny = common::tiny_copy(directory, "tiny");
    let other_dataset = shards(&["--dataset", &text(&tiny)], directory, "tiny", 3);
    let other_k = shards(
        &["--dataset", "datasets/devmem", "--k", "1,5"],
        directory,
        "k",
        3,
    );
    let other_n = shards(&["--dataset", "datasets/devmem"], directory, "n", 2);
    let other_configurations = shards(
        &[
            "--dataset",
            "datasets/devmem",
            "--configurations",
            "keyword,bm25",
        ],
        directory,
        "c",
        3,
    );
    let names = |stderr: &str, a: &Path, b: &Path| {
        for path in [a, b] {
            assert!(
                stderr.contains(&text(&path.join("shard.json"))),
                "names {}: {stderr}",
                path.display()
            );
        }
    };

    let stderr = refused(&[&devmem[0], &devmem[1], &other_dataset[2]]);
    assert!(stderr.contains("dataset content hash"), "{stderr}");
    names(&stderr, &devmem[0], &other_dataset[2]);

    let stderr = refused(&[&devmem[0], &devmem[1], &other_k[2]]);
    assert!(stderr.contains("metric settings"), "{stderr}");
    names(&stderr, &devmem[0], &other_k[2]);

    let stderr = refused(&[&devmem[0], &other_n[1]]);
    assert!(stderr.contains("shard count N"), "{stderr}");
    names(&stderr, &devmem[0], &other_n[1]);

    let stderr = refused(&[&devmem[0], &devmem[1], &other_configurations[2]]);
    assert!(stderr.contains("configuration list"), "{stderr}");
    names(&stderr, &devmem[0], &other_configurations[2]);

    let stderr = refused(&[&devmem[0], &devmem[2]]);
    assert!(stderr.contains("shard 2/3 missing"), "{stderr}");

    let copy = directory.join("copy-of-1");
    std::fs::create_dir(&copy).unwrap();
    std::fs::copy(devmem[0].join("shard.json"), copy.join("shard.json")).unwrap();
    let stderr = refused(&[&devmem[0], &copy, &devmem[1], &devmem[2]]);
    assert!(stderr.contains("shard 1/3 given twice"), "{stderr}");

    // Another build: a shard file whose binary hash is not this one's.
    let rebuilt = directory.join("rebuilt");
    std::fs::create_dir(&rebuilt).unwrap();
    let mut shard = json(&devmem[2].join("shard.json"));
    shard["build"]["binary"] = Value::from("xxh3-128:0");
    std::fs::write(
        rebuilt.join("shard.json"),
        serde_json::to_vec(&shard).unwrap(),
    )
    .unwrap();
    let stderr = refused(&[&devmem[0], &devmem[1], &rebuilt]);
    assert!(stderr.contains("the build"), "{stderr}");
    names(&stderr, &devmem[0], &rebuilt);
}

#[test]
fn a_shard_is_named_i_of_n_and_is_not_gated() {
    for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
        let output = common::command()
            .args(["run", "--quiet", "--no-report", "--shard", bad])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "--shard {bad}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("--shard"),
            "--shard {bad}"
        );
    }
    for gate in [
        ["--baseline", "reports/baseline.json"],
        ["--min", "ndcg@10=0.5"],
    ] {
        let output = common::command()
            .args(["run", "--quiet", "--shard", "1/3"])
            .args(gate)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("hyde-eval merge"), "{stderr}");
    }
}
