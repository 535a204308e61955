//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::PathBuf;
use std::process::{Command, Output};

/// `../shared/datasets` beside the repository (or `$HYDE_EVAL_SHARED/datasets`), when
/// present. Tests that need it print why they skip and return early.
pub fn shared_datasets(test: &str) -> Option<PathBuf> {
    let root = std::env::var_os("HYDE_EVAL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("shared")
        });
    let datasets = root.join("datasets");
    if datasets.is_dir() {
        Some(datasets)
    } else {
        eprintln!(
            "SKIPPED {test}: {} not found (set HYDE_EVAL_SHARED to the shared/ folder)",
            datasets.display()
        );
        None
    }
}

/// Path of a file in the repository.
pub fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Runs the hyde-eval binary in the repository directory.
pub fn hyde_eval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hyde-eval"))
        .current_dir(repo_path(""))
        .args(args)
        .output()
        .unwrap()
}
