//! chatcli's memory file (memory_index.json) in place of facts.jsonl.
#![no_main]

#[path = "common.rs"]
mod common;

use hyde_eval::dataset::Dataset;
use libfuzzer_sys::fuzz_target;

const FILES: &[(&str, &[u8])] = &[
    (
        "memory_index.json",
        b"[{\"id\":\"f1\",\"content\":\"redis evicts keys\",\"tags\":[\"redis\"],\"created_at\":\"0001-01-01T00:00:00Z\",\"confidence\":0,\"score\":1.5,\"source\":\"chat\"}]",
    ),
    ("queries.jsonl", b"{\"id\":\"q1\",\"text\":\"redis\"}\n"),
    ("qrels.tsv", b"q1\tf1\t1\n"),
];

fuzz_target!(|data: &[u8]| {
    let directory = common::scratch("chatcli");
    // Always fuzz the memory file; the selector byte still comes first.
    let mut input = vec![0u8];
    input.extend_from_slice(data.get(1..).unwrap_or_default());
    common::write_with_one_fuzzed(directory, FILES, &input);
    let _ = Dataset::load(directory);
});
