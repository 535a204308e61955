//! The one shared pipeline every configuration runs through, one file per stage in the
//! order data flows:
//! - [`prepare`](mod@prepare): the corpus sorted by id, its lexical index and temporal scores
//!   (`prepare.rs`); a large corpus' facts wait on disk meanwhile ([`fact_spill`]);
//! - [`expand`]: each query's keywords and hypotheses, and the skip heuristics
//!   (`expand.rs`);
//! - [`embed`]: fact vectors (of each fact's chunks with `--chunk`, [`chunks`]), query and hypothesis vectors (`embed.rs`), large sets of
//!   the latter waiting on disk until their chunk ([`vector_spill`]);
//! - [`retrieve`]: queries in chunks, each chunk's vector searches in one batch, and what
//!   each configuration searches with for each query (`retrieve.rs`); with `--engine`,
//!   the searches a search engine serves and what its index costs ([`served`]);
//! - [`fuse`]: a configuration's candidates and ranking for one query, by its fusion
//!   method (`fuse.rs`, over [`crate::fusion`]);
//! - [`run`](mod@run): the driver: every configuration over every query into the ranking sinks,
//!   and a whole evaluation ([`run::execute`]);
//! - [`sources`]: the `sources` filter and `source_boost` on fused rankings;
//! - [`accounting`]: HyDE and backend accounting, percentiles, stage timings.
//!
//! Configurations differ only in their [`Plan`] and
//! [`Params`](crate::configuration::Params); there is no per-
//! configuration code path. Queries run in parallel, in chunks: a chunk's vectors are
//! searched in one batch, its rankings handed to each configuration's
//! [`crate::ranking::RankingSink`] in query order, and only then is the next chunk
//! retrieved, so memory does not grow with the number of queries and results do not
//! depend on the thread count.
//!
//! `state.rs` holds the data the stages pass on; this file declares the stages and
//! re-exports the public entry points. The pipeline imports [`crate::fusion`] and the
//! layers below it (and `results` for its output types), never reports, sweeps, the
//! gate, comparisons, settings or the command line.

pub mod accounting;
pub mod chunks;
pub mod embed;
pub mod expand;
pub mod fact_spill;
pub mod fuse;
pub mod prepare;
pub mod retrieve;
pub mod run;
pub mod served;
pub mod sources;
pub mod state;
pub mod vector_spill;

pub use accounting::{HydeAccounting, StageTimings};
pub use expand::{max_hypotheses, mentions_code};
pub use fuse::ConfigurationTables;
pub use prepare::{index_corpus, prepare};
pub use run::run;
pub use state::{ConfigurationOutput, IndexedCorpus, PipelineInputs, PipelineOutput, Prepared};
