//! Progress on a stderr that is not a terminal (a CI log): stage lines from the start,
//! then a plain heartbeat line per interval naming the stage and its elapsed time. The
//! interval is shortened with `HYDE_EVAL_PROGRESS_INTERVAL_MS` instead of waiting.

mod common;

/// `run` on datasets/devmem with stderr piped and a 1 ms heartbeat: its stderr.
fn run_stderr(extra: &[&str]) -> String {
    let output_dir = tempfile::tempdir().unwrap();
    let output = common::command()
        .args(["run", "--output-dir"])
        .arg(output_dir.path())
        .args(extra)
        .env("HYDE_EVAL_PROGRESS_INTERVAL_MS", "1")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stderr).unwrap()
}

/// Every heartbeat line names a stage whose line came before it, with the time in the
/// stage and since the start; a counted stage (embedding, retrieval) gives done/total
/// and the time left once 5% is done.
#[test]
fn heartbeat_lines_appear_on_a_non_terminal_stderr() {
    let stderr = run_stderr(&[]);
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[0].starts_with("hyde-eval: loading datasets/devmem ("),
        "{stderr}"
    );
    let mut stages: Vec<&str> = Vec::new();
    let mut heartbeats = 0;
    for line in &lines {
        let Some(text) = line.strip_prefix("hyde-eval: ") else {
            continue;
        };
        match stages
            .iter()
            .find(|stage| text.starts_with(&format!("{stage}: ")))
        {
            Some(stage) => {
                heartbeats += 1;
                let progress = &text[stage.len() + 2..];
                assert!(progress.ends_with(" s)"), "{line}");
                assert!(progress.contains(" s in stage"), "{line}");
                // Counted once the stage has set up its count; its first line may come
                // before that.
                let (first, _) = progress.split_once(' ').unwrap();
                if let Some((done, total)) = first.split_once('/') {
                    // Counted stages name their count: "retrieving 90 queries x ...",
                    // "embedding 220 facts".
                    assert_eq!(stage.split(' ').nth(1), Some(total), "{line}");
                    let done: u64 = done.parse().unwrap();
                    let total: u64 = total.parse().unwrap();
                    assert!(done <= total, "{line}");
                    // The estimate waits for 5% of the units (at least one).
                    if done * 20 >= total && done > 0 {
                        assert!(progress.contains(" left ("), "{line}");
                    } else {
                        assert!(
                            progress.contains("time left estimated once 5% is done ("),
                            "{line}"
                        );
                    }
                }
            }
            None => {
                let (stage, elapsed) = text.rsplit_once(" (").unwrap_or_else(|| {
                    panic!("{line:?} is not a whole progress line in\n{stderr}")
                });
                assert!(elapsed.ends_with(" s)"), "{line}");
                stages.push(stage);
            }
        }
    }
    assert!(
        stages.iter().any(|stage| stage.starts_with("indexing ")),
        "{stderr}"
    );
    assert!(heartbeats > 0, "no heartbeat line in\n{stderr}");
}

/// `--quiet` prints no stage and no heartbeat line.
#[test]
fn quiet_prints_no_progress() {
    let stderr = run_stderr(&["--quiet"]);
    assert!(!stderr.contains("hyde-eval:"), "{stderr}");
}
