//! `run --engine` and `engine load | status | drop` end to end, through the binary,
//! against real servers the tests start (PostgreSQL + pgvector, Chroma; installed by
//! scripts/install_pgvector.sh and scripts/install_chroma.sh; those tests are
//! `#[ignore]`d in a plain `cargo test` and run by name in `.ci/run`), and the faults a
//! run must report before it writes anything (a silent server, an engine with nothing to
//! serve), which need no server.
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
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

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
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn an_exact_pgvector_scan_ranks_as_the_in_process_index_and_hnsw_reports_its_cost() {
    let server = Postgres::start();
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
            "{}{}{}",
            pg_table("exact", &url, "devmem_exact", "index = \"exact\""),
            pg_table(
                "narrow",
                &url,
                "devmem_hnsw",
                "m = 4\nef_construction = 8\nef_search = 1"
            ),
            // The same table, described otherwise: reports must say what the server has.
            pg_table(
                "claims",
                &url,
                "devmem_hnsw",
                "m = 32\nef_construction = 200\nef_search = 1"
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
    assert_eq!(exact["engine"]["index"], "exact scan (no vector index)");
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
        assert_eq!(
            measured["differing_searches_at_evaluated_depth"], 0,
            "{configuration}"
        );
        assert_eq!(measured["truncated_searches"], 0, "{configuration}");
        assert_eq!(measured["evaluated_depth"], 10, "{configuration}");
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

    let narrow_run = served("claims");
    assert!(narrow_run.status.success(), "{}", text(&narrow_run));
    let narrow = results(&reports.join("claims"));
    // From the catalog (the index was built with m 4), not the table saying m 32.
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
        // ef_search 1 returns one fact per search, far short of the search depth.
        let searches = measured["vector_searches"].as_u64().unwrap();
        assert_eq!(measured["truncated_searches"].as_u64(), Some(searches));
        assert_eq!(measured["shortest_truncated"], 1);
        assert!(measured["search_depth"].as_u64().unwrap() > 1);
        // One fact cannot hold the exact top 10: every search differs at either depth.
        assert_eq!(measured["differing_searches"].as_u64(), Some(searches));
        assert_eq!(
            measured["differing_searches_at_evaluated_depth"].as_u64(),
            Some(searches)
        );
    }
    // The terminal says which searches were truncated and which metrics moved.
    let table = String::from_utf8_lossy(&narrow_run.stdout);
    let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("truncated: dense: ")
            && words.contains("vector searches truncated below the search depth")
            && words.contains("(as few as 1 fact); metrics that moved: ")
            && words.contains("ndcg@10 -0."),
        "{table}"
    );

    // The Markdown summary carries the terminal table's engine columns and notes.
    let summary = work.path().join("summary.md");
    let summarised = run(
        &[
            "run",
            "--quiet",
            "--no-report",
            "--config",
            config,
            "--engine",
            "claims",
            "--configurations",
            CONFIGURATIONS,
            "--format",
            "markdown",
            "--summary-file",
            summary.to_str().unwrap(),
        ],
        &[],
    );
    assert!(summarised.status.success(), "{}", text(&summarised));
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(
        markdown.contains(
            "| configuration | from the engine | ANN R@10 | nDCG@10 engine | nDCG@10 exact | Δ \
             | differing beyond ties @10 | differing beyond ties @search depth | truncated |"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("table devmem_hnsw, hnsw (m 4, ef_construction 8, ef_search 1))"),
        "{markdown}"
    );
    assert!(markdown.contains("- Truncated: dense: "), "{markdown}");

    // On 220 rows, with full scans allowed again, PostgreSQL's plan does not use the
    // index: the report says so.
    server
        .client()
        .batch_execute("ALTER DATABASE postgres RESET enable_seqscan")
        .unwrap();
    let scanned = succeed(&[
        "run",
        "--quiet",
        "--config",
        config,
        "--engine",
        "claims",
        "--configurations",
        "dense",
        "--output-dir",
        output,
        "--run-name",
        "scanned",
    ]);
    let scanned_results = results(&reports.join("scanned"));
    assert_eq!(
        scanned_results["engine"]["index"],
        "exact scan, index not used (the table's hnsw (m 4, ef_construction 8) is not in \
         PostgreSQL's plan)"
    );
    let dense = engine_configuration(&scanned_results, "dense");
    assert_eq!(dense["truncated_searches"], 0);
    assert!(
        String::from_utf8_lossy(&scanned.stdout).contains("exact scan, index not used"),
        "{}",
        text(&scanned)
    );
}

#[test]
#[ignore = "needs Chroma (scripts/install_chroma.sh); .ci/run runs it by name"]
fn chroma_serves_the_vector_searches_and_reports_ann_recall() {
    let chroma = Chroma::start();
    let work = tempfile::tempdir().unwrap();
    // Basic credentials in the url (the server ignores them): used, never shown.
    const PASSWORD: &str = "chroma-run-sentinel-3e8d";
    let url = chroma
        .url
        .replacen("http://", &format!("http://reader:{PASSWORD}@"), 1);
    let config = write_config(
        work.path(),
        &format!("[engines.chroma]\nkind = \"chroma\"\nurl = \"{url}\"\ncollection = \"devmem\"\n"),
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
    assert!(
        table.contains("engine 'chroma' (chroma at http://reader:<redacted>@127.0.0.1:"),
        "{table}"
    );
    assert!(table.contains("ANN R@10"), "{table}");
    assert!(
        String::from_utf8_lossy(&served.stderr).contains(
            "hyde-eval: connecting to engine 'chroma' (chroma at http://reader:<redacted>@127.0.0.1:"
        ),
        "{}",
        text(&served)
    );
    let page = std::fs::read_to_string(output.join("devmem/report.html")).unwrap();
    assert!(page.contains("Search engine") && page.contains("ANN recall@10"));
    let results = results(&output.join("devmem"));
    // The collection's configuration as the server reports it (created without
    // settings: Chroma's defaults).
    assert_eq!(
        results["engine"]["index"],
        "hnsw (max_neighbors 16, ef_construction 100, ef_search 100)"
    );
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
    for (path, content) in every_file(&output) {
        assert!(
            !content.contains(PASSWORD),
            "the password in {}",
            path.display()
        );
    }
    for said in [text(&served), text(&swept)] {
        assert!(!said.contains(PASSWORD), "{said}");
    }
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn loads_resume_refuse_other_data_and_drop() {
    let server = Postgres::start();
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
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn missing_collections_wrong_dimensions_and_bad_passwords_are_refused() {
    let server = Postgres::start();
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

/// Runs the binary with `args`, failing the test when it has not exited within `limit`;
/// its output and how long it took.
fn run_within(args: &[&str], limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!("still running after {limit:?}, killed: {}", text(&output));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = started.elapsed();
    (child.wait_with_output().unwrap(), took)
}

#[test]
fn a_silent_postgres_server_fails_status_and_run_within_the_timeout() {
    // Accepts every connection and holds it, unanswered, until the test ends.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let work = tempfile::tempdir().unwrap();
    let config = write_config(
        work.path(),
        &pg_table(
            "silent",
            &format!("postgresql://hyde:hush-sentinel@127.0.0.1:{port}/postgres"),
            "facts",
            "timeout_seconds = 1",
        ),
    );
    let config = config.to_str().unwrap();
    let output = work.path().join("reports");
    // The timeout plus a second, for the process itself to start and load devmem.
    let limit = Duration::from_secs(2);
    for args in [
        vec!["engine", "status", "--engine", "silent", "--config", config],
        vec![
            "run",
            "--config",
            config,
            "--engine",
            "silent",
            "--configurations",
            "dense",
            "--output-dir",
            output.to_str().unwrap(),
        ],
    ] {
        let (failed, took) = run_within(&args, limit);
        let message = text(&failed);
        assert_eq!(failed.status.code(), Some(3), "{message}");
        assert!(took >= Duration::from_secs(1), "{took:?}: {message}");
        let shown = format!("postgresql://hyde:<redacted>@127.0.0.1:{port}/postgres");
        for part in [
            format!("hyde-eval: connecting to engine 'silent' (pgvector at {shown})"),
            format!("engine 'silent' (pgvector at {shown}, table facts): cannot connect: no answer within 1 s"),
        ] {
            assert!(message.contains(&part), "missing {part:?} in: {message}");
        }
        assert!(!message.contains("hush-sentinel"), "{message}");
    }
    assert!(!output.join("devmem").exists());
}

#[test]
fn an_engine_for_a_run_that_searches_no_vectors_is_refused() {
    let work = tempfile::tempdir().unwrap();
    // Nothing listens there: the refusal comes before any connection.
    let config = write_config(
        work.path(),
        &pg_table(
            "pg",
            &format!("postgresql://hyde@127.0.0.1:{}/postgres", free_port()),
            "facts",
            "",
        ),
    );
    let config = config.to_str().unwrap();
    let output = work.path().join("reports");
    let sweep_bm25 = ["sweep", "--param", "bm25_k1=0.3:0.9:0.3"];
    for command in [&["run"][..], &sweep_bm25[..]] {
        let mut args = command.to_vec();
        args.extend([
            "--quiet",
            "--config",
            config,
            "--engine",
            "pg",
            "--configurations",
            "bm25",
            "--output-dir",
            output.to_str().unwrap(),
        ]);
        let refused = run(&args, &[]);
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        assert_says(
            &refused,
            "engine 'pg': none of this run's configurations (bm25) searches vectors, so the \
             engine would serve nothing",
        );
        assert!(
            !text(&refused).contains("cannot reach"),
            "{}",
            text(&refused)
        );
    }
    for report in ["devmem", "devmem-sweep"] {
        assert!(
            !output.join(report).exists(),
            "a refused run wrote {report}"
        );
    }
}

/// Every file under `directory`, read as text (lossily).
fn every_file(directory: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                pending.push(entry.unwrap().path());
            }
        } else {
            let bytes = std::fs::read(&path).unwrap();
            files.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    files
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn no_password_is_shown_by_a_run_in_any_connection_string_form() {
    let server = Postgres::start();
    server
        .client()
        .batch_execute("CREATE EXTENSION vector")
        .unwrap();
    let port = server.port;
    let encoded = PASSWORD_ROLE_PASSWORD.replace(' ', "%20");
    let forms = [
        (
            "userinfo",
            format!("postgresql://hyde_pw:{encoded}@127.0.0.1:{port}/postgres"),
        ),
        (
            "query",
            format!("postgresql://hyde_pw@127.0.0.1:{port}/postgres?password={encoded}"),
        ),
        (
            "keyvalue",
            format!(
                "host=127.0.0.1 port={port} user=hyde_pw password='{PASSWORD_ROLE_PASSWORD}' dbname=postgres"
            ),
        ),
    ];
    let work = tempfile::tempdir().unwrap();
    let tables: String = forms
        .iter()
        .map(|(name, url)| pg_table(name, url, "facts", "index = \"exact\""))
        .collect();
    let config = write_config(work.path(), &tables);
    let config = config.to_str().unwrap();
    let output = work.path().join("reports");
    let mut said = String::new();
    for (name, _) in &forms {
        for args in [
            vec!["engine", "load", "--engine", name, "--config", config],
            vec!["engine", "status", "--engine", name, "--config", config],
            vec![
                "run",
                "--config",
                config,
                "--engine",
                name,
                "--configurations",
                "dense,hybrid",
                "--html",
                "--output-dir",
                output.to_str().unwrap(),
                "--run-name",
                name,
            ],
            vec![
                "run",
                "--quiet",
                "--no-report",
                "--config",
                config,
                "--engine",
                name,
                "--configurations",
                "dense",
                "--format",
                "markdown",
            ],
        ] {
            let done = succeed(&args);
            said.push_str(&text(&done));
        }
        let results = results(&output.join(name));
        assert!(
            results["engine"]["served_by"]
                .as_str()
                .unwrap()
                .contains("<redacted>"),
            "{}",
            results["engine"]
        );
    }
    // A failing run (a wrong password in the variable the table names) says nothing
    // either.
    let wrong = write_config(
        work.path(),
        &pg_table(
            "wrong",
            &format!("postgresql://hyde_pw:{encoded}x@127.0.0.1:{port}/postgres"),
            "facts",
            "",
        ),
    );
    let failed = run(
        &[
            "run",
            "--config",
            wrong.to_str().unwrap(),
            "--engine",
            "wrong",
            "--configurations",
            "dense",
            "--no-report",
        ],
        &[],
    );
    assert_eq!(failed.status.code(), Some(3), "{}", text(&failed));
    said.push_str(&text(&failed));
    assert!(said
        .contains("connecting to engine 'userinfo' (pgvector at postgresql://hyde_pw:<redacted>@"));
    assert!(said.contains("password=<redacted>"), "{said}");
    for secret in [
        PASSWORD_ROLE_PASSWORD,
        encoded.as_str(),
        "battery staple",
        "battery%20staple",
    ] {
        assert!(!said.contains(secret), "{secret:?} printed: {said}");
        for (path, content) in every_file(&output) {
            assert!(
                !content.contains(secret),
                "{secret:?} in {}",
                path.display()
            );
        }
    }
}
