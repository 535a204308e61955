//! The TOML config file (`--config`): parsed, then resolved into run settings
//! (configuration tables, presets, parameter overrides, gate thresholds).
#![no_main]

#[path = "common.rs"]
mod common;

use hyde_eval::dataset::manifest::Manifest;
use hyde_eval::settings::{resolve, ConfigFile, RunOptions};
use libfuzzer_sys::fuzz_target;

const FILES: &[(&str, &[u8])] = &[(
    "hyde-eval.toml",
    b"dataset = \"datasets/devmem\"\nconfigurations = [\"bm25\", \"mine\"]\nk = [1, 5]\n[params]\nbm25_k1 = 1.2\n[configuration.mine]\npreset = \"blend\"\nweights = { semantic = 0.5, lexical = 0.4, temporal = 0.1 }\n[gate]\nmax_drop = { \"ndcg@10\" = 0.01 }\n",
)];

fuzz_target!(|data: &[u8]| {
    let directory = common::scratch("config");
    common::write_with_one_fuzzed(directory, FILES, data);
    if let Ok(file) = ConfigFile::load(&directory.join("hyde-eval.toml")) {
        let _ = resolve(&RunOptions::default(), &file, &Manifest::defaults("fuzz"));
    }
});
