//! The pgvector engine against a real PostgreSQL 16 + pgvector server that each test
//! starts for itself (tests/common/postgres.rs; installed by scripts/install_pgvector.sh).
//! Those tests are `#[ignore]`d in a plain `cargo test` and run by name in `.ci/run`;
//! the faults a real server will not produce on demand (a socket that accepts and never
//! answers, a server that stops after start-up) come from loopback stand-ins, which run
//! everywhere.
//!
//! The facts are five hand-made 3-dimensional vectors whose cosine similarities to the
//! queries are worked out by hand below, with short sentences whose `ts_rank_cd` scores
//! follow from the ranking's definition: against an OR query every occurrence of a query
//! word is a cover of its own, worth the weight of an unlabelled lexeme (D, 0.1).

#[path = "common/postgres.rs"]
mod postgres_server;

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hyde_eval::engine::pgvector::{PgvectorEngine, ANSWER_GRACE};
use hyde_eval::engine::{
    EngineDocument, EngineKind, EngineSpec, LoadStamp, LoadState, SearchEngine, VectorIndex,
};
use hyde_eval::error::Error;
use postgres_server::{free_port, Postgres, PASSWORD_ROLE_PASSWORD};

/// The five facts: `(id, text, vector)`, all unit length.
const FACTS: [(&str, &str, [f32; 3]); 5] = [
    ("a", "the cat sat on the mat", [1.0, 0.0, 0.0]),
    ("b", "a dog chased the cat", [0.6, 0.8, 0.0]),
    ("c", "the bird sang", [0.0, 1.0, 0.0]),
    ("d", "my dog sleeps", [0.0, 0.6, 0.8]),
    ("e", "nothing relevant here", [-1.0, 0.0, 0.0]),
];

/// A query vector and its cosine similarity to a..e, by hand:
/// a 0.8, b 0.48 + 0.48 = 0.96, c 0.6, d 0.36, e -0.8.
const QUERY: [f32; 3] = [0.8, 0.6, 0.0];
const QUERY_ORDER: [(&str, f64); 5] = [
    ("b", 0.96),
    ("a", 0.8),
    ("c", 0.6),
    ("d", 0.36),
    ("e", -0.8),
];

/// The z axis: d 0.8, every other fact 0 (a tie, broken by id in an exact scan).
const AXIS: [f32; 3] = [0.0, 0.0, 1.0];
const AXIS_ORDER: [(&str, f64); 5] = [("d", 0.8), ("a", 0.0), ("b", 0.0), ("c", 0.0), ("e", 0.0)];

fn stamp() -> LoadStamp {
    LoadStamp {
        dataset_hash: "dataset-1".to_owned(),
        embedder: "hand-made-3".to_owned(),
        dimension: 3,
        facts: FACTS.len(),
    }
}

fn spec(url: String, table: &str, index: VectorIndex) -> EngineSpec {
    EngineSpec {
        name: "pg".to_owned(),
        kind: EngineKind::Pgvector,
        url,
        collection: table.to_owned(),
        tenant: None,
        database: None,
        secret_env: None,
        index,
        timeout: Duration::from_secs(30),
    }
}

fn documents(range: std::ops::Range<usize>) -> Vec<EngineDocument<'static>> {
    FACTS[range]
        .iter()
        .map(|(id, text, vector)| EngineDocument {
            id,
            text,
            vector: vector.as_slice(),
        })
        .collect()
}

/// Creates, loads and completes the five facts.
fn load(engine: &PgvectorEngine) {
    engine.create(&stamp()).unwrap();
    engine.upsert(&documents(0..FACTS.len())).unwrap();
    engine.complete(&stamp()).unwrap();
}

/// Asserts `hits` are `expected`'s ids in order with its scores within 1e-6.
fn assert_hits(hits: &[hyde_eval::engine::EngineHit], expected: &[(&str, f64)]) {
    let ids: Vec<&str> = hits.iter().map(|hit| hit.id.as_str()).collect();
    let expected_ids: Vec<&str> = expected.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, expected_ids);
    for (hit, (id, score)) in hits.iter().zip(expected) {
        assert!(
            (hit.score - score).abs() < 1e-6,
            "{id}: score {} instead of {score}",
            hit.score
        );
    }
}

fn exact() -> VectorIndex {
    VectorIndex::Exact
}

fn hnsw(ef_search: Option<u32>) -> VectorIndex {
    VectorIndex::Hnsw {
        m: Some(4),
        ef_construction: Some(16),
        ef_search,
    }
}

/// The plan of a nearest-neighbour query on `table`, as the engine's search shapes it.
fn explain(server: &Postgres, table: &str) -> String {
    server
        .client()
        .query(
            &format!("EXPLAIN SELECT id FROM {table} ORDER BY embedding <=> '[0.8,0.6,0]' LIMIT 5"),
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts an engine error has exit code 3, the engine's name and `needles`.
fn assert_engine_error(error: &Error, needles: &[&str]) {
    assert_eq!(error.exit_code(), 3, "{error}");
    let message = error.to_string();
    assert!(
        message.starts_with("engine 'pg' (pgvector at postgresql://"),
        "{message}"
    );
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in {message}");
    }
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn a_load_round_trip_then_exact_search_in_cosine_order() {
    let server = Postgres::start();
    let engine = PgvectorEngine::connect(&spec(server.url("hyde"), "facts", exact())).unwrap();
    assert!(engine.ranks_text());
    assert_eq!(
        engine.describe(),
        format!("pgvector at {}, table facts", server.url("hyde"))
    );
    assert_eq!(engine.state().unwrap(), LoadState::Missing);

    engine.create(&stamp()).unwrap();
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Partial {
            stamp: stamp(),
            loaded: 0
        }
    );
    engine.upsert(&documents(0..2)).unwrap();
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Partial {
            stamp: stamp(),
            loaded: 2
        }
    );
    engine.upsert(&documents(2..5)).unwrap();
    // Upserting a stored id again replaces it: still five facts.
    engine.upsert(&documents(0..1)).unwrap();
    assert_eq!(
        engine.loaded_ids().unwrap(),
        ["a", "b", "c", "d", "e"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Partial {
            stamp: stamp(),
            loaded: 5
        }
    );
    engine.complete(&stamp()).unwrap();
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Complete {
            stamp: stamp(),
            loaded: 5
        }
    );

    let hits = engine
        .vector_search(&[QUERY.as_slice(), AXIS.as_slice()], 5)
        .unwrap();
    assert_eq!(hits.len(), 2);
    assert_hits(&hits[0], &QUERY_ORDER);
    assert_hits(&hits[1], &AXIS_ORDER);
    let top_two = engine.vector_search(&[QUERY.as_slice()], 2).unwrap();
    assert_hits(&top_two[0], &QUERY_ORDER[..2]);
    assert_eq!(engine.vector_search(&[], 5).unwrap(), Vec::<Vec<_>>::new());
    // More queries than one statement carries: every answer in its place.
    let many: Vec<&[f32]> = (0..150)
        .map(|at| {
            if at % 3 == 2 {
                AXIS.as_slice()
            } else {
                QUERY.as_slice()
            }
        })
        .collect();
    let hits = engine.vector_search(&many, 5).unwrap();
    assert_eq!(hits.len(), 150);
    for (at, hits) in hits.iter().enumerate() {
        assert_hits(
            hits,
            if at % 3 == 2 {
                &AXIS_ORDER
            } else {
                &QUERY_ORDER
            },
        );
    }

    // No vector index: the planner scans every row.
    let plan = explain(&server, "facts");
    assert!(plan.contains("Seq Scan on facts"), "{plan}");
    assert!(!plan.contains("Index Scan"), "{plan}");
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn hnsw_is_built_used_and_returns_the_same_order() {
    let server = Postgres::start();
    // On five rows the planner prefers a full scan; discouraged from it, every new
    // session takes an index when the table has one.
    server
        .client()
        .batch_execute("ALTER DATABASE postgres SET enable_seqscan = off")
        .unwrap();
    // Without an ef_search the engine raises pgvector's default to the limit asked for.
    let engine = PgvectorEngine::connect(&spec(server.url("hyde"), "facts", hnsw(None))).unwrap();
    load(&engine);
    let hits = engine
        .vector_search(&[QUERY.as_slice(), QUERY.as_slice()], 5)
        .unwrap();
    assert_hits(&hits[0], &QUERY_ORDER);
    assert_hits(&hits[1], &QUERY_ORDER);
    // A configured ef_search is kept, as the application that set it sees it: pgvector
    // returns at most that many rows, the best of them first. A new session whose first
    // statement is the search (ef_search is set before pgvector's library is loaded).
    let narrow =
        PgvectorEngine::connect(&spec(server.url("hyde"), "facts", hnsw(Some(2)))).unwrap();
    let hits = narrow.vector_search(&[QUERY.as_slice()], 5).unwrap();
    assert_hits(&hits[0], &QUERY_ORDER[..2]);
    let hits = narrow.vector_search(&[AXIS.as_slice()], 1).unwrap();
    assert_hits(&hits[0], &AXIS_ORDER[..1]);

    let mut client = server.client();
    let method: String = client
        .query_one(
            "SELECT a.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
             JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'facts'::regclass \
             AND a.amname <> 'btree' AND a.amname <> 'gin'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(method, "hnsw");
    let plan = explain(&server, "facts");
    assert!(
        plan.contains("Index Scan using facts_embedding_idx"),
        "{plan}"
    );

    // Completing again as exact drops the index: a full scan, the only plan left even
    // with full scans discouraged; same answers.
    let exact_engine =
        PgvectorEngine::connect(&spec(server.url("hyde"), "facts", exact())).unwrap();
    exact_engine.complete(&stamp()).unwrap();
    let plan = explain(&server, "facts");
    assert!(plan.contains("Seq Scan on facts"), "{plan}");
    assert!(!plan.contains("Index Scan"), "{plan}");
    let hits = exact_engine.vector_search(&[QUERY.as_slice()], 5).unwrap();
    assert_hits(&hits[0], &QUERY_ORDER);
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn text_search_ranks_facts_matching_more_words_first() {
    let server = Postgres::start();
    let engine = PgvectorEngine::connect(&spec(server.url("hyde"), "facts", exact())).unwrap();
    load(&engine);
    // "dog" and "cat" (stemmed): b has both (two covers, 0.1 each), a has cat and d has
    // dog (0.1 each, tied, by id); c and e have neither.
    let hits = engine
        .text_search(
            &[
                "Dogs and cats",
                "sleeping",
                "the and of",
                "cat's (dog) & | ! :* 'mat'",
                "cat\0dog",
            ],
            10,
        )
        .unwrap();
    assert_hits(&hits[0], &[("b", 0.2), ("a", 0.1), ("d", 0.1)]);
    // "sleeping" stems to "sleep", as "sleeps" does.
    assert_hits(&hits[1], &[("d", 0.1)]);
    // Stop words only: no lexeme, no match.
    assert_eq!(hits[2], Vec::new());
    // Operators in the text are words to look for, not query syntax: cat, dog, mat.
    // a has cat and mat (0.2), b cat and dog (0.2), d dog (0.1).
    assert_hits(&hits[3], &[("a", 0.2), ("b", 0.2), ("d", 0.1)]);
    // PostgreSQL text cannot hold NUL: it reads as a space.
    assert_hits(&hits[4], &[("b", 0.2), ("a", 0.1), ("d", 0.1)]);
    let top = engine.text_search(&["dogs and cats"], 1).unwrap();
    assert_hits(&top[0], &[("b", 0.2)]);
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn an_interrupted_load_resumes_where_it_stopped() {
    let server = Postgres::start();
    let spec = spec(server.url("hyde"), "facts", hnsw(None));
    {
        let engine = PgvectorEngine::connect(&spec).unwrap();
        engine.create(&stamp()).unwrap();
        engine.upsert(&documents(0..2)).unwrap();
    }
    let engine = PgvectorEngine::connect(&spec).unwrap();
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Partial {
            stamp: stamp(),
            loaded: 2
        }
    );
    let loaded = engine.loaded_ids().unwrap();
    assert_eq!(loaded, HashSet::from(["a".to_owned(), "b".to_owned()]));
    let rest: Vec<_> = documents(0..FACTS.len())
        .into_iter()
        .filter(|document| !loaded.contains(document.id))
        .collect();
    assert_eq!(rest.len(), 3);
    engine.upsert(&rest).unwrap();
    engine.complete(&stamp()).unwrap();
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Complete {
            stamp: stamp(),
            loaded: 5
        }
    );
    let hits = engine.vector_search(&[QUERY.as_slice()], 3).unwrap();
    assert_hits(&hits[0], &QUERY_ORDER[..3]);
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn drop_removes_the_table_and_its_stamp() {
    let server = Postgres::start();
    let engine = PgvectorEngine::connect(&spec(server.url("hyde"), "facts", exact())).unwrap();
    load(&engine);
    assert!(engine.drop_collection().unwrap());
    assert_eq!(engine.state().unwrap(), LoadState::Missing);
    assert!(!engine.drop_collection().unwrap());
    let stamps: i64 = server
        .client()
        .query_one("SELECT count(*) FROM hyde_eval_loads", &[])
        .unwrap()
        .get(0);
    assert_eq!(stamps, 0);
    // And it loads again from scratch.
    load(&engine);
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Complete {
            stamp: stamp(),
            loaded: 5
        }
    );
}

#[test]
fn an_unreachable_server_is_a_backend_error() {
    let port = free_port();
    let url = format!("postgresql://hyde@127.0.0.1:{port}/postgres");
    let error = PgvectorEngine::connect(&spec(url.clone(), "facts", exact()))
        .err()
        .unwrap();
    assert!(matches!(error, Error::Backend(_)), "{error:?}");
    assert_engine_error(
        &error,
        &[&format!("(pgvector at {url}, table facts)"), "cannot reach"],
    );
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn a_wrong_password_is_fatal_and_never_shown() {
    let server = Postgres::start();
    // Set once, in this test alone, before any engine reads them.
    std::env::set_var("HYDE_EVAL_TEST_PG_WRONG", "not the password at all");
    std::env::set_var("HYDE_EVAL_TEST_PG_RIGHT", PASSWORD_ROLE_PASSWORD);
    let mut wrong = spec(server.url("hyde_pw"), "facts", exact());
    wrong.secret_env = Some("HYDE_EVAL_TEST_PG_WRONG".to_owned());
    let error = PgvectorEngine::connect(&wrong).err().unwrap();
    assert!(matches!(error, Error::BackendFatal(_)), "{error:?}");
    assert_engine_error(
        &error,
        &["authentication failed", "$HYDE_EVAL_TEST_PG_WRONG"],
    );
    assert!(!error.to_string().contains("not the password"), "{error}");

    let mut none = spec(server.url("hyde_pw"), "facts", exact());
    none.secret_env = None;
    let error = PgvectorEngine::connect(&none).err().unwrap();
    assert!(matches!(error, Error::BackendFatal(_)), "{error:?}");
    assert_engine_error(&error, &["password"]);

    // As on a managed server, an administrator creates the extension.
    server
        .client()
        .batch_execute("CREATE EXTENSION vector")
        .unwrap();
    let mut right = spec(server.url("hyde_pw"), "facts", exact());
    right.secret_env = Some("HYDE_EVAL_TEST_PG_RIGHT".to_owned());
    let engine = PgvectorEngine::connect(&right).unwrap();
    load(&engine);
    let hits = engine.vector_search(&[AXIS.as_slice()], 1).unwrap();
    assert_hits(&hits[0], &AXIS_ORDER[..1]);
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn a_missing_table_says_to_load_it_first() {
    let server = Postgres::start();
    let engine = PgvectorEngine::connect(&spec(server.url("hyde"), "facts", exact())).unwrap();
    let needles = [
        "table \"facts\" does not exist",
        "run `hyde-eval engine load` first",
    ];
    let error = engine.vector_search(&[QUERY.as_slice()], 5).unwrap_err();
    assert_engine_error(&error, &needles);
    let error = engine.text_search(&["cat"], 5).unwrap_err();
    assert_engine_error(&error, &needles);
    let error = engine.loaded_ids().unwrap_err();
    assert_engine_error(&error, &needles);
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn a_query_of_the_wrong_dimension_names_both() {
    let server = Postgres::start();
    let engine = PgvectorEngine::connect(&spec(server.url("hyde"), "facts", exact())).unwrap();
    load(&engine);
    let short = [0.6f32, 0.8];
    let error = engine
        .vector_search(&[QUERY.as_slice(), short.as_slice()], 5)
        .unwrap_err();
    assert_engine_error(&error, &["dimension 2", "dimension 3"]);
    let error = engine
        .upsert(&[EngineDocument {
            id: "f",
            text: "short",
            vector: &short,
        }])
        .unwrap_err();
    assert_engine_error(&error, &["dimension 2", "dimension 3"]);
    assert_eq!(engine.loaded_ids().unwrap().len(), 5);
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn a_statement_over_the_timeout_is_cancelled_and_says_so() {
    let server = Postgres::start();
    let mut quick = spec(server.url("hyde"), "facts", exact());
    quick.timeout = Duration::from_millis(300);
    let engine = PgvectorEngine::connect(&quick).unwrap();
    load(&engine);
    // Another session holds the table: the search waits for the lock until the
    // statement timeout cancels it (deterministic, however fast the machine).
    let mut holder = server.client();
    let mut transaction = holder.transaction().unwrap();
    transaction
        .batch_execute("LOCK TABLE facts IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let error = engine.vector_search(&[QUERY.as_slice()], 5).unwrap_err();
    assert_engine_error(&error, &["timed out after 300 ms"]);
    let error = engine.text_search(&["cat"], 5).unwrap_err();
    assert_engine_error(&error, &["timed out after 300 ms"]);
    transaction.rollback().unwrap();
    // Released: the same engine answers again.
    let hits = engine.vector_search(&[QUERY.as_slice()], 1).unwrap();
    assert_hits(&hits[0], &QUERY_ORDER[..1]);
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn a_connection_the_server_closed_is_opened_again() {
    let server = Postgres::start();
    let engine = PgvectorEngine::connect(&spec(server.url("hyde"), "facts", exact())).unwrap();
    load(&engine);
    let mut admin = server.client();
    let terminate = "SELECT count(*) FROM pg_stat_activity, pg_terminate_backend(pid) \
                     WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()";
    let terminated: i64 = admin.query_one(terminate, &[]).unwrap().get(0);
    assert_eq!(terminated, 1);
    let hits = engine.vector_search(&[QUERY.as_slice()], 5).unwrap();
    assert_hits(&hits[0], &QUERY_ORDER);
    let terminated: i64 = admin.query_one(terminate, &[]).unwrap().get(0);
    assert_eq!(terminated, 1);
    assert_eq!(engine.loaded_ids().unwrap().len(), 5);
}

#[test]
fn a_table_name_that_is_no_identifier_or_a_tls_url_is_a_usage_error() {
    // Both are refused before any connection: no server needed.
    let url = format!("postgresql://hyde@127.0.0.1:{}/postgres", free_port());
    for table in ["facts; DROP TABLE x", "public.facts", "2facts", ""] {
        let error = PgvectorEngine::connect(&spec(url.clone(), table, exact()))
            .err()
            .unwrap();
        assert!(matches!(error, Error::Usage(_)), "{error:?}");
        assert_eq!(error.exit_code(), 2);
        assert!(
            error.to_string().contains("plain SQL identifier"),
            "{error}"
        );
    }
    let error = PgvectorEngine::connect(&spec(format!("{url}?sslmode=require"), "facts", exact()))
        .err()
        .unwrap();
    assert!(matches!(error, Error::Usage(_)), "{error:?}");
    assert!(error.to_string().contains("no TLS"), "{error}");
}

/// Runs `work` on its own thread and returns its result, or fails the test when it has
/// not returned within `limit` (a client that hangs fails instead of hanging the test).
fn within<T: Send + 'static>(limit: Duration, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    receiver
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("no result within {limit:?}: the client hangs"))
}

/// A loopback port that accepts connections and never answers (each is held open until
/// the process ends), and its `postgresql://` URL.
fn silent_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    format!("postgresql://hyde@127.0.0.1:{port}/postgres")
}

#[test]
fn a_server_that_accepts_and_never_answers_gives_up_within_the_timeout() {
    let mut silent = spec(silent_server(), "facts", exact());
    silent.timeout = Duration::from_secs(1);
    let started = Instant::now();
    let error = within(Duration::from_secs(2), move || {
        PgvectorEngine::connect(&silent).err().unwrap()
    });
    assert!(started.elapsed() >= Duration::from_secs(1), "{error}");
    assert!(matches!(error, Error::Backend(_)), "{error:?}");
    assert_engine_error(&error, &["cannot connect: no answer within 1 s"]);
}

/// A stand-in that completes PostgreSQL's start-up (authentication ok, ready for query)
/// for every connection, then reads and never answers; its `postgresql://` URL.
fn server_silent_after_start_up() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for mut stream in listener.incoming().flatten() {
            // The start-up message: a 4-byte big-endian length that counts itself.
            let mut length = [0u8; 4];
            if stream.read_exact(&mut length).is_err() {
                continue;
            }
            let mut body = vec![0u8; (u32::from_be_bytes(length) as usize).saturating_sub(4)];
            if stream.read_exact(&mut body).is_err() {
                continue;
            }
            // AuthenticationOk ('R', length 8, code 0), ReadyForQuery ('Z', length 5, idle).
            let _ = stream.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 0, b'Z', 0, 0, 0, 5, b'I']);
            held.push(stream);
        }
    });
    format!("postgresql://hyde@127.0.0.1:{port}/postgres")
}

#[test]
fn a_server_that_stops_answering_after_start_up_gives_up_at_the_statement() {
    let mut stalled = spec(server_silent_after_start_up(), "facts", exact());
    stalled.timeout = Duration::from_secs(1);
    let started = Instant::now();
    let error = within(
        Duration::from_secs(1) + ANSWER_GRACE + Duration::from_secs(1),
        move || PgvectorEngine::connect(&stalled).err().unwrap(),
    );
    // The statement timeout's SET is the first statement: the server's own timeout
    // cannot cancel it, so the client waits the timeout and the grace.
    assert!(started.elapsed() >= Duration::from_secs(1) + ANSWER_GRACE);
    assert_engine_error(
        &error,
        &["cannot set the statement timeout: no answer within 1.5 s"],
    );
}

/// Sends `signal` to process `pid` (the tests' own server's processes).
fn signal(pid: i32, signal: i32) {
    // SAFETY: kill with a valid signal on a process this test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "kill {pid}");
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn a_stopped_backend_times_out_the_statement_and_the_next_call_connects_again() {
    let server = Postgres::start();
    let mut quick = spec(
        format!("{}?application_name=hyde_stopped", server.url("hyde")),
        "facts",
        exact(),
    );
    quick.timeout = Duration::from_secs(1);
    let engine = std::sync::Arc::new(PgvectorEngine::connect(&quick).unwrap());
    load(&engine);
    // The engine's backend stops (as a process stuck in the kernel or a frozen VM would):
    // its socket stays open, nothing answers, the server cannot cancel anything.
    let backend = server.backend_pid("hyde_stopped");
    signal(backend, libc::SIGSTOP);
    let started = Instant::now();
    let searching = std::sync::Arc::clone(&engine);
    let error = within(
        Duration::from_secs(1) + ANSWER_GRACE + Duration::from_secs(1),
        move || searching.vector_search(&[QUERY.as_slice()], 5).unwrap_err(),
    );
    assert!(started.elapsed() >= Duration::from_secs(1) + ANSWER_GRACE);
    assert_engine_error(
        &error,
        &["vector search of 1 queries: no answer within 1.5 s"],
    );
    signal(backend, libc::SIGCONT);
    // The stalled connection was dropped: the next call opens a new one.
    let hits = engine.vector_search(&[QUERY.as_slice()], 5).unwrap();
    assert_hits(&hits[0], &QUERY_ORDER);
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn an_index_build_waits_while_the_server_answers_and_gives_up_when_it_stops() {
    let server = Postgres::start();
    let mut quick = spec(server.url("hyde"), "facts", hnsw(None));
    quick.timeout = Duration::from_secs(1);
    let engine = std::sync::Arc::new(PgvectorEngine::connect(&quick).unwrap());
    engine.create(&stamp()).unwrap();
    engine.upsert(&documents(0..FACTS.len())).unwrap();
    // Another session holds the table, so the build waits for the lock: 2.5 timeouts,
    // during which the server answers, then the lock is released and the build runs.
    let mut holder = server.client();
    let mut transaction = holder.transaction().unwrap();
    transaction
        .batch_execute("LOCK TABLE facts IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let completing = std::sync::Arc::clone(&engine);
    let build = std::thread::spawn(move || {
        let started = Instant::now();
        (completing.complete(&stamp()), started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(2500));
    transaction.rollback().unwrap();
    let (completed, waited) = build.join().unwrap();
    completed.unwrap();
    assert!(waited >= Duration::from_millis(2500), "{waited:?}");
    assert_eq!(
        engine.index_report().unwrap().split(' ').next(),
        Some("hnsw")
    );

    // Again (the index dropped first, which would wait for the lock), but the server
    // stops (the postmaster takes no connection): the second connection's check gets no
    // answer, and the build is given up.
    server
        .client()
        .batch_execute("DROP INDEX facts_embedding_idx")
        .unwrap();
    let mut holder = server.client();
    let mut transaction = holder.transaction().unwrap();
    transaction
        .batch_execute("LOCK TABLE facts IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let postmaster = i32::try_from(server.postmaster_pid()).unwrap();
    signal(postmaster, libc::SIGSTOP);
    let completing = std::sync::Arc::clone(&engine);
    let error = within(Duration::from_secs(6), move || {
        completing.complete(&stamp()).unwrap_err()
    });
    signal(postmaster, libc::SIGCONT);
    transaction.rollback().unwrap();
    assert_engine_error(
        &error,
        &["cannot complete the load of \"facts\": no answer within 1 s"],
    );
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn the_index_report_comes_from_the_catalog_and_the_plan() {
    let server = Postgres::start();
    let url = server.url("hyde");
    // Built with m 4 and ef_construction 16.
    let builder = PgvectorEngine::connect(&spec(url.clone(), "facts", hnsw(Some(2)))).unwrap();
    load(&builder);
    // A spec that says otherwise about the same table: the report says what is there.
    let claims = VectorIndex::Hnsw {
        m: Some(32),
        ef_construction: Some(200),
        ef_search: Some(3),
    };
    // Five rows: the planner scans the table, and the report says so.
    let scanning = PgvectorEngine::connect(&spec(url.clone(), "facts", claims)).unwrap();
    scanning.vector_search(&[QUERY.as_slice()], 5).unwrap();
    assert_eq!(
        scanning.index_report().unwrap(),
        "exact scan, index not used (the table's hnsw (m 4, ef_construction 16) is not in \
         PostgreSQL's plan)"
    );
    // Discouraged from full scans, new sessions take the index, at the ef_search set.
    server
        .client()
        .batch_execute("ALTER DATABASE postgres SET enable_seqscan = off")
        .unwrap();
    let indexed = PgvectorEngine::connect(&spec(url.clone(), "facts", claims)).unwrap();
    let hits = indexed.vector_search(&[QUERY.as_slice()], 5).unwrap();
    assert_eq!(
        hits[0].len(),
        3,
        "an HNSW scan returns at most ef_search rows"
    );
    assert_eq!(
        indexed.index_report().unwrap(),
        "hnsw (m 4, ef_construction 16, ef_search 3)"
    );
    // An index built without options: pgvector's defaults, named as such.
    server
        .client()
        .batch_execute(
            "DROP INDEX facts_embedding_idx; \
             CREATE INDEX ON facts USING hnsw (embedding vector_cosine_ops)",
        )
        .unwrap();
    let defaults = PgvectorEngine::connect(&spec(url.clone(), "facts", hnsw(None))).unwrap();
    defaults.vector_search(&[QUERY.as_slice()], 5).unwrap();
    assert_eq!(
        defaults.index_report().unwrap(),
        "hnsw (m 16 (default), ef_construction 64 (default), ef_search 40)"
    );
    // No vector index at all.
    let exact_engine = PgvectorEngine::connect(&spec(url, "facts", exact())).unwrap();
    exact_engine.complete(&stamp()).unwrap();
    exact_engine.vector_search(&[QUERY.as_slice()], 5).unwrap();
    assert_eq!(
        exact_engine.index_report().unwrap(),
        "exact scan (no vector index)"
    );
}

#[test]
#[ignore = "needs PostgreSQL + pgvector (scripts/install_pgvector.sh); .ci/run runs it by name"]
fn passwords_in_every_form_of_connection_string_are_never_shown() {
    let server = Postgres::start();
    server
        .client()
        .batch_execute("CREATE EXTENSION vector")
        .unwrap();
    let port = server.port;
    let encoded = PASSWORD_ROLE_PASSWORD.replace(' ', "%20");
    let quoted = |password: &str| password.replace('\\', "\\\\").replace('\'', "\\'");
    // Each form, with the right password and with a wrong one; and how each shows.
    let forms = |password: &str| {
        let encoded = password.replace(' ', "%20");
        [
            (
                format!("postgresql://hyde_pw:{encoded}@127.0.0.1:{port}/postgres"),
                format!("postgresql://hyde_pw:<redacted>@127.0.0.1:{port}/postgres"),
            ),
            (
                format!("postgresql://hyde_pw@127.0.0.1:{port}/postgres?password={encoded}"),
                format!("postgresql://hyde_pw@127.0.0.1:{port}/postgres?password=<redacted>"),
            ),
            (
                format!(
                    "host=127.0.0.1 port={port} user=hyde_pw password='{}' dbname=postgres",
                    quoted(password)
                ),
                format!(
                    "host=127.0.0.1 port={port} user=hyde_pw password=<redacted> dbname=postgres"
                ),
            ),
        ]
    };
    let wrong = "wrong pass'word";
    for ((right_url, shown), (wrong_url, _)) in
        forms(PASSWORD_ROLE_PASSWORD).into_iter().zip(forms(wrong))
    {
        let engine = PgvectorEngine::connect(&spec(right_url.clone(), "facts", exact())).unwrap();
        assert_eq!(
            engine.describe(),
            format!("pgvector at {shown}, table facts")
        );
        if engine.state().unwrap() == LoadState::Missing {
            load(&engine);
        }
        let hits = engine.vector_search(&[AXIS.as_slice()], 1).unwrap();
        assert_hits(&hits[0], &AXIS_ORDER[..1]);
        // The engine's own errors name it by the redacted address.
        let error = engine
            .vector_search(&[[0.5f32, 0.5].as_slice()], 1)
            .unwrap_err();
        let debug = format!("{:?}", spec(right_url, "facts", exact()));
        for text in [error.to_string(), debug] {
            for secret in [PASSWORD_ROLE_PASSWORD, encoded.as_str()] {
                assert!(!text.contains(secret), "{secret:?} shown in {text}");
            }
        }

        let error = PgvectorEngine::connect(&spec(wrong_url, "facts", exact()))
            .err()
            .unwrap();
        assert!(matches!(error, Error::BackendFatal(_)), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("authentication failed"), "{message}");
        assert!(message.contains(&shown), "{message}");
        for secret in [wrong, "wrong%20pass'word", r"wrong pass\'word"] {
            assert!(!message.contains(secret), "{secret:?} shown in {message}");
        }
    }
    // A connection string the client cannot read is refused without showing it.
    let error = PgvectorEngine::connect(&spec(
        format!("host=127.0.0.1 port={port} password='never closed"),
        "facts",
        exact(),
    ))
    .err()
    .unwrap();
    assert_eq!(error.exit_code(), 2, "{error}");
    assert!(!error.to_string().contains("never closed"), "{error}");
}
