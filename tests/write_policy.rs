//! The write policy (`src/write_policy`), held command by command from the failures it
//! prevents: an output named as one of the command's inputs (directly, through a
//! symlink, through a hard link), a user's file or directory at an output's name, a
//! symlink at an output's name, a baseline, comparison or sweep replaced by one that
//! lacks its results, a kill at any instant of a write, a user's files that
//! look like temporaries, `judge` racing a hand edit or a second judge, a symlinked
//! `qrels.tsv`, and a SIGTERM that arrives once the report is in place.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::{hyde_eval, tiny_copy};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Asserts exit code 2 and that stderr holds every one of `parts`.
fn assert_refused(output: &Output, parts: &[&str]) {
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    for part in parts {
        assert!(stderr.contains(part), "expected {part:?} in:\n{stderr}");
    }
}

fn assert_success(output: &Output) {
    assert!(
        output.status.success(),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

/// A BEIR collection of two documents and one query in `directory`.
fn beir_collection(directory: &Path) -> PathBuf {
    std::fs::create_dir_all(directory.join("qrels")).unwrap();
    std::fs::write(
        directory.join("corpus.jsonl"),
        "{\"_id\": \"d1\", \"title\": \"\", \"text\": \"go version\"}\n{\"_id\": \"d2\", \"title\": \"\", \"text\": \"rust\"}\n",
    )
    .unwrap();
    std::fs::write(
        directory.join("queries.jsonl"),
        "{\"_id\": \"q1\", \"text\": \"go\"}\n",
    )
    .unwrap();
    std::fs::write(
        directory.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    )
    .unwrap();
    directory.to_path_buf()
}

/// Two small TREC runs over the tiny dataset's ids, and TREC qrels for them.
fn runs(work: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let a = work.join("a.run");
    let b = work.join("b.run");
    let qrels = work.join("qrels.trec");
    std::fs::write(&a, "q1 Q0 f1 1 2.0 a\nq1 Q0 f2 2 1.0 a\nq2 Q0 f2 1 3.0 a\n").unwrap();
    std::fs::write(&b, "q1 Q0 f2 1 5.0 b\nq2 Q0 f1 1 4.0 b\nq2 Q0 f2 2 2.0 b\n").unwrap();
    std::fs::write(&qrels, "q1 0 f1 1\nq2 0 f2 2\n").unwrap();
    (a, b, qrels)
}

/// Rule 1: no command writes, replaces or appends to one of its inputs, whatever path
/// reaches it and with or without `--force`; the input is left byte for byte.
#[test]
fn no_command_writes_one_of_its_inputs() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let (a, b, qrels) = runs(work);
    let dataset = tiny_copy(work, "tiny");
    let link = work.join("link.run");
    symlink(&a, &link).unwrap();
    let hard = work.join("hard.run");
    std::fs::hard_link(&a, &hard).unwrap();
    // A report to hand `report`, whose results.json is then also reached by a hard link.
    assert_success(&hyde_eval(&[
        "run",
        "--quiet",
        "--dataset",
        path_str(&dataset),
        "--configurations",
        "bm25",
        "--output-dir",
        path_str(&work.join("reports")),
    ]));
    let results = work.join("reports/tiny/results.json");
    let html_out = work.join("html");
    std::fs::create_dir(&html_out).unwrap();
    std::fs::hard_link(&results, html_out.join("report.html")).unwrap();
    // A shard to merge into its own directory.
    assert_success(&hyde_eval(&[
        "run",
        "--quiet",
        "--dataset",
        path_str(&dataset),
        "--configurations",
        "bm25",
        "--shard",
        "1/1",
        "--output-dir",
        path_str(&work.join("shards")),
    ]));
    // A dataset whose directory a sweep's name would replace.
    let swept = tiny_copy(work, "t-sweep");
    let dataset_qrels = dataset.join("qrels.tsv");
    let dataset_facts = dataset.join("facts.jsonl");
    let shards = work.join("shards");
    let shard = shards.join("tiny-shard-1-of-1");
    let beir = beir_collection(&work.join("beir"));
    // Runs in a directory a comparison's name would replace.
    let compared = work.join("cmp");
    std::fs::create_dir(&compared).unwrap();
    let c = compared.join("c.run");
    std::fs::copy(&a, &c).unwrap();

    let cases: Vec<(&str, Vec<&str>, PathBuf)> = vec![
        (
            "fuse -o its first run",
            vec![
                "fuse",
                "--method",
                "rrf",
                "-o",
                path_str(&a),
                path_str(&a),
                path_str(&b),
                "--force",
            ],
            a.clone(),
        ),
        (
            "fuse -o a symlink to its first run",
            vec![
                "fuse",
                "--method",
                "rrf",
                "-o",
                path_str(&link),
                path_str(&a),
                path_str(&b),
                "--force",
            ],
            a.clone(),
        ),
        (
            "fuse -o a hard link of its first run",
            vec![
                "fuse",
                "--method",
                "rrf",
                "-o",
                path_str(&hard),
                path_str(&a),
                path_str(&b),
                "--force",
            ],
            a.clone(),
        ),
        (
            "run --summary-file its qrels",
            vec![
                "run",
                "--quiet",
                "--no-report",
                "--dataset",
                path_str(&dataset),
                "--configurations",
                "bm25",
                "--min",
                "mrr=0",
                "--summary-file",
                path_str(&dataset_qrels),
            ],
            dataset.join("qrels.tsv"),
        ),
        (
            "eval --summary-file its qrels",
            vec![
                "eval",
                "--quiet",
                "--min",
                "map=0",
                "--summary-file",
                path_str(&qrels),
                path_str(&qrels),
                path_str(&a),
            ],
            qrels.clone(),
        ),
        (
            "baseline update --output a dataset file",
            vec![
                "baseline",
                "update",
                "--quiet",
                "--dataset",
                path_str(&dataset),
                "--configurations",
                "bm25",
                "--output",
                path_str(&dataset_facts),
                "--force",
            ],
            dataset.join("facts.jsonl"),
        ),
        (
            "baseline update --from FILE --output FILE",
            vec![
                "baseline",
                "update",
                "--quiet",
                "--from",
                path_str(&results),
                "--output",
                path_str(&results),
                "--force",
            ],
            results.clone(),
        ),
        (
            "report into a directory whose report.html is its results.json",
            vec![
                "report",
                "--quiet",
                path_str(&results),
                "--output-dir",
                path_str(&html_out),
                "--force",
            ],
            results.clone(),
        ),
        (
            "dataset import into its own source",
            vec![
                "dataset",
                "import",
                "--quiet",
                "--from",
                "beir",
                path_str(&beir),
                path_str(&beir),
                "--force",
            ],
            beir.join("corpus.jsonl"),
        ),
        (
            "compare --qrels into the directory of its runs",
            vec![
                "compare",
                "--quiet",
                "--qrels",
                path_str(&qrels),
                path_str(&c),
                path_str(&b),
                "--output-dir",
                path_str(work),
                "--run-name",
                "cmp",
                "--force",
            ],
            c.clone(),
        ),
        (
            "merge into its shard's directory",
            vec![
                "merge",
                "--quiet",
                path_str(&shard),
                "--output-dir",
                path_str(&shards),
                "--run-name",
                "tiny-shard-1-of-1",
                "--force",
            ],
            work.join("shards/tiny-shard-1-of-1/shard.json"),
        ),
        (
            "sweep into its dataset's directory",
            vec![
                "sweep",
                "--quiet",
                "--dataset",
                path_str(&swept),
                "--configurations",
                "blend",
                "--steps",
                "2",
                "--output-dir",
                path_str(work),
                "--run-name",
                "t",
                "--force",
            ],
            swept.join("facts.jsonl"),
        ),
    ];
    for (case, args, input) in cases {
        let before = std::fs::read(&input).unwrap();
        let output = hyde_eval(&args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{case}: {stderr}");
        assert!(
            stderr.contains("an input of this command"),
            "{case}: {stderr}"
        );
        assert_eq!(
            std::fs::read(&input).unwrap(),
            before,
            "{case}: input changed"
        );
    }
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// Rule 2: a file or directory hyde-eval did not write (or that was changed since it
/// wrote it) is not replaced without `--force`; hyde-eval's own earlier output is.
#[test]
fn only_what_hyde_eval_wrote_is_replaced_without_force() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let (a, b, _) = runs(work);
    let fused = work.join("fused.run");
    let fuse = |method: &str, force: bool| {
        let mut args = vec![
            "fuse",
            "--method",
            method,
            "-o",
            path_str(&fused),
            path_str(&a),
            path_str(&b),
        ];
        if force {
            args.push("--force");
        }
        hyde_eval(&args)
    };
    // A user's file of that name.
    std::fs::write(&fused, "my notes\n").unwrap();
    assert_refused(
        &fuse("rrf", false),
        &[
            "fused.run: exists and was not written by hyde-eval",
            "--force",
        ],
    );
    assert_eq!(std::fs::read_to_string(&fused).unwrap(), "my notes\n");
    assert_success(&fuse("rrf", true));
    let rrf = std::fs::read_to_string(&fused).unwrap();
    assert!(rrf.starts_with("q1 Q0 f2 1 "), "{rrf}");
    // Its own output, unchanged: replaced.
    assert_success(&fuse("combsum", false));
    let combsum = std::fs::read_to_string(&fused).unwrap();
    assert_ne!(combsum, rrf);
    // Its own output, edited by hand: not replaced.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&fused)
        .unwrap()
        .write_all(b"q3 Q0 f1 1 1.0 mine\n")
        .unwrap();
    assert_refused(&fuse("rrf", false), &["(or was changed since)"]);
    assert!(std::fs::read_to_string(&fused).unwrap().ends_with("mine\n"));

    // A symlink at the output's name is not written through; --force replaces the link.
    let target = work.join("elsewhere.txt");
    std::fs::write(&target, "untouched").unwrap();
    std::fs::remove_file(&fused).unwrap();
    symlink(&target, &fused).unwrap();
    assert_refused(&fuse("rrf", false), &["is a symlink"]);
    assert_success(&fuse("rrf", true));
    assert!(std::fs::symlink_metadata(&fused).unwrap().is_file());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");

    // completions, man pages and the HTML report, each over a user's file of its name.
    let script = work.join("hyde-eval.bash");
    let pages = work.join("man");
    std::fs::create_dir(&pages).unwrap();
    let report_dir = work.join("report");
    std::fs::create_dir(&report_dir).unwrap();
    let dataset = tiny_copy(work, "tiny");
    assert_success(&hyde_eval(&[
        "run",
        "--quiet",
        "--dataset",
        path_str(&dataset),
        "--configurations",
        "bm25",
        "--output-dir",
        path_str(&work.join("reports")),
    ]));
    let results = work.join("reports/tiny/results.json");
    let cases: Vec<(PathBuf, Vec<String>)> = vec![
        (
            script.clone(),
            ["completions", "bash", "-o", path_str(&script)]
                .map(String::from)
                .to_vec(),
        ),
        (
            pages.join("hyde-eval-run.1"),
            ["man", "--output-dir", path_str(&pages)]
                .map(String::from)
                .to_vec(),
        ),
        (
            report_dir.join("report.html"),
            [
                "report",
                "--quiet",
                path_str(&results),
                "--output-dir",
                path_str(&report_dir),
            ]
            .map(String::from)
            .to_vec(),
        ),
    ];
    for (file, args) in cases {
        std::fs::write(&file, "a user's file").unwrap();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_refused(
            &hyde_eval(&args),
            &["exists and was not written by hyde-eval"],
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a user's file");
        let forced: Vec<&str> = args.iter().copied().chain(["--force"]).collect();
        assert_success(&hyde_eval(&forced));
        assert_ne!(std::fs::read_to_string(&file).unwrap(), "a user's file");
        // Written by hyde-eval now: the same command replaces it.
        assert_success(&hyde_eval(&args));
    }
}

/// `baseline update` replaces a baseline it recognises (a results document, also one
/// from a clone, which carries no stamp) unless that holds results the new one lacks.
#[test]
fn a_baseline_is_replaced_only_by_one_that_keeps_its_results() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let dataset = tiny_copy(work, "tiny");
    let baseline = work.join("baseline.json");
    let update = |configurations: &str, force: bool| {
        let mut args = vec![
            "baseline",
            "update",
            "--quiet",
            "--dataset",
            path_str(&dataset),
            "--configurations",
            configurations,
            "--output",
            path_str(&baseline),
        ];
        if force {
            args.push("--force");
        }
        hyde_eval(&args)
    };
    assert_success(&update("bm25,keyword", false));
    // As a clone has it: the same content, no stamp.
    let content = std::fs::read(&baseline).unwrap();
    std::fs::remove_file(&baseline).unwrap();
    std::fs::write(&baseline, &content).unwrap();
    assert_success(&update("bm25,keyword,dense", false));
    assert_refused(
        &update("bm25", false),
        &[
            "holds results of configurations that this write does not hold (",
            "dense",
            "keyword",
            "--force",
        ],
    );
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    assert_eq!(stored["configurations"].as_array().unwrap().len(), 3);
    assert_success(&update("bm25", true));
    // Not a results document: a user's file.
    std::fs::write(&baseline, "{\"notes\": true}").unwrap();
    assert_refused(&update("bm25", false), &["was not written by hyde-eval"]);
}

/// `compare` (both forms) and `sweep` replace an earlier output of theirs only when
/// the new one keeps its results: a sweep of one configuration replaced a full sweep's
/// heatmaps, and a comparison of fewer runs a comparison of more. Refused naming what
/// would be lost, the old output kept; `--force` replaces it.
#[test]
fn a_comparison_or_sweep_is_replaced_only_by_one_that_keeps_its_results() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let (a, b, qrels) = runs(work);
    let c = work.join("c.run");
    std::fs::copy(&a, &c).unwrap();
    let compare_runs = |runs: &[&Path], force: bool| {
        let mut args = vec!["compare", "--quiet", "--qrels", path_str(&qrels)];
        args.extend(runs.iter().map(|run| path_str(run)));
        args.extend(["--output-dir", path_str(work), "--run-name", "cmp"]);
        if force {
            args.push("--force");
        }
        hyde_eval(&args)
    };
    let stored = work.join("cmp/compare.json");
    assert_success(&compare_runs(&[&a, &b], false));
    let before = std::fs::read(&stored).unwrap();
    assert_refused(
        &compare_runs(&[&b, &c], false),
        &[
            // Runs are known by their labels: a.run's is its file name's stem.
            "holds a comparison of runs this one lacks (a)",
            "--force",
        ],
    );
    assert_eq!(std::fs::read(&stored).unwrap(), before);
    assert_success(&compare_runs(&[&b, &c], true));
    assert_ne!(std::fs::read(&stored).unwrap(), before);

    // Stored results compared: their run names are the comparison's runs.
    let dataset = tiny_copy(work, "tiny");
    let reports = work.join("reports");
    for name in ["first", "second", "third"] {
        assert_success(&hyde_eval(&[
            "run",
            "--quiet",
            "--dataset",
            path_str(&dataset),
            "--configurations",
            "bm25,keyword",
            "--output-dir",
            path_str(&reports),
            "--run-name",
            name,
        ]));
    }
    let results = |name: &str| reports.join(name).join("results.json");
    let compare_results = |names: [&str; 2], force: bool| {
        let (first, second) = (results(names[0]), results(names[1]));
        let mut args = vec![
            "compare",
            "--quiet",
            path_str(&first),
            path_str(&second),
            "--output-dir",
            path_str(work),
            "--run-name",
            "stored",
        ];
        if force {
            args.push("--force");
        }
        hyde_eval(&args)
    };
    assert_success(&compare_results(["first", "second"], false));
    assert_refused(
        &compare_results(["second", "third"], false),
        &[
            "holds a comparison of runs this one lacks (first)",
            "--force",
        ],
    );
    assert_success(&compare_results(["second", "third"], true));

    // A sweep of one configuration over a sweep of two.
    let sweep = |configurations: &str, force: bool| {
        let mut args = vec![
            "sweep",
            "--quiet",
            "--dataset",
            path_str(&dataset),
            "--configurations",
            configurations,
            "--steps",
            "2",
            "--folds",
            "2",
            "--output-dir",
            path_str(work),
            "--run-name",
            "swept",
        ];
        if force {
            args.push("--force");
        }
        hyde_eval(&args)
    };
    let heatmap = work.join("swept-sweep/heatmap-hyde-3b-hyp-ndcg-2.png");
    assert_success(&sweep("blend,hyde-3b-hyp", false));
    assert!(heatmap.is_file());
    assert_refused(
        &sweep("blend", false),
        &[
            "holds results of a configuration that this write does not hold (hyde-3b-hyp)",
            "--force",
        ],
    );
    assert!(heatmap.is_file(), "the full sweep's heatmap was dropped");
    assert_success(&sweep("blend", true));
    assert!(!heatmap.exists());
}

/// A dataset is imported or synthesized only into a new or empty directory, unless
/// `--force`.
#[test]
fn datasets_are_written_only_where_nothing_is() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let source = beir_collection(&work.join("beir"));
    let destination = work.join("mine");
    std::fs::create_dir(&destination).unwrap();
    std::fs::write(destination.join("notes.txt"), "keep").unwrap();
    let commands: [Vec<&str>; 2] = [
        vec![
            "dataset",
            "import",
            "--quiet",
            "--from",
            "beir",
            path_str(&source),
            path_str(&destination),
        ],
        vec![
            "dataset",
            "synth",
            "--facts",
            "50",
            "--queries",
            "5",
            "--output",
            path_str(&destination),
        ],
    ];
    for args in &commands {
        assert_refused(
            &hyde_eval(args),
            &[
                "mine: exists and is not empty; refusing to write a dataset into it",
                "--force",
            ],
        );
        assert_eq!(
            std::fs::read_to_string(destination.join("notes.txt")).unwrap(),
            "keep"
        );
    }
    // An empty directory takes a dataset; --force replaces a non-empty one.
    let empty = work.join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_success(&hyde_eval(&[
        "dataset",
        "import",
        "--quiet",
        "--from",
        "beir",
        path_str(&source),
        path_str(&empty),
    ]));
    assert!(empty.join("facts.jsonl").is_file());
    let forced: Vec<&str> = commands[1].iter().copied().chain(["--force"]).collect();
    assert_success(&hyde_eval(&forced));
    assert!(!destination.join("notes.txt").exists());
    assert_success(&hyde_eval(&["dataset", "validate", path_str(&destination)]));
}

/// The name of a scratch directory in `directory`, if any.
fn scratch_in(directory: &Path) -> Option<PathBuf> {
    std::fs::read_dir(directory)
        .ok()?
        .flatten()
        .find_map(|entry| {
            entry
                .path()
                .join(".hyde-eval-scratch")
                .is_file()
                .then(|| entry.path())
        })
}

/// Rule 3: a write killed at any instant leaves the old output or the new one, whole,
/// under the final name; what it left aside is removed by the next write there.
#[test]
fn a_kill_at_any_instant_leaves_the_old_output_or_the_new_one() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    // Runs large enough that fusing them takes a while: 3,000 queries of 200 results.
    let (mut first, mut second) = (String::new(), String::new());
    for query in 0..3_000 {
        for rank in 0..200 {
            first.push_str(&format!(
                "q{query} Q0 d{rank} {} {}.5 a\n",
                rank + 1,
                1_000 - rank
            ));
            second.push_str(&format!(
                "q{query} Q0 d{} {} {}.25 b\n",
                (rank * 7) % 200,
                rank + 1,
                1_000 - rank
            ));
        }
    }
    let (a, b) = (work.join("a.run"), work.join("b.run"));
    std::fs::write(&a, first).unwrap();
    std::fs::write(&b, second).unwrap();
    let output = work.join("out").join("fused.run");
    std::fs::create_dir(work.join("out")).unwrap();
    let fuse = |method: &str| {
        common::command()
            .args([
                "fuse",
                "--method",
                method,
                "-o",
                path_str(&output),
                "--force",
            ])
            .args([path_str(&a), path_str(&b)])
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    assert!(fuse("rrf").wait().unwrap().success());
    let old = std::fs::read(&output).unwrap();
    assert!(fuse("combsum").wait().unwrap().success());
    let new = std::fs::read(&output).unwrap();
    assert_ne!(old, new);
    let started = std::time::Instant::now();
    assert!(fuse("combsum").wait().unwrap().success());
    let whole = started.elapsed();
    let mut outcomes = [0usize; 2];
    for step in 0..16 {
        std::fs::write(&output, &old).unwrap();
        let mut child = fuse("combsum");
        std::thread::sleep(whole * step / 12);
        let _ = child.kill();
        child.wait().unwrap();
        let found = std::fs::read(&output).unwrap();
        assert!(
            found == old || found == new,
            "after a kill at {:?}: {} bytes, neither the old output ({}) nor the new ({})",
            whole * step / 12,
            found.len(),
            old.len(),
            new.len()
        );
        outcomes[usize::from(found == new)] += 1;
    }
    assert!(
        outcomes[0] > 0 && outcomes[1] > 0,
        "kills before and after the swap: {outcomes:?}"
    );
    // The next write removes what killed ones left aside.
    assert!(fuse("rrf").wait().unwrap().success());
    assert_eq!(scratch_in(&work.join("out")), None);
    assert_eq!(
        std::fs::read_dir(work.join("out")).unwrap().count(),
        1,
        "only fused.run"
    );
}

/// A copy of devmem with a bm25 + dense run at k = 2: (dataset, results.json).
fn devmem_with_run(work: &Path) -> (PathBuf, PathBuf) {
    let dataset = work.join("devmem");
    std::fs::create_dir(&dataset).unwrap();
    for entry in std::fs::read_dir(common::repo_path("datasets/devmem")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dataset.join(entry.file_name())).unwrap();
    }
    assert_success(&hyde_eval(&[
        "run",
        "--quiet",
        "--dataset",
        path_str(&dataset),
        "--configurations",
        "bm25,dense",
        "--k",
        "2",
        "--output-dir",
        path_str(&work.join("reports")),
        "--run-name",
        "r",
    ]));
    (dataset, work.join("reports/r/results.json"))
}

/// A judging session reading keys from its stdin: (child, stdin, stdout lines).
fn judge(
    dataset: &Path,
    results: &Path,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    BufReader<std::process::ChildStdout>,
) {
    let mut child = common::command()
        .args([
            "judge",
            "--dataset",
            path_str(dataset),
            "--results",
            path_str(results),
        ])
        .args(["--depth", "2", "--keys", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdin, stdout)
}

/// Sends `key` and waits for the session's next line.
fn press(
    stdin: &mut std::process::ChildStdin,
    stdout: &mut BufReader<std::process::ChildStdout>,
    key: &str,
) -> String {
    writeln!(stdin, "{key}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    line
}

/// `judge` keeps every grade: lines added by hand while it runs, and the grades of a
/// second session judging the same dataset at the same time.
#[test]
fn judging_keeps_hand_edits_and_a_second_judges_grades() {
    let work = tempfile::tempdir().unwrap();
    let (dataset, results) = devmem_with_run(work.path());
    let qrels = dataset.join("qrels.tsv");
    let before = std::fs::read_to_string(&qrels).unwrap();
    let (first, mut first_in, mut first_out) = judge(&dataset, &results);
    let (second, mut second_in, mut second_out) = judge(&dataset, &results);
    let mut line = String::new();
    first_out.read_line(&mut line).unwrap();
    assert!(line.starts_with("pair 1/"), "{line}");
    line.clear();
    second_out.read_line(&mut line).unwrap();
    // The same pool: the first session grades its first two pairs, the second skips
    // them and grades the next two, interleaved.
    press(&mut first_in, &mut first_out, "2");
    press(&mut second_in, &mut second_out, "s");
    press(&mut second_in, &mut second_out, "s");
    press(&mut second_in, &mut second_out, "1");
    // A line added by hand meanwhile.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&qrels)
        .unwrap()
        .write_all(b"q001\tf100\t1\n")
        .unwrap();
    press(&mut first_in, &mut first_out, "0");
    press(&mut second_in, &mut second_out, "2");
    for (mut child, stdin) in [(first, first_in), (second, second_in)] {
        drop(stdin);
        child.wait().unwrap();
    }
    let after = std::fs::read_to_string(&qrels).unwrap();
    assert!(after.starts_with(&before), "the judgments it held are kept");
    let added: Vec<&str> = after[before.len()..].lines().collect();
    // Worked out from the pool's order (as scripted_judging_keeps_every_grade... in
    // tests/labeling.rs): its first four pairs are q002's f092, f113, f136 and f169.
    assert_eq!(
        added,
        [
            "q002\tf092\t2",
            "q002\tf136\t1",
            "q001\tf100\t1",
            "q002\tf113\t0",
            "q002\tf169\t2"
        ]
    );
    let log = std::fs::read_to_string(dataset.join("judgments.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 4, "{log}");
    assert_success(&hyde_eval(&["dataset", "validate", path_str(&dataset)]));
}

/// A symlinked `qrels.tsv` stays a symlink; the file it points to gets the grades.
#[test]
fn judging_through_a_symlinked_qrels_edits_its_target() {
    let work = tempfile::tempdir().unwrap();
    let (dataset, results) = devmem_with_run(work.path());
    let shared = work.path().join("shared-qrels.tsv");
    std::fs::rename(dataset.join("qrels.tsv"), &shared).unwrap();
    symlink(&shared, dataset.join("qrels.tsv")).unwrap();
    let (mut child, mut stdin, mut stdout) = judge(&dataset, &results);
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    press(&mut stdin, &mut stdout, "2");
    drop(stdin);
    child.wait().unwrap();
    assert!(std::fs::symlink_metadata(dataset.join("qrels.tsv"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&shared)
        .unwrap()
        .ends_with("q002\tf092\t2\n"));
}

/// A SIGTERM that arrives once the report is in place says that it is complete.
#[test]
fn a_sigterm_after_the_report_is_in_place_says_it_is_complete() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "tiny");
    let out = work.path().join("out");
    // --html renders charts after the report is swapped in: the signal lands then.
    for _ in 0..20 {
        let mut child = common::command()
            .args(["run", "--dataset", path_str(&dataset), "--html", "--force"])
            .args(["--output-dir", path_str(&out)])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap() == 0 {
                break;
            }
            seen.push_str(&line);
            if line.starts_with("reports written to") {
                // SAFETY: signalling our own child.
                unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
                break;
            }
        }
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
        seen.push_str(&rest);
        let status = child.wait().unwrap();
        if status.code() == Some(143) {
            assert!(
                seen.contains("interrupted by SIGTERM; complete and in place: ")
                    && seen.contains("out/tiny"),
                "{seen}"
            );
            assert!(out.join("tiny/results.json").is_file());
            return;
        }
        assert!(status.success(), "{seen}");
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the run ended before the signal every time");
}
