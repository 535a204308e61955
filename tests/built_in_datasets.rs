//! The datasets built into the binary, through the binary started outside the
//! repository (as after `cargo install`): `run` with no `--dataset` evaluates the
//! built-in devmem and says so, with results byte-identical to a run of
//! `datasets/devmem`; `--dataset scenarios` names the other built-in set; `dataset
//! export` writes a set out byte for byte and refuses a non-empty directory; shards of
//! a built-in set merge anywhere; `record` refuses to write into a built-in set.

mod common;

use std::path::Path;
use std::process::Output;

/// Runs hyde-eval with `args` in `directory`, after checking the exit code.
fn hyde_eval_in(directory: &Path, args: &[&str], code: i32) -> Output {
    let output = common::command()
        .current_dir(directory)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(code),
        "hyde-eval {} in {}\nstdout: {}\nstderr: {}",
        args.join(" "),
        directory.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The files under `directory` (relative, sorted), with their bytes; `timings.json`
/// (wall-clock times) left out.
fn files_of(directory: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.file_name().unwrap() != "timings.json" {
                let relative = path.strip_prefix(directory).unwrap();
                files.push((
                    relative.display().to_string(),
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    files.sort();
    files
}

fn assert_same_files(left: &Path, right: &Path) {
    let (left_files, right_files) = (files_of(left), files_of(right));
    let names = |files: &[(String, Vec<u8>)]| {
        files
            .iter()
            .map(|(name, _)| name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&left_files), names(&right_files));
    assert!(left_files.iter().any(|(name, _)| name == "results.json"));
    for ((name, left_bytes), (_, right_bytes)) in left_files.iter().zip(&right_files) {
        assert!(
            left_bytes == right_bytes,
            "{name} differs between {} and {}",
            left.display(),
            right.display()
        );
    }
}

/// The failure: after `cargo install`, `hyde-eval run` started anywhere but the
/// repository stopped at `datasets/devmem: no such dataset directory`.
#[test]
fn run_outside_the_repository_evaluates_the_built_in_devmem() {
    let work = tempfile::tempdir().unwrap();
    let outside = work.path().join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    let built_in_reports = work.path().join("built-in");
    let directory_reports = work.path().join("directory");
    let output = hyde_eval_in(
        &outside,
        &["run", "--output-dir", text(&built_in_reports)],
        0,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.lines().next(),
        Some("hyde-eval: dataset: built-in devmem (no ./datasets/devmem here; `hyde-eval dataset export devmem DIR` writes it out)"),
        "{stderr}"
    );
    // In the repository the directory is read, and nothing is said about it.
    let output = hyde_eval_in(
        &common::repo_path(""),
        &["run", "--output-dir", text(&directory_reports)],
        0,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("built-in"), "{stderr}");
    assert!(stderr.contains("loading datasets/devmem"), "{stderr}");
    assert_same_files(
        &built_in_reports.join("devmem"),
        &directory_reports.join("devmem"),
    );
}

/// `--dataset scenarios`, where no such directory is, is the built-in scenarios, which
/// evaluates as `datasets/scenarios` does; a name that is neither is refused, naming the
/// built-in sets.
#[test]
fn a_bare_name_is_a_built_in_set_where_no_directory_has_it() {
    let work = tempfile::tempdir().unwrap();
    let built_in_reports = work.path().join("built-in");
    let directory_reports = work.path().join("directory");
    hyde_eval_in(
        work.path(),
        &[
            "run",
            "--dataset",
            "scenarios",
            "--output-dir",
            text(&built_in_reports),
        ],
        0,
    );
    hyde_eval_in(
        &common::repo_path(""),
        &[
            "run",
            "--dataset",
            "datasets/scenarios",
            "--output-dir",
            text(&directory_reports),
        ],
        0,
    );
    assert_same_files(
        &built_in_reports.join("scenarios"),
        &directory_reports.join("scenarios"),
    );
    let output = hyde_eval_in(work.path(), &["run", "--dataset", "scenaros"], 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("scenaros: no such dataset directory")
            && stderr.contains("devmem, scenarios, chatcli-ab"),
        "{stderr}"
    );
}

/// `dataset export` writes each built-in set's files byte for byte (the start of a
/// team's own set, which then validates and evaluates as a directory), refuses a
/// non-empty directory unless `--force`, and refuses an unknown name.
#[test]
fn export_writes_a_built_in_set_out() {
    let work = tempfile::tempdir().unwrap();
    for name in ["devmem", "scenarios", "chatcli-ab"] {
        let destination = work.path().join(format!("mine-{name}"));
        hyde_eval_in(
            work.path(),
            &["dataset", "export", name, text(&destination)],
            0,
        );
        assert_eq!(
            files_of(&destination),
            files_of(&common::repo_path(&format!("datasets/{name}"))),
            "{name}"
        );
    }
    let destination = work.path().join("mine-devmem");
    std::fs::write(destination.join("qrels.tsv"), "edited\n").unwrap();
    let output = hyde_eval_in(
        work.path(),
        &["dataset", "export", "devmem", text(&destination)],
        2,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("exists and is not empty"), "{stderr}");
    assert_eq!(
        std::fs::read(destination.join("qrels.tsv")).unwrap(),
        b"edited\n"
    );
    hyde_eval_in(
        work.path(),
        &["dataset", "export", "devmem", text(&destination), "--force"],
        0,
    );
    assert_eq!(
        files_of(&destination),
        files_of(&common::repo_path("datasets/devmem"))
    );
    let output = hyde_eval_in(work.path(), &["dataset", "export", "devmen", "x"], 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no built-in dataset \"devmen\" (did you mean \"devmem\"?)"),
        "{stderr}"
    );
    assert!(!work.path().join("x").exists());
}

/// Shards of the built-in devmem record it as `built-in:devmem`, so `merge`, started
/// anywhere, re-reads its qrels and gives the unsharded run's files.
#[test]
fn shards_of_a_built_in_set_merge_anywhere() {
    let work = tempfile::tempdir().unwrap();
    let shards = work.path().join("shards");
    for shard in ["1/2", "2/2"] {
        hyde_eval_in(
            work.path(),
            &["run", "-q", "--shard", shard, "--output-dir", text(&shards)],
            0,
        );
    }
    let shard_file =
        std::fs::read_to_string(shards.join("devmem-shard-1-of-2/shard.json")).unwrap();
    let shard: serde_json::Value = serde_json::from_str(&shard_file).unwrap();
    assert_eq!(shard["dataset_source"]["path"], "built-in:devmem");
    let elsewhere = work.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let merged = work.path().join("merged");
    let whole = work.path().join("whole");
    hyde_eval_in(
        &elsewhere,
        &[
            "merge",
            "-q",
            text(&shards.join("devmem-shard-1-of-2")),
            text(&shards.join("devmem-shard-2-of-2")),
            "--output-dir",
            text(&merged),
        ],
        0,
    );
    hyde_eval_in(
        &common::repo_path(""),
        &["run", "-q", "--output-dir", text(&whole)],
        0,
    );
    assert_same_files(&merged.join("devmem"), &whole.join("devmem"));
}

/// `record` without `--output` writes into the dataset's directory, which a built-in set
/// has not: refused before any request, naming `dataset export`.
#[test]
fn record_refuses_to_write_into_a_built_in_set() {
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("hyde-eval.toml");
    std::fs::write(
        &config,
        "[generators.llm]\nkind = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let output = hyde_eval_in(
        work.path(),
        &["record", "--config", text(&config), "--generator", "llm"],
        2,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the built-in devmem has no directory to record into")
            && stderr.contains("hyde-eval dataset export devmem DIR"),
        "{stderr}"
    );
    assert!(!work.path().join("built-in:devmem").exists());
    assert!(!work.path().join("datasets").exists());
}
