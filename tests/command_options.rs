//! Each command accepts only the options it uses (clap refuses the rest before any
//! work), `-q` is quiet, `dataset stats` takes `--format`, and data goes to stdout while
//! notes (stage lines, where reports went) go to stderr.

mod common;

use common::hyde_eval;

#[test]
fn options_a_command_does_not_use_are_refused() {
    for (args, option) in [
        (vec!["sweep", "--html"], "--html"),
        (vec!["record", "--html"], "--html"),
        (vec!["baseline", "update", "--html"], "--html"),
        (
            vec!["dataset", "validate", "datasets/devmem", "--json"],
            "--json",
        ),
    ] {
        let output = hyde_eval(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("unexpected argument '{option}'")),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn dataset_commands_take_q_and_stats_takes_format() {
    let output = hyde_eval(&["dataset", "validate", "datasets/devmem", "-q"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    assert!(String::from_utf8_lossy(&output.stdout).contains("valid (220 facts, 90 queries"));
    let json = hyde_eval(&[
        "dataset",
        "stats",
        "datasets/devmem",
        "-q",
        "--format",
        "json",
    ]);
    assert_eq!(json.status.code(), Some(0));
    let stats: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(stats["facts"], 220, "{stats}");
    let shorthand = hyde_eval(&["dataset", "stats", "datasets/devmem", "-q", "--json"]);
    assert_eq!(shorthand.stdout, json.stdout);
    let table = hyde_eval(&["dataset", "stats", "datasets/devmem", "-q"]);
    assert!(serde_json::from_slice::<serde_json::Value>(&table.stdout).is_err());
}

#[test]
fn data_goes_to_stdout_and_notes_to_stderr() {
    let output_dir = tempfile::tempdir().unwrap();
    let output = common::command()
        .args(["run", "--configurations", "keyword", "--output-dir"])
        .arg(output_dir.path())
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stdout.contains("│ keyword "), "{stdout}");
    assert!(!stdout.contains("hyde-eval:"), "{stdout}");
    assert!(!stdout.contains("written to"), "{stdout}");
    assert!(stderr.contains("hyde-eval: "), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "reports written to {}",
            output_dir.path().join("devmem").display()
        )),
        "{stderr}"
    );
    // Quiet: nothing on stderr at all.
    let quiet = common::command()
        .args(["run", "-q", "--configurations", "keyword", "--output-dir"])
        .arg(output_dir.path())
        .output()
        .unwrap();
    assert_eq!(quiet.status.code(), Some(0));
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}
