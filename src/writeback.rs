//! Files whose written pages start on their way to the disk while more is written.
//!
//! A report is made durable with `fsync` before it is renamed into place
//! (`report::files`). Left alone, the kernel holds a run file's dirty pages until that
//! `fsync`, which then waits for all of them at once: for a 300,000-line run file that
//! wait was the largest single part of a short run's wall time. [`WritebackFile`] asks
//! the kernel (`sync_file_range`, Linux) to start writing each few mebibytes as soon as
//! they are written, without waiting, so the disk works while the run goes on and the
//! final `fsync` finds little left. Elsewhere it is a plain file.

use std::fs::File;
use std::io::Write;

/// Bytes written between two requests to start writing back.
const WRITEBACK_STEP: u64 = 2 << 20;

/// A file being written from start to end, whose pages are sent to the disk in steps
/// of [`WRITEBACK_STEP`] as they are written.
pub struct WritebackFile {
    file: File,
    /// Bytes written so far.
    written: u64,
    /// Bytes whose writeback has been started.
    started: u64,
}

impl WritebackFile {
    /// Wraps `file`, positioned at its start.
    pub fn new(file: File) -> WritebackFile {
        WritebackFile {
            file,
            written: 0,
            started: 0,
        }
    }

    /// The file, once everything written has been handed to the kernel.
    pub fn into_file(self) -> File {
        self.file
    }

    /// Starts the writeback of everything written since the last start, without
    /// waiting for it. Best effort: the `fsync` that makes the file durable still
    /// decides.
    fn start_writeback(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: sync_file_range only reads the descriptor and the range; with
            // SYNC_FILE_RANGE_WRITE alone it starts writing dirty pages and returns.
            unsafe {
                libc::sync_file_range(
                    self.file.as_raw_fd(),
                    self.started as libc::off64_t,
                    (self.written - self.started) as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        self.started = self.written;
    }
}

impl Write for WritebackFile {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let count = self.file.write(bytes)?;
        self.written += count as u64;
        if self.written - self.started >= WRITEBACK_STEP {
            self.start_writeback();
        }
        Ok(count)
    }

    /// Hands everything to the kernel (a file has no buffer of its own) and starts the
    /// writeback of the rest.
    fn flush(&mut self) -> std::io::Result<()> {
        if self.written > self.started {
            self.start_writeback();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufWriter, Read, Seek};

    #[test]
    fn what_is_written_in_steps_reads_back_whole() {
        let mut file = tempfile::tempfile().unwrap();
        let mut writer =
            BufWriter::with_capacity(1000, WritebackFile::new(file.try_clone().unwrap()));
        // Past several writeback steps, in pieces that do not divide them.
        let expected: Vec<u8> = (0..5 * WRITEBACK_STEP + 12_345)
            .map(|index| (index % 251) as u8)
            .collect();
        for piece in expected.chunks(7_919) {
            writer.write_all(piece).unwrap();
        }
        writer.flush().unwrap();
        let inner = writer
            .into_inner()
            .map_err(|error| error.to_string())
            .unwrap();
        assert_eq!(inner.written, expected.len() as u64);
        assert_eq!(inner.started, inner.written, "flush starts the rest");
        let mut back = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut back).unwrap();
        assert!(
            back == expected,
            "{} of {} bytes read back",
            back.len(),
            expected.len()
        );
    }
}
