//! The SMART importer (Cranfield's file names; the other collections share the parser).
#![no_main]

#[path = "common.rs"]
mod common;

use hyde_eval::dataset::import::{load, Format, ImportOptions};
use libfuzzer_sys::fuzz_target;

const FILES: &[(&str, &[u8])] = &[
    (
        "cran.all.1400",
        b".I 1\n.T\nexperimental investigation\n.A\nbrenckman,m.\n.B\nj. ae. scs. 25, 1958\n.W\nexperimental investigation of the aerodynamics\n.I 2\n.T\nsimple shear flow\n.W\nsimple shear flow past a flat plate\n",
    ),
    ("cran.qry", b".I 001\n.W\nwhat similarity laws must be obeyed\n"),
    ("cranqrel", b"1 1 2\n1 2 4\n"),
];

fuzz_target!(|data: &[u8]| {
    let directory = common::scratch("smart");
    common::write_with_one_fuzzed(directory, FILES, data);
    let _ = load(Format::Smart, directory, &ImportOptions::default());
});
