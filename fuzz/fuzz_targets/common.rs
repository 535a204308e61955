//! Shared by the fuzz targets: a directory per process holding a valid collection in
//! which one file (chosen by the input's first byte) is replaced by the rest of the
//! input, so every file of a format gets fuzzed while the others stay valid.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The per-process scratch directory, under the system temp dir (`TMPDIR`), which
/// `scripts/fuzz.sh` points at a directory of its own and removes afterwards.
pub fn scratch(name: &str) -> &'static Path {
    static DIRECTORY: OnceLock<PathBuf> = OnceLock::new();
    DIRECTORY.get_or_init(|| {
        let path = std::env::temp_dir().join(format!(
            "hyde-eval-fuzz-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path).expect("scratch directory");
        path
    })
}

/// Writes `files` (relative path, valid content) into `directory`, with the file picked
/// by `data[0]` replaced by `data[1..]`.
pub fn write_with_one_fuzzed(directory: &Path, files: &[(&str, &[u8])], data: &[u8]) {
    let Some((&selector, fuzzed)) = data.split_first() else {
        return;
    };
    let chosen = usize::from(selector) % files.len();
    for (index, (relative, valid)) in files.iter().enumerate() {
        let path = directory.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent directory");
        }
        let content = if index == chosen { fuzzed } else { valid };
        std::fs::write(&path, content).expect("scratch file");
    }
}
