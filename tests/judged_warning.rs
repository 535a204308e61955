//! The judged@k warning is said where it helps: once, on stderr (never in the table on
//! stdout), with bpref beside judged@k, silenced by `-q`, and not at all for a dataset
//! whose `dataset.toml` declares its judgments complete (the bundled devmem among them).

mod common;

use std::path::Path;
use std::process::Output;

/// `hyde-eval run --no-report --dataset DATASET ARGS`.
fn run(dataset: &Path, args: &[&str]) -> Output {
    let output = common::command()
        .args(["run", "--no-report", "--dataset"])
        .arg(dataset)
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// tiny judges one of its two facts per query. `dense` ranks both facts for each query
/// (cosine scores every fact), so one of its top 2 is judged: judged@2 = 1/2. Every
/// other configuration returns only the fact the query's words match, the judged one:
/// judged@2 = 1/1. dense still ranks each judged relevant fact above every judged
/// non-relevant one (there are none), so its bpref is 1.
const WARNING: &str = "warning: judged@2 is below 0.8 for 1 of 10 configurations:";
const DENSE: &str = "\n  dense: judged@2 0.50, bpref 1.0000\n";

#[test]
fn the_judged_warning_is_printed_once_on_stderr_with_bpref() {
    let work = tempfile::tempdir().unwrap();
    let dataset = common::tiny_copy(work.path(), "tiny");
    let output = run(&dataset, &[]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(stderr.matches(WARNING).count(), 1, "{stderr}");
    assert!(stderr.contains(DENSE), "{stderr}");
    assert!(
        !stdout.contains("judged@"),
        "the table holds no warning: {stdout}"
    );

    // The same with a JSON document on stdout: the warning stays on stderr.
    let output = run(&dataset, &["--format", "json"]);
    serde_json::from_slice::<serde_json::Value>(&output.stdout).expect("stdout is JSON");
    assert_eq!(text(&output.stderr).matches(WARNING).count(), 1);

    // -q: nothing on stderr.
    let output = run(&dataset, &["-q"]);
    assert_eq!(text(&output.stderr), "");

    // The Markdown summary carries it once, with the same figures.
    let output = run(&dataset, &["-q", "--format", "markdown"]);
    let markdown = text(&output.stdout);
    assert_eq!(
        markdown
            .matches("> **Warning:** judged@2 is below 0.8")
            .count(),
        1,
        "{markdown}"
    );
    assert!(
        markdown.contains("dense: judged@2 0.50, bpref 1.0000."),
        "{markdown}"
    );
}

#[test]
fn a_dataset_declaring_complete_judgments_gets_no_warning() {
    let work = tempfile::tempdir().unwrap();
    let dataset = common::tiny_copy(work.path(), "tiny");
    let manifest = dataset.join("dataset.toml");
    let mut text_of_manifest = std::fs::read_to_string(&manifest).unwrap();
    text_of_manifest.push_str("judgments_complete = true\n");
    std::fs::write(&manifest, text_of_manifest).unwrap();
    let output = run(&dataset, &["--format", "json"]);
    let stderr = text(&output.stderr);
    assert!(!stderr.contains("judged@"), "{stderr}");
    let results: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(results["dataset"]["judgments_complete"], true);
    let output = run(&dataset, &["--format", "markdown"]);
    assert!(!text(&output.stdout).contains("Warning"));

    // The bundled devmem declares it: its first run warns about nothing.
    let output = run(&common::repo_path("datasets/devmem"), &[]);
    let stderr = text(&output.stderr);
    assert!(!stderr.contains("warning"), "{stderr}");
}
