//! `run --engine` and `engine load | status | drop` end to end, through the binary,
//! against real servers the tests start (PostgreSQL + pgvector, Chroma; installed by
//! scripts/install_pgvector.sh and scripts/install_chroma.sh, skipped with a printed
//! reason where they are not installed), and the faults a run must report before it
//! writes anything.
//!
//! What is expected is worked out apart from the engine code: an exact pgvector scan over
//! the same vectors must rank as the in-process index does (scores equal to float
//! rounding), so the run files of the two runs are compared line by line; pgvector's
//! HNSW returns at most `ef_search` rows, so with `ef_search = 1` an ANN recall@10
//! above 0.1 is impossible.

#[path = "common/chroma.rs"]
mod chroma_server;
mod common;
#[path = "common/postgres.rs"]
mod postgres_server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use chroma_server::Chroma;
use common::command;
use postgres_server::{free_port, Postgres, PASSWORD_ROLE_PASSWORD};
use serde_json::Value;

const CONFIGURATIONS: &str = "dense,hyde-3b-hyp,multi-hyde,hybrid";

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = command();
    command.args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// Runs the binary with `args`, asserting it succeeds.
fn succeed(args: &[&str]) -> Output {
    let output = run(args, &[]);
    assert!(output.status.success(), "{}", text(&output));
    output
}

/// Asserts that `output` (stdout and stderr) contains `part`.
fn assert_says(output: &Output, part: &str) {
    let said = text(output);
    assert!(said.contains(part), "missing {part:?} in: {said}");
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn write_config(directory: &Path, tables: &str) -> PathBuf {
    let path = directory.join("engines.toml");
    std::fs::write(&path, tables).unwrap();
    path
}

fn pg_table(name: &str, url: &str, collection: &str, extra: &str) -> String {
    format!(
        "[engines.{name}]\nkind = \"pgvector\"\nurl = \"{url}\"\ncollection = \"{collection}\"\n{extra}\n"
    )
}

fn results(directory: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(directory.join("results.json")).unwrap()).unwrap()
}

/// A run file as (query, [(fact, score)]) in rank order.
fn ranking(path: &Path) -> BTreeMap<String, Vec<(String, f64)>> {
    let mut rankings: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        rankings
            .entry(fields[0].to_owned())
            .or_default()
            .push((fields[2].to_owned(), fields[4].parse().unwrap()));
    }
    rankings
}

/// Asserts two run files rank alike: the same facts in the same order, except where
/// neighbours' scores are equal to float rounding (1e-6), which may swap. Returns the
/// number of such swapped pairs.
fn assert_same_rankings(engine: &Path, exact: &Path) -> usize {
    let (engine, exact) = (ranking(engine), ranking(exact));
    assert_eq!(
        engine.keys().collect::<Vec<_>>(),
        exact.keys().collect::<Vec<_>>()
    );
    let mut swapped = 0;
    for (query, engine_list) in &engine {
        let exact_list = &exact[query];
        assert_eq!(engine_list.len(), exact_list.len(), "query {query}");
        for (position, (served, expected)) in engine_list.iter().zip(exact_list).enumerate() {
            assert!(
                (served.1 - expected.1).abs() < 1e-6,
                "query {query} rank {}: score {} against {}",
                position + 1,
                served.1,
                expected.1
            );
            if served.0 != expected.0 {
                swapped += 1;
            }
        }
    }
    swapped
}

fn engine_configuration<'r>(results: &'r Value, name: &str) -> &'r Value {
    results["engine"]["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|configuration| configuration["name"] == name)
        .unwrap()
}

#[test]
fn an_exact_pgvector_scan_ranks_as_the_in_process_index_and_hnsw_reports_its_cost() {
    let Some(server) = Postgres::start() else {
        return;
    };
    // On 220 rows the planner would scan the table rather than use the HNSW index (an
    // exact answer); discouraged from full scans, it takes the index when there is one.
    server
        .client()
        .batch_execute("ALTER DATABASE postgres SET enable_seqscan = off")
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let url = server.url("hyde");
    let config = write_config(
        work.path(),
        &format!(
            "{}{}",
            pg_table("exact", &url, "devmem_exact", "index = \"exact\""),
            pg_table(
                "narrow",
                &url,
                "devmem_hnsw",
                "m = 4\nef_construction = 8\nef_search = 1"
            )
        ),
    );
    let config = config.to_str().unwrap();
    for engine in ["exact", "narrow"] {
        let load = succeed(&[
            "engine", "load", "--engine", engine, "--config", config, "-q",
        ]);
        assert_says(&load, "loaded 220 facts (0 already there)");
    }
    let again = succeed(&[
        "engine", "load", "--engine", "exact", "--config", config, "-q",
    ]);
    assert_says(&again, "already holds this load (220 facts");

    let output = work.path().join("reports");
    let output = output.to_str().unwrap();
    let served = |engine: &str| {
        run(
            &[
                "run",
                "--quiet",
                "--config",
                config,
                "--engine",
                engine,
                "--configurations",
                CONFIGURATIONS,
                "--output-dir",
                output,
                "--run-name",
                engine,
            ],
            &[],
        )
    };
    let exact_run = served("exact");
    assert!(exact_run.status.success(), "{}", text(&exact_run));
    succeed(&[
        "run",
        "--quiet",
        "--configurations",
        CONFIGURATIONS,
        "--output-dir",
        output,
        "--run-name",
        "in-process",
    ]);
    let reports = work.path().join("reports");
    let mut swapped = 0;
    for configuration in ["dense", "hyde-3b-hyp", "multi-hyde"] {
        let file = format!("runs/{configuration}.run");
        swapped += assert_same_rankings(
            &reports.join("exact").join(&file),
            &reports.join("in-process").join(&file),
        );
    }
    println!("exact pgvector scan: {swapped} rank swaps between facts with scores equal to 1e-6");
    let exact = results(&reports.join("exact"));
    assert_eq!(exact["engine"]["kind"], "pgvector");
    assert_eq!(exact["engine"]["index"], "exact scan");
    for configuration in ["dense", "hyde-3b-hyp", "multi-hyde"] {
        let measured = engine_configuration(&exact, configuration);
        assert_eq!(measured["signals"]["vector search"], "engine");
        assert!(measured["vector_searches"].as_u64().unwrap() >= 90);
        // An exact scan finds every exact neighbour (ties at the cut-off count as found)
        // and ranks like the exact index up to ties.
        for (name, recall) in measured["ann_recall"].as_object().unwrap() {
            assert_eq!(recall.as_f64(), Some(1.0), "{configuration} {name}");
        }
        assert_eq!(measured["differing_searches"], 0, "{configuration}");
        let largest = measured["delta"]
            .as_object()
            .unwrap()
            .values()
            .map(|delta| delta.as_f64().unwrap().abs())
            .fold(0.0, f64::max);
        println!("exact pgvector scan, {configuration}: largest metric delta {largest:.2e}");
        assert!(
            largest < 0.01,
            "{configuration}: ties alone move a metric by {largest}"
        );
    }
    // The hybrid's text side is PostgreSQL's full-text ranking; in-process, BM25.
    let hybrid = engine_configuration(&exact, "hybrid");
    assert_eq!(hybrid["signals"]["text ranking"], "engine");
    let table = String::from_utf8_lossy(&exact_run.stdout);
    assert!(
        table.contains("engine 'exact' (pgvector at postgresql://hyde@127.0.0.1:"),
        "{table}"
    );

    let narrow_run = served("narrow");
    assert!(narrow_run.status.success(), "{}", text(&narrow_run));
    let narrow = results(&reports.join("narrow"));
    assert_eq!(
        narrow["engine"]["index"],
        "hnsw (m 4, ef_construction 8, ef_search 1)"
    );
    for configuration in ["dense", "hyde-3b-hyp", "multi-hyde"] {
        let measured = engine_configuration(&narrow, configuration);
        let recall = measured["ann_recall"]["ann_recall@10"].as_f64().unwrap();
        assert!(
            recall <= 0.1 + 1e-12,
            "{configuration}: ANN recall@10 {recall} with ef_search 1"
        );
        let delta = measured["delta"]["ndcg@10"].as_f64().unwrap();
        let engine_value = narrow["configurations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == configuration)
            .unwrap()["macro"]["ndcg@10"]
            .as_f64()
            .unwrap();
        let exact_value = measured["exact_macro"]["ndcg@10"].as_f64().unwrap();
        assert!((engine_value - exact_value - delta).abs() < 1e-12);
        assert!(
            delta < 0.0,
            "{configuration}: one candidate per search must cost nDCG@10"
        );
        println!(
            "pgvector hnsw ef_search 1, {configuration}: ANN recall@10 {recall:.4}, nDCG@10 {engine_value:.4} against exact {exact_value:.4}"
        );
    }
}

#[test]
fn chroma_serves_the_vector_searches_and_reports_ann_recall() {
    let Some(chroma) = Chroma::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let config = write_config(
        work.path(),
        &format!(
            "[engines.chroma]\nkind = \"chroma\"\nurl = \"{}\"\ncollection = \"devmem\"\n",
            chroma.url
        ),
    );
    let config = config.to_str().unwrap();
    succeed(&[
        "engine", "load", "--engine", "chroma", "--config", config, "-q",
    ]);
    let status = succeed(&[
        "engine", "status", "--engine", "chroma", "--config", config, "-q",
    ]);
    assert_says(&status, "matches this dataset and embedder");
    let output = work.path().join("reports");
    let served = succeed(&[
        "run",
        "--config",
        config,
        "--engine",
        "chroma",
        "--configurations",
        "dense,hyde-3b-hyp,bm25",
        "--html",
        "--output-dir",
        output.to_str().unwrap(),
    ]);
    let table = String::from_utf8_lossy(&served.stdout);
    assert!(table.contains("engine 'chroma' (chroma at"), "{table}");
    assert!(table.contains("ANN R@10"), "{table}");
    let page = std::fs::read_to_string(output.join("devmem/report.html")).unwrap();
    assert!(page.contains("Search engine") && page.contains("ANN recall@10"));
    let results = results(&output.join("devmem"));
    let dense = engine_configuration(&results, "dense");
    // HNSW over 220 points at Chroma's default width finds nearly every neighbour.
    assert!(dense["ann_recall"]["ann_recall@1"].as_f64().unwrap() >= 0.9);
    let bm25 = engine_configuration(&results, "bm25");
    assert_eq!(bm25["vector_searches"], 0);
    assert_eq!(bm25["signals"]["BM25"], "in-process");
    for (metric, delta) in bm25["delta"].as_object().unwrap() {
        assert_eq!(
            delta.as_f64(),
            Some(0.0),
            "bm25 does not touch the engine: {metric}"
        );
    }

    // A sweep re-fuses the engine's candidates.
    let swept = succeed(&[
        "sweep",
        "--config",
        config,
        "--engine",
        "chroma",
        "--configurations",
        "hyde-3b",
        "--steps",
        "4",
        "--output-dir",
        output.to_str().unwrap(),
    ]);
    assert!(
        String::from_utf8_lossy(&swept.stdout)
            .contains("vector searches served by engine 'chroma' (chroma at"),
        "{}",
        text(&swept)
    );
    let sweep: Value = serde_json::from_str(
        &std::fs::read_to_string(output.join("devmem-sweep/sweep.json")).unwrap(),
    )
    .unwrap();
    assert!(sweep["engine"]
        .as_str()
        .unwrap()
        .starts_with("engine 'chroma'"));
}

#[test]
fn loads_resume_refuse_other_data_and_drop() {
    let Some(server) = Postgres::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let config = write_config(
        work.path(),
        &pg_table("pg", &server.url("hyde"), "facts", "index = \"exact\""),
    );
    let config = config.to_str().unwrap();
    succeed(&[
        "engine",
        "load",
        "--engine",
        "pg",
        "--config",
        config,
        "-q",
        "--batch-size",
        "50",
    ]);
    // As an interrupted load leaves it: part of the facts, the stamp not complete.
    let mut client = server.client();
    client
        .batch_execute(
            "DELETE FROM facts WHERE id IN (SELECT id FROM facts ORDER BY id LIMIT 70); \
             UPDATE hyde_eval_loads SET complete = false;",
        )
        .unwrap();
    let status = run(
        &[
            "engine", "status", "--engine", "pg", "--config", config, "-q",
        ],
        &[],
    );
    assert_eq!(status.status.code(), Some(1), "{}", text(&status));
    assert_says(&status, "partial load, 150 of 220 facts");
    let refused = run(
        &[
            "run",
            "--quiet",
            "--no-report",
            "--config",
            config,
            "--engine",
            "pg",
        ],
        &[],
    );
    assert_eq!(refused.status.code(), Some(3), "{}", text(&refused));
    assert_says(&refused, "the load is unfinished (150 of 220 facts)");
    let resumed = succeed(&["engine", "load", "--engine", "pg", "--config", config]);
    assert_says(&resumed, "resuming: 150 of 220 facts are loaded");
    assert_says(&resumed, "loaded 70 facts (150 already there)");

    let tiny = common::tiny_copy(work.path(), "tiny");
    let other = run(
        &[
            "engine",
            "load",
            "--engine",
            "pg",
            "--config",
            config,
            "-q",
            "--dataset",
            tiny.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(other.status.code(), Some(2), "{}", text(&other));
    assert_says(&other, "it holds another load (dataset sha256:");
    assert_says(&other, "engine drop --engine pg");

    let dropped = succeed(&["engine", "drop", "--engine", "pg", "--config", config]);
    assert!(text(&dropped).contains(": dropped"));
    let status = run(
        &[
            "engine", "status", "--engine", "pg", "--config", config, "-q",
        ],
        &[],
    );
    assert_eq!(status.status.code(), Some(1));
    assert_says(&status, "no collection");
    let again = run(
        &["engine", "drop", "--engine", "pg", "--config", config],
        &[],
    );
    assert_says(&again, "nothing to drop");
}

/// Runs `run --engine NAME` with `tables`, expecting exit 3 with `expected` in the
/// message and no report directory.
fn assert_run_fails(tables: &str, engine: &str, env: &[(&str, &str)], expected: &[&str]) {
    let work = tempfile::tempdir().unwrap();
    let config = write_config(work.path(), tables);
    let output = work.path().join("reports");
    let failed = run(
        &[
            "run",
            "--quiet",
            "--config",
            config.to_str().unwrap(),
            "--engine",
            engine,
            "--configurations",
            "dense",
            "--output-dir",
            output.to_str().unwrap(),
        ],
        env,
    );
    let message = text(&failed);
    assert_eq!(failed.status.code(), Some(3), "{message}");
    for part in expected {
        assert!(message.contains(part), "missing {part:?} in: {message}");
    }
    assert!(
        !output.join("devmem").exists(),
        "a failed engine run wrote a report: {message}"
    );
}

#[test]
fn unreachable_engines_fail_before_any_report() {
    let port = free_port();
    assert_run_fails(
        &pg_table(
            "pg",
            &format!("postgresql://hyde@127.0.0.1:{port}/postgres"),
            "facts",
            "timeout_seconds = 2",
        ),
        "pg",
        &[],
        &["engine 'pg' (pgvector at postgresql://hyde@127.0.0.1:"],
    );
    assert_run_fails(
        &format!(
            "[engines.chroma]\nkind = \"chroma\"\nurl = \"http://127.0.0.1:{port}\"\ncollection = \"facts\"\ntimeout_seconds = 1\n"
        ),
        "chroma",
        &[],
        &["engine 'chroma' (chroma at http://127.0.0.1:"],
    );
}

#[test]
fn a_server_that_never_answers_times_out() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts connections (the kernel's backlog) and never answers.
    assert_run_fails(
        &format!(
            "[engines.slow]\nkind = \"chroma\"\nurl = \"http://127.0.0.1:{port}\"\ncollection = \"facts\"\ntimeout_seconds = 1\n"
        ),
        "slow",
        &[],
        &["engine 'slow'", "timed out"],
    );
    drop(listener);
}

#[test]
fn missing_collections_wrong_dimensions_and_bad_passwords_are_refused() {
    let Some(server) = Postgres::start() else {
        return;
    };
    let url = server.url("hyde");
    assert_run_fails(
        &pg_table("pg", &url, "never_loaded", ""),
        "pg",
        &[],
        &[
            "engine 'pg'",
            "the collection does not exist; run `hyde-eval engine load`",
        ],
    );
    // Loaded with 128-d vectors; the run embeds with the default 384.
    let work = tempfile::tempdir().unwrap();
    let tables = pg_table("pg", &url, "small_vectors", "index = \"exact\"");
    let config = write_config(work.path(), &tables);
    succeed(&[
        "engine",
        "load",
        "--engine",
        "pg",
        "--config",
        config.to_str().unwrap(),
        "-q",
        "--dimension",
        "128",
    ]);
    assert_run_fails(
        &tables,
        "pg",
        &[],
        &["engine 'pg'", "dimension 128 there, 384 here"],
    );

    let password_url = server.url("hyde_pw");
    let tables = pg_table(
        "pg",
        &password_url,
        "facts",
        "secret_env = \"HYDE_TEST_PG_PASSWORD\"",
    );
    let wrong = "not the password";
    let work = tempfile::tempdir().unwrap();
    let config = write_config(work.path(), &tables);
    let failed = run(
        &[
            "run",
            "--quiet",
            "--no-report",
            "--config",
            config.to_str().unwrap(),
            "--engine",
            "pg",
        ],
        &[("HYDE_TEST_PG_PASSWORD", wrong)],
    );
    assert_eq!(failed.status.code(), Some(3), "{}", text(&failed));
    assert_says(&failed, "engine 'pg'");
    assert!(
        !text(&failed).contains(wrong),
        "the password leaked: {}",
        text(&failed)
    );
    assert!(!text(&failed).contains(PASSWORD_ROLE_PASSWORD));
}

#[test]
fn a_sharded_run_refuses_an_engine() {
    let work = tempfile::tempdir().unwrap();
    let config = write_config(
        work.path(),
        &pg_table("pg", "postgresql://hyde@127.0.0.1:1/postgres", "facts", ""),
    );
    let refused = run(
        &[
            "run",
            "--quiet",
            "--shard",
            "1/2",
            "--config",
            config.to_str().unwrap(),
            "--engine",
            "pg",
            "--output-dir",
            work.path().join("reports").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert_says(&refused, "--shard 1/2 with engine 'pg'");
}
