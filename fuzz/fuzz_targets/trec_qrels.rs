//! `eval`'s TREC qrels reader (trec_eval's format).
#![no_main]

use std::path::Path;

use hyde_eval::trec::parse::{as_text, parse_qrels};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.qrels");
    if let Ok(text) = as_text(path, data) {
        let _ = parse_qrels(path, text);
    }
});
