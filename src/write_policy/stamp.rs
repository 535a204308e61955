//! Stamps: how hyde-eval knows a file is one it wrote and nobody has changed since.
//!
//! Every file the write policy writes carries an extended attribute ([`ATTRIBUTE`])
//! holding the xxh3-128 digest of its content, set on the temporary file before it is
//! renamed into place. A file whose attribute matches its content is hyde-eval's own and
//! may be replaced by the next write; a file without it (a user's, or one copied, which
//! drops extended attributes) or whose content changed (edited by hand) is not. Where the
//! file system keeps no user extended attributes, no file is stamped and replacing any
//! existing file takes `--force`.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use xxhash_rust::xxh3::Xxh3;

/// The extended attribute that holds a file's stamp.
pub const ATTRIBUTE: &str = "user.hyde-eval.written";

/// The stamp of `content`.
fn stamp_of(digest: u128) -> String {
    format!("xxh3-128:{digest:032x}")
}

/// A writer that digests what passes through it.
pub struct Digesting<W: Write> {
    inner: W,
    digest: Xxh3,
}

impl<W: Write> Digesting<W> {
    pub fn new(inner: W) -> Digesting<W> {
        Digesting {
            inner,
            digest: Xxh3::new(),
        }
    }

    /// The writer and the stamp of everything written.
    pub fn finish(self) -> (W, String) {
        (self.inner, stamp_of(self.digest.digest128()))
    }
}

impl<W: Write> Write for Digesting<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let count = self.inner.write(bytes)?;
        self.digest.update(&bytes[..count]);
        Ok(count)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Sets `stamp` on the open `file`. Returns whether the file system kept it.
pub fn set(file: &File, stamp: &str) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let name = std::ffi::CString::new(ATTRIBUTE).expect("no NUL in the name");
        // SAFETY: the descriptor is open; name is NUL-terminated; the value is read for
        // its length.
        let result = unsafe {
            libc::fsetxattr(
                file.as_raw_fd(),
                name.as_ptr(),
                stamp.as_ptr().cast(),
                stamp.len(),
                0,
            )
        };
        result == 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, stamp);
        false
    }
}

/// The stamp the file at `path` carries (not following a symlink), if any.
fn read(path: &Path) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        let name = std::ffi::CString::new(ATTRIBUTE).expect("no NUL in the name");
        let mut value = [0u8; 128];
        // SAFETY: both strings are NUL-terminated; the buffer's length is passed.
        let length = unsafe {
            libc::lgetxattr(
                path.as_ptr(),
                name.as_ptr(),
                value.as_mut_ptr().cast(),
                value.len(),
            )
        };
        let length = usize::try_from(length).ok()?;
        String::from_utf8(value[..length].to_vec()).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

/// Whether the regular file at `path` is one hyde-eval wrote, unchanged since: its stamp
/// matches its content.
pub fn is_unchanged_own(path: &Path) -> bool {
    let Some(stamp) = read(path) else {
        return false;
    };
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    let mut digesting = Digesting::new(std::io::sink());
    if std::io::copy(&mut file, &mut digesting).is_err() {
        return false;
    }
    digesting.finish().1 == stamp
}

/// Whether the file system holding `directory` keeps user extended attributes (the
/// stamps), checked on a file made and removed there.
pub fn supported_in(directory: &Path) -> bool {
    let Ok(file) = tempfile::tempfile_in(directory) else {
        return false;
    };
    set(&file, &stamp_of(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_matches_its_content_until_the_content_changes() {
        let directory = tempfile::tempdir().unwrap();
        if !supported_in(directory.path()) {
            // Nothing is stamped here; the writers' tests cover that case.
            assert!(!is_unchanged_own(directory.path()));
            return;
        }
        let path = directory.path().join("out.run");
        let mut writer = Digesting::new(File::create(&path).unwrap());
        writer.write_all(b"q1 Q0 d1 1 2.5 t\n").unwrap();
        let (file, stamp) = writer.finish();
        assert_eq!(
            stamp,
            stamp_of(xxhash_rust::xxh3::xxh3_128(b"q1 Q0 d1 1 2.5 t\n"))
        );
        assert!(!is_unchanged_own(&path), "not stamped yet");
        assert!(set(&file, &stamp));
        drop(file);
        assert!(is_unchanged_own(&path));
        // Edited in place (the attribute stays, the content no longer matches).
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"q1 Q0 d2 2 1.0 t\n")
            .unwrap();
        assert!(!is_unchanged_own(&path));
        // A copy carries no stamp.
        let copy = directory.path().join("copy.run");
        std::fs::write(&copy, b"q1 Q0 d1 1 2.5 t\n").unwrap();
        assert!(!is_unchanged_own(&copy));
    }
}
