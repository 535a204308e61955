//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses its own subset

pub mod http;
pub mod schemas;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `../shared/datasets` beside the repository (or `$HYDE_EVAL_SHARED/datasets`). The
/// tests that read it are `#[ignore]`d; run by name without it, they fail saying where
/// it was looked for.
pub fn shared_datasets(test: &str) -> PathBuf {
    let root = std::env::var_os("HYDE_EVAL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("shared")
        });
    let datasets = root.join("datasets");
    assert!(
        datasets.is_dir(),
        "{test}: {} not found (set HYDE_EVAL_SHARED to the shared/ folder)",
        datasets.display()
    );
    datasets
}

/// A copy of `fixtures/datasets/tiny` (2 facts, 2 queries) in `work/name`.
pub fn tiny_copy(work: &Path, name: &str) -> PathBuf {
    let target = work.join(name);
    std::fs::create_dir_all(&target).unwrap();
    for entry in std::fs::read_dir(repo_path("fixtures/datasets/tiny")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), target.join(entry.file_name())).unwrap();
    }
    target
}

/// Path of a file in the repository.
pub fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// The hyde-eval binary as a command, in the repository directory: the one way the
/// tests start it (add arguments, environment, pipes, then run or spawn it).
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hyde-eval"));
    command.current_dir(repo_path(""));
    command
}

/// Runs the hyde-eval binary in the repository directory and waits for it.
pub fn hyde_eval(args: &[&str]) -> Output {
    command().args(args).output().unwrap()
}

/// A seeded synthetic dataset: `facts` facts of 40 words drawn from a 2,000-word
/// vocabulary, `queries` queries of 6 words with 3 judgments and 2 hypotheses each.
pub fn write_synthetic_dataset(directory: &Path, facts: usize, queries: usize) {
    std::fs::create_dir_all(directory).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let words = |count: usize, next: &mut dyn FnMut(usize) -> usize| {
        (0..count)
            .map(|_| format!("w{}", next(2_000)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut facts_jsonl = String::new();
    for fact in 0..facts {
        facts_jsonl.push_str(&format!(
            "{{\"id\":\"f{fact}\",\"content\":\"{}\"}}\n",
            words(40, &mut next)
        ));
    }
    let mut queries_jsonl = String::new();
    let mut qrels = String::from("query_id\tfact_id\tgrade\n");
    let mut hypotheses_jsonl = String::new();
    for query in 0..queries {
        queries_jsonl.push_str(&format!(
            "{{\"id\":\"q{query}\",\"text\":\"{}\"}}\n",
            words(6, &mut next)
        ));
        hypotheses_jsonl.push_str(&format!(
            "{{\"query_id\":\"q{query}\",\"hypotheses\":[\"{}\",\"{}\"]}}\n",
            words(20, &mut next),
            words(20, &mut next)
        ));
        for judged in 0..3 {
            qrels.push_str(&format!(
                "q{query}\tf{}\t{}\n",
                (query * 7 + judged * 1_001) % facts,
                1 + judged % 2
            ));
        }
    }
    std::fs::write(directory.join("facts.jsonl"), facts_jsonl).unwrap();
    std::fs::write(directory.join("queries.jsonl"), queries_jsonl).unwrap();
    std::fs::write(directory.join("qrels.tsv"), qrels).unwrap();
    std::fs::write(directory.join("hypotheses.jsonl"), hypotheses_jsonl).unwrap();
}

/// What `run --quiet` runs on `dataset` by default.
pub fn quiet_settings(dataset: &hyde_eval::dataset::Dataset) -> hyde_eval::pipeline::run::RunSpec {
    hyde_eval::settings::resolve(
        &hyde_eval::settings::RunOptions {
            quiet: true,
            ..hyde_eval::settings::RunOptions::default()
        },
        &hyde_eval::settings::ConfigFile::default(),
        &dataset.manifest,
    )
    .unwrap()
    .run
}

/// Runs `body` with the pipeline inputs of `dataset` the pipeline tests use: the 384-d
/// hash embedder, the dataset's recorded hypotheses and every configuration of
/// `settings`, without progress bars.
pub fn with_hash_pipeline<R>(
    dataset: &hyde_eval::dataset::Dataset,
    settings: &hyde_eval::pipeline::run::RunSpec,
    body: impl FnOnce(&hyde_eval::pipeline::PipelineInputs<'_>) -> R,
) -> R {
    let embedder = hyde_eval::embed::HashProvider::new(384).unwrap();
    let generator = hyde_eval::generate::RecordedGenerator::from_dataset(dataset);
    body(&hyde_eval::pipeline::PipelineInputs {
        embedder: Some(&embedder),
        generator: &generator,
        configurations: &settings.configurations,
        progress: false,
    })
}
