//! Every configuration's ranking of every devmem query, pinned. A change to a fast path
//! (index building, batched search, table merging, top-k selection) that moves any fact,
//! or any score by one bit, fails here, naming the configuration and the query.
//!
//! `fixtures/devmem-rankings.tsv` holds, per configuration and query, the number of
//! results and an XXH3-64 of the ranking (each fact id, a NUL, then the score's f64 bits,
//! little-endian). The build before the 2026-11-25 fast paths (`68b4465`) and the
//! build after them both reproduce it line for line. After an intended change to
//! rankings, rewrite it with `HYDE_EVAL_UPDATE_FIXTURES=1 cargo test --test
//! devmem_rankings` and say why in the commit.

mod common;

use hyde_eval::commands::{execute, RankingOutputs};
use hyde_eval::dataset::Dataset;

const FIXTURE: &str = "fixtures/devmem-rankings.tsv";

/// One line per configuration and query: configuration, query, results, digest.
fn ranking_lines() -> Vec<String> {
    let mut dataset = Dataset::load(&common::repo_path("datasets/devmem")).unwrap();
    let settings = common::quiet_settings(&dataset);
    assert_eq!(
        settings.configurations.len(),
        10,
        "every preset runs by default"
    );
    let execution = execute(&mut dataset, &settings, RankingOutputs::kept()).unwrap();
    let mut lines = Vec::new();
    for (configuration, rankings) in execution
        .output
        .configurations
        .iter()
        .zip(&execution.rankings)
    {
        for ranking in rankings {
            let mut bytes = Vec::new();
            for (fact, score) in &ranking.results {
                bytes.extend_from_slice(fact.as_str().as_bytes());
                bytes.push(0);
                bytes.extend_from_slice(&score.to_bits().to_le_bytes());
            }
            lines.push(format!(
                "{}\t{}\t{}\t{:016x}",
                configuration.configuration.name,
                ranking.query.0,
                ranking.results.len(),
                xxhash_rust::xxh3::xxh3_64(&bytes)
            ));
        }
    }
    lines
}

#[test]
fn every_configuration_ranks_devmem_as_pinned() {
    let path = common::repo_path(FIXTURE);
    let lines = ranking_lines();
    if std::env::var_os("HYDE_EVAL_UPDATE_FIXTURES").is_some() {
        let mut text = String::from("# configuration\tquery\tresults\txxh3 of the ranking\n");
        for line in &lines {
            text.push_str(line);
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
    }
    let pinned: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    // 10 configurations x 90 queries.
    assert_eq!(pinned.len(), 900);
    assert_eq!(lines.len(), pinned.len());
    let changed: Vec<String> = lines
        .iter()
        .zip(&pinned)
        .filter(|(now, then)| now != then)
        .map(|(now, then)| format!("now  {now}\npinned {then}"))
        .collect();
    assert!(
        changed.is_empty(),
        "{} of {} rankings changed; the first:\n{}",
        changed.len(),
        lines.len(),
        changed.first().map(String::as_str).unwrap_or("")
    );
}
