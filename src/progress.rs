//! Stage lines on stderr: which stage of the work a long command is in and how long
//! it has run (`hyde-eval: retrieving 500 queries x 10 configurations (2.4 s)`), so a
//! CI log never looks hung and a person sees where the time goes. Printed unless the
//! command is quiet; the progress bars of the long stages come beneath them on a
//! terminal.

use std::sync::OnceLock;
use std::time::Instant;

/// When the process started its work (the first stage line or [`start`]).
static STARTED: OnceLock<Instant> = OnceLock::new();

/// Marks the start of the command's work; the elapsed times count from here.
pub fn start() {
    STARTED.get_or_init(Instant::now);
}

/// Prints `hyde-eval: {stage} (elapsed)` on stderr when `enabled`.
pub fn stage(enabled: bool, stage: &str) {
    let started = *STARTED.get_or_init(Instant::now);
    if enabled {
        eprintln!(
            "hyde-eval: {stage} ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
    }
}
