//! The lines hyde-eval prints for a person: every `eprintln!` and `println!` of the crate
//! and of the binary lands here (`lib.rs` and `main.rs` shadow std's macros with ones
//! that call [`stderr_line`] and [`stdout_line`]).
//!
//! std's macros panic when the stream's reader is gone (`hyde-eval ... 2>&1 | head -1`
//! closes the pipe after one line), and the panic turns the command's exit code into
//! 101. Here a line nobody reads any more is dropped and the command ends with its own
//! exit code. Each line goes out in one write, so lines of several threads never
//! interleave within a line. Outputs that a command must deliver whole (tables,
//! reports, run files) are written with error checks elsewhere; these lines are notes
//! and short answers.

use std::fmt::{self, Write as _};
use std::io::Write;

/// Writes `arguments` and a newline to stderr in one write; a failed write (a closed
/// pipe, a closed descriptor) is ignored: a note nobody can read stops nothing.
pub fn stderr_line(arguments: fmt::Arguments<'_>) {
    stderr_text(&line(arguments));
}

/// Writes `text` to stderr in one write, ignoring a failure as [`stderr_line`] does.
pub fn stderr_text(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Writes `arguments` and a newline to stdout in one write. A reader that went away (a
/// closed pipe) is ignored, as `commands` ignore it for their outputs; any other
/// failure is reported on stderr, since a line cannot return an error.
pub fn stdout_line(arguments: fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(line(arguments).as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            stderr_line(format_args!("warning: cannot write to stdout: {error}"));
        }
        _ => {}
    }
}

/// `arguments` formatted, with a newline.
fn line(arguments: fmt::Arguments<'_>) -> String {
    let mut text = String::new();
    // Writing to a String fails only if a Display implementation does.
    let _ = text.write_fmt(arguments);
    text.push('\n');
    text
}
