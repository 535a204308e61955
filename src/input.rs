//! Opening the files a user hands hyde-eval: every input is a regular file, read with a
//! size bound where its format allows one.
//!
//! A FIFO would block the run, a device such as `/dev/zero` would grow without end, and a
//! directory where a file belongs hides a mistake; each is refused with its path and kind
//! (exit code 2) instead. Files are opened without blocking and checked on the open
//! descriptor, so what is checked is what is read. Paths a dataset names for itself are
//! resolved through symlinks before they are held against the dataset directory.
//!
//! Large inputs (dataset files, runs and qrels to evaluate) are memory-mapped when they
//! are plain files ([`read_mapped`]).
//!
//! Every file opened here is remembered ([`read_so_far`]), so the writers can refuse to
//! replace a directory that holds one of the run's own inputs.
//!
//! Two conveniences apply to every input read whole, whatever its format: the path `-`
//! reads standard input (once per process), and gzip data (recognized by its magic
//! bytes, whatever the name) is decompressed, the size bound then holding for the
//! decompressed bytes. A file named `*.gz` that is not gzip, or gzip that is truncated or
//! corrupt, is an error naming the file. Dataset loaders find `NAME.gz` when `NAME` is
//! absent ([`or_gzipped`]).

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// One file this process opened as an input: its path resolved through symlinks, and
/// the device and inode it was opened as, which name the file whatever path (a symlink,
/// a hard link) reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    pub path: PathBuf,
    pub device: u64,
    pub inode: u64,
}

/// The files this process has opened as inputs.
static OPENED: Mutex<Vec<InputFile>> = Mutex::new(Vec::new());

/// Every input file opened so far.
pub fn read_so_far() -> Vec<InputFile> {
    OPENED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Records `path`, opened as `metadata` describes it, as an input of this process, so
/// that no output replaces it (see `write_policy`). Inputs read other than through this
/// module (a file streamed while an output is written) are recorded with it.
pub fn remember(path: &Path, metadata: &Metadata) {
    use std::os::unix::fs::MetadataExt;
    let input = InputFile {
        path: path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
        device: metadata.dev(),
        inode: metadata.ino(),
    };
    let mut opened = OPENED.lock().unwrap_or_else(PoisonError::into_inner);
    if !opened.contains(&input) {
        opened.push(input);
    }
}

/// The input this process read that `path` reaches, if any: by its resolved path, or,
/// when `path` exists, by its device and inode (a hard link or symlink to an input).
pub fn input_at(path: &Path) -> Option<InputFile> {
    use std::os::unix::fs::MetadataExt;
    let resolved = path.canonicalize().ok();
    let identity = std::fs::metadata(path)
        .ok()
        .map(|metadata| (metadata.dev(), metadata.ino()));
    read_so_far().into_iter().find(|input| {
        resolved.as_deref() == Some(input.path.as_path())
            || identity == Some((input.device, input.inode))
    })
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
            remember(path, &metadata);
            Ok((file, metadata.len()))
        }
        Entry::Other(what) => Err(not_a_file(path, what)),
        Entry::Missing => unreachable!("an open file exists"),
    }
}

/// Whether `path` names standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Set once standard input has been read: it can be read only once.
static STDIN_TAKEN: AtomicBool = AtomicBool::new(false);

/// The first bytes of gzip data.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `bytes` start as gzip data does.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// `path`, or `path.gz` when only that exists (a dataset file kept compressed).
pub fn or_gzipped(path: &Path) -> PathBuf {
    if entry(path) == Entry::Missing {
        let mut gzipped = path.as_os_str().to_owned();
        gzipped.push(".gz");
        let gzipped = PathBuf::from(gzipped);
        if entry(&gzipped) != Entry::Missing {
            return gzipped;
        }
    }
    path.to_path_buf()
}

/// Reads the regular file at `path` (or standard input for `-`) whole, decompressed
/// when it is gzip.
pub fn read(path: &Path) -> Result<Vec<u8>, Error> {
    read_limited(path, u64::MAX)
}

/// An input file's bytes: memory-mapped (large inputs are read without a copy, and their
/// pages are the page cache's), or read when mapping is not possible (empty files,
/// pipes, gzip).
pub enum InputBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl InputBytes {
    /// Gives back the mapped pages that lie wholly inside `part` (a stretch of these
    /// bytes that has been read), so that the map's page tables are emptied by the
    /// threads reading it, as they go, rather than all at once, on one thread, when the
    /// map is dropped. The bytes stay readable: a page given back is mapped again from
    /// the page cache when it is next read. Bytes that were read, not mapped, are kept.
    pub fn release(&self, part: &[u8]) {
        let InputBytes::Mapped(map) = self else {
            return;
        };
        let offset = (part.as_ptr() as usize).wrapping_sub(map.as_ptr() as usize);
        if offset > map.len() || part.len() > map.len() - offset {
            return;
        }
        // The map starts on a page boundary: round the start up and the end down.
        let page = page_size();
        let start = offset.div_ceil(page) * page;
        let end = (offset + part.len()) / page * page;
        if start < end {
            // SAFETY: the map is a shared, read-only map of a file, assumed not to
            // change while it is read (as for the map itself). After MADV_DONTNEED a
            // read of these pages maps the file's same bytes again (madvise(2): the
            // contents are repopulated "from the up-to-date contents of the underlying
            // mapped file"), so every borrow of them stays valid. A failure only leaves
            // the pages mapped.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
            };
        }
    }
}

/// The size of a memory page.
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
}

impl std::ops::Deref for InputBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            InputBytes::Mapped(map) => map,
            InputBytes::Read(bytes) => bytes,
        }
    }
}

/// When a mapped file's pages are mapped into the process.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum PageIn {
    /// All of them when the file is mapped (`MAP_POPULATE`), on the mapping thread.
    Now,
    /// Each as it is first read, on the thread reading it.
    OnTouch,
}

/// The bytes [`read`] gives for `path`, mapped when it is a plain file.
pub fn read_mapped(path: &Path, page_in: PageIn) -> Result<InputBytes, Error> {
    if !is_stdin(path) {
        let (file, length) = open(path)?;
        if length > 0 {
            let mut options = memmap2::MmapOptions::new();
            if page_in == PageIn::Now {
                options.populate();
            }
            // SAFETY: the map is read-only and lives while the file is parsed; like
            // trec_eval (which maps its inputs too), we assume nobody truncates the file
            // meanwhile.
            if let Ok(map) = unsafe { options.map(&file) } {
                let named_gz = path.extension().is_some_and(|extension| extension == "gz");
                if !is_gzip(&map) && !named_gz {
                    return Ok(InputBytes::Mapped(map));
                }
            }
        }
    }
    Ok(InputBytes::Read(read(path)?))
}

/// Reads the regular file at `path` (or standard input for `-`) whole, decompressed
/// when it is gzip, refusing more than `limit` bytes (also if the file grows past the
/// limit while it is read, and for gzip after decompression).
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, Error> {
    let bytes = if is_stdin(path) {
        if STDIN_TAKEN.swap(true, Ordering::SeqCst) {
            return Err(Error::Usage(
                "standard input (`-`) can be read only once: pass the other inputs as files".into(),
            ));
        }
        read_bounded(std::io::stdin().lock(), 0, limit, path)?
    } else {
        let (file, length) = open(path)?;
        if length > limit {
            return Err(too_large(path, limit));
        }
        read_bounded(file, length, limit, path)?
    };
    let named_gz = path.extension().is_some_and(|extension| extension == "gz");
    if is_gzip(&bytes) {
        gunzip(path, &bytes, limit)
    } else if named_gz {
        Err(Error::problem(
            Problem::new(path, None, "is named .gz but does not hold gzip data")
                .with_hint("compress it with gzip, or drop the .gz from its name"),
        ))
    } else {
        Ok(bytes)
    }
}

/// Reads `reader` to its end, refusing more than `limit` bytes.
fn read_bounded(
    reader: impl Read,
    expected: u64,
    limit: u64,
    path: &Path,
) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(read_error(path))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, limit));
    }
    Ok(bytes)
}

/// Decompresses the gzip data read from `path` (every member of a multi-member file),
/// refusing more than `limit` decompressed bytes.
fn gunzip(path: &Path, compressed: &[u8], limit: u64) -> Result<Vec<u8>, Error> {
    let decoder = flate2::read::MultiGzDecoder::new(compressed);
    let mut bytes = Vec::with_capacity(compressed.len().saturating_mul(4));
    decoder
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|error| {
            Error::problem(
                Problem::new(path, None, format!("corrupt gzip data: {error}"))
                    .with_hint("the file is truncated or damaged; compress the original again"),
            )
        })?;
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

/// Reads an optional file (or its `.gz`, see [`or_gzipped`]): `None` when nothing is
/// there, an error when something other than a regular file is.
pub fn read_optional(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, Error> {
    let path = &or_gzipped(path);
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
    fn released_pages_of_a_mapped_file_read_back_the_same_bytes() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("run");
        let content: Vec<u8> = (0..5 * page_size() + 123)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&path, &content).unwrap();
        for page_in in [PageIn::Now, PageIn::OnTouch] {
            let bytes = read_mapped(&path, page_in).unwrap();
            assert!(matches!(bytes, InputBytes::Mapped(_)));
            assert_eq!(&bytes[..], &content[..]);
            // A stretch that starts and ends inside pages, the whole map, and bytes
            // that are not the map's (left alone).
            bytes.release(&bytes[100..4 * page_size() + 7]);
            assert_eq!(&bytes[..], &content[..]);
            bytes.release(&bytes);
            bytes.release(&content);
            assert_eq!(&bytes[..], &content[..]);
        }
        let read = InputBytes::Read(content.clone());
        read.release(&read);
        assert_eq!(&read[..], &content[..]);
    }

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

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn gzip_is_decompressed_whatever_the_name_and_bounded_after_decompression() {
        let directory = tempfile::tempdir().unwrap();
        let named = directory.path().join("run.gz");
        std::fs::write(&named, gzip(b"q1 Q0 d1 1 2.5 t\n")).unwrap();
        assert_eq!(read(&named).unwrap(), b"q1 Q0 d1 1 2.5 t\n");
        let unnamed = directory.path().join("run");
        std::fs::write(&unnamed, gzip(b"abc")).unwrap();
        assert_eq!(read(&unnamed).unwrap(), b"abc");
        // 2 MiB of zeros compress to a few KiB: the bound holds for what they expand to.
        let bomb = directory.path().join("bomb.gz");
        std::fs::write(&bomb, gzip(&vec![0; 2 << 20])).unwrap();
        let message = read_limited(&bomb, 1 << 20).unwrap_err().to_string();
        assert!(message.contains("larger than 1 MiB"), "{message}");
        // Two concatenated members read as one stream, as gunzip reads them.
        let members = directory.path().join("members.gz");
        std::fs::write(&members, [gzip(b"a\n"), gzip(b"b\n")].concat()).unwrap();
        assert_eq!(read(&members).unwrap(), b"a\nb\n");
    }

    #[test]
    fn corrupt_or_mislabelled_gzip_is_an_error_naming_the_file() {
        let directory = tempfile::tempdir().unwrap();
        let truncated = directory.path().join("qrels.gz");
        let whole = gzip(&b"q1 0 d1 1\n".repeat(100));
        std::fs::write(&truncated, &whole[..whole.len() / 2]).unwrap();
        let error = read(&truncated).unwrap_err();
        assert_eq!(error.exit_code(), crate::error::exit_code::INPUT);
        let message = error.to_string();
        assert!(message.contains("qrels.gz: corrupt gzip data"), "{message}");
        let mislabelled = directory.path().join("plain.gz");
        std::fs::write(&mislabelled, "q1 0 d1 1\n").unwrap();
        let message = read(&mislabelled).unwrap_err().to_string();
        assert!(
            message.contains("plain.gz: is named .gz but does not hold gzip data"),
            "{message}"
        );
    }

    #[test]
    fn a_missing_file_is_found_gzipped() {
        let directory = tempfile::tempdir().unwrap();
        let plain = directory.path().join("corpus.jsonl");
        assert_eq!(or_gzipped(&plain), plain);
        std::fs::write(directory.path().join("corpus.jsonl.gz"), gzip(b"{}\n")).unwrap();
        assert_eq!(or_gzipped(&plain), directory.path().join("corpus.jsonl.gz"));
        assert_eq!(read_optional(&plain, 1000).unwrap().unwrap(), b"{}\n");
        std::fs::write(&plain, "[]").unwrap();
        assert_eq!(or_gzipped(&plain), plain);
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
