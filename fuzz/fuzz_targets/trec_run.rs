//! `eval`'s TREC run reader (chunked and parallel).
#![no_main]

use std::path::Path;

use hyde_eval::trec::parse::parse_run;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_run(Path::new("fuzz.run"), data);
});
