//! Opening the files a user hands hyde-eval: every input is a regular file, read with a
//! size bound where its format allows one.
//!
//! A FIFO would block the run, a device such as `/dev/zero` would grow without end, and a
//! directory where a file belongs hides a mistake; each is refused with its path and kind
//! (exit code 2) instead. Files are opened without blocking and checked on the open
//! descriptor, so what is checked is what is read. Paths a dataset names for itself are
//! resolved through symlinks before they are held against the dataset directory.
//!
//! Every file opened here is remembered ([`read_so_far`]), so the writers can refuse to
//! replace a directory that holds one of the run's own inputs.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::error::{Error, Problem};

/// The bound on small configuration-like files (`dataset.toml`, config files, concept
/// lexicons, stored JSON documents a person could edit): 64 MiB.
pub const SMALL_FILE_LIMIT: u64 = 64 << 20;

/// What sits at a path, without opening it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Missing,
    RegularFile,
    /// Anything else, named for the error message ("a directory", "a FIFO", ...).
    Other(&'static str),
}

fn kind_of(metadata: &Metadata) -> Entry {
    let kind = metadata.file_type();
    if kind.is_file() {
        Entry::RegularFile
    } else if kind.is_dir() {
        Entry::Other("a directory")
    } else if kind.is_fifo() {
        Entry::Other("a FIFO (named pipe)")
    } else if kind.is_char_device() || kind.is_block_device() {
        Entry::Other("a device")
    } else if kind.is_socket() {
        Entry::Other("a socket")
    } else {
        Entry::Other("not a regular file")
    }
}

/// What `path` is, following symlinks (a dangling symlink is missing).
pub fn entry(path: &Path) -> Entry {
    match std::fs::metadata(path) {
        Ok(metadata) => kind_of(&metadata),
        Err(_) => Entry::Missing,
    }
}

/// The error for an input that exists but is not a regular file.
pub fn not_a_file(path: &Path, what: &str) -> Error {
    Error::problem(
        Problem::new(path, None, format!("is {what}, not a regular file"))
            .with_hint("hyde-eval reads its inputs from regular files"),
    )
}

fn read_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// The resolved paths of the files this process has opened as inputs.
static OPENED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Every input file opened so far, resolved through symlinks.
pub fn read_so_far() -> Vec<PathBuf> {
    OPENED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

fn remember(path: &Path) {
    if let Ok(resolved) = path.canonicalize() {
        let mut opened = OPENED.lock().unwrap_or_else(PoisonError::into_inner);
        if !opened.contains(&resolved) {
            opened.push(resolved);
        }
    }
}

/// Opens `path` for reading if it is a regular file; anything else is refused before a
/// byte is read (a FIFO is opened without blocking, then refused).
pub fn open(path: &Path) -> Result<(File, u64), Error> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(read_error(path))?;
    let metadata = file.metadata().map_err(read_error(path))?;
    match kind_of(&metadata) {
        Entry::RegularFile => {
            remember(path);
            Ok((file, metadata.len()))
        }
        Entry::Other(what) => Err(not_a_file(path, what)),
        Entry::Missing => unreachable!("an open file exists"),
    }
}

/// Reads the regular file at `path` whole.
pub fn read(path: &Path) -> Result<Vec<u8>, Error> {
    read_limited(path, u64::MAX)
}

/// Reads the regular file at `path` whole, refusing one larger than `limit` bytes (also
/// if it grows past the limit while it is read).
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, Error> {
    let (file, length) = open(path)?;
    if length > limit {
        return Err(too_large(path, limit));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(length).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(read_error(path))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, limit));
    }
    Ok(bytes)
}

fn too_large(path: &Path, limit: u64) -> Error {
    Error::problem(Problem::new(
        path,
        None,
        format!(
            "is larger than {} MiB, the most this kind of file may hold",
            limit >> 20
        ),
    ))
}

/// Reads a small text file (see [`SMALL_FILE_LIMIT`]) as UTF-8.
pub fn read_small_text(path: &Path) -> Result<String, Error> {
    let bytes = read_limited(path, SMALL_FILE_LIMIT)?;
    String::from_utf8(bytes).map_err(|error| {
        Error::problem(Problem::new(
            path,
            None,
            format!(
                "not valid UTF-8 (byte {})",
                error.utf8_error().valid_up_to() + 1
            ),
        ))
    })
}

/// Reads an optional file: `None` when nothing is there, an error when something other
/// than a regular file is.
pub fn read_optional(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, Error> {
    match entry(path) {
        Entry::Missing => Ok(None),
        Entry::RegularFile => read_limited(path, limit).map(Some),
        Entry::Other(what) => Err(not_a_file(path, what)),
    }
}

/// `root/relative` when it resolves (through every symlink) to a place inside `root`;
/// `None` when it leads outside. A path that does not resolve is returned as joined, for
/// the read to report.
pub fn inside(root: &Path, relative: &Path) -> Option<PathBuf> {
    let joined = root.join(relative);
    let (Ok(root), Ok(resolved)) = (root.canonicalize(), joined.canonicalize()) else {
        let lexically_inside = relative.components().all(|part| {
            matches!(
                part,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
        return lexically_inside.then_some(joined);
    };
    resolved.starts_with(&root).then_some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_everything_else_is_refused() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("a.txt");
        std::fs::write(&file, "hello").unwrap();
        assert_eq!(read(&file).unwrap(), b"hello");
        let message = read(directory.path()).unwrap_err().to_string();
        assert!(
            message.contains("is a directory, not a regular file"),
            "{message}"
        );
        let message = read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(message.contains("is a device"), "{message}");
        let fifo = directory.path().join("fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let message = read(&fifo).unwrap_err().to_string();
        assert!(message.contains("is a FIFO"), "{message}");
        assert_eq!(
            read_optional(&directory.path().join("none"), 10).unwrap(),
            None
        );
        assert!(read_optional(&fifo, 10).is_err());
    }

    #[test]
    fn the_size_bound_holds() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("big");
        std::fs::write(&file, vec![b'x'; 2 << 20]).unwrap();
        let message = read_limited(&file, 1 << 20).unwrap_err().to_string();
        assert!(message.contains("larger than 1 MiB"), "{message}");
        assert_eq!(read_limited(&file, 2 << 20).unwrap().len(), 2 << 20);
    }

    #[test]
    fn symlinks_are_resolved_before_the_inside_check() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path().join("dataset");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("lexicon.toml"), "").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("escape")).unwrap();
        std::os::unix::fs::symlink("lexicon.toml", root.join("alias")).unwrap();
        assert!(inside(&root, Path::new("lexicon.toml")).is_some());
        assert!(inside(&root, Path::new("alias")).is_some());
        assert!(inside(&root, Path::new("escape")).is_none());
        assert!(inside(&root, Path::new("../dataset/lexicon.toml")).is_some());
        assert!(inside(&root, Path::new("../../etc/passwd")).is_none());
        assert!(inside(&root, Path::new("missing.toml")).is_some());
        assert!(inside(&root, Path::new("../missing.toml")).is_none());
    }
}
