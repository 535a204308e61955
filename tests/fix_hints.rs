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
