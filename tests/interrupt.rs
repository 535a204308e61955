//! Interruption: SIGINT or SIGTERM during a long `run` exits with 130 or 143, leaves no
//! temporary (`.partial-*`, `.previous-*`) entries and no half-written report, and the
//! next run over the same output directory succeeds. Each signal is sent when the run
//! reports (on stderr) that it has reached a stage, so where it lands does not depend
//! on how loaded the machine is.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

/// Entries of `output_dir` (recursively) whose names mark unfinished writes.
fn leftovers(output_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![output_dir.to_path_buf()];
    while let Some(directory) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains(".partial-") || name.contains(".previous-") {
                found.push(entry.path().display().to_string());
            }
            if entry.path().is_dir() {
                pending.push(entry.path());
            }
        }
    }
    found
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

#[test]
fn sigint_and_sigterm_exit_with_documented_codes_and_leave_no_partial_output() {
    let work = tempfile::tempdir().unwrap();
    let dataset = work.path().join("large");
    common::write_synthetic_dataset(&dataset, 5_000, 500);
    let output_dir = work.path().join("reports");
    let run = || {
        common::command()
            .args(["run", "--dataset"])
            .arg(&dataset)
            .arg("--output-dir")
            .arg(&output_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };

    // One complete run first: it leaves a report that an interrupted run must not damage.
    let complete = run().wait_with_output().unwrap();
    assert_eq!(
        complete.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&complete.stderr)
    );
    let report = output_dir.join("large/results.json");
    let complete_results = std::fs::read(&report).unwrap();

    let mut interrupted = 0;
    for (stage, (name, code)) in [
        ("hyde-eval: indexing", ("INT", 130)),
        ("hyde-eval: retrieving", ("TERM", 143)),
        ("hyde-eval: writing the report", ("TERM", 143)),
    ] {
        let mut child = run();
        // Read the stage lines until the one named, then signal.
        let mut lines = BufReader::new(child.stderr.take().unwrap());
        let mut stderr = String::new();
        let mut line = String::new();
        while lines.read_line(&mut line).unwrap() > 0 {
            stderr.push_str(&line);
            let reached = line.starts_with(stage);
            line.clear();
            if reached {
                signal(child.id(), name);
                break;
            }
        }
        lines.read_to_string(&mut stderr).unwrap();
        let status = child.wait().unwrap();
        match status.code() {
            Some(0) => {} // finished before the signal arrived
            Some(got) => {
                assert_eq!(got, code, "SIG{name}: {stderr}");
                assert!(
                    stderr.contains(&format!("interrupted by SIG{name}")),
                    "{stderr}"
                );
                interrupted += 1;
            }
            None => panic!("SIG{name} killed the process without the handler: {stderr}"),
        }
        assert_eq!(leftovers(&output_dir), Vec::<String>::new());
        // Whatever is in place is a complete report of the same inputs.
        assert_eq!(std::fs::read(&report).unwrap(), complete_results);
    }
    assert!(
        interrupted >= 2,
        "only {interrupted} of 3 signals arrived before the run ended"
    );

    // The next run over the same directory succeeds and writes the same results.
    let output = run().wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(std::fs::read(&report).unwrap(), complete_results);
}
