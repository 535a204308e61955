//! Errors that say how to fix them: each test gives a command line one of the usual
//! first mistakes (the qrels and a run swapped, a BEIR directory read as hyde-eval's
//! layout, a metric at a cut-off the run does not compute, several unknown
//! configurations, a results.json passed as a sweep, an option of another command) and
//! asserts the exit code and that the message names the fix, once.

mod common;

use std::path::Path;
use std::process::Output;

use common::{hyde_eval, repo_path};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn devmem() -> String {
    repo_path("datasets/devmem").to_str().unwrap().to_owned()
}

/// A run given where the qrels go, and the qrels among the runs: one problem (not one
/// per line of the run), naming both files and the command line in the right order.
#[test]
fn eval_with_the_qrels_and_the_run_swapped_says_so_once_with_the_command_in_order() {
    let work = tempfile::tempdir().unwrap();
    let qrels = work.path().join("qrels.txt");
    let run = work.path().join("a.run");
    write(&qrels, "q1 0 d1 1\nq1 0 d2 0\n");
    write(&run, "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n");
    let (qrels, run) = (qrels.to_str().unwrap(), run.to_str().unwrap());

    let output = hyde_eval(&["eval", run, qrels]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("(1 problem)"), "{message}");
    assert!(
        message.contains(&format!(
            "{run}: holds a run (`qid Q0 docno rank score tag` lines), not judgments, and {qrels} holds the judgments: the qrels and a run are swapped"
        )),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "hint: the qrels go first: hyde-eval eval {qrels} {run}"
        )),
        "{message}"
    );

    // The same in compare, whose qrels are an option's value.
    let other = work.path().join("b.run");
    write(&other, "q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\n");
    let other = other.to_str().unwrap();
    let output = hyde_eval(&["compare", &format!("--qrels={run}"), qrels, other]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains(&format!(
            "hint: the qrels go first: hyde-eval compare --qrels={qrels} {run} {other}"
        )),
        "{message}"
    );

    // A run where the qrels go and no judgments anywhere: still one problem.
    let output = hyde_eval(&["eval", run, run]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains("(1 problem)")
            && message
                .contains("holds a run (`qid Q0 docno rank score tag` lines), not judgments\n")
            && message.contains("hint: pass the qrels (`qid 0 docno grade` lines) first"),
        "{message}"
    );
}

/// A BEIR (or TREC) directory passed to `run --dataset` without `--dataset-format`:
/// named for what it holds, with the options that read it (the split it has).
#[test]
fn a_beir_or_trec_directory_without_dataset_format_names_the_options_that_read_it() {
    let work = tempfile::tempdir().unwrap();
    let beir = work.path().join("beir");
    write(
        &beir.join("corpus.jsonl"),
        "{\"_id\":\"d1\",\"text\":\"a\"}\n",
    );
    write(
        &beir.join("queries.jsonl"),
        "{\"_id\":\"q1\",\"text\":\"a\"}\n",
    );
    write(
        &beir.join("qrels/dev.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    );
    let output = hyde_eval(&["run", "--no-report", "--dataset", beir.to_str().unwrap()]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains(
            "holds a BEIR collection (corpus.jsonl, queries.jsonl, qrels/dev.tsv), not hyde-eval's layout (facts.jsonl, queries.jsonl, qrels.tsv)"
        ),
        "{message}"
    );
    assert!(
        message.contains("hint: add --dataset-format beir --split dev to read it"),
        "{message}"
    );

    let trec = work.path().join("trec");
    write(&trec.join("docs.tsv"), "d1\ta\n");
    write(&trec.join("queries.tsv"), "q1\ta\n");
    write(&trec.join("qrels"), "q1 0 d1 1\n");
    let output = hyde_eval(&["run", "--no-report", "--dataset", trec.to_str().unwrap()]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains("holds a TREC collection (docs.tsv, queries.tsv, qrels)")
            && message.contains("hint: add --dataset-format trec to read it"),
        "{message}"
    );
}

/// `R@100` on devmem, whose cut-offs are 1, 5 and 10: the `--k` that computes it.
#[test]
fn a_metric_at_a_cutoff_not_computed_names_the_k_that_computes_it() {
    let output = hyde_eval(&[
        "run",
        "--no-report",
        "--quiet",
        "--dataset",
        &devmem(),
        "--metrics",
        "R@100",
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains("\"R@100\" is recall@100, which this run does not compute")
            && message.contains("; add the cut-off: --k 1,5,10,100"),
        "{message}"
    );
    // A metric with no cut-off has no such hint.
    let output = hyde_eval(&[
        "run",
        "--no-report",
        "--quiet",
        "--dataset",
        &devmem(),
        "--metrics",
        "ndcg",
    ]);
    assert!(
        !stderr(&output).contains("add the cut-off"),
        "{}",
        stderr(&output)
    );
}

/// Every unknown configuration in one message, not the first alone.
#[test]
fn every_unknown_configuration_is_listed_at_once() {
    let output = hyde_eval(&[
        "run",
        "--no-report",
        "--quiet",
        "--dataset",
        &devmem(),
        "--configurations",
        "foo,bm25,hybird,foo",
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains(
            "error: 2 unknown configurations: \"foo\", \"hybird\" (did you mean \"hybrid\"?); available: keyword, bm25,"
        ),
        "{message}"
    );
    let output = hyde_eval(&[
        "run",
        "--no-report",
        "--quiet",
        "--dataset",
        &devmem(),
        "--set",
        "bm25x.bm25_k1=1.0",
        "--set",
        "blnd.rrf_k=10",
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains(
            "--set: 2 unknown configurations: \"bm25x\" (did you mean \"bm25\"?), \"blnd\" (did you mean \"blend\"?)"
        ),
        "{message}"
    );
}

/// `report --sweep results.json`: the file is named a results document, with where it
/// goes (tests/report.rs has a timings.json given as RESULTS).
#[test]
fn report_given_the_wrong_document_names_what_it_is() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let output = hyde_eval(&[
        "run",
        "--quiet",
        "--dataset",
        &devmem(),
        "--configurations",
        "bm25",
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = out.join("devmem/results.json");
    let results = results.to_str().unwrap();
    let output = hyde_eval(&[
        "report",
        "--sweep",
        results,
        results,
        "--output-dir",
        work.path().join("report").to_str().unwrap(),
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains(&format!(
            "{results}: is a results.json (written by `hyde-eval run` or `hyde-eval baseline update`), not a sweep.json"
        )) && message.contains(&format!(
            "hint: --sweep takes a sweep.json; a results.json is the report's RESULTS: hyde-eval report {results}"
        )),
        "{message}"
    );
}

/// `sweep --baseline` is no typo of `--engine`: the commands that take `--baseline` are
/// named instead; a real typo is still suggested.
#[test]
fn an_unknown_option_is_suggested_only_when_it_is_a_typo() {
    let output = hyde_eval(&["sweep", "--baseline", "x"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(!message.contains("--engine"), "{message}");
    assert!(
        message.contains("--baseline is an option of `hyde-eval run`")
            && message.contains("not of `hyde-eval sweep`"),
        "{message}"
    );
    let output = hyde_eval(&["run", "--embeder", "hash"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("--embedder"), "{message}");
}

/// `Rprec` is not a typo of `bpref`: no such suggestion.
#[test]
fn rprec_draws_no_bpref_suggestion() {
    let output = hyde_eval(&[
        "run",
        "--no-report",
        "--quiet",
        "--dataset",
        &devmem(),
        "--metrics",
        "Rprec",
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains("unknown metric \"Rprec\"; it computes:"),
        "{message}"
    );
    assert!(!message.contains("did you mean"), "{message}");
}

/// `configurations --format json`: every preset, in order, with what `run` runs.
#[test]
fn configurations_lists_the_presets_as_json() {
    let output = hyde_eval(&["configurations", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["schema_version"], 1);
    let presets = document["configurations"].as_array().unwrap();
    let names: Vec<&str> = presets
        .iter()
        .map(|preset| preset["name"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = hyde_eval::configuration::Preset::ALL
        .iter()
        .map(|preset| preset.name())
        .collect();
    assert_eq!(names, expected);
    let bm25 = &presets[names.iter().position(|name| *name == "bm25").unwrap()];
    assert_eq!(
        bm25["parameters"],
        serde_json::json!(["bm25_k1", "bm25_b", "bm25_analyzer", "depth"])
    );
    assert_eq!(bm25["in_default_run"], true);
    let output = hyde_eval(&["configurations", "--format", "csv"]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with("configuration,what it does,reproduces,parameters it reads\n"),
        "{text}"
    );
    assert_eq!(text.lines().count(), expected.len() + 1);
}

/// `run --cache-dir DIR --embedder local` looks for the model where `models fetch
/// --cache-dir DIR` puts it (DIR/models/NAME), not in the default cache.
#[test]
fn run_cache_dir_looks_for_the_model_where_models_fetch_puts_it() {
    let work = tempfile::tempdir().unwrap();
    let output = hyde_eval(&[
        "run",
        "--no-report",
        "--quiet",
        "--dataset",
        &devmem(),
        "--cache-dir",
        work.path().to_str().unwrap(),
        "--embedder",
        "local",
        "--configurations",
        "dense",
    ]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    let expected = work.path().join("models/all-minilm-l6-v2");
    assert!(
        message.contains(&format!(
            "{}: no sentence-transformers model here",
            expected.display()
        )),
        "{message}"
    );
    assert_eq!(
        hyde_eval::models::model_dir("all-minilm-l6-v2", Some(work.path())).unwrap(),
        expected
    );
    let help = hyde_eval(&["models", "fetch", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("--cache-dir <DIR>"));
}
