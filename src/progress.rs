//! Progress on stderr: which stage of the work a long command is in and how long it has
//! run (`hyde-eval: retrieving 500 queries x 10 configurations (2.4 s)`), so a CI log
//! never looks hung and a person sees where the time goes. Printed unless the command is
//! quiet.
//!
//! Each stage line is printed when its stage starts. While a stage runs, a heartbeat
//! prints a plain line every few seconds (`hyde-eval: retrieving ...: 250/500 (50%),
//! 4.1 s in stage, about 4.1 s left (6.5 s)`; load and index stages, which count
//! nothing, give their elapsed time): always when stderr is not a terminal, and on a
//! terminal while no progress bar is drawn. Counted stages ([`counted`]) draw a bar on
//! a terminal, whose estimate of the time left is the elapsed time scaled by what
//! remains, shown once [`ESTIMATE_AFTER_PERCENT`] of the units are done (the first units
//! carry warm-up costs, so an estimate from them alone is far too long).
//! `HYDE_EVAL_PROGRESS_INTERVAL_MS`
//! sets the heartbeat's interval (default 5,000 ms).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// When the process started its work (the first stage line or [`start`]).
static STARTED: OnceLock<Instant> = OnceLock::new();

/// The stage running now, when stage lines are enabled: its line and when it started.
static CURRENT: Mutex<Option<(String, Instant)>> = Mutex::new(None);

/// The current stage's count: done of total (total 0: the stage counts nothing).
static DONE: AtomicU64 = AtomicU64::new(0);
static TOTAL: AtomicU64 = AtomicU64::new(0);

/// A progress bar is being drawn on the terminal (the heartbeat then keeps quiet).
static DRAWING: AtomicBool = AtomicBool::new(false);

/// The heartbeat thread, started with the first enabled stage.
static HEARTBEAT: OnceLock<()> = OnceLock::new();

/// The environment variable that sets the heartbeat's interval, in milliseconds.
pub const INTERVAL_VARIABLE: &str = "HYDE_EVAL_PROGRESS_INTERVAL_MS";

const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);

/// Marks the start of the command's work; the elapsed times count from here.
pub fn start() {
    STARTED.get_or_init(Instant::now);
}

/// Prints `hyde-eval: {stage} (elapsed)` on stderr when `enabled`, and makes it the
/// stage the heartbeat reports.
pub fn stage(enabled: bool, stage: &str) {
    let started = *STARTED.get_or_init(Instant::now);
    if !enabled {
        return;
    }
    // The line is printed under the lock the heartbeat prints under, so no heartbeat
    // of the previous stage can follow it.
    let mut current = lock_current();
    print_line(&format!(
        "hyde-eval: {stage} ({:.1} s)\n",
        started.elapsed().as_secs_f64()
    ));
    TOTAL.store(0, Ordering::Relaxed);
    DONE.store(0, Ordering::Relaxed);
    *current = Some((stage.to_owned(), Instant::now()));
    drop(current);
    HEARTBEAT.get_or_init(|| {
        let interval = interval(std::env::var(INTERVAL_VARIABLE).ok().as_deref());
        let terminal = std::io::stderr().is_terminal();
        std::thread::spawn(move || loop {
            std::thread::sleep(interval);
            if terminal && DRAWING.load(Ordering::Relaxed) {
                continue;
            }
            print_heartbeat();
        });
    });
}

/// The heartbeat's interval from the environment variable's value: a whole number of
/// milliseconds (at least 1), else the default.
fn interval(value: Option<&str>) -> Duration {
    value
        .and_then(|text| text.trim().parse::<u64>().ok())
        .filter(|&milliseconds| milliseconds > 0)
        .map_or(DEFAULT_INTERVAL, Duration::from_millis)
}

/// The current stage; the stage and its count change together under this lock.
fn lock_current() -> std::sync::MutexGuard<'static, Option<(String, Instant)>> {
    CURRENT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Prints the heartbeat's line for the current stage, if one runs, under the stage's
/// lock: a stage's line and the heartbeats of the stage before it never cross.
fn print_heartbeat() {
    let current = lock_current();
    let Some((stage, stage_started)) = current.as_ref() else {
        return;
    };
    let total_elapsed = STARTED
        .get()
        .map_or(0.0, |started| started.elapsed().as_secs_f64());
    print_line(&format!(
        "hyde-eval: {stage}: {} ({total_elapsed:.1} s)\n",
        progress_text(
            DONE.load(Ordering::Relaxed),
            TOTAL.load(Ordering::Relaxed),
            stage_started.elapsed()
        )
    ));
}

/// Writes a whole line to stderr in one write (a heartbeat under way when the command
/// ends, its thread still running, leaves no half line in the log). Progress is best
/// effort: a closed stderr does not stop the command.
fn print_line(line: &str) {
    crate::console::stderr_text(line);
}

/// `250/500 (50%), 4.1 s in stage, about 4.1 s left`, or the elapsed time alone when
/// the stage counts nothing.
fn progress_text(done: u64, total: u64, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    if total == 0 {
        return format!("{seconds:.1} s in stage");
    }
    let done = done.min(total);
    format!(
        "{done}/{total} ({:.0}%), {seconds:.1} s in stage, {}",
        done as f64 * 100.0 / total as f64,
        time_left(done, total, elapsed)
    )
}

/// The share of a counted stage, in percent, that must be done before the time left is
/// estimated.
pub const ESTIMATE_AFTER_PERCENT: u64 = 5;

/// The units of `total` that must be done before the time left is estimated:
/// [`ESTIMATE_AFTER_PERCENT`] of them, rounded up, and at least one.
fn units_before_estimate(total: u64) -> u64 {
    total
        .saturating_mul(ESTIMATE_AFTER_PERCENT)
        .div_ceil(100)
        .max(1)
}

/// The time left, as the time so far scaled by what remains; nothing is claimed before
/// [`units_before_estimate`] are done.
fn time_left(done: u64, total: u64, elapsed: Duration) -> String {
    if done < units_before_estimate(total) {
        return format!("time left estimated once {ESTIMATE_AFTER_PERCENT}% is done");
    }
    let left = elapsed.as_secs_f64() * (total - done.min(total)) as f64 / done as f64;
    format!("about {} left", duration_text(left))
}

/// `4.1 s`, `3 min 20 s`, `2 h 5 min`.
fn duration_text(seconds: f64) -> String {
    if seconds < 60.0 {
        format!("{seconds:.1} s")
    } else if seconds < 3600.0 {
        format!(
            "{} min {} s",
            (seconds / 60.0) as u64,
            (seconds % 60.0) as u64
        )
    } else {
        format!(
            "{} h {} min",
            (seconds / 3600.0) as u64,
            ((seconds % 3600.0) / 60.0) as u64
        )
    }
}

/// The progress of a counted stage: what the heartbeat reports and, when asked, a bar
/// on a terminal. Ends when dropped or finished.
pub struct Counted {
    bar: ProgressBar,
    counting: bool,
}

/// Counts `length` units of the current stage when `enabled`, drawing a bar labelled
/// `message` when `draw` too (and stderr is a terminal).
pub fn counted(enabled: bool, draw: bool, length: usize, message: &'static str) -> Counted {
    if !enabled {
        return Counted {
            bar: ProgressBar::hidden(),
            counting: false,
        };
    }
    {
        let _current = lock_current();
        DONE.store(0, Ordering::Relaxed);
        TOTAL.store(length as u64, Ordering::Relaxed);
    }
    let bar = if draw && std::io::stderr().is_terminal() {
        DRAWING.store(true, Ordering::Relaxed);
        let bar = ProgressBar::with_draw_target(Some(length as u64), ProgressDrawTarget::stderr());
        let style =
            ProgressStyle::with_template("{msg:>12} [{bar:30}] {pos}/{len} ({elapsed}, {left})")
                .expect("static template")
                .with_key(
                    "left",
                    |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                        let text =
                            time_left(state.pos(), state.len().unwrap_or(0), state.elapsed());
                        let _ = out.write_str(&text);
                    },
                )
                .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(message);
        bar
    } else {
        ProgressBar::hidden()
    };
    Counted {
        bar,
        counting: true,
    }
}

impl Counted {
    /// `units` more are done.
    pub fn inc(&self, units: u64) {
        self.bar.inc(units);
        if self.counting {
            DONE.fetch_add(units, Ordering::Relaxed);
        }
    }

    /// Clears the bar; the stage counts nothing more.
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
        if self.counting {
            let _current = lock_current();
            TOTAL.store(0, Ordering::Relaxed);
            DRAWING.store(false, Ordering::Relaxed);
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_from_the_environment() {
        assert_eq!(interval(None), Duration::from_secs(5));
        assert_eq!(interval(Some("250")), Duration::from_millis(250));
        assert_eq!(interval(Some("0")), Duration::from_secs(5));
        assert_eq!(interval(Some("soon")), Duration::from_secs(5));
    }

    #[test]
    fn progress_and_time_left() {
        // 250 of 1,000 in 10 s: 750 more at 25 per second is 30 s.
        assert_eq!(
            progress_text(250, 1000, Duration::from_secs(10)),
            "250/1000 (25%), 10.0 s in stage, about 30.0 s left"
        );
        assert_eq!(
            progress_text(0, 1000, Duration::from_millis(1500)),
            "0/1000 (0%), 1.5 s in stage, time left estimated once 5% is done"
        );
        assert_eq!(
            progress_text(0, 0, Duration::from_millis(54_000)),
            "54.0 s in stage"
        );
        // 1 of 9 in 25 s: 8 more take 200 s.
        assert_eq!(
            time_left(1, 9, Duration::from_secs(25)),
            "about 3 min 20 s left"
        );
        assert_eq!(duration_text(7500.0), "2 h 5 min");
    }

    #[test]
    fn the_estimate_waits_until_five_percent_are_done() {
        // A stage of 1,000 queries whose first took 3 s of warm-up: scaled alone, 999
        // more would take 2,997 s (50 minutes). Nothing is claimed until 50 are done.
        let held = "time left estimated once 5% is done";
        assert_eq!(time_left(1, 1000, Duration::from_secs(3)), held);
        assert_eq!(time_left(49, 1000, Duration::from_secs(5)), held);
        // 50 of 1,000 in 5 s: 950 more at 10 per second is 95 s.
        assert_eq!(
            time_left(50, 1000, Duration::from_secs(5)),
            "about 1 min 35 s left"
        );
        // 5% of 9 is 0.45, rounded up to one unit; 5% of 30 is 1.5, rounded up to 2.
        assert_eq!(units_before_estimate(9), 1);
        assert_eq!(units_before_estimate(30), 2);
        assert_eq!(time_left(1, 30, Duration::from_secs(1)), held);
        assert_eq!(
            time_left(2, 30, Duration::from_secs(2)),
            "about 28.0 s left"
        );
        assert_eq!(units_before_estimate(0), 1);
    }
}
