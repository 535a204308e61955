//! The rows of the bad-input matrix that a careless or hostile user finds beyond the
//! usual malformed files: outputs written over inputs or other people's directories,
//! gates that could pass without checking, names that leave the output directory,
//! values that overflow, special files, CSV that swallows rows, absurd limits, leftovers
//! of killed runs and caches that are not the cache's own. Each asserts the exit code
//! and the message (or, for accepted inputs, the documented handling).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{hyde_eval, tiny_copy};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Asserts exit code 2 and that stderr holds every one of `parts`.
fn assert_refused(output: &Output, parts: &[&str]) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    for part in parts {
        assert!(text.contains(part), "expected {part:?} in:\n{text}");
    }
}

fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path_str(path)).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

/// Item 1: `run` never deletes a directory it did not write, least of all its own input.
#[test]
fn run_refuses_to_replace_its_dataset_or_a_directory_it_did_not_write() {
    let work = tempfile::tempdir().unwrap();
    let victim = work.path().join("victim");
    let dataset = tiny_copy(&victim, "tiny");
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--dataset",
        path_str(&dataset),
        "--output-dir",
        path_str(&victim),
    ]);
    assert_refused(
        &output,
        &[
            "victim/tiny: holds ",
            "an input of this command; refusing to replace it",
        ],
    );
    assert!(dataset.join("facts.jsonl").is_file() && dataset.join("qrels.tsv").is_file());

    let precious = work.path().join("out").join("precious");
    std::fs::create_dir_all(&precious).unwrap();
    std::fs::write(precious.join("thesis.txt"), "years of work").unwrap();
    let run = |name: &str| {
        hyde_eval(&[
            "run",
            "--quiet",
            "--configurations",
            "bm25",
            "--dataset",
            path_str(&dataset),
            "--output-dir",
            path_str(&work.path().join("out")),
            "--run-name",
            name,
        ])
    };
    assert_refused(
        &run("precious"),
        &[
            "out/precious: exists and was not written by hyde-eval (it has no .hyde-eval-output file)",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(precious.join("thesis.txt")).unwrap(),
        "years of work"
    );

    // Its own reports, and empty directories, are replaced.
    std::fs::create_dir_all(work.path().join("out").join("empty")).unwrap();
    for name in ["fresh", "fresh", "empty"] {
        let output = run(name);
        assert_eq!(output.status.code(), Some(0), "{name}: {}", stderr(&output));
        let report = work.path().join("out").join(name);
        assert!(report.join(".hyde-eval-output").is_file());
        assert!(report.join("results.json").is_file());
    }
}

/// Item 1: The same refusals hold for `sweep` and `compare`, before any work is done.
#[test]
fn sweep_and_compare_refuse_a_foreign_destination_before_they_run() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "tiny");
    let out = work.path().join("out");
    std::fs::create_dir_all(out.join("tiny-sweep")).unwrap();
    std::fs::write(out.join("tiny-sweep").join("notes.md"), "mine").unwrap();
    let output = hyde_eval(&[
        "sweep",
        "--quiet",
        "--dataset",
        path_str(&dataset),
        "--output-dir",
        path_str(&out),
    ]);
    assert_refused(
        &output,
        &["tiny-sweep: exists and was not written by hyde-eval"],
    );
    assert!(
        stdout(&output).is_empty(),
        "refused before the sweep printed anything"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("tiny-sweep").join("notes.md")).unwrap(),
        "mine"
    );
}

/// A baseline of `tiny` recorded with `extra` flags, at `work/name`.
fn record_baseline(work: &Path, dataset: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let path = work.join(name);
    let mut args = vec![
        "baseline",
        "update",
        "--quiet",
        "--dataset",
        path_str(dataset),
        "--output",
        path_str(&path),
    ];
    args.extend_from_slice(extra);
    let output = hyde_eval(&args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    path
}

fn gate(dataset: &Path, baseline: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--quiet",
        "--no-report",
        "--dataset",
        path_str(dataset),
        "--baseline",
        path_str(baseline),
    ];
    args.extend_from_slice(extra);
    hyde_eval(&args)
}

/// Item 2: A requested check that cannot be made fails the gate (exit 2, naming the metric
/// and configuration); zero checks never pass.
#[test]
fn a_gate_that_cannot_make_a_requested_check_fails() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "tiny");
    // tiny's cut-offs are 1 and 2: a baseline without nDCG@10.
    let baseline = record_baseline(work.path(), &dataset, "base.json", &[]);
    assert_refused(
        &gate(&dataset, &baseline, &["--k", "1,2,10", "--max-drop", "ndcg@10=0.01"]),
        &[
            "cannot check ndcg@10 for configuration \"keyword\": the baseline has no ndcg@10 value (baseline cut-offs [1, 2], this run's [1, 2, 10])",
        ],
    );
    // The same baseline gated on what it holds passes.
    let output = gate(&dataset, &baseline, &["--max-drop", "ndcg@2=0.01"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("gate: PASS"),
        "{}",
        stdout(&output)
    );

    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    let edited = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut value = original.clone();
        edit(&mut value);
        let path = work.path().join(name);
        std::fs::write(&path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
        path
    };
    // Null and missing macro values.
    let nulls = edited("nulls.json", &|value| {
        for configuration in value["configurations"].as_array_mut().unwrap() {
            for (_, metric) in configuration["macro"].as_object_mut().unwrap() {
                *metric = serde_json::Value::Null;
            }
        }
    });
    assert_refused(
        &gate(&dataset, &nulls, &[]),
        &["cannot check recall@1 for configuration \"keyword\": the baseline has no recall@1 value"],
    );
    let empty = edited("empty.json", &|value| {
        for configuration in value["configurations"].as_array_mut().unwrap() {
            configuration["macro"] = serde_json::json!({});
        }
    });
    assert_refused(
        &gate(&dataset, &empty, &["--max-drop", "mrr=0"]),
        &["the baseline has no mrr value"],
    );
    // Renamed configurations: none of the run's is in the baseline.
    let renamed = edited("renamed.json", &|value| {
        for configuration in value["configurations"].as_array_mut().unwrap() {
            let name = configuration["name"].as_str().unwrap().to_owned();
            configuration["name"] = serde_json::Value::String(format!("old-{name}"));
        }
    });
    assert_refused(
        &gate(&dataset, &renamed, &[]),
        &["cannot check configuration \"bm25\": the baseline does not hold it"],
    );
    // No per-query values to pair.
    let unpaired = edited("unpaired.json", &|value| {
        for configuration in value["configurations"].as_array_mut().unwrap() {
            configuration["per_query"] = serde_json::json!([]);
        }
    });
    assert_refused(
        &gate(&dataset, &unpaired, &["--max-drop", "mrr=0"]),
        &["cannot check mrr for configuration \"keyword\": the baseline and this run share no query with a per-query mrr value"],
    );
    // A results.json without configurations is neither a baseline nor comparable.
    let hollow = edited("hollow.json", &|value| {
        value["configurations"] = serde_json::json!([]);
    });
    assert_refused(
        &hyde_eval(&[
            "baseline",
            "update",
            "--from",
            path_str(&hollow),
            "--output",
            path_str(&work.path().join("new.json")),
        ]),
        &["hollow.json: holds no configurations"],
    );
    assert!(!work.path().join("new.json").exists());
    assert_refused(&gate(&dataset, &hollow, &[]), &["holds no configurations"]);
}

/// Item 2: Numbers made under other metric definitions are refused, not compared.
#[test]
fn baselines_and_results_under_other_metric_definitions_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "tiny");
    let level_two = record_baseline(
        work.path(),
        &dataset,
        "level2.json",
        &["--relevance-level", "2"],
    );
    assert_refused(
        &gate(&dataset, &level_two, &[]),
        &["the baseline's metrics are defined differently from this run's (relevance level 1 here, 2 there)"],
    );
    let chatcli = record_baseline(
        work.path(),
        &dataset,
        "chatcli.json",
        &["--semantics", "chatcli"],
    );
    assert_refused(
        &gate(&dataset, &chatcli, &[]),
        &["trec semantics here, chatcli there"],
    );
    let shallow = record_baseline(work.path(), &dataset, "shallow.json", &["--depth", "1"]);
    assert_refused(
        &gate(&dataset, &shallow, &[]),
        &["bm25: depth 1000 here, 1 there"],
    );

    let default = record_baseline(work.path(), &dataset, "default.json", &[]);
    let output = hyde_eval(&[
        "compare",
        path_str(&default),
        path_str(&level_two),
        "--output-dir",
        path_str(&work.path().join("out")),
    ]);
    assert_refused(
        &output,
        &[
            "metrics are defined differently",
            "relevance level 2 here, 1 there",
        ],
    );
}

/// Item 3: Configuration names are checked before the run, like run names.
#[test]
fn configuration_names_that_leave_the_report_are_refused_up_front() {
    let work = tempfile::tempdir().unwrap();
    for (name, problem) in [
        ("../../../x", "it would be written outside its directory"),
        ("a/b", "it would be written outside its directory"),
        ("", "it is empty"),
        (".hidden", "it would be hidden"),
    ] {
        let config = work.path().join("c.toml");
        std::fs::write(
            &config,
            format!("configurations = [{name:?}]\n[configuration.{name:?}]\npreset = \"bm25\"\n"),
        )
        .unwrap();
        let output = hyde_eval(&[
            "run",
            "--config",
            path_str(&config),
            "--output-dir",
            path_str(&work.path().join("out")),
        ]);
        assert_refused(
            &output,
            &[&format!(
                "configuration name {name:?} must be a plain directory name: {problem}"
            )],
        );
        assert!(stdout(&output).is_empty(), "{name}: refused before the run");
    }
    assert!(!work.path().join("x.run").exists() && !work.path().join("out").exists());
}

/// Item 4: Values that would overflow are refused with their bound; weights are relative.
#[test]
fn overflowing_cutoffs_and_limits_are_refused_and_weights_are_normalized() {
    assert_refused(
        &hyde_eval(&["run", "--no-report", "--k", "1,10,4611686018427387904"]),
        &["k: cut-off 4611686018427387904 is more than 1000000"],
    );
    assert_refused(
        &hyde_eval(&[
            "run",
            "--no-report",
            "--set",
            "hybrid.hybrid_limit=4611686018427387904",
        ]),
        &["configuration hybrid: hybrid_limit must be at most 1000000, got 4611686018427387904"],
    );
    assert_refused(
        &hyde_eval(&[
            "run",
            "--no-report",
            "--set",
            "hybrid.hybrid_vector_weight=1e308",
            "--set",
            "hybrid.hybrid_text_weight=1e308",
        ]),
        &["hybrid_vector_weight + hybrid_text_weight overflows"],
    );
    assert_refused(
        &hyde_eval(&[
            "run",
            "--no-report",
            "--set",
            "multi-hyde.adaptive_floor_start=0.9",
            "--set",
            "multi-hyde.adaptive_floor_step=1e-300",
        ]),
        &["adaptive_floor_step is too small"],
    );
    let blend_ndcg = |weights: &str| -> String {
        let output = hyde_eval(&[
            "run",
            "--no-report",
            "--quiet",
            "--configurations",
            "blend",
            "--weights",
            weights,
            "--format",
            "markdown",
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        stdout(&output)
    };
    let unit = blend_ndcg("1,1,1");
    assert_eq!(blend_ndcg("1e308,1e308,1e308"), unit);
    assert_eq!(blend_ndcg("2,2,2"), unit);
    assert_ne!(blend_ndcg("1,0,0"), unit, "the weights matter");
}

/// Item 5: Inputs are regular files; symlinks are resolved before the inside-the-dataset check.
#[test]
fn special_files_are_refused_and_symlinks_cannot_leave_the_dataset() {
    let work = tempfile::tempdir().unwrap();
    let run = |dataset: &Path| {
        hyde_eval(&[
            "run",
            "--no-report",
            "--quiet",
            "--configurations",
            "bm25",
            "--dataset",
            path_str(dataset),
        ])
    };
    let with_lexicon = |name: &str, make: &dyn Fn(&Path)| {
        let dataset = tiny_copy(work.path(), name);
        std::fs::write(
            dataset.join("dataset.toml"),
            "name = \"tiny\"\nnow = \"2026-03-01T00:00:00Z\"\nconcept_lexicon = \"concepts.toml\"\n",
        )
        .unwrap();
        make(&dataset.join("concepts.toml"));
        dataset
    };
    let zero = with_lexicon("zero", &|path| {
        std::os::unix::fs::symlink("/dev/zero", path).unwrap()
    });
    assert_refused(
        &run(&zero),
        &["concept_lexicon \"concepts.toml\" points outside the dataset directory"],
    );
    let passwd = with_lexicon("passwd", &|path| {
        std::os::unix::fs::symlink("/etc/passwd", path).unwrap()
    });
    assert_refused(&run(&passwd), &["points outside the dataset directory"]);
    let fifo = with_lexicon("fifo", &|path| mkfifo(path));
    assert_refused(
        &run(&fifo),
        &["concepts.toml: is a FIFO (named pipe), not a regular file"],
    );

    let hypotheses_dir = tiny_copy(work.path(), "hypdir");
    std::fs::remove_file(hypotheses_dir.join("hypotheses.jsonl")).unwrap();
    std::fs::create_dir(hypotheses_dir.join("hypotheses.jsonl")).unwrap();
    assert_refused(
        &run(&hypotheses_dir),
        &["hypotheses.jsonl: is a directory, not a regular file"],
    );
    let manifest_fifo = tiny_copy(work.path(), "manifest-fifo");
    std::fs::remove_file(manifest_fifo.join("dataset.toml")).unwrap();
    mkfifo(&manifest_fifo.join("dataset.toml"));
    assert_refused(
        &run(&manifest_fifo),
        &["dataset.toml: is a FIFO (named pipe), not a regular file"],
    );

    let qrels = work.path().join("tiny.qrels");
    std::fs::write(&qrels, "q1 0 f1 1\n").unwrap();
    let output = hyde_eval(&["eval", path_str(&qrels), "/dev/zero"]);
    assert_refused(&output, &["/dev/zero: is a device, not a regular file"]);
    let output = hyde_eval(&["eval", "/dev/zero", path_str(&qrels)]);
    assert_refused(&output, &["/dev/zero: is a device, not a regular file"]);
}

/// Item 6: CSV that would swallow rows or shadow a column is refused with its line.
#[test]
fn csv_with_an_unclosed_quote_or_a_repeated_column_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let write = |name: &str, facts: &str| {
        let directory = work.path().join(name);
        std::fs::create_dir_all(&directory).unwrap();
        std::fs::write(directory.join("facts.csv"), facts).unwrap();
        std::fs::write(
            directory.join("queries.csv"),
            "id,text\nq1,redis eviction\n",
        )
        .unwrap();
        std::fs::write(
            directory.join("qrels.csv"),
            "query_id,fact_id,grade\nq1,f1,1\n",
        )
        .unwrap();
        directory
    };
    let validate = |directory: &Path| {
        hyde_eval(&[
            "dataset",
            "validate",
            "--dataset-format",
            "csv",
            path_str(directory),
        ])
    };
    let unclosed = write(
        "unclosed",
        "id,content\nf1,redis eviction\nf2,\"an open quote\nf3,swallowed\nf4,also swallowed\n",
    );
    assert_refused(
        &validate(&unclosed),
        &["facts.csv:3: a quoted field opens on this line and is never closed"],
    );
    let repeated = write("repeated", "id,content,id\nf1,redis eviction,f9\n");
    assert_refused(
        &validate(&repeated),
        &["facts.csv:1: column \"id\" appears twice (columns 1 and 3)"],
    );
}

/// Item 7: BM25 is linear in a query's distinct words (the time is in the performance docs;
/// here the answer is checked against a query of the same words once each).
#[test]
fn a_query_of_two_hundred_thousand_distinct_words_is_scored() {
    use hyde_eval::dataset::collection::plain_fact;
    use hyde_eval::dataset::Fact;
    use hyde_eval::index::{Bm25Params, LexicalIndex, LexicalNeeds};
    use hyde_eval::text::Analyzer;
    let fact = |id: &str, content: &str| plain_fact(id.into(), content.into());
    let facts = [fact("f1", "w17 w99999 alpha"), fact("f2", "beta gamma w5")];
    let refs: Vec<&Fact> = facts.iter().collect();
    let needs = LexicalNeeds {
        keywords: false,
        bm25_analyzers: vec![Analyzer::Chatcli],
    };
    let index = LexicalIndex::build(&refs, &needs);
    let params = Bm25Params { k1: 0.9, b: 0.4 };
    let long: String = (0..200_000).map(|word| format!("w{word} ")).collect();
    let short = "w5 w17 w99999";
    let scores = index.bm25(&long, params, Analyzer::Chatcli);
    assert_eq!(scores, index.bm25(short, params, Analyzer::Chatcli));
    assert_eq!(scores.len(), 2);
}

/// Item 9: Absurd limits are refused with the limit named.
#[test]
fn absurd_thread_counts_and_dimensions_are_refused() {
    assert_refused(
        &hyde_eval(&["run", "--no-report", "-j", "8000"]),
        &["--threads must be between 1 and 1024, got 8000"],
    );
    assert_refused(
        &hyde_eval(&["eval", "--threads", "8000", "a", "b"]),
        &["--threads must be between 1 and 1024, got 8000"],
    );
    assert_refused(
        &hyde_eval(&["run", "--no-report", "--dimension", "100000000"]),
        &["the hash provider's dimension must be between 1 and 65536, got 100000000"],
    );
}

/// The names in `directory`, sorted.
fn names_in(directory: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Item 10: What a killed run leaves is removed by the next run, recognised by the marker
/// inside it: files and directories that merely look like temporaries are a user's and
/// stay. Concurrent runs of one name each end with a complete report.
#[test]
fn leftovers_of_killed_runs_are_removed_and_concurrent_runs_of_one_name_succeed() {
    let work = tempfile::tempdir().unwrap();
    let dataset = work.path().join("large");
    common::write_synthetic_dataset(&dataset, 20_000, 2_000);
    let out = work.path().join("out");
    // Killed outright (no clean-up runs) once it is writing: its scratch directory stays.
    let mut killed = common::command()
        .args(["run", "--quiet", "--dataset", path_str(&dataset)])
        .args(["--output-dir", path_str(&out), "--run-name", "tiny"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let scratch = loop {
        let found = std::fs::read_dir(&out).ok().and_then(|entries| {
            entries
                .flatten()
                .find(|entry| entry.path().join(".hyde-eval-scratch").is_file())
        });
        if let Some(entry) = found {
            break entry.path();
        }
        assert!(killed.try_wait().unwrap().is_none(), "the run ended first");
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(scratch.is_dir(), "SIGKILL leaves the scratch directory");
    // Names of earlier temporaries and of scratch directories, held by a user's files.
    for lookalike in [".tiny.partial-1", ".tiny.runs-1", ".hyde-eval-scratch-1-0"] {
        std::fs::create_dir_all(out.join(lookalike)).unwrap();
        std::fs::write(out.join(lookalike).join("notes.txt"), "mine").unwrap();
    }
    std::fs::write(out.join(".baseline.json.partial-1-3"), "mine").unwrap();
    std::fs::create_dir_all(out.join(".git")).unwrap();
    let tiny = tiny_copy(work.path(), "tiny");
    let run = || {
        common::command()
            .args(["run", "--quiet", "--dataset", path_str(&tiny)])
            .args(["--output-dir", path_str(&out)])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let status = run().wait().unwrap();
    assert!(status.success());
    assert_eq!(
        names_in(&out),
        [
            ".baseline.json.partial-1-3",
            ".git",
            ".hyde-eval-scratch-1-0",
            ".tiny.partial-1",
            ".tiny.runs-1",
            "tiny"
        ]
    );
    assert!(!scratch.exists());

    let children: Vec<_> = (0..4).map(|_| run()).collect();
    for mut child in children {
        assert!(
            child.wait().unwrap().success(),
            "every concurrent run exits 0"
        );
    }
    let report = out.join("tiny");
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["configurations"].as_array().unwrap().len(), 10);
    assert_eq!(std::fs::read_dir(report.join("runs")).unwrap().count(), 10);
    assert_eq!(
        names_in(&out).len(),
        6,
        "no scratch directory is left: {:?}",
        names_in(&out)
    );
}

/// Item 11: `cache clear` removes only what carries the cache's own namespace file.
#[test]
fn cache_clear_leaves_directories_it_does_not_own() {
    let work = tempfile::tempdir().unwrap();
    let foreign = work.path().join("embeddings").join("holiday-photos");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("beach.jpg"), "pixels").unwrap();
    let output = hyde_eval(&["cache", "clear", "--cache-dir", path_str(work.path())]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "holiday-photos alone: it has no namespace.json and is not a cache namespace"
        ),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("beach.jpg")).unwrap(),
        "pixels"
    );
}

/// Item 12: Judgments that cannot be scored are refused.
#[test]
fn judgments_that_score_nothing_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "tiny");
    let output = hyde_eval(&[
        "run",
        "--no-report",
        "--dataset",
        path_str(&dataset),
        "--relevance-level",
        "3",
    ]);
    assert_refused(
        &output,
        &["no query has a judgment of grade 3 or more, so there is nothing to score"],
    );

    let qrels = work.path().join("huge.qrels");
    std::fs::write(&qrels, "q1 0 f1 99999999999\n").unwrap();
    let run = work.path().join("a.run");
    std::fs::write(&run, "q1 Q0 f1 1 1.0 a\n").unwrap();
    assert_refused(
        &hyde_eval(&["eval", path_str(&qrels), path_str(&run)]),
        &["huge.qrels:1: grade 99999999999 is out of range (at most 2147483647)"],
    );
    std::fs::write(&qrels, "q1 0 f1 +2\n").unwrap();
    assert_refused(
        &hyde_eval(&["eval", path_str(&qrels), path_str(&run)]),
        &["huge.qrels:1: grade \"+2\" is not an integer"],
    );
}

/// A baseline value outside its metric's range (every metric is a fraction) was edited
/// in or is not hyde-eval's: refused, named by file, configuration (and query) and
/// metric, before the run.
#[test]
fn baseline_values_outside_their_metrics_range_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let dataset = tiny_copy(work.path(), "tiny");
    let baseline = record_baseline(work.path(), &dataset, "base.json", &[]);
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    let keyword = value["configurations"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|configuration| configuration["name"] == "keyword")
        .unwrap();
    keyword["macro"]["ndcg@2"] = serde_json::json!(1.7);
    keyword["per_query"][0]["metrics"]["mrr"] = serde_json::json!(-0.1);
    let query = keyword["per_query"][0]["query"]
        .as_str()
        .unwrap()
        .to_owned();
    let edited = work.path().join("edited.json");
    std::fs::write(&edited, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    let edited_path = path_str(&edited);
    let output = gate(&dataset, &edited, &[]);
    assert_refused(
        &output,
        &[
            &format!("{edited_path}: configuration \"keyword\": ndcg@2 = 1.7 is outside [0, 1]"),
            &format!(
                "{edited_path}: configuration \"keyword\", query {query}: mrr = -0.1 is outside [0, 1]"
            ),
        ],
    );
    assert!(stdout(&output).is_empty(), "refused before the run");
    // Compared, the file is refused the same way.
    assert_refused(
        &hyde_eval(&[
            "compare",
            path_str(&baseline),
            edited_path,
            "--output-dir",
            path_str(&work.path().join("out")),
        ]),
        &["ndcg@2 = 1.7 is outside [0, 1]"],
    );
    // A value a unit in the last place above 1 is float rounding, not an edit.
    let keyword = value["configurations"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|configuration| configuration["name"] == "keyword")
        .unwrap();
    keyword["macro"]["ndcg@2"] = serde_json::json!(1.0000000000000002);
    keyword["per_query"][0]["metrics"]["mrr"] = serde_json::json!(0.0);
    std::fs::write(&edited, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    let output = hyde_eval(&[
        "baseline",
        "update",
        "--from",
        edited_path,
        "--output",
        path_str(&work.path().join("accepted.json")),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// RFC 4180: text after a closing quote, or a quote inside an unquoted field, is
/// malformed (the CSV reader would take it as text); refused with line and column.
#[test]
fn csv_fields_with_text_after_a_closing_quote_are_refused_with_line_and_column() {
    let work = tempfile::tempdir().unwrap();
    let directory = work.path().join("csv");
    std::fs::create_dir_all(&directory).unwrap();
    std::fs::write(
        directory.join("facts.csv"),
        "id,content\nf1,\"hello\"world\nf2,redis \"eviction\"\nf3, \"quoted after a space\"\n",
    )
    .unwrap();
    std::fs::write(directory.join("queries.csv"), "id,text\nq1,hello\n").unwrap();
    std::fs::write(
        directory.join("qrels.csv"),
        "query_id,fact_id,grade\nq1,f1,1\n",
    )
    .unwrap();
    let output = hyde_eval(&[
        "dataset",
        "validate",
        "--dataset-format",
        "csv",
        path_str(&directory),
    ]);
    assert_refused(
        &output,
        &[
            "facts.csv:2: text follows the closing quote of a quoted field; only a comma or the line's end may (column 11)",
            "facts.csv:3: a quote inside a field that does not start with a quote (column 10)",
            "facts.csv:4: a quote inside a field that does not start with a quote (column 5)",
            "hint: a field that holds a quote is quoted whole",
        ],
    );
}

/// Names written into TREC run files (run names, configuration names, `fuse --tag`) are
/// TREC tokens: whitespace would split them into two fields, so the file would not
/// read back.
#[test]
fn names_that_are_no_trec_tokens_are_refused_before_anything_is_written() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    assert_refused(
        &hyde_eval(&[
            "run",
            "--quiet",
            "--run-name",
            "my run",
            "--output-dir",
            path_str(&out),
        ]),
        &["run name \"my run\" must be a TREC token (no whitespace or control characters): it holds whitespace, which would split it into two fields"],
    );
    let config = work.path().join("c.toml");
    std::fs::write(
        &config,
        "configurations = [\"my bm25\"]\n[configuration.\"my bm25\"]\npreset = \"bm25\"\n",
    )
    .unwrap();
    assert_refused(
        &hyde_eval(&[
            "run",
            "--quiet",
            "--config",
            path_str(&config),
            "--output-dir",
            path_str(&out),
        ]),
        &["configuration name \"my bm25\" must be a TREC token (no whitespace or control characters): it holds whitespace"],
    );
    assert!(!out.exists(), "nothing written");

    let a = work.path().join("a.run");
    std::fs::write(&a, "q1 Q0 d1 1 2.0 a\n").unwrap();
    let fused = work.path().join("fused.run");
    for (tag, problem) in [
        ("my tag", "it holds whitespace"),
        ("tag\u{1}", "it holds a control character (U+0001)"),
        ("", "it is empty"),
    ] {
        assert_refused(
            &hyde_eval(&[
                "fuse",
                "--method",
                "rrf",
                "--tag",
                tag,
                path_str(&a),
                path_str(&a),
                "-o",
                path_str(&fused),
            ]),
            &[&format!("--tag {tag:?} must be a TREC token (no whitespace or control characters): {problem}")],
        );
    }
    assert!(!fused.exists());
}

/// Ids with control characters (NUL included) are refused at load in every dataset
/// format that can hold them and in the TREC files `eval`, `fuse` and `compare` read,
/// with file and line; so is a query id a run file would read as a comment.
#[test]
fn ids_with_control_characters_are_refused_at_load_with_file_and_line() {
    let work = tempfile::tempdir().unwrap();
    let validate = |format: &str, directory: &Path| {
        hyde_eval(&[
            "dataset",
            "validate",
            "--dataset-format",
            format,
            path_str(directory),
        ])
    };
    let native = tiny_copy(work.path(), "native");
    std::fs::write(
        native.join("facts.jsonl"),
        "{\"id\": \"f1\", \"content\": \"Redis eviction relies on ttl\"}\n{\"id\": \"f\\u00002\", \"content\": \"Postgres stores user rows\"}\n",
    )
    .unwrap();
    std::fs::write(
        native.join("queries.jsonl"),
        "{\"id\": \"q1\", \"text\": \"how does redis evict keys\"}\n{\"id\": \"#q2\", \"text\": \"where are user rows stored\"}\n",
    )
    .unwrap();
    assert_refused(
        &validate("native", &native),
        &[
            "facts.jsonl:2: fact id \"f\\02\" holds a control character (U+0000), which TREC run and qrels files cannot represent",
            "queries.jsonl:2: query id \"#q2\" starts with #, which would make its TREC run lines comments",
        ],
    );

    let chatcli = work.path().join("chatcli");
    std::fs::create_dir_all(&chatcli).unwrap();
    for entry in std::fs::read_dir(common::repo_path("fixtures/datasets/tiny-chatcli")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), chatcli.join(entry.file_name())).unwrap();
    }
    let memory = std::fs::read_to_string(chatcli.join("memory_index.json")).unwrap();
    std::fs::write(
        chatcli.join("memory_index.json"),
        memory.replace("\"id\": \"f2\"", "\"id\": \"f\\u001b2\""),
    )
    .unwrap();
    assert_refused(
        &validate("native", &chatcli),
        &["memory_index.json:3: fact id \"f\\u{1b}2\" holds a control character (U+001B)"],
    );

    let csv = work.path().join("csv");
    std::fs::create_dir_all(&csv).unwrap();
    std::fs::write(
        csv.join("facts.csv"),
        "id,content\nf1,redis\nf\u{7f}2,postgres\n",
    )
    .unwrap();
    std::fs::write(csv.join("queries.csv"), "id,text\nq1,redis\n").unwrap();
    std::fs::write(csv.join("qrels.csv"), "query_id,fact_id,grade\nq1,f1,1\n").unwrap();
    assert_refused(
        &validate("csv", &csv),
        &["facts.csv:3: fact id \"f\\u{7f}2\" holds a control character (U+007F)"],
    );

    let beir = work.path().join("beir");
    std::fs::create_dir_all(beir.join("qrels")).unwrap();
    std::fs::write(
        beir.join("corpus.jsonl"),
        "{\"_id\": \"d1\", \"text\": \"redis eviction\"}\n",
    )
    .unwrap();
    std::fs::write(
        beir.join("queries.jsonl"),
        "{\"_id\": \"1\", \"text\": \"redis\"}\n{\"_id\": \"2\\u0085\", \"text\": \"postgres\"}\n",
    )
    .unwrap();
    std::fs::write(
        beir.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\n1\td1\t1\n",
    )
    .unwrap();
    assert_refused(
        &validate("beir", &beir),
        &["queries.jsonl:2: query id \"2\\u{85}\""],
    );

    let trec = work.path().join("trec");
    std::fs::create_dir_all(&trec).unwrap();
    std::fs::write(
        trec.join("docs.tsv"),
        "d1\tredis eviction\nd\u{0}2\tpostgres rows\n",
    )
    .unwrap();
    std::fs::write(trec.join("queries.tsv"), "1\tredis\n").unwrap();
    std::fs::write(trec.join("qrels"), "1 0 d1 1\n").unwrap();
    assert_refused(
        &validate("trec", &trec),
        &["docs.tsv:2: fact id \"d\\02\" holds a control character (U+0000)"],
    );

    // TREC files read by eval, fuse and compare.
    let qrels = work.path().join("q.qrels");
    std::fs::write(&qrels, "q1 0 d1 1\n").unwrap();
    let good = work.path().join("good.run");
    std::fs::write(&good, "q1 Q0 d1 1 2.0 a\n").unwrap();
    let nul = work.path().join("nul.run");
    std::fs::write(&nul, "q1 Q0 d1 1 2.0 a\nq1 Q0 d\u{0}2 2 1.0 a\n").unwrap();
    let docno = "nul.run:2: docno \"d\\02\" holds a control character (U+0000), which TREC files cannot hold";
    assert_refused(
        &hyde_eval(&["eval", path_str(&qrels), path_str(&nul)]),
        &[docno],
    );
    assert_refused(
        &hyde_eval(&["fuse", "--method", "rrf", path_str(&good), path_str(&nul)]),
        &[docno],
    );
    assert_refused(
        &hyde_eval(&[
            "compare",
            "--qrels",
            path_str(&qrels),
            path_str(&good),
            path_str(&nul),
            "--output-dir",
            path_str(&work.path().join("out")),
        ]),
        &[docno],
    );
    let bad_qrels = work.path().join("bad.qrels");
    std::fs::write(&bad_qrels, "q1 0 d1 1\nq\u{1}2 0 d1 1\n").unwrap();
    assert_refused(
        &hyde_eval(&["eval", path_str(&bad_qrels), path_str(&good)]),
        &["bad.qrels:2: query id \"q\\u{1}2\" holds a control character (U+0001)"],
    );
    // A long line (past the 64-byte fast path) and a tag outside ASCII.
    let long = work.path().join("long.run");
    let padding = "x".repeat(80);
    std::fs::write(&long, format!("q1 Q0 d1 1 2.0 {padding}\u{85}\n")).unwrap();
    assert_refused(
        &hyde_eval(&["eval", path_str(&qrels), path_str(&long)]),
        &["long.run:1: tag \"", "holds a control character (U+0085)"],
    );
    // A control character in a comment line is no id: accepted.
    let commented = work.path().join("commented.run");
    std::fs::write(&commented, "# made by \u{1}tool\nq1 Q0 d1 1 2.0 a\n").unwrap();
    let output = hyde_eval(&["eval", path_str(&qrels), path_str(&commented)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// Runs hyde-eval with stdout and stderr on a pipe whose reader is gone (as
/// `hyde-eval ... 2>&1 | head -1` leaves them once head has exited), and returns its exit
/// code.
fn exit_code_with_a_closed_pipe(args: &[&str]) -> Option<i32> {
    let mut descriptors = [0; 2];
    // SAFETY: `descriptors` has room for the two descriptors pipe() writes.
    assert_eq!(unsafe { libc::pipe(descriptors.as_mut_ptr()) }, 0);
    // SAFETY: both are open descriptors this test owns; each is owned once.
    let (reader, writer) = unsafe {
        use std::os::fd::FromRawFd;
        (
            std::os::fd::OwnedFd::from_raw_fd(descriptors[0]),
            std::os::fd::OwnedFd::from_raw_fd(descriptors[1]),
        )
    };
    drop(reader);
    let status = common::command()
        .args(args)
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .status()
        .unwrap();
    status.code()
}

/// A reader that went away is no reason to change the exit code: the error of a bad
/// input still exits with 2, a failed gate with 1 and a success with 0, never 101 (the
/// code of a panic, which std's `eprintln!` raises on a closed pipe).
#[test]
fn a_closed_stderr_keeps_each_commands_exit_code() {
    let work = tempfile::tempdir().unwrap();
    let qrels = work.path().join("q.qrels");
    std::fs::write(&qrels, "q1 0 d1 1\nq1 0 d2 1\n").unwrap();
    let run = work.path().join("a.run");
    std::fs::write(&run, "q1 Q0 d1 1 2.0 a\nq2 Q0 d1 1 1.0 a\n").unwrap();
    let (qrels, run) = (path_str(&qrels), path_str(&run));
    assert_eq!(
        exit_code_with_a_closed_pipe(&["eval", qrels, path_str(&work.path().join("missing.run"))]),
        Some(2)
    );
    // Notes on stderr, the table on stdout, the gate's summary on stderr, then exit 1.
    assert_eq!(
        exit_code_with_a_closed_pipe(&["eval", qrels, run, "--min", "ndcg@10=0.99"]),
        Some(1)
    );
    assert_eq!(exit_code_with_a_closed_pipe(&["configurations"]), Some(0));
    // Stage lines of a run, then its table.
    assert_eq!(
        exit_code_with_a_closed_pipe(&["run", "--no-report", "--configurations", "bm25"]),
        Some(0)
    );

    // stderr closed outright.
    let mut command = common::command();
    command.args(["eval", qrels, "missing.run"]);
    // SAFETY: close() is async-signal-safe, and the child closes only its own stderr.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            libc::close(2);
            Ok(())
        });
    }
    assert_eq!(command.output().unwrap().status.code(), Some(2));
}

/// `dataset synth` refuses sizes it cannot number, or whose judging would not end in
/// reasonable time, before anything is written (no capacity-overflow panic, no endless
/// run). (The memory check is a unit test in `src/dataset/synth.rs`: what is available
/// differs between machines.)
#[test]
fn dataset_synth_refuses_absurd_sizes_before_writing() {
    let work = tempfile::tempdir().unwrap();
    let output_dir = work.path().join("synth");
    let synth = |extra: &[&str]| {
        let mut args = vec!["dataset", "synth", "--output", path_str(&output_dir)];
        args.extend_from_slice(extra);
        hyde_eval(&args)
    };
    assert_refused(
        &synth(&[
            "--facts",
            "10",
            "--queries",
            "2",
            "--topics",
            "18446744073709551615",
        ]),
        &["dataset synth: --topics 18446744073709551615 is more than 4294967295"],
    );
    assert_refused(
        &synth(&[
            "--facts",
            "10",
            "--queries",
            "2",
            "--vocabulary",
            "18446744073709551615",
        ]),
        &["dataset synth: --vocabulary 18446744073709551615 is more than 4294967295"],
    );
    assert_refused(
        &synth(&["--facts", "4294967296", "--queries", "1"]),
        &["dataset synth: --facts 4294967296 is more than 4294967295"],
    );
    // 2,000 facts in 4 topics: 500 facts to judge per query.
    assert_refused(
        &synth(&["--facts", "2000", "--queries", "2000001"]),
        &["dataset synth: judging 2000001 queries against about 500 facts of their topic each would regenerate 1000000500 facts (at most 1000000000, about an hour); give more --topics or fewer --queries"],
    );
    assert!(!output_dir.exists(), "nothing written");
}
