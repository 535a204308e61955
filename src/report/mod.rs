//! Rendering results for people and other tools: `table` for the terminal, `markdown`
//! for pull-request summaries, `files` writes a run's report directory (results.json,
//! per-query CSV, TREC run files, timings) atomically, `html` the report page (with
//! `charts`, `metrics_csv` and the per-query `diagnostics`), `sweep` the outputs of
//! `hyde-eval sweep` and `eval` those of `hyde-eval eval`. Every renderer reads the
//! documents of `results`, `gate`, `compare` and `sweep`; none computes them.

pub mod charts;
pub mod diagnostics;
pub mod eval;
pub mod files;
pub mod html;
pub mod markdown;
pub mod metrics_csv;
pub mod sweep;
pub mod table;
