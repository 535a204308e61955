//! Exact dense search throughput: `FlatIndex::search_batch` on vectors read from files,
//! for `scripts/bench_dense.sh`, which runs faiss-cpu's IndexFlatIP on the same files in
//! the same run and prints both and their ratio.
//!
//! `cargo bench --bench dense -- --facts F --queries Q --dimension D [--top-k 1000]
//! [--repeats 3] [--ids OUT]`: F and Q hold little-endian f32 rows. Prints one JSON line
//! (index build seconds, best search seconds, queries per second) and, with `--ids`,
//! writes the last search's top-k fact positions (u32 little-endian, -1 padded) for the
//! agreement check.

use std::time::Instant;

use hyde_eval::index::FlatIndex;

fn option(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|arg| arg == name)
        .and_then(|index| args.get(index + 1).cloned())
}

fn rows(path: &str, dimension: usize) -> Vec<Vec<f32>> {
    let bytes = std::fs::read(path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let values: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|chunk| f32::from_le_bytes(chunk.try_into().expect("4 bytes")))
        .collect();
    values
        .chunks_exact(dimension)
        .map(<[f32]>::to_vec)
        .collect()
}

fn main() {
    let (Some(facts), Some(queries), Some(dimension)) = (
        option("--facts"),
        option("--queries"),
        option("--dimension"),
    ) else {
        eprintln!("dense bench: needs --facts F --queries Q --dimension D (see scripts/bench_dense.sh); nothing to do");
        return;
    };
    let dimension: usize = dimension.parse().expect("--dimension N");
    let top_k: usize = option("--top-k").map_or(1000, |n| n.parse().expect("--top-k N"));
    let repeats: usize = option("--repeats").map_or(3, |n| n.parse().expect("--repeats N"));
    let facts = rows(&facts, dimension);
    let queries = rows(&queries, dimension);
    let started = Instant::now();
    let index = FlatIndex::build(dimension, &facts);
    let build = started.elapsed().as_secs_f64();
    drop(facts);
    let references: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
    let mut best = f64::INFINITY;
    let mut hits = Vec::new();
    for _ in 0..repeats {
        let started = Instant::now();
        hits = index.search_batch(&references, top_k, f64::NEG_INFINITY);
        best = best.min(started.elapsed().as_secs_f64());
    }
    if let Some(path) = option("--ids") {
        let mut bytes = Vec::with_capacity(queries.len() * top_k * 4);
        for query_hits in &hits {
            for position in 0..top_k {
                let id = query_hits.get(position).map_or(-1i32, |hit| hit.0 as i32);
                bytes.extend_from_slice(&id.to_le_bytes());
            }
        }
        std::fs::write(&path, bytes).unwrap_or_else(|error| panic!("{path}: {error}"));
    }
    println!(
        "{{\"build_s\": {build:.4}, \"search_s\": {best:.4}, \"queries_per_s\": {:.1}, \"threads\": {}}}",
        queries.len() as f64 / best,
        rayon::current_num_threads()
    );
}
