//! Scratch directories: where a write builds its files before they are renamed into
//! place, beside their destination (so the rename stays on one file system).
//!
//! A scratch directory's first entry is a marker file ([`MARKER`]) that names the process
//! which made it: its process id, the time the process started and the boot it started
//! in. A scratch directory is removed when its [`Scratch`] is dropped, or by the
//! interrupt handler (it is registered as a temporary). One left behind by a process that
//! was killed outright is removed by the next write into the same directory
//! ([`remove_stale`]), which recognises it by that marker and the owner's absence, never
//! by its name: a user's directory that merely looks like one is left alone.
//!
//! Directories a scratch directory's creation had to make for it (an output directory
//! that did not exist yet) are removed with it when they are still empty, so a command
//! that fails leaves no trace behind.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;
use crate::interrupt::Temporary;

/// The marker file inside every scratch directory.
pub const MARKER: &str = ".hyde-eval-scratch";

/// The first line of a marker file.
const MARKER_HEADING: &str = "hyde-eval scratch directory";

/// A process, as a marker names it: a process id alone could be reused.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    pid: u32,
    /// The boot the process started in (`/proc/sys/kernel/random/boot_id`), empty where
    /// the system does not say.
    boot: String,
    /// When the process started, in clock ticks since boot (`/proc/PID/stat`, field
    /// 22); 0 where the system does not say.
    start: u64,
}

impl Owner {
    fn current() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            boot: boot_id(),
            start: start_time(pid).unwrap_or(0),
        }
    }

    fn marker_text(&self) -> String {
        format!(
            "{MARKER_HEADING}\npid {}\nboot {}\nstart {}\n",
            self.pid, self.boot, self.start
        )
    }

    /// The owner a marker file's text names; `None` for any other text.
    fn parse(text: &str) -> Option<Owner> {
        let mut lines = text.lines();
        if lines.next()? != MARKER_HEADING {
            return None;
        }
        let mut field = |name: &str| {
            lines
                .next()?
                .strip_prefix(name)?
                .strip_prefix(' ')
                .map(str::to_owned)
        };
        Some(Owner {
            pid: field("pid")?.parse().ok()?,
            boot: field("boot")?,
            start: field("start")?.parse().ok()?,
        })
    }

    /// Whether the process this names still runs: the same boot, a live process of that
    /// id, started at the same time.
    fn is_running(&self) -> bool {
        if self.boot != boot_id() {
            return false;
        }
        if !process_exists(self.pid) {
            return false;
        }
        match start_time(self.pid) {
            Some(start) => self.start == 0 || start == self.start,
            // The system does not say when it started: assume it is the one.
            None => true,
        }
    }
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|text| text.trim().to_owned())
        .unwrap_or_default()
}

/// The start time of process `pid` in clock ticks since boot (Linux's `/proc`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is parenthesised and may hold spaces: count fields
    // after its closing parenthesis, where field 3 starts.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A scratch directory of this process in a destination's directory, removed when
/// dropped.
pub struct Scratch {
    directory: PathBuf,
    _registered: Temporary,
    /// The directories made for it, outermost first.
    made: Vec<PathBuf>,
}

impl Scratch {
    /// Makes a new scratch directory in `parent` (made, with its missing parents, when
    /// absent), its marker written first.
    pub fn create(parent: &Path) -> Result<Scratch, Error> {
        static CREATED: AtomicU64 = AtomicU64::new(0);
        let made = make_directories(parent)?;
        let owner = Owner::current();
        loop {
            let directory = parent.join(format!(
                ".hyde-eval-scratch-{}-{}",
                owner.pid,
                CREATED.fetch_add(1, Ordering::Relaxed)
            ));
            let registered = Temporary::register(&directory);
            match std::fs::create_dir(&directory) {
                Ok(()) => {}
                // A name taken by anything else (a killed process of the same id) is
                // never reused: the next number is tried.
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => {
                    remove_if_empty(&made);
                    return Err(Error::Write {
                        path: directory,
                        source,
                    });
                }
            }
            let scratch = Scratch {
                directory,
                _registered: registered,
                made,
            };
            let marker = scratch.directory.join(MARKER);
            std::fs::write(&marker, owner.marker_text()).map_err(|source| Error::Write {
                path: marker,
                source,
            })?;
            return Ok(scratch);
        }
    }

    /// The scratch directory.
    pub fn path(&self) -> &Path {
        &self.directory
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.directory);
        remove_if_empty(&self.made);
    }
}

/// Makes `directory` and its missing parents; returns those it made, outermost first.
fn make_directories(directory: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut missing = Vec::new();
    let mut current = Some(directory);
    while let Some(path) = current.filter(|path| !path.as_os_str().is_empty()) {
        if std::fs::symlink_metadata(path).is_ok() {
            break;
        }
        missing.push(path.to_path_buf());
        current = path.parent();
    }
    missing.reverse();
    for (made, path) in missing.iter().enumerate() {
        if let Err(source) = std::fs::create_dir(path) {
            if source.kind() != std::io::ErrorKind::AlreadyExists {
                remove_if_empty(&missing[..made]);
                return Err(Error::Write {
                    path: path.clone(),
                    source,
                });
            }
        }
    }
    Ok(missing)
}

/// Removes the directories of `made` (outermost first) that are empty, innermost first.
fn remove_if_empty(made: &[PathBuf]) {
    for directory in made.iter().rev() {
        let _ = std::fs::remove_dir(directory);
    }
}

/// Whether `directory` is a scratch directory whose owner no longer runs: it holds a
/// marker file naming a process that is gone.
fn is_stale(directory: &Path) -> bool {
    let marker = directory.join(MARKER);
    let Ok(metadata) = std::fs::symlink_metadata(&marker) else {
        return false;
    };
    if !metadata.is_file() || metadata.len() > 4096 {
        return false;
    }
    std::fs::read_to_string(&marker)
        .ok()
        .and_then(|text| Owner::parse(&text))
        .is_some_and(|owner| !owner.is_running())
}

/// Removes the scratch directories in `parent` that processes which no longer run left
/// behind (a SIGKILL gives no chance to clean up), recognised by their marker. Returns
/// how many were removed.
pub fn remove_stale(parent: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let is_directory = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_directory && is_stale(&entry.path()) && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_names_its_process_and_reads_back() {
        let owner = Owner::current();
        assert_eq!(Owner::parse(&owner.marker_text()), Some(owner.clone()));
        assert!(owner.is_running(), "this process runs");
        assert!(owner.start > 0, "Linux tells when a process started");
        for text in [
            "",
            "hyde-eval scratch directory\npid x\n",
            "a user's notes\n",
        ] {
            assert_eq!(Owner::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn only_marked_directories_of_gone_processes_are_removed() {
        let parent = tempfile::tempdir().unwrap();
        let gone = Owner {
            start: Owner::current().start + 1,
            ..Owner::current()
        };
        let write = |name: &str, marker: Option<String>| {
            let directory = parent.path().join(name);
            std::fs::create_dir(&directory).unwrap();
            std::fs::write(directory.join("data"), "kept?").unwrap();
            if let Some(text) = marker {
                std::fs::write(directory.join(MARKER), text).unwrap();
            }
            directory
        };
        // Of this process, but from an earlier start of its process id: gone.
        let stale = write("a", Some(gone.marker_text()));
        // A name like a scratch directory's, but no marker: a user's.
        let lookalike = write(".hyde-eval-scratch-1-0", None);
        // A marker of a process that runs (this one).
        let live = write("b", Some(Owner::current().marker_text()));
        // A marker file with other text.
        let foreign = write("c", Some("notes\n".into()));
        // Another boot.
        let rebooted = write(
            "d",
            Some(
                Owner {
                    boot: "another-boot".into(),
                    ..Owner::current()
                }
                .marker_text(),
            ),
        );
        assert_eq!(remove_stale(parent.path()), 2);
        assert!(!stale.exists() && !rebooted.exists());
        assert!(lookalike.join("data").exists());
        assert!(live.join("data").exists());
        assert!(foreign.join("data").exists());
    }

    #[test]
    fn directories_made_for_a_scratch_directory_go_with_it_unless_used() {
        let parent = tempfile::tempdir().unwrap();
        let deep = parent.path().join("a/b/c");
        drop(Scratch::create(&deep).unwrap());
        assert!(!parent.path().join("a").exists(), "nothing left behind");
        let scratch = Scratch::create(&deep).unwrap();
        std::fs::write(parent.path().join("a/b/output.txt"), "kept").unwrap();
        drop(scratch);
        assert!(!deep.exists());
        assert!(parent.path().join("a/b/output.txt").is_file());
    }

    #[test]
    fn a_scratch_directory_is_marked_and_removed_when_dropped() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        let path = scratch.path().to_path_buf();
        assert!(path.join(MARKER).is_file());
        assert!(!is_stale(&path), "its owner runs");
        let second = Scratch::create(parent.path()).unwrap();
        assert_ne!(second.path(), path);
        drop(scratch);
        assert!(!path.exists());
    }
}
