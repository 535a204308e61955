//! The config file's `sources` filter and `source_boost` on the scenarios dataset, whose
//! `source-priority` scenario (Gimli's "session vs memory source: memory first") pits an
//! authoritative memory fact (`"source": "memory-file"`) against a closer chat-session
//! remark (`"source": "session"`).

mod common;

use hyde_eval::dataset::Dataset;
use hyde_eval::pipeline::run::{execute, Execution, RankingOutputs};
use hyde_eval::settings::{resolve, ConfigFile, RunOptions};

const SESSION_FACTS: [&str; 4] = ["sc-f38", "sc-f40", "sc-f42", "sc-f44"];

fn run(config: &str) -> Execution {
    let mut dataset = Dataset::load(&common::repo_path("datasets/scenarios")).unwrap();
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("hyde-eval.toml");
    std::fs::write(&path, config).unwrap();
    let file = ConfigFile::load(&path).unwrap();
    let options = RunOptions {
        configurations: vec!["dense".into(), "keyword".into()],
        quiet: true,
        ..RunOptions::default()
    };
    let settings = resolve(&options, &file, &dataset.manifest).unwrap().run;
    execute(&mut dataset, &settings, RankingOutputs::kept()).unwrap()
}

/// (checked, passed) of the source-priority scenario, per configuration.
fn source_priority(execution: &Execution) -> Vec<(usize, usize)> {
    execution
        .results
        .configurations
        .iter()
        .map(|configuration| {
            let scenario = configuration
                .expectations
                .as_ref()
                .unwrap()
                .by_scenario
                .iter()
                .find(|count| count.scenario == "source-priority")
                .unwrap();
            (scenario.checked, scenario.passed)
        })
        .collect()
}

#[test]
fn memory_only_drops_every_session_fact_and_puts_memory_first() {
    let plain = run("");
    let memory_only = run("sources = [\"memory-file\"]\n");
    let mut session_seen = 0;
    for rankings in &plain.rankings {
        for ranking in rankings {
            session_seen += ranking
                .results
                .iter()
                .filter(|(fact, _)| SESSION_FACTS.contains(&fact.as_str()))
                .count();
        }
    }
    assert!(
        session_seen > 0,
        "session facts are ranked without a filter"
    );
    for rankings in &memory_only.rankings {
        for ranking in rankings {
            for (fact, _) in &ranking.results {
                assert!(!SESSION_FACTS.contains(&fact.as_str()), "{fact} returned");
            }
        }
    }
    // Four queries, a ranked_above and an in_top each: with the session remark gone,
    // every ranked_above holds (the winner is returned, the loser is not).
    for (checked, passed) in source_priority(&memory_only) {
        assert_eq!(checked, 8);
        assert!(passed >= 4, "{passed} of {checked}");
    }
}

#[test]
fn a_memory_boost_multiplies_memory_scores_only() {
    let plain = run("");
    let boosted = run("source_boost = { memory-file = 1.5 }\n");
    for (plain_rankings, boosted_rankings) in plain.rankings.iter().zip(&boosted.rankings) {
        for (before, after) in plain_rankings.iter().zip(boosted_rankings) {
            for (fact, score) in &after.results {
                let Some((_, original)) = before.results.iter().find(|(id, _)| id == fact) else {
                    continue;
                };
                let factor = if SESSION_FACTS.contains(&fact.as_str()) {
                    1.0
                } else {
                    1.5
                };
                assert_eq!(*score, original * factor, "{fact} in {}", after.query.0);
            }
        }
    }
    let before = source_priority(&plain);
    let after = source_priority(&boosted);
    for (before, after) in before.iter().zip(&after) {
        assert!(
            after.1 >= before.1,
            "boosting memory lost checks: {before:?} -> {after:?}"
        );
    }
    eprintln!("source-priority passed (dense, keyword): {before:?} -> {after:?}");
}

#[test]
fn a_bad_boost_names_the_file() {
    let dataset = Dataset::load(&common::repo_path("datasets/scenarios")).unwrap();
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("hyde-eval.toml");
    std::fs::write(&path, "source_boost = { memory = 0 }\n").unwrap();
    let file = ConfigFile::load(&path).unwrap();
    let message = resolve(&RunOptions::default(), &file, &dataset.manifest)
        .err()
        .unwrap()
        .to_string();
    assert!(message.contains("hyde-eval.toml"), "{message}");
    assert!(message.contains("source_boost.memory"), "{message}");
}
