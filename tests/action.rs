//! The GitHub Action's steps (action.yml), run here in bash as the runner runs them: each
//! step's script in scripts/action/ with the environment the runner gives it, a fake
//! `gh` on PATH standing in for GitHub's API (it answers from files, records its calls,
//! or fails as a fork's read-only token makes it fail), and the hyde-eval this test
//! builds. Written from the failures: a cache key that never changes, a comment that
//! fails the job on a fork, a prebuilt binary that is corrupt or missing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A runner's files for one step: GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STEP_SUMMARY and
/// RUNNER_TEMP, and a directory of fake commands put first on PATH.
struct Runner {
    directory: tempfile::TempDir,
}

impl Runner {
    fn new() -> Runner {
        let runner = Runner {
            directory: tempfile::tempdir().unwrap(),
        };
        for directory in ["temp", "fake-bin"] {
            std::fs::create_dir(runner.path(directory)).unwrap();
        }
        runner
    }

    fn path(&self, name: &str) -> PathBuf {
        self.directory.path().join(name)
    }

    /// A fake command `name` on PATH running `script` (bash).
    fn fake(&self, name: &str, script: &str) {
        let path = self.path("fake-bin").join(name);
        std::fs::write(&path, format!("#!/usr/bin/env bash\n{script}\n")).unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&path, permissions).unwrap();
    }

    /// Runs the step script `scripts/action/NAME` with `env`, in `directory`.
    fn step(&self, name: &str, env: &[(&str, &str)], directory: &Path) -> Output {
        let path = format!(
            "{}:{}:{}",
            self.path("fake-bin").display(),
            binary_directory().display(),
            std::env::var("PATH").unwrap()
        );
        Command::new("bash")
            .arg(common::repo_path("scripts/action").join(name))
            .current_dir(directory)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.directory.path())
            .env("GITHUB_ACTION_PATH", common::repo_path(""))
            .env("GITHUB_OUTPUT", self.path("output"))
            .env("GITHUB_PATH", self.path("path"))
            .env("GITHUB_STEP_SUMMARY", self.path("summary.md"))
            .env("RUNNER_TEMP", self.path("temp"))
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }

    /// What the steps wrote to GITHUB_OUTPUT, as `name=value` lines.
    fn outputs(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("output"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// The directory of the hyde-eval binary this test runs.
fn binary_directory() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_hyde-eval"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_success(output: &Output) {
    assert!(
        output.status.success(),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

/// The crate's version, read independently of the script.
fn crate_version() -> String {
    let manifest = std::fs::read_to_string(common::repo_path("Cargo.toml")).unwrap();
    let table: toml::Table = manifest.parse().unwrap();
    table["package"]["version"].as_str().unwrap().to_owned()
}

/// The cache key and version come from the action's own files, and the key changes when
/// its sources do (`hashFiles` reads only the caller's workspace, so a key built with it
/// on the action's Cargo.lock never changed).
#[test]
fn the_version_step_keys_the_cache_on_the_actions_sources() {
    let runner = Runner::new();
    assert_success(&runner.step("version.sh", &[], runner.directory.path()));
    let version = crate_version();
    let outputs = runner.outputs();
    assert_eq!(outputs[0], format!("version={version}"));
    let key = outputs[1].strip_prefix("key=").unwrap().to_owned();
    assert!(key.starts_with(&format!("{version}-")), "{key}");
    assert_eq!(key.len(), version.len() + 1 + 16, "{key}");

    // A copy of the action whose source then changes gets another key.
    let copy = runner.path("action");
    for file in ["Cargo.toml", "Cargo.lock"] {
        std::fs::create_dir_all(&copy).unwrap();
        std::fs::copy(common::repo_path(file), copy.join(file)).unwrap();
    }
    std::fs::create_dir_all(copy.join("src")).unwrap();
    std::fs::write(copy.join("src/main.rs"), "fn main() {}\n").unwrap();
    let key_of = |runner: &Runner| {
        std::fs::remove_file(runner.path("output")).ok();
        let output = Command::new("bash")
            .arg(common::repo_path("scripts/action/version.sh"))
            .env("GITHUB_ACTION_PATH", &copy)
            .env("GITHUB_OUTPUT", runner.path("output"))
            .output()
            .unwrap();
        assert_success(&output);
        runner.outputs()[1].clone()
    };
    let before = key_of(&runner);
    assert_eq!(key_of(&runner), before, "the same sources, the same key");
    std::fs::write(copy.join("src/main.rs"), "fn main() { println!(); }\n").unwrap();
    assert_ne!(key_of(&runner), before);
}

/// The prebuilt binary is installed from the release when there is one (checked against
/// its .sha256), refused when corrupt, and the build follows when there is none.
#[test]
fn the_prebuilt_binary_is_installed_verified_or_built_instead() {
    let runner = Runner::new();
    let version = crate_version();
    let release = runner.path("release");
    let package = Command::new("bash")
        .arg(common::repo_path("scripts/action/package.sh"))
        .args([
            env!("CARGO_BIN_EXE_hyde-eval"),
            &version,
            "x86_64-unknown-linux-gnu",
            release.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_success(&package);
    // `gh release download TAG --repo R --pattern A --pattern B --dir D`, from `release`,
    // recording the call.
    runner.fake(
        "gh",
        &format!(
            r#"echo "$@" >> "{calls}"
[ -d "{release}" ] || {{ echo "release not found" >&2; exit 1; }}
dir=""; patterns=()
while [ $# -gt 0 ]; do
  case "$1" in --dir) dir=$2; shift 2;; --pattern) patterns+=("$2"); shift 2;; *) shift;; esac
done
for pattern in "${{patterns[@]}}"; do cp "{release}/$pattern" "$dir/" || exit 1; done"#,
            calls = runner.path("gh-calls").display(),
            release = release.display()
        ),
    );
    let env = [
        ("INSTALL", "auto"),
        ("VERSION", version.as_str()),
        ("REPOSITORY", "owner/hyde-eval"),
    ];
    let step = runner.step("install-prebuilt.sh", &env, runner.directory.path());
    assert_success(&step);
    assert_eq!(runner.outputs(), ["installed=true"]);
    let calls = std::fs::read_to_string(runner.path("gh-calls")).unwrap();
    assert!(
        calls.starts_with(&format!(
            "release download v{version} --repo owner/hyde-eval --pattern hyde-eval-v{version}-x86_64-unknown-linux-gnu.tar.gz"
        )),
        "{calls}"
    );
    let bin = std::fs::read_to_string(runner.path("path")).unwrap();
    let installed = Path::new(bin.trim()).join("hyde-eval");
    let ran = Command::new(&installed).arg("--version").output().unwrap();
    assert_eq!(text(&ran.stdout).trim(), format!("hyde-eval {version}"));

    // A corrupt asset is refused, whatever the mode.
    let asset = release.join(format!(
        "hyde-eval-v{version}-x86_64-unknown-linux-gnu.tar.gz"
    ));
    let mut bytes = std::fs::read(&asset).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&asset, bytes).unwrap();
    let step = runner.step("install-prebuilt.sh", &env, runner.directory.path());
    assert_eq!(step.status.code(), Some(1));
    assert!(
        text(&step.stderr).contains("does not match its .sha256"),
        "{}",
        text(&step.stderr)
    );

    // No release: auto goes on to build, prebuilt fails, build never asks.
    std::fs::remove_dir_all(&release).unwrap();
    std::fs::remove_file(runner.path("output")).unwrap();
    let step = runner.step("install-prebuilt.sh", &env, runner.directory.path());
    assert_success(&step);
    assert_eq!(runner.outputs(), ["installed=false"]);
    assert!(
        text(&step.stdout).contains("::notice::no release asset"),
        "{}",
        text(&step.stdout)
    );
    let prebuilt = [("INSTALL", "prebuilt"), env[1], env[2]];
    let step = runner.step("install-prebuilt.sh", &prebuilt, runner.directory.path());
    assert_eq!(step.status.code(), Some(1));
    std::fs::remove_file(runner.path("gh-calls")).unwrap();
    let build = [("INSTALL", "build"), env[1], env[2]];
    assert_success(&runner.step("install-prebuilt.sh", &build, runner.directory.path()));
    assert!(
        !runner.path("gh-calls").exists(),
        "build mode asked for a release"
    );
}

/// The gate step writes the summary, keeps hyde-eval's exit code as the step's output
/// (the last step fails with it) and passes the extra arguments word by word.
#[test]
fn the_gate_step_records_the_verdict_and_the_summary() {
    let runner = Runner::new();
    let env = [
        ("BASELINE", "reports/baseline.json"),
        ("MAX_DROP", "ndcg@10=0,recall@10=0,mrr=0"),
        ("DATASET", ""),
        ("EXTRA_ARGS", ""),
    ];
    let step = runner.step("gate.sh", &env, &common::repo_path(""));
    assert_success(&step);
    assert_eq!(runner.outputs(), ["exit-code=0"]);
    let summary = std::fs::read_to_string(runner.path("summary.md")).unwrap();
    assert!(summary.contains("hyde-eval gate: PASS"), "{summary}");
    let comment = std::fs::read_to_string(runner.path("temp/hyde-eval-gate.md")).unwrap();
    assert!(comment.contains("hyde-eval gate: PASS"), "{comment}");

    // A floor no configuration reaches: the gate fails, the step records 1 and succeeds
    // (so the comment can still be posted).
    std::fs::remove_file(runner.path("output")).unwrap();
    let env = [
        env[0],
        env[1],
        ("DATASET", "datasets/devmem"),
        ("EXTRA_ARGS", "--min mrr=0.99 --configurations bm25,dense"),
    ];
    let step = runner.step("gate.sh", &env, &common::repo_path(""));
    assert_success(&step);
    assert_eq!(runner.outputs(), ["exit-code=1"]);
    let comment = std::fs::read_to_string(runner.path("temp/hyde-eval-gate.md")).unwrap();
    assert!(comment.contains("hyde-eval gate: REGRESSION"), "{comment}");
}

/// The comment is posted, then updated in place; on a fork's pull request, or when the
/// token may not comment, the step says so and succeeds.
#[test]
fn the_comment_step_never_fails_the_job() {
    let runner = Runner::new();
    std::fs::write(runner.path("temp/hyde-eval-gate.md"), "gate passed\n").unwrap();
    let calls = runner.path("gh-calls");
    let existing = runner.path("existing-id");
    // Lists the comments (the id in `existing-id`, if any), records every call.
    runner.fake(
        "gh",
        &format!(
            r#"echo "$@" >> "{calls}"
case "$*" in *--paginate*) cat "{existing}" 2>/dev/null || true;; esac"#,
            calls = calls.display(),
            existing = existing.display()
        ),
    );
    let env = [
        ("PR", "7"),
        ("REPOSITORY", "owner/app"),
        ("HEAD_REPOSITORY", "owner/app"),
    ];
    assert_success(&runner.step("comment.sh", &env, runner.directory.path()));
    let recorded = std::fs::read_to_string(&calls).unwrap();
    assert!(
        recorded.contains("api --method POST repos/owner/app/issues/7/comments"),
        "{recorded}"
    );
    let body = std::fs::read_to_string(runner.path("temp/hyde-eval-comment.md")).unwrap();
    assert_eq!(body, "<!-- hyde-eval regression gate -->\ngate passed\n");
    std::fs::write(&existing, "4242\n").unwrap();
    std::fs::remove_file(&calls).unwrap();
    assert_success(&runner.step("comment.sh", &env, runner.directory.path()));
    let recorded = std::fs::read_to_string(&calls).unwrap();
    assert!(
        recorded.contains("api --method PATCH repos/owner/app/issues/comments/4242"),
        "{recorded}"
    );
    assert!(!recorded.contains("POST"), "{recorded}");

    // A pull request from a fork: no call at all, a notice, success.
    std::fs::remove_file(&calls).unwrap();
    let fork = [env[0], env[1], ("HEAD_REPOSITORY", "someone/app")];
    let step = runner.step("comment.sh", &fork, runner.directory.path());
    assert_success(&step);
    assert!(text(&step.stdout).contains("::notice::pull request from the fork someone/app"));
    assert!(!calls.exists());

    // A token that may not comment (HTTP 403): a warning, success.
    runner.fake(
        "gh",
        r#"echo "gh: Resource not accessible by integration (HTTP 403)" >&2; exit 1"#,
    );
    let step = runner.step("comment.sh", &env, runner.directory.path());
    assert_success(&step);
    assert!(
        text(&step.stdout).contains("::warning::could not post the summary on pull request 7 (gh: Resource not accessible by integration (HTTP 403))"),
        "{}",
        text(&step.stdout)
    );
}

/// Every script step of action.yml runs a script that exists; the cache key is the
/// version step's.
#[test]
fn action_yml_runs_the_tested_scripts() {
    let action = std::fs::read_to_string(common::repo_path("action.yml")).unwrap();
    let scripts: Vec<&str> = action
        .lines()
        .filter_map(|line| line.trim().strip_prefix("run: bash \"$GITHUB_ACTION_PATH/"))
        .map(|rest| rest.trim_end_matches('"'))
        .collect();
    assert_eq!(
        scripts,
        [
            "scripts/action/version.sh",
            "scripts/action/install-prebuilt.sh",
            "scripts/action/gate.sh",
            "scripts/action/comment.sh"
        ]
    );
    for script in scripts {
        assert!(common::repo_path(script).is_file(), "{script}");
    }
    assert!(action.contains(
        "key: hyde-eval-${{ runner.os }}-${{ inputs.toolchain }}-${{ steps.version.outputs.key }}"
    ));
    assert!(
        !action.contains("hashFiles"),
        "hashFiles cannot read the action's files"
    );
}
