//! The BEIR importer (corpus.jsonl, queries.jsonl, qrels/test.tsv).
#![no_main]

#[path = "common.rs"]
mod common;

use hyde_eval::dataset::import::{load, Format, ImportOptions};
use libfuzzer_sys::fuzz_target;

const FILES: &[(&str, &[u8])] = &[
    (
        "corpus.jsonl",
        b"{\"_id\":\"d1\",\"title\":\"Redis\",\"text\":\"evicts keys\"}\n{\"_id\":\"d2\",\"title\":\"\",\"text\":\"rows\"}\n",
    ),
    ("queries.jsonl", b"{\"_id\":\"q1\",\"text\":\"redis eviction\"}\n"),
    ("qrels/test.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\n"),
];

fuzz_target!(|data: &[u8]| {
    let directory = common::scratch("beir");
    common::write_with_one_fuzzed(directory, FILES, data);
    let _ = load(Format::Beir, directory, &ImportOptions::default());
});
