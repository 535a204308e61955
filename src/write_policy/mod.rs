//! The one write policy every command that writes a file follows.
//!
//! 1. **Inputs are never written.** A destination that is one of the command's inputs
//!    (see [`crate::input::input_at`]: by resolved path, or by device and inode, so a
//!    symlink or a hard link to an input counts) is refused, `--force` or not, and so
//!    is a directory to be replaced that holds one.
//! 2. **Only what hyde-eval wrote is replaced**, unless `--force` names the intent: a
//!    file carrying a stamp that still matches its content ([`stamp`]), a file its
//!    writer recognises as its own by content (a committed `baseline.json`), a
//!    directory carrying [`OWNER_MARKER`], or an empty directory. A symlink is never
//!    written through: it is refused, or with `--force` replaced as a link.
//! 3. **Every write is atomic.** Content is written in a [`Scratch`] directory beside
//!    its destination, flushed to the disk and renamed into place (a directory is
//!    exchanged with the one it replaces in one step), under a lock on the destination's
//!    directory; the checks are made again under the lock. A kill at any instant leaves
//!    the old content or the new one under the final name. Temporaries are the scratch
//!    directories, recognised by the marker inside them, never by their names.
//!
//! Two commands write a file they read, each by design: `judge` edits a dataset's
//! `qrels.tsv` in place (rule 3, with its own merge on save: see `judging::session`), and
//! `record` replaces the dataset's recorded hypotheses, with `--force` when they exist
//! ([`Earlier::replacing_input`]).

pub mod scratch;
pub mod stamp;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Problem};
use crate::interrupt::critical;

pub use scratch::Scratch;

/// Splits a directory a command writes whole into the directory it goes in and its
/// name: `out/new` is `new` in `out`, `new` is `new` in `.`. Refused when the path ends
/// in no name (`.`, `..`, `/`).
pub fn split_directory(path: &Path) -> Result<(PathBuf, String), Error> {
    match (path.file_name(), path.to_str()) {
        (Some(name), Some(_)) if !path.ends_with("..") => Ok((
            parent_of(path).to_path_buf(),
            name.to_string_lossy().into_owned(),
        )),
        _ => Err(refusal(
            path,
            "names no new directory",
            "name the directory to create, such as datasets/mine",
        )),
    }
}

/// The file that marks a directory as one hyde-eval wrote and may replace.
pub const OWNER_MARKER: &str = ".hyde-eval-output";

/// The text of [`OWNER_MARKER`].
pub const OWNER_MARKER_TEXT: &str =
    "This directory was written by hyde-eval. The next output of the same name replaces it.\n";

/// What a write may replace: with `force` (`--force`), whatever is at its destination
/// except the command's inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    pub force: bool,
}

impl Policy {
    pub fn new(force: bool) -> Policy {
        Policy { force }
    }
}

/// Refuses, with the reason, to replace the existing file at a path.
pub type Keep<'a> = &'a dyn Fn(&Path) -> Result<(), Error>;

/// How a writer judges an existing file at its destination.
#[derive(Clone, Copy)]
pub struct Earlier<'a> {
    /// Whether a file hyde-eval wrote and nobody changed (its stamp matches) may be
    /// replaced without `--force`: yes for outputs, no for a dataset's own files, which
    /// are a team's data once written.
    replace_own: bool,
    /// Recognises, by its content, a file this writer wrote that carries no stamp (one
    /// from a clone of a repository, such as a committed baseline).
    recognize: Option<&'a dyn Fn(&Path) -> bool>,
    /// Refuses to replace an earlier file of its own that holds what this write would
    /// drop (without `--force`).
    keep: Option<Keep<'a>>,
    /// The one input the command read only to replace it, which `--force` may then
    /// replace (`record`'s `hypotheses.jsonl`).
    replaces_input: Option<&'a Path>,
}

impl<'a> Earlier<'a> {
    /// An output: replaced when hyde-eval wrote it and nobody changed it since.
    pub fn output() -> Earlier<'a> {
        Earlier {
            replace_own: true,
            recognize: None,
            keep: None,
            replaces_input: None,
        }
    }

    /// A dataset's own file: replaced only with `--force`.
    pub fn dataset_file() -> Earlier<'a> {
        Earlier {
            replace_own: false,
            ..Earlier::output()
        }
    }

    /// `input` is a dataset file the command read only to replace it: `--force` replaces
    /// it, though it is an input (no other input).
    pub fn replacing_input(self, input: &'a Path) -> Earlier<'a> {
        Earlier {
            replaces_input: Some(input),
            ..self
        }
    }

    /// Also recognises an earlier output of this writer by its content.
    pub fn recognizing(self, recognize: &'a dyn Fn(&Path) -> bool) -> Earlier<'a> {
        Earlier {
            recognize: Some(recognize),
            ..self
        }
    }

    /// Refuses, through `keep`, to replace an earlier output that holds what this write
    /// would drop.
    pub fn keeping(self, keep: Keep<'a>) -> Earlier<'a> {
        Earlier {
            keep: Some(keep),
            ..self
        }
    }
}

fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// A refusal to write `path`, with the way out.
fn refusal(path: &Path, problem: impl Into<String>, hint: impl Into<String>) -> Error {
    Error::Refused(Problem::new(path, None, problem).with_hint(hint))
}

const FORCE_HINT: &str =
    "hyde-eval replaces only what it wrote; choose another output, move this one away, or pass --force to replace it";

/// Refuses `path` when it is one of the command's inputs.
fn refuse_input(path: &Path) -> Result<(), Error> {
    match crate::input::input_at(path) {
        Some(input) => Err(refusal(
            path,
            format!(
                "is {}, an input of this command; refusing to write it",
                input.path.display()
            ),
            "write the output somewhere else",
        )),
        None => Ok(()),
    }
}

/// Checks that a new file may be written at `path`: absent, or a regular file that is
/// not an input and that hyde-eval wrote (see the module rules), or anything but an
/// input or a directory with `--force`.
pub fn check_file(path: &Path, policy: Policy, earlier: Earlier<'_>) -> Result<(), Error> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(write_error(path)(source)),
    };
    // The one input this command replaces by design is judged as a dataset file below.
    let replaceable_input = earlier.replaces_input.is_some_and(|input| {
        input
            .canonicalize()
            .ok()
            .is_some_and(|input| path.canonicalize().ok() == Some(input))
    });
    if !replaceable_input {
        refuse_input(path)?;
    }
    let kind = metadata.file_type();
    if kind.is_dir() {
        return Err(refusal(
            path,
            "is a directory; refusing to replace it with a file",
            "name a file",
        ));
    }
    if kind.is_symlink() {
        if policy.force {
            return Ok(());
        }
        return Err(refusal(
            path,
            "is a symlink; hyde-eval does not write through symlinks",
            "name the file it points to, or pass --force to replace the link itself",
        ));
    }
    if !kind.is_file() {
        return Err(refusal(
            path,
            "is not a regular file; refusing to replace it",
            "name a regular file",
        ));
    }
    if !policy.force {
        if !earlier.replace_own {
            return Err(refusal(
                path,
                "exists; refusing to replace it",
                "pass --force to replace it, or write into a copy of the dataset",
            ));
        }
        let own = stamp::is_unchanged_own(path)
            || earlier.recognize.is_some_and(|recognize| recognize(path));
        if !own {
            return Err(refusal(
                path,
                "exists and was not written by hyde-eval (or was changed since); refusing to replace it",
                FORCE_HINT,
            ));
        }
        if let Some(keep) = earlier.keep {
            keep(path)?;
        }
    }
    Ok(())
}

/// The directory `path` is written in.
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Creates `directory` and its missing parents.
fn create_directory(directory: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(directory).map_err(write_error(directory))
}

/// Writes a file's content into the writer it is given.
pub type Content<'a> = Box<dyn FnOnce(&mut dyn Write) -> std::io::Result<()> + 'a>;

/// Writes `bytes` as the file `path` under the policy (see the module rules).
pub fn write_file(path: &Path, bytes: &[u8], policy: Policy) -> Result<(), Error> {
    write_file_with(
        path,
        policy,
        Earlier::output(),
        Box::new(|writer| writer.write_all(bytes)),
    )
}

/// Writes the file `path`, its content streamed by `content`, under the policy, with
/// `earlier` judging an existing file.
pub fn write_file_with(
    path: &Path,
    policy: Policy,
    earlier: Earlier<'_>,
    content: Content<'_>,
) -> Result<(), Error> {
    write_files_with(
        parent_of(path),
        vec![(path.to_path_buf(), content)],
        policy,
        earlier,
    )
}

/// Writes each `(path relative to directory, bytes)` under the existing or new
/// `directory`, each file atomically: all are checked before any is written, and checked
/// again under the directory's lock as they are renamed into place.
pub fn write_files(
    directory: &Path,
    files: &[(PathBuf, Vec<u8>)],
    policy: Policy,
) -> Result<(), Error> {
    let files = files
        .iter()
        .map(|(relative, bytes)| {
            let content: Content = Box::new(move |writer| writer.write_all(bytes));
            (directory.join(relative), content)
        })
        .collect();
    write_files_with(directory, files, policy, Earlier::output())
}

/// Refuses a file path under `directory` that passes through a symlink or a
/// non-directory below `directory` (a write would follow it out).
fn check_inside(directory: &Path, path: &Path) -> Result<(), Error> {
    let Ok(relative) = path.strip_prefix(directory) else {
        return Ok(());
    };
    let mut walked = directory.to_path_buf();
    let components: Vec<_> = relative.components().collect();
    for component in &components[..components.len().saturating_sub(1)] {
        walked.push(component);
        match std::fs::symlink_metadata(&walked) {
            Ok(metadata) if metadata.is_dir() => {}
            Ok(_) => {
                return Err(refusal(
                    &walked,
                    "is not a directory (a symlink or a file) where hyde-eval writes a directory; refusing to write through it",
                    "move it away",
                ))
            }
            Err(_) => {}
        }
    }
    Ok(())
}

/// The files of one batch, written in a scratch directory of the batch's directory.
fn write_files_with(
    directory: &Path,
    files: Vec<(PathBuf, Content<'_>)>,
    policy: Policy,
    earlier: Earlier<'_>,
) -> Result<(), Error> {
    for (path, _) in &files {
        check_inside(directory, path)?;
        check_file(path, policy, earlier)?;
    }
    let scratch = Scratch::create(directory)?;
    {
        let _lock = DirectoryLock::acquire(directory)?;
        scratch::remove_stale(directory);
    }
    let mut written = Vec::with_capacity(files.len());
    for (index, (path, content)) in files.into_iter().enumerate() {
        let temporary = scratch.path().join(index.to_string());
        write_stamped(&temporary, content)?;
        written.push((temporary, path));
    }
    let _lock = DirectoryLock::acquire(directory)?;
    for (_, path) in &written {
        check_inside(directory, path)?;
        check_file(path, policy, earlier)?;
    }
    for (temporary, path) in &written {
        create_directory(parent_of(path))?;
        critical(|| {
            std::fs::rename(temporary, path).map_err(write_error(path))?;
            crate::interrupt::completed(path);
            Ok::<(), Error>(())
        })?;
        sync_directory(parent_of(path));
    }
    Ok(())
}

/// Writes `content` as the new file `temporary`, stamped and flushed to the disk.
fn write_stamped(temporary: &Path, content: Content<'_>) -> Result<(), Error> {
    critical(|| {
        let file = std::fs::File::create(temporary).map_err(write_error(temporary))?;
        let mut writer = stamp::Digesting::new(std::io::BufWriter::with_capacity(
            1 << 20,
            crate::writeback::WritebackFile::new(file),
        ));
        content(&mut writer)
            .and_then(|()| writer.flush())
            .map_err(write_error(temporary))?;
        let (buffered, stamp) = writer.finish();
        let file = buffered
            .into_inner()
            .map_err(|error| write_error(temporary)(error.into_error()))?
            .into_file();
        stamp::set(&file, &stamp);
        file.sync_all().map_err(write_error(temporary))
    })
}

/// Appends `text` to the file `path` (created when absent), atomically: the old content
/// and the new are written beside it and renamed over it, keeping its permissions. An
/// append loses nothing, so any regular file that is not an input may be appended to;
/// a symlink is refused (name its target).
pub fn append(path: &Path, text: &str) -> Result<(), Error> {
    let check = || -> Result<Option<std::fs::Metadata>, Error> {
        let metadata = match std::fs::symlink_metadata(path) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(write_error(path)(source)),
        };
        refuse_input(path)?;
        if metadata.file_type().is_symlink() {
            return Err(refusal(
                path,
                "is a symlink; hyde-eval does not write through symlinks",
                "name the file it points to",
            ));
        }
        if !metadata.is_file() {
            return Err(refusal(
                path,
                "is not a regular file; refusing to append to it",
                "name a regular file",
            ));
        }
        Ok(Some(metadata))
    };
    check()?;
    let directory = parent_of(path);
    let scratch = Scratch::create(directory)?;
    let temporary = scratch.path().join("appended");
    let _lock = DirectoryLock::acquire(directory)?;
    let existing = check()?;
    let old = match &existing {
        Some(_) => crate::input::read(path)?,
        None => Vec::new(),
    };
    critical(|| {
        let mut file = std::fs::File::create(&temporary).map_err(write_error(&temporary))?;
        file.write_all(&old)
            .and_then(|()| writeln!(file, "{text}"))
            .map_err(write_error(&temporary))?;
        if let Some(metadata) = &existing {
            file.set_permissions(metadata.permissions())
                .map_err(write_error(&temporary))?;
        }
        file.sync_all().map_err(write_error(&temporary))?;
        std::fs::rename(&temporary, path).map_err(write_error(path))?;
        crate::interrupt::completed(path);
        Ok::<(), Error>(())
    })?;
    sync_directory(directory);
    Ok(())
}

/// Edits the file `path` in place, atomically: under a lock on its directory (so
/// concurrent editors take turns) the current content is read, `edit` makes the new one
/// from it, and the new content is written beside the file and renamed over it, keeping
/// its permissions. A file changed by someone else between the read and the rename is
/// read and edited again, so no edit made meanwhile (by hand, or by another process) is
/// lost. A symlink stays a symlink: its target is edited. A missing file is created.
pub fn edit_in_place(path: &Path, edit: &dyn Fn(&[u8]) -> Vec<u8>) -> Result<(), Error> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => path.canonicalize().map_err(|_| {
            refusal(
                path,
                "is a symlink to nothing; refusing to write through it",
                "point it at an existing file, or replace it with the file",
            )
        })?,
        _ => path.to_path_buf(),
    };
    match std::fs::symlink_metadata(&target) {
        Ok(metadata) if !metadata.is_file() => {
            return Err(refusal(
                &target,
                "is not a regular file; refusing to edit it",
                "name a regular file",
            ))
        }
        _ => {}
    }
    let directory = parent_of(&target);
    let _lock = DirectoryLock::acquire(directory)?;
    let scratch = Scratch::create(directory)?;
    let temporary = scratch.path().join("edited");
    loop {
        let before = FileVersion::at(&target);
        let current = match std::fs::read(&target) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(Error::Read {
                    path: target,
                    source,
                })
            }
        };
        let edited = edit(&current);
        let mut file = std::fs::File::create(&temporary).map_err(write_error(&temporary))?;
        file.write_all(&edited).map_err(write_error(&temporary))?;
        if let Ok(metadata) = std::fs::metadata(&target) {
            file.set_permissions(metadata.permissions())
                .map_err(write_error(&temporary))?;
        }
        file.sync_all().map_err(write_error(&temporary))?;
        drop(file);
        let swapped = critical(|| {
            if FileVersion::at(&target) != before {
                return Ok(false);
            }
            std::fs::rename(&temporary, &target).map_err(write_error(&target))?;
            crate::interrupt::completed(&target);
            Ok::<bool, Error>(true)
        })?;
        if swapped {
            sync_directory(directory);
            return Ok(());
        }
    }
}

/// What identifies one version of a file: its device and inode, size and the times of
/// its last modification and status change, to the nanosecond. Two reads of a file
/// with equal versions read the same bytes (short of a writer that restores all seven).
#[derive(Debug, PartialEq, Eq)]
pub struct FileVersion([i64; 7]);

impl FileVersion {
    /// The version `metadata` describes.
    pub fn of(metadata: &std::fs::Metadata) -> FileVersion {
        use std::os::unix::fs::MetadataExt;
        FileVersion([
            metadata.dev() as i64,
            metadata.ino() as i64,
            metadata.size() as i64,
            metadata.mtime(),
            metadata.mtime_nsec(),
            metadata.ctime(),
            metadata.ctime_nsec(),
        ])
    }

    /// The version of the file at `path` (symlinks followed); `None` when there is none.
    pub fn at(path: &Path) -> Option<FileVersion> {
        std::fs::metadata(path).ok().as_ref().map(FileVersion::of)
    }
}

/// What a directory a command writes whole is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectoryKind {
    /// An output (a report, a sweep): marked with [`OWNER_MARKER`], and replaced by the
    /// next output of its name.
    Output,
    /// A new dataset (`dataset import`, `dataset synth`): a team's data once written,
    /// never marked, written only where nothing is (or with `--force`).
    Dataset,
}

/// Checks that the directory `output_dir/name` may be (re)written: absent, an empty
/// directory, or (for an output) a directory hyde-eval wrote ([`OWNER_MARKER`]), holding
/// none of the command's inputs; with `--force`, anything that holds no input.
pub fn check_directory(
    output_dir: &Path,
    name: &str,
    policy: Policy,
    kind: DirectoryKind,
) -> Result<(), Error> {
    let destination = output_dir.join(name);
    let hint = match kind {
        DirectoryKind::Output => "hyde-eval replaces only directories it wrote; choose another --run-name or --output-dir, move this one away, or pass --force",
        DirectoryKind::Dataset => "write the dataset into a new or empty directory, or pass --force to replace this one",
    };
    let metadata = match std::fs::symlink_metadata(&destination) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(write_error(&destination)(source)),
    };
    if metadata.file_type().is_symlink() || !metadata.is_dir() {
        refuse_input(&destination)?;
        if policy.force {
            return Ok(());
        }
        let what = if metadata.file_type().is_symlink() {
            "is a symlink"
        } else {
            "is not a directory"
        };
        return Err(refusal(
            &destination,
            format!("exists and {what}; refusing to replace it"),
            hint,
        ));
    }
    if let Some(input) = input_inside(&destination) {
        return Err(refusal(
            &destination,
            format!(
                "holds {}, an input of this command; refusing to replace it",
                input.display()
            ),
            "write the output somewhere else",
        ));
    }
    if policy.force {
        return Ok(());
    }
    let marked = std::fs::symlink_metadata(destination.join(OWNER_MARKER))
        .is_ok_and(|marker| marker.is_file());
    let empty = std::fs::read_dir(&destination)
        .map_err(write_error(&destination))?
        .next()
        .is_none();
    let problem = match kind {
        _ if empty => return Ok(()),
        DirectoryKind::Output if marked => return Ok(()),
        DirectoryKind::Output => format!(
            "exists and was not written by hyde-eval (it has no {OWNER_MARKER} file); refusing to replace it"
        ),
        DirectoryKind::Dataset => "exists and is not empty; refusing to write a dataset into it".to_owned(),
    };
    Err(refusal(&destination, problem, hint))
}

/// An input of this command that lies in `directory` or below it: by resolved path, or
/// an entry with an input's device and inode (a hard link).
fn input_inside(directory: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let inputs = crate::input::read_so_far();
    if inputs.is_empty() {
        return None;
    }
    if let Ok(resolved) = directory.canonicalize() {
        if let Some(input) = inputs
            .iter()
            .find(|input| input.path.starts_with(&resolved))
        {
            return Some(input.path.clone());
        }
    }
    let mut pending = vec![directory.to_path_buf()];
    while let Some(path) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            if metadata.is_dir() {
                pending.push(entry.path());
            } else if let Some(input) = inputs
                .iter()
                .find(|input| (input.device, input.inode) == (metadata.dev(), metadata.ino()))
            {
                return Some(input.path.clone());
            }
        }
    }
    None
}

/// A directory being built in a scratch directory beside its destination, then swapped
/// in whole (see [`DirectoryBuild::swap_in`]).
pub struct DirectoryBuild {
    output_dir: PathBuf,
    name: String,
    kind: DirectoryKind,
    scratch: Scratch,
}

impl DirectoryBuild {
    /// Starts building the directory `output_dir/name` (checked with
    /// [`check_directory`]); an output's [`OWNER_MARKER`] is its first file.
    pub fn start(
        output_dir: &Path,
        name: &str,
        policy: Policy,
        kind: DirectoryKind,
    ) -> Result<DirectoryBuild, Error> {
        check_directory(output_dir, name, policy, kind)?;
        let scratch = Scratch::create(output_dir)?;
        {
            let _lock = DirectoryLock::acquire(output_dir)?;
            scratch::remove_stale(output_dir);
        }
        let build = DirectoryBuild {
            output_dir: output_dir.to_path_buf(),
            name: name.to_owned(),
            kind,
            scratch,
        };
        let root = build.root();
        create_directory(&root)?;
        if kind == DirectoryKind::Output {
            let marker = root.join(OWNER_MARKER);
            std::fs::write(&marker, OWNER_MARKER_TEXT).map_err(write_error(&marker))?;
        }
        Ok(build)
    }

    /// The directory being built.
    pub fn root(&self) -> PathBuf {
        self.scratch.path().join("new")
    }

    /// The scratch directory the build lives in, for files that help build it (a
    /// download); removed with the build.
    pub fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    /// Flushes the built directory to the disk and puts it in place of
    /// `output_dir/name` under the output directory's lock, after `check` and the
    /// destination check pass again there; the directory it replaces is removed.
    pub fn swap_in(
        self,
        policy: Policy,
        check: &dyn Fn() -> Result<(), Error>,
    ) -> Result<PathBuf, Error> {
        let root = self.root();
        sync_tree(&root);
        let destination = self.output_dir.join(&self.name);
        let _lock = DirectoryLock::acquire(&self.output_dir)?;
        check_directory(&self.output_dir, &self.name, policy, self.kind)?;
        check()?;
        critical(|| {
            let exists = std::fs::symlink_metadata(&destination).is_ok();
            if exists {
                exchange(&root, &destination).map_err(write_error(&destination))?;
            } else {
                std::fs::rename(&root, &destination).map_err(write_error(&destination))?;
            }
            crate::interrupt::completed(&destination);
            sync_directory(&self.output_dir);
            Ok(destination.clone())
        })
        // Dropping the scratch directory removes what was replaced.
    }
}

/// Swaps two existing paths in one step (Linux's `renameat2` with `RENAME_EXCHANGE`);
/// elsewhere moves `destination` aside into `new`'s place, then `new` in.
fn exchange(new: &Path, destination: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let c_path = |path: &Path| {
            std::ffi::CString::new(path.as_os_str().as_bytes())
                .map_err(|_| std::io::Error::other("a path with a NUL byte"))
        };
        let (from, to) = (c_path(new)?, c_path(destination)?);
        // SAFETY: both paths are NUL-terminated strings; AT_FDCWD resolves them as
        // paths relative to the working directory, as rename(2) does.
        let result = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if result == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        // File systems without the exchange fall back to two renames.
        if error.raw_os_error() != Some(libc::EINVAL) {
            return Err(error);
        }
    }
    let aside = new.with_file_name("old");
    std::fs::rename(destination, &aside)?;
    std::fs::rename(new, destination)
}

/// Holds an exclusive lock on a directory while the guard lives: the writers into one
/// directory take turns at their checks and renames.
pub struct DirectoryLock(std::fs::File);

impl DirectoryLock {
    pub fn acquire(directory: &Path) -> Result<DirectoryLock, Error> {
        let file = std::fs::File::open(directory).map_err(write_error(directory))?;
        file.lock().map_err(write_error(directory))?;
        Ok(DirectoryLock(file))
    }
}

impl Drop for DirectoryLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Best-effort fsync of a directory, so a rename into it survives a crash.
fn sync_directory(directory: &Path) {
    let _ = std::fs::File::open(directory).and_then(|file| file.sync_all());
}

/// Best-effort fsync of every file and directory under `root`, before it is swapped in.
fn sync_tree(root: &Path) {
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        if let Ok(entries) = std::fs::read_dir(&path) {
            for entry in entries.flatten() {
                let entry_path = entry.path();
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    pending.push(entry_path);
                } else if let Ok(file) = std::fs::File::open(&entry_path) {
                    let _ = file.sync_all();
                }
            }
        }
        sync_directory(&path);
    }
}
