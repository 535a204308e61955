//! What a weight sweep costs compared with one run of the same configuration.
//!
//! `cargo bench --bench sweep` times, on datasets/devmem or `--dataset DIR`, `hyde-eval run` of one
//! blending configuration and `hyde-eval sweep` of the same configuration over 231
//! weight points (steps of 1/20), both in-process from the loaded dataset (no file
//! output), alternating the two, and prints the medians and their ratio. The sweep
//! computes the candidate tables once and only re-fuses them per point, so the ratio
//! stays at a few runs, not 231.
//!
//! Options (after `--`): `--dataset DIR` (default datasets/devmem; a larger one comes
//! from `hyde-eval dataset synth`), `--configuration NAME` (default hyde-3b-hyp),
//! `--repeats N` (default 31), `--threads N` (default 1, so the ratio is not a
//! parallelism effect).

use std::time::Instant;

use hyde_eval::commands::execute_sweep;
use hyde_eval::dataset::Dataset;
use hyde_eval::pipeline::run::{execute, RankingOutputs};
use hyde_eval::settings::RunOptions;
use hyde_eval::settings::{resolve, ConfigFile};
use hyde_eval::sweep::{SweepKind, SweepSettings, DEFAULT_STEPS};

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn option(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|arg| arg == name)
        .and_then(|index| args.get(index + 1).cloned())
}

fn main() {
    let configuration = option("--configuration").unwrap_or_else(|| "hyde-3b-hyp".into());
    let repeats: usize = option("--repeats").map_or(31, |n| n.parse().expect("--repeats N"));
    let threads: usize = option("--threads").map_or(1, |n| n.parse().expect("--threads N"));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dataset_dir =
        option("--dataset").map_or_else(|| root.join("datasets/devmem"), std::path::PathBuf::from);
    let mut dataset = Dataset::load(&dataset_dir)
        .unwrap_or_else(|error| panic!("{} loads: {error}", dataset_dir.display()));
    let settings = resolve(
        &RunOptions {
            configurations: vec![configuration.clone()],
            quiet: true,
            ..RunOptions::default()
        },
        &ConfigFile::default(),
        &dataset.manifest,
    )
    .expect("settings resolve");
    let sweep = SweepSettings {
        kind: SweepKind::Weights {
            steps: DEFAULT_STEPS,
        },
        metrics: vec!["ndcg@10".into()],
        folds: 5,
        seed: 42,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    pool.install(|| {
        // Warm up (page in the binary, fill allocator caches).
        execute(&mut dataset, &settings.run, RankingOutputs::default()).expect("run");
        let points = execute_sweep(&dataset, &settings, &sweep).expect("sweep").configurations
            [0]
        .points
        .len();
        let (mut run_ms, mut sweep_ms) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            let started = Instant::now();
            std::hint::black_box(execute(&mut dataset, &settings.run, RankingOutputs::default()).expect("run"));
            run_ms.push(started.elapsed().as_secs_f64() * 1000.0);
            let started = Instant::now();
            std::hint::black_box(execute_sweep(&dataset, &settings, &sweep).expect("sweep"));
            sweep_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        let (run, sweep) = (median(run_ms), median(sweep_ms));
        println!(
            "{}, {configuration}, {threads} thread(s), median of {repeats}: run {run:.2} ms; sweep of {points} points {sweep:.2} ms; sweep / run = {:.2}",
            dataset.manifest.name,
            sweep / run
        );
    });
}
