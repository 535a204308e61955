//! `run --shard I/N` and `merge`, through the binary: N shards merged give the results,
//! run files, tables and gate verdict of one unsharded run of the same inputs; shards
//! that do not belong together, and shard files or run files that are not what the
//! shards wrote (an edited value, a missing or duplicated record, a cut, edited or
//! swapped run file, a wrong query slice), are refused with exit code 2 and say why.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
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

/// Three shards of devmem, written once per test process into the target directory;
/// each test below edits a copy ([`edited_shards`]).
fn devmem_shards() -> &'static [PathBuf] {
    static SHARDS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    SHARDS.get_or_init(|| {
        let directory = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shard-merge-checks");
        let _ = std::fs::remove_dir_all(&directory);
        shards(&["--dataset", "datasets/devmem"], &directory, "dev", 3)
    })
}

/// Copies `from` (a directory) to `to`, recursively.
fn copy_directory(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_directory(&path, &target);
        } else {
            std::fs::copy(&path, target).unwrap();
        }
    }
}

/// A copy of the devmem shards in `work`; returns the copies' directories.
fn edited_shards(work: &Path) -> Vec<PathBuf> {
    devmem_shards()
        .iter()
        .map(|shard| {
            let copy = work.join(shard.file_name().unwrap());
            copy_directory(shard, &copy);
            copy
        })
        .collect()
}

/// Rewrites the shard file of the shard directory `shard` with `edit` applied.
fn edit_shard_file(shard: &Path, edit: impl FnOnce(&mut Value)) {
    let path = shard.join("shard.json");
    let mut value = json(&path);
    edit(&mut value);
    std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
}

/// `merge` of `shards` into `work/merged`, which must exit with code 2; returns stderr.
fn merge_refused(shards: &[PathBuf], work: &Path, extra: &[&str]) -> String {
    let output = common::command()
        .arg("merge")
        .arg("--quiet")
        .args(shards)
        .arg("--output-dir")
        .arg(work.join("merged"))
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        !work.join("merged").exists(),
        "a refused merge writes nothing"
    );
    stderr
}

/// The configuration whose records the tests below edit, its index in the shard file,
/// and the record of shard 2 they edit (its fourth query, q011).
const CONFIGURATION: &str = "bm25";
const CONFIGURATION_INDEX: usize = 1;
const RECORD: usize = 3;

/// The record the tests edit, as shard 2 wrote it.
fn edited_record(shard: &Path) -> Value {
    let shard_file = json(&shard.join("shard.json"));
    let configuration = &shard_file["results"]["configurations"][CONFIGURATION_INDEX];
    assert_eq!(configuration["name"], CONFIGURATION);
    configuration["per_query"][RECORD].clone()
}

/// The number (1-based) of the first line of `query` in the run file `path`.
fn first_line_of(path: &Path, query: &str) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let prefix = format!("{query} ");
    text.lines()
        .position(|line| line.starts_with(&prefix))
        .unwrap()
        + 1
}

#[test]
fn a_per_query_value_edited_in_a_shard_file_is_refused_naming_shard_and_query() {
    let work = tempfile::tempdir().unwrap();
    let shards = edited_shards(work.path());
    let record = edited_record(&shards[1]);
    let query = record["query"].as_str().unwrap().to_owned();
    let recorded = record["metrics"]["ndcg@10"].clone();
    assert_ne!(recorded, Value::from(0.9));
    edit_shard_file(&shards[1], |shard| {
        shard["results"]["configurations"][CONFIGURATION_INDEX]["per_query"][RECORD]["metrics"]
            ["ndcg@10"] = Value::from(0.9);
    });
    let stderr = merge_refused(&shards, work.path(), &[]);
    let run_file = shards[1].join("runs/bm25.run");
    let expected = format!(
        "{}: configuration bm25, query {query}: ndcg@10 is 0.9 in the shard file, but its run file gives {recorded} (run file {}:{})",
        text(&shards[1].join("shard.json")),
        text(&run_file),
        first_line_of(&run_file, &query)
    );
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");
}

#[test]
fn a_query_record_deleted_from_a_shard_file_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let shards = edited_shards(work.path());
    let query = edited_record(&shards[1])["query"]
        .as_str()
        .unwrap()
        .to_owned();
    edit_shard_file(&shards[1], |shard| {
        shard["results"]["configurations"][CONFIGURATION_INDEX]["per_query"]
            .as_array_mut()
            .unwrap()
            .remove(RECORD);
    });
    let stderr = merge_refused(&shards, work.path(), &[]);
    let expected = format!(
        "{}: configuration bm25, query {query}: the shard file has no record of it, but it has relevant facts",
        text(&shards[1].join("shard.json"))
    );
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");
}

#[test]
fn a_query_record_duplicated_in_a_shard_file_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let shards = edited_shards(work.path());
    let record = edited_record(&shards[1]);
    let query = record["query"].as_str().unwrap().to_owned();
    edit_shard_file(&shards[1], |shard| {
        shard["results"]["configurations"][CONFIGURATION_INDEX]["per_query"]
            .as_array_mut()
            .unwrap()
            .insert(RECORD + 1, record);
    });
    let stderr = merge_refused(&shards, work.path(), &[]);
    let expected = format!(
        "{}: configuration bm25, query {query}: the shard file holds two records of it",
        text(&shards[1].join("shard.json"))
    );
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");
}

#[test]
fn a_run_file_cut_mid_line_is_refused_naming_the_line_and_query() {
    let work = tempfile::tempdir().unwrap();
    let shards = edited_shards(work.path());
    let query = edited_record(&shards[1])["query"]
        .as_str()
        .unwrap()
        .to_owned();
    let run_file = shards[1].join("runs/bm25.run");
    let line = first_line_of(&run_file, &query);
    // Cut 12 bytes into the query's first line: `q011 Q0 f1` is left of it.
    let text_before = std::fs::read_to_string(&run_file).unwrap();
    let offset: usize = text_before
        .lines()
        .take(line - 1)
        .map(|line| line.len() + 1)
        .sum();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&run_file)
        .unwrap();
    file.set_len(offset as u64 + 12).unwrap();
    let stderr = merge_refused(&shards, work.path(), &[]);
    let expected = format!(
        "{}:{line}: query {query}: the line is cut short (the file ends inside it); this is not the run file shard 2/3 wrote: {} records its digest as",
        text(&run_file),
        text(&shards[1].join("shard.json"))
    );
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");
}

#[test]
fn a_run_file_cut_at_a_line_end_or_edited_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let shards = edited_shards(work.path());
    let query = edited_record(&shards[1])["query"]
        .as_str()
        .unwrap()
        .to_owned();
    let run_file = shards[1].join("runs/bm25.run");
    let line = first_line_of(&run_file, &query);
    // Whole lines up to the query's first: its ranking and every later one are gone.
    let text_before = std::fs::read_to_string(&run_file).unwrap();
    let kept: String = text_before
        .lines()
        .take(line - 1)
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&run_file, &kept).unwrap();
    let stderr = merge_refused(&shards, work.path(), &[]);
    // The first query whose record the file no longer gives is the cut one; its ranking
    // is now empty, so it has no line.
    let expected = format!("{}: query {query}: returned is ", text(&run_file));
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");
    assert!(
        stderr.contains(
            "in the shard file, but its run file gives 0; this is not the run file shard 2/3 wrote"
        ),
        "{stderr}"
    );

    // A score changed where no metric sees it: the digest alone tells.
    let mut lines: Vec<String> = text_before.lines().map(str::to_owned).collect();
    let mut fields: Vec<&str> = lines[0].split(' ').collect();
    let score = format!("{}1", fields[4]);
    fields[4] = &score;
    lines[0] = fields.join(" ");
    std::fs::write(&run_file, lines.join("\n") + "\n").unwrap();
    let stderr = merge_refused(&shards, work.path(), &[]);
    let expected = format!(
        "{}: this is not the run file shard 2/3 wrote: {} records its digest as xxh3-128:",
        text(&run_file),
        text(&shards[1].join("shard.json"))
    );
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");
}

#[test]
fn run_files_swapped_between_shards_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let shards = edited_shards(work.path());
    let (first, second) = (
        shards[0].join("runs/bm25.run"),
        shards[1].join("runs/bm25.run"),
    );
    let swap = work.path().join("swap");
    std::fs::rename(&first, &swap).unwrap();
    std::fs::rename(&second, &first).unwrap();
    std::fs::rename(&swap, &second).unwrap();
    let stderr = merge_refused(&shards, work.path(), &[]);
    // devmem's second query, q002, is shard 2's first.
    let expected = format!(
        "{}:1: query q002: a line of shard 2/3's query in shard 1/3's run file; this is not the run file shard 1/3 wrote: {} records its digest as",
        text(&first),
        text(&shards[0].join("shard.json"))
    );
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");
}

#[test]
fn a_query_slice_that_is_not_the_shards_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let shards = edited_shards(work.path());
    // q001 is shard 1's.
    edit_shard_file(&shards[1], |shard| {
        shard["query_slice"][2] = Value::from("q001");
    });
    let stderr = merge_refused(&shards, work.path(), &[]);
    let expected = format!(
        "{}: query_slice: query q001 is not one of shard 2/3's queries of this dataset (it is shard 1/3's)",
        text(&shards[1].join("shard.json"))
    );
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");

    // The query details must list the same queries: q008 (shard 2's) given twice.
    let shards = edited_shards(&work.path().join("details"));
    edit_shard_file(&shards[1], |shard| {
        let queries = shard["results"]["queries"].as_array_mut().unwrap();
        queries[3] = queries[2].clone();
    });
    let stderr = merge_refused(&shards, work.path(), &[]);
    assert!(
        stderr.contains("results.queries: query q008 is listed twice"),
        "{stderr}"
    );
}

#[test]
fn hyde_accounting_that_does_not_fit_the_shards_queries_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let shards = edited_shards(work.path());
    edit_shard_file(&shards[1], |shard| {
        let hyde = &mut shard["results"]["configurations"][4]["hyde"];
        assert_eq!(hyde["eligible_queries"], 30);
        hyde["eligible_queries"] = Value::from(31);
    });
    let stderr = merge_refused(&shards, work.path(), &[]);
    let expected = format!(
        "{}: configuration hyde-3a: hyde: eligible_queries is 31, more than the shard's 30 queries",
        text(&shards[1].join("shard.json"))
    );
    assert!(stderr.contains(&expected), "{expected}\n{stderr}");

    // Fewer used hypotheses than the records say were used.
    edit_shard_file(&shards[1], |shard| {
        let hyde = &mut shard["results"]["configurations"][4]["hyde"];
        hyde["eligible_queries"] = Value::from(30);
        hyde["hypotheses_used"] = Value::from(29);
        hyde["fallback_no_hypothesis"] = Value::from(1);
    });
    let stderr = merge_refused(&shards, work.path(), &[]);
    assert!(
        stderr.contains("hypotheses_used is 29, but 30 of its 30 per-query records used one"),
        "{stderr}"
    );
}

#[test]
fn merge_reads_the_dataset_the_shards_ran_and_checks_its_hash() {
    let work = tempfile::tempdir().unwrap();
    let shards = edited_shards(work.path());
    let tiny = common::tiny_copy(work.path(), "tiny");
    let stderr = merge_refused(&shards, work.path(), &["--dataset", &text(&tiny)]);
    assert!(
        stderr.contains(&format!("{}: content hash sha256:", text(&tiny))),
        "{stderr}"
    );
    assert!(
        stderr.contains("is not the hash of the dataset the shards ran"),
        "{stderr}"
    );

    // The recorded path is relative to where the shards ran: elsewhere, --dataset.
    let output = common::command()
        .current_dir(work.path())
        .arg("merge")
        .arg("--quiet")
        .args(&shards)
        .arg("--output-dir")
        .arg(work.path().join("merged"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("datasets/devmem: no such dataset directory (the dataset"),
        "{stderr}"
    );
    let output = common::command()
        .current_dir(work.path())
        .arg("merge")
        .arg("--quiet")
        .args(&shards)
        .arg("--output-dir")
        .arg(work.path().join("merged"))
        .arg("--dataset")
        .arg(common::repo_path("datasets/devmem"))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn shards_of_a_run_with_a_run_depth_merge_into_the_unsharded_run() {
    // The shards write whole rankings (merge recomputes every metric from them) and
    // merge cuts the merged run files to 3 lines per query, as the run does.
    check_merge_equals_run(
        &["--dataset", "datasets/devmem", "--run-depth", "3"],
        &[],
        3,
        0,
    );
}
