//! The native dataset loader (facts.jsonl, queries.jsonl, qrels.tsv, hypotheses.jsonl,
//! dataset.toml): any bytes give a dataset or an error, never a panic.
#![no_main]

#[path = "common.rs"]
mod common;

use hyde_eval::dataset::Dataset;
use libfuzzer_sys::fuzz_target;

const FILES: &[(&str, &[u8])] = &[
    (
        "facts.jsonl",
        b"{\"id\":\"f1\",\"content\":\"redis evicts keys\",\"tags\":[\"redis\"],\"created_at\":\"2026-01-01T00:00:00Z\",\"access_count\":2,\"confidence\":0.9}\n{\"id\":\"f2\",\"content\":\"postgres rows\"}\n",
    ),
    (
        "queries.jsonl",
        b"{\"id\":\"q1\",\"text\":\"how does redis evict\",\"tags\":[\"exact\"],\"expect\":[{\"kind\":\"in_top\",\"fact\":\"f1\",\"k\":1}]}\n",
    ),
    ("qrels.tsv", b"query_id\tfact_id\tgrade\nq1\tf1\t2\n"),
    (
        "hypotheses.jsonl",
        b"{\"query_id\":\"q1\",\"hypotheses\":[\"Redis evicts by TTL.\"]}\n",
    ),
    (
        "dataset.toml",
        b"name = \"fuzz\"\nnow = \"2026-03-01T00:00:00Z\"\nk = [1, 3]\n",
    ),
];

fuzz_target!(|data: &[u8]| {
    let directory = common::scratch("native");
    common::write_with_one_fuzzed(directory, FILES, data);
    let _ = Dataset::load(directory);
});
