//! hyde-eval: evaluate keyword, embedding and HyDE retrieval configurations on labeled
//! query/fact sets, through one shared pipeline, with trec_eval-exact metrics.
//!
//! Data flows one way: [`dataset`] → [`pipeline`] (which uses [`text`], [`index`],
//! [`embed`] and [`generate`]) → [`metrics`] → [`report`]. [`sweep`] re-fuses the
//! pipeline's candidate tables over parameter grids. The CLI in `cli` only wires these
//! together.

pub mod backend_config;
pub mod cache;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod configuration;
pub mod dataset;
pub mod embed;
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
pub mod memory;
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
