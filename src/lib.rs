//! hyde-eval: evaluate keyword, embedding and HyDE retrieval configurations on labeled
//! query/fact sets, through one shared pipeline, with trec_eval-exact metrics.
//!
//! Data flows one way: [`dataset`] → [`pipeline`] (its stages use [`text`], [`index`],
//! [`embed`], [`generate`] and [`fusion`]) → [`results`] (through the ranking digests)
//! → [`report`]. [`gate`], [`compare`] and [`sweep`] judge and vary runs; [`settings`]
//! resolves what a run does; [`commands`] hold one file per command, [`cli`] their
//! arguments. docs/architecture.md draws the stages and states the layers; a test holds
//! the imports to them.
//!
//! `eprintln!` and `println!` are shadowed crate-wide (below, before every module) by
//! macros that print through [`console`]: a line whose reader has gone (a closed pipe)
//! is dropped instead of panicking, so a command keeps its own exit code.

/// std's `eprintln!` for every module of the crate, through [`console::stderr_line`]:
/// one write per line, and a closed stderr is no panic.
macro_rules! eprintln {
    ($($argument:tt)*) => {
        $crate::console::stderr_line(format_args!($($argument)*))
    };
}

/// std's `println!` for every module of the crate, through [`console::stdout_line`]:
/// one write per line, and a closed pipe is no panic.
macro_rules! println {
    ($($argument:tt)*) => {
        $crate::console::stdout_line(format_args!($($argument)*))
    };
}

pub mod cache;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod configuration;
pub mod console;
pub mod dataset;
pub mod embed;
pub mod engine;
pub mod error;
pub mod expectations;
pub mod fusion;
pub mod gate;
pub mod generate;
pub mod hints;
pub mod http;
pub mod index;
pub mod input;
pub mod interrupt;
pub mod judging;
pub mod memory;
pub mod metric_names;
pub mod metrics;
pub mod models;
pub mod pipeline;
pub mod progress;
pub mod ranking;
pub mod report;
pub mod results;
pub mod settings;
pub mod stats;
pub mod sweep;
pub mod text;
pub mod trec;
pub mod trec_eval;
pub mod write_policy;
pub mod writeback;
