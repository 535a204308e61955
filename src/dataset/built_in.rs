//! The datasets built into the binary (devmem, scenarios, chatcli-ab): the repository's
//! `datasets/NAME` files, included byte for byte at build time (`include_bytes!`), so that a
//! command started anywhere, after `cargo install`, evaluates them, and so that a
//! built-in set loads exactly as its directory does (same content hash, same results).
//!
//! Where a dataset named on the command line is ([`locate`]): `built-in:NAME` is always
//! the built-in set; any other name is a path, read as a directory when one exists there,
//! else, when it is a built-in set's name (`--dataset scenarios`), that set. With no
//! dataset named at all, commands read [`crate::settings::DEFAULT_DATASET`] where that
//! directory exists, else the built-in devmem. A built-in set has no directory: nothing
//! on disk is its input, and `record` without `--output` refuses it, naming
//! `dataset export`, which writes one out ([`export`]).

use std::path::{Path, PathBuf};

use crate::error::{Error, Problem};
use crate::write_policy::{self, DirectoryBuild, DirectoryKind, Policy};

/// One dataset built into the binary: its name and its files (name, bytes).
#[derive(Debug)]
pub struct BuiltIn {
    pub name: &'static str,
    pub files: &'static [(&'static str, &'static [u8])],
}

/// The datasets built into the binary: each one's name and files (name, bytes), every
/// regular file of the repository's `datasets/NAME`, in name order.
pub static BUILT_IN: &[BuiltIn] = &[
    BuiltIn {
        name: "devmem",
        files: &[
            (
                "dataset.toml",
                include_bytes!("../../datasets/devmem/dataset.toml"),
            ),
            (
                "facts.jsonl",
                include_bytes!("../../datasets/devmem/facts.jsonl"),
            ),
            (
                "hypotheses.jsonl",
                include_bytes!("../../datasets/devmem/hypotheses.jsonl"),
            ),
            (
                "qrels.tsv",
                include_bytes!("../../datasets/devmem/qrels.tsv"),
            ),
            (
                "queries.jsonl",
                include_bytes!("../../datasets/devmem/queries.jsonl"),
            ),
        ],
    },
    BuiltIn {
        name: "scenarios",
        files: &[
            (
                "concepts.toml",
                include_bytes!("../../datasets/scenarios/concepts.toml"),
            ),
            (
                "dataset.toml",
                include_bytes!("../../datasets/scenarios/dataset.toml"),
            ),
            (
                "facts.jsonl",
                include_bytes!("../../datasets/scenarios/facts.jsonl"),
            ),
            (
                "hypotheses.jsonl",
                include_bytes!("../../datasets/scenarios/hypotheses.jsonl"),
            ),
            (
                "qrels.tsv",
                include_bytes!("../../datasets/scenarios/qrels.tsv"),
            ),
            (
                "queries.jsonl",
                include_bytes!("../../datasets/scenarios/queries.jsonl"),
            ),
        ],
    },
    BuiltIn {
        name: "chatcli-ab",
        files: &[
            (
                "concepts.toml",
                include_bytes!("../../datasets/chatcli-ab/concepts.toml"),
            ),
            (
                "dataset.toml",
                include_bytes!("../../datasets/chatcli-ab/dataset.toml"),
            ),
            (
                "facts.jsonl",
                include_bytes!("../../datasets/chatcli-ab/facts.jsonl"),
            ),
            (
                "qrels.tsv",
                include_bytes!("../../datasets/chatcli-ab/qrels.tsv"),
            ),
            (
                "queries.jsonl",
                include_bytes!("../../datasets/chatcli-ab/queries.jsonl"),
            ),
        ],
    },
];

/// The spelling that names a built-in set whatever directories exist: `built-in:devmem`.
pub const PREFIX: &str = "built-in:";

impl BuiltIn {
    /// The built-in set called `name`.
    pub fn named(name: &str) -> Option<&'static BuiltIn> {
        BUILT_IN.iter().find(|built_in| built_in.name == name)
    }

    /// Every built-in set's name.
    pub fn names() -> Vec<&'static str> {
        BUILT_IN.iter().map(|built_in| built_in.name).collect()
    }

    /// The bytes of the file called `name`, when the set has one.
    pub fn file(&self, name: &str) -> Option<&'static [u8]> {
        self.files
            .iter()
            .find(|(file, _)| *file == name)
            .map(|(_, bytes)| *bytes)
    }

    /// How the set is named in paths and messages: `built-in:devmem`.
    pub fn label(&self) -> PathBuf {
        PathBuf::from(format!("{PREFIX}{}", self.name))
    }
}

/// Whether `path` is spelled `built-in:NAME`, naming a built-in set whatever
/// directories exist.
pub fn is_prefixed(path: &Path) -> bool {
    path.to_str().is_some_and(|text| text.starts_with(PREFIX))
}

/// The built-in set called `name`; any other name is refused (exit code 2), naming the
/// built-in sets.
pub fn named_or_refused(name: &str) -> Result<&'static BuiltIn, Error> {
    BuiltIn::named(name).ok_or_else(|| {
        let names = BuiltIn::names();
        Error::Usage(format!(
            "no built-in dataset {name:?}{}; the built-in datasets are {}",
            crate::hints::suggestion(name, &names),
            names.join(", ")
        ))
    })
}

/// Writes the files of `built_in` into the new directory `destination`, byte for byte,
/// as one step (refused where a non-empty directory is, unless `policy` forces it).
pub fn export(built_in: &BuiltIn, destination: &Path, policy: Policy) -> Result<PathBuf, Error> {
    let (parent, name) = write_policy::split_directory(destination)?;
    let build = DirectoryBuild::start(&parent, &name, policy, DirectoryKind::Dataset)?;
    let root = build.root();
    for (file, bytes) in built_in.files {
        let path = root.join(file);
        std::fs::write(&path, bytes).map_err(|source| Error::Write {
            path: destination.join(file),
            source,
        })?;
    }
    build.swap_in(policy, &|| Ok(()))
}

/// Where a dataset is.
#[derive(Debug, Clone)]
pub enum Location {
    Directory(PathBuf),
    BuiltIn(&'static BuiltIn),
}

impl std::fmt::Display for Location {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Directory(path) => write!(formatter, "{}", path.display()),
            Location::BuiltIn(built_in) => write!(formatter, "built-in {}", built_in.name),
        }
    }
}

/// Where the dataset named `path` is, read in hyde-eval's own layout when `native` (a
/// built-in set is in no other): `built-in:NAME` is the built-in set; a path where
/// something exists, or any path read in another format, is a directory; a name with no
/// directory of its own that is a built-in set's is that set. Anything else is refused,
/// naming the built-in sets.
pub fn locate(path: &Path, native: bool) -> Result<Location, Error> {
    let text = path.to_str().unwrap_or_default();
    if let Some(name) = text.strip_prefix(PREFIX) {
        return BuiltIn::named(name).map(Location::BuiltIn).ok_or_else(|| {
            let names = BuiltIn::names();
            Error::problem(
                Problem::new(
                    path,
                    None,
                    format!(
                        "no built-in dataset {name:?}{}",
                        crate::hints::suggestion(name, &names)
                    ),
                )
                .with_hint(format!("the built-in datasets are {}", names.join(", "))),
            )
        });
    }
    if !native || std::fs::symlink_metadata(path).is_ok() {
        return Ok(Location::Directory(path.to_path_buf()));
    }
    if let Some(built_in) = BuiltIn::named(text) {
        return Ok(Location::BuiltIn(built_in));
    }
    Err(Error::problem(
        Problem::new(path, None, "no such dataset directory").with_hint(format!(
            "pass --dataset DIR, or the name of a dataset built into hyde-eval: {}",
            BuiltIn::names().join(", ")
        )),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each built-in set holds every file of its directory, byte for byte: a file added
    /// to the directory and not to [`BUILT_IN`] fails here.
    #[test]
    fn built_in_sets_hold_their_directories_files() {
        for built_in in BUILT_IN {
            let directory = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("datasets")
                .join(built_in.name);
            let mut on_disk: Vec<String> = std::fs::read_dir(&directory)
                .unwrap()
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            on_disk.sort();
            let built: Vec<&str> = built_in.files.iter().map(|(name, _)| *name).collect();
            assert_eq!(built, on_disk, "{}", built_in.name);
            for (name, bytes) in built_in.files {
                assert_eq!(
                    *bytes,
                    std::fs::read(directory.join(name)).unwrap(),
                    "{}/{name}",
                    built_in.name
                );
            }
        }
        assert_eq!(BuiltIn::names(), ["devmem", "scenarios", "chatcli-ab"]);
    }

    #[test]
    fn a_directory_comes_before_a_built_in_name() {
        let work = tempfile::tempdir().unwrap();
        let directory = work.path().join("scenarios");
        std::fs::create_dir(&directory).unwrap();
        assert!(matches!(
            locate(&directory, true),
            Ok(Location::Directory(path)) if path == directory
        ));
        assert!(matches!(
            locate(Path::new("built-in:scenarios"), true),
            Ok(Location::BuiltIn(built_in)) if built_in.name == "scenarios"
        ));
        // A name read in another format is a path: built-in sets are native.
        assert!(matches!(
            locate(Path::new("scenarios"), false),
            Ok(Location::Directory(_))
        ));
        let message = locate(Path::new("built-in:devmen"), true)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("no built-in dataset \"devmen\" (did you mean \"devmem\"?)"),
            "{message}"
        );
        let message = locate(&work.path().join("absent"), true)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("no such dataset directory")
                && message.contains("devmem, scenarios, chatcli-ab"),
            "{message}"
        );
    }
}
