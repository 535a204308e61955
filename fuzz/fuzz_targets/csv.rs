//! The CSV importer (facts.csv, queries.csv, qrels.csv with named columns).
#![no_main]

#[path = "common.rs"]
mod common;

use hyde_eval::dataset::import::{load, Format, ImportOptions};
use libfuzzer_sys::fuzz_target;

const FILES: &[(&str, &[u8])] = &[
    (
        "facts.csv",
        b"id,content,tags,created_at,access_count,confidence\nf1,redis evicts keys,redis;cache,2026-01-01T00:00:00Z,3,0.9\nf2,\"rows, in tables\",,,,\n",
    ),
    ("queries.csv", b"id,text\nq1,how does redis evict\n"),
    ("qrels.csv", b"query_id,fact_id,grade\nq1,f1,2\n"),
];

fuzz_target!(|data: &[u8]| {
    let directory = common::scratch("csv");
    common::write_with_one_fuzzed(directory, FILES, data);
    let _ = load(Format::Csv, directory, &ImportOptions::default());
});
