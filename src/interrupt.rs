//! Interruption: SIGINT and SIGTERM end the process with exit code 130 or 143
//! (128 + the signal number, the shell's convention), after removing the temporary files
//! and directories that the atomic writers have registered.
//!
//! Reports and caches are written under temporary names and renamed into place, so an
//! interrupted run never leaves a half-written report: what is in place is complete,
//! and the temporaries are removed here. Every write of a temporary and every directory
//! swap (old report out, new report in) runs as a [`critical`] section: the signal
//! handler waits for the one in progress, then holds the lock until the process exits,
//! so no write can recreate a temporary it has removed and the destination never goes
//! missing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::error::Error;

/// Temporary paths being written, removed if the process is interrupted.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Outputs swapped into place whole, named in the interruption message.
static COMPLETED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Held by critical sections, and by the signal handler from clean-up until exit.
static CRITICAL: Mutex<()> = Mutex::new(());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Installs the SIGINT/SIGTERM handler (a thread that waits for either signal).
pub fn install() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let _critical = lock(&CRITICAL);
                for path in lock(&TEMPORARIES).iter() {
                    let _ = if path.is_dir() {
                        std::fs::remove_dir_all(path)
                    } else {
                        std::fs::remove_file(path)
                    };
                }
                let name = if signal == SIGINT {
                    "SIGINT"
                } else {
                    "SIGTERM"
                };
                eprintln!("{}", interruption_message(name, &lock(&COMPLETED)));
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// What the process says when `signal` interrupts it, after `completed` outputs were put
/// in place whole.
fn interruption_message(signal: &str, completed: &[PathBuf]) -> String {
    if completed.is_empty() {
        return format!(
            "hyde-eval: interrupted by {signal}; outputs of this run that were not complete were removed"
        );
    }
    let names: Vec<String> = completed
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    format!(
        "hyde-eval: interrupted by {signal}; complete and in place: {}; outputs of this run that were not complete were removed",
        names.join(", ")
    )
}

/// Records that `path` was put in place whole, so an interruption after it says so.
pub fn completed(path: &Path) {
    let mut completed = lock(&COMPLETED);
    if !completed.iter().any(|known| known == path) {
        completed.push(path.to_path_buf());
    }
}

/// A temporary path registered for removal on interruption while the guard lives.
pub struct Temporary {
    path: PathBuf,
}

impl Temporary {
    pub fn register(path: &Path) -> Temporary {
        lock(&TEMPORARIES).push(path.to_path_buf());
        Temporary {
            path: path.to_path_buf(),
        }
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        let mut temporaries = lock(&TEMPORARIES);
        if let Some(position) = temporaries.iter().position(|path| *path == self.path) {
            temporaries.swap_remove(position);
        }
    }
}

/// Writes `bytes` to `path` through a temporary sibling, then renames it into place, so a
/// reader sees the old file or the new one. The temporary's name is unique to this
/// process and call (threads may write the same path at once), it is registered for
/// removal on interruption, and with `durable` it is flushed to disk before the rename.
pub fn write_through_temporary(path: &Path, bytes: &[u8], durable: bool) -> Result<(), Error> {
    write_through_temporary_with(path, durable, |file| file.write_all(bytes))
}

/// [`write_through_temporary`] for content too large to assemble in memory: `write`
/// streams it into the temporary file.
pub fn write_through_temporary_with(
    path: &Path,
    durable: bool,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), Error> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(
        ".{name}.partial-{}-{}",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Write { path, source }
    };
    let _registered = Temporary::register(&temporary);
    critical(|| {
        let file = std::fs::File::create(&temporary).map_err(failed(&temporary))?;
        let mut writer = std::io::BufWriter::new(file);
        write(&mut writer)
            .and_then(|()| writer.flush())
            .map_err(failed(&temporary))?;
        if durable {
            let _ = writer.get_ref().sync_all();
        }
        drop(writer);
        std::fs::rename(&temporary, path).map_err(failed(path))
    })
}

/// Runs `work` so that an interruption waits until it is done, and no `work` starts
/// once an interruption has begun its clean-up.
pub fn critical<T>(work: impl FnOnce() -> T) -> T {
    let _critical = lock(&CRITICAL);
    work()
}
