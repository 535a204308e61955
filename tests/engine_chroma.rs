//! The Chroma engine client against a real Chroma server, and its failures.
//!
//! Each test that needs Chroma starts its own `chroma run` (from the venv that
//! scripts/install_chroma.sh makes) on a free loopback port with a scratch directory, and
//! kills it when done; those tests are `#[ignore]`d, so a plain `cargo test` needs no
//! Chroma (it lists them as ignored), and `.ci/run` runs them by name. The faults a real server will not produce on demand
//! (a server that never answers, one that rejects the token) come from small loopback
//! stand-ins; everything else is the real server.
//!
//! Expected rankings and scores are worked out by hand from the unit vectors below: the
//! cosine similarity of unit vectors is their dot product, and HNSW over five points
//! finds every neighbour.

#[path = "common/chroma.rs"]
mod chroma_server;
mod common;

use std::collections::HashSet;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use chroma_server::{free_port, Chroma};
use common::http::{Reply, Server};
use hyde_eval::engine::chroma::ChromaEngine;
use hyde_eval::engine::{
    EngineDocument, EngineKind, EngineSpec, LoadStamp, LoadState, SearchEngine, VectorIndex,
};
use hyde_eval::error::Error;
use hyde_eval::http::{HttpClient, HttpSettings, Method};
use serde_json::{json, Value};

/// Five unit vectors in 3 dimensions (each row's squares sum to 1: 0.36 + 0.64,
/// 0.2304 + 0.36 + 0.4096).
const FACTS: [(&str, &str, [f32; 3]); 5] = [
    ("f1", "first fact", [1.0, 0.0, 0.0]),
    ("f2", "second fact", [0.6, 0.8, 0.0]),
    ("f3", "third fact", [0.0, 0.6, 0.8]),
    ("f4", "fourth fact", [0.0, 0.0, 1.0]),
    ("f5", "fifth fact", [0.48, 0.6, 0.64]),
];

/// The collection record as the server reports it (GET by name).
fn collection(chroma: &Chroma, name: &str) -> Value {
    let url = format!(
        "{}/api/v2/tenants/default_tenant/databases/default_database/collections/{name}",
        chroma.url
    );
    let text = ureq::get(&url)
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn spec(url: &str, collection: &str) -> EngineSpec {
    EngineSpec {
        name: "prod".into(),
        kind: EngineKind::Chroma,
        url: url.into(),
        collection: collection.into(),
        tenant: None,
        database: None,
        secret_env: None,
        index: VectorIndex::Hnsw {
            m: Some(12),
            ef_construction: Some(80),
            ef_search: Some(40),
        },
        timeout: Duration::from_secs(20),
    }
}

fn stamp(dimension: usize) -> LoadStamp {
    LoadStamp {
        dataset_hash: "dataset-hash-1".into(),
        embedder: "hand-made-unit-vectors".into(),
        dimension,
        facts: FACTS.len(),
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

fn ids(names: &[&str]) -> HashSet<String> {
    names.iter().map(|name| name.to_string()).collect()
}

/// The hits' ids and scores, for comparing with expectations.
fn assert_hits(hits: &[hyde_eval::engine::EngineHit], expected: &[(&str, f64)]) {
    let got: Vec<&str> = hits.iter().map(|hit| hit.id.as_str()).collect();
    let want: Vec<&str> = expected.iter().map(|(id, _)| *id).collect();
    assert_eq!(got, want, "order of {hits:?}");
    for (hit, (id, score)) in hits.iter().zip(expected) {
        assert!(
            (hit.score - score).abs() < 1e-6,
            "{id}: score {} instead of {score}",
            hit.score
        );
    }
}

/// The engine's error, checked for exit code 3 and the engine's name.
fn backend_error<T: std::fmt::Debug>(result: Result<T, Error>, url: &str) -> String {
    let error = result.expect_err("the operation should fail");
    assert_eq!(error.exit_code(), 3, "{error}");
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "engine 'prod' (chroma at {url}, collection facts): "
        )),
        "{message}"
    );
    message
}

#[test]
#[ignore = "needs Chroma (scripts/install_chroma.sh); .ci/run runs it by name"]
fn a_load_round_trip_and_searches_ranked_by_cosine() {
    let chroma = Chroma::start();
    let engine = ChromaEngine::connect(&spec(&chroma.url, "facts")).unwrap();
    assert!(!engine.ranks_text());
    assert_eq!(engine.state().unwrap(), LoadState::Missing);

    engine.create(&stamp(3)).unwrap();
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Partial {
            stamp: stamp(3),
            loaded: 0
        }
    );
    // The collection measures cosine distance with the spec's HNSW settings.
    let record = collection(&chroma, "facts");
    let hnsw = &record["configuration_json"]["hnsw"];
    assert_eq!(hnsw["space"], "cosine", "{record}");
    assert_eq!(hnsw["max_neighbors"], 12, "{record}");
    assert_eq!(hnsw["ef_construction"], 80, "{record}");
    assert_eq!(hnsw["ef_search"], 40, "{record}");

    engine.upsert(&documents(0..3)).unwrap();
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Partial {
            stamp: stamp(3),
            loaded: 3
        }
    );
    engine.upsert(&documents(3..5)).unwrap();
    assert_eq!(
        engine.loaded_ids().unwrap(),
        ids(&["f1", "f2", "f3", "f4", "f5"])
    );
    engine.complete(&stamp(3)).unwrap();
    assert_eq!(
        engine.state().unwrap(),
        LoadState::Complete {
            stamp: stamp(3),
            loaded: 5
        }
    );

    // q1 = (1, 0, 0): dot products f1 1, f2 0.6, f5 0.48, f3 0, f4 0; top 3.
    // q2 = (0, 0.8, 0.6): f1 0, f2 0.64, f3 0.48 + 0.48 = 0.96, f4 0.6,
    //      f5 0.48 + 0.384 = 0.864; all 5, best first.
    let q1 = [1.0f32, 0.0, 0.0];
    let q2 = [0.0f32, 0.8, 0.6];
    let hits = engine.vector_search(&[&q1, &q2], 3).unwrap();
    assert_eq!(hits.len(), 2);
    assert_hits(&hits[0], &[("f1", 1.0), ("f2", 0.6), ("f5", 0.48)]);
    assert_hits(&hits[1], &[("f3", 0.96), ("f5", 0.864), ("f2", 0.64)]);
    let all = engine.vector_search(&[&q2], 10).unwrap();
    assert_hits(
        &all[0],
        &[
            ("f3", 0.96),
            ("f5", 0.864),
            ("f2", 0.64),
            ("f4", 0.6),
            ("f1", 0.0),
        ],
    );

    // 250 queries go in three requests (100 per request) and come back in order: query i
    // is fact i mod 5's own vector, whose best hit is that fact with similarity 1.
    let many: Vec<&[f32]> = (0..250).map(|i| FACTS[i % 5].2.as_slice()).collect();
    let answers = engine.vector_search(&many, 1).unwrap();
    assert_eq!(answers.len(), 250);
    for (i, hits) in answers.iter().enumerate() {
        assert_hits(hits, &[(FACTS[i % 5].0, 1.0)]);
    }

    let text = engine.text_search(&["fact"], 3).unwrap_err();
    assert_eq!(text.exit_code(), 2, "{text}");
    assert!(text.to_string().contains("ranks no text"), "{text}");

    // The index as the server holds it, whatever a spec naming the collection says.
    assert_eq!(
        engine.index_report().unwrap(),
        "hnsw (max_neighbors 12, ef_construction 80, ef_search 40)"
    );
    let mut claims = spec(&chroma.url, "facts");
    claims.index = VectorIndex::Hnsw {
        m: Some(32),
        ef_construction: Some(200),
        ef_search: Some(7),
    };
    let claiming = ChromaEngine::connect(&claims).unwrap();
    assert_eq!(
        claiming.index_report().unwrap(),
        "hnsw (max_neighbors 12, ef_construction 80, ef_search 40)"
    );
    // Created without settings: the server's defaults, as it reports them.
    let mut plain = spec(&chroma.url, "plain-facts");
    plain.index = VectorIndex::Hnsw {
        m: None,
        ef_construction: None,
        ef_search: None,
    };
    let plain = ChromaEngine::connect(&plain).unwrap();
    plain.create(&stamp(3)).unwrap();
    assert_eq!(
        plain.index_report().unwrap(),
        "hnsw (max_neighbors 16, ef_construction 100, ef_search 100)"
    );
}

#[test]
#[ignore = "needs Chroma (scripts/install_chroma.sh); .ci/run runs it by name"]
fn a_password_in_the_urls_user_info_is_used_and_never_shown() {
    const PASSWORD: &str = "chroma-pass-sentinel-7c1f";
    let chroma = Chroma::start();
    let port = chroma.url.rsplit(':').next().unwrap();
    let url = format!("http://reader:{PASSWORD}@127.0.0.1:{port}");
    let shown = format!("http://reader:<redacted>@127.0.0.1:{port}");
    let engine = ChromaEngine::connect(&spec(&url, "facts")).unwrap();
    assert_eq!(
        engine.describe(),
        format!("chroma at {shown}, collection facts")
    );
    // The server (without authentication) ignores the basic credentials: the client
    // works through the url as given.
    engine.create(&stamp(3)).unwrap();
    engine.upsert(&documents(0..5)).unwrap();
    engine.complete(&stamp(3)).unwrap();
    let hits = engine.vector_search(&[FACTS[0].2.as_slice()], 1).unwrap();
    assert_hits(&hits[0], &[("f1", 1.0)]);
    let error = engine.vector_search(&[[1.0f32, 0.0].as_slice()], 1);
    let message = backend_error(error, &shown);
    assert!(message.contains("dimension mismatch"), "{message}");
    let missing = ChromaEngine::connect(&spec(&url, "never-loaded")).unwrap();
    let error = missing
        .vector_search(&[FACTS[0].2.as_slice()], 1)
        .unwrap_err();
    let debug = format!("{:?}", spec(&url, "facts"));
    for text in [message, error.to_string(), debug] {
        assert!(!text.contains(PASSWORD), "the password in {text}");
    }
}

#[test]
fn a_password_in_the_url_is_sent_as_basic_credentials_and_never_shown() {
    const PASSWORD: &str = "chroma-pass-sentinel-91ab";
    let server = Server::start(|_, _| {
        Reply::status(401, r#"{"error":"AuthError","message":"Unauthorized"}"#)
    });
    let base = server.base_url.trim_end_matches("/v1");
    let url = base.replacen("http://", &format!("http://admin:{PASSWORD}@"), 1);
    let shown = base.replacen("http://", "http://admin:<redacted>@", 1);
    let engine = ChromaEngine::connect(&spec(&url, "facts")).unwrap();
    let message = backend_error(engine.state(), &shown);
    assert!(message.contains("HTTP 401"), "{message}");
    assert!(!message.contains(PASSWORD), "{message}");
    // Sent as HTTP basic authentication: base64 of `admin:PASSWORD`.
    let requests = server.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some("Basic YWRtaW46Y2hyb21hLXBhc3Mtc2VudGluZWwtOTFhYg==")
    );
    // An address the client refuses is quoted without its password.
    let error = ChromaEngine::connect(&spec(&format!("ftp://admin:{PASSWORD}@h"), "facts"))
        .err()
        .unwrap();
    assert_eq!(error.exit_code(), 2);
    assert!(
        error.to_string().contains("ftp://admin:<redacted>@h"),
        "{error}"
    );
    assert!(!error.to_string().contains(PASSWORD), "{error}");
}

#[test]
#[ignore = "needs Chroma (scripts/install_chroma.sh); .ci/run runs it by name"]
fn a_resumed_load_sees_what_is_there() {
    let chroma = Chroma::start();
    let engine = ChromaEngine::connect(&spec(&chroma.url, "facts")).unwrap();
    engine.create(&stamp(3)).unwrap();
    engine.upsert(&documents(1..3)).unwrap();
    // An interrupted load, seen afresh by a second client: f2 and f3 are in.
    let resumed = ChromaEngine::connect(&spec(&chroma.url, "facts")).unwrap();
    assert_eq!(
        resumed.state().unwrap(),
        LoadState::Partial {
            stamp: stamp(3),
            loaded: 2
        }
    );
    assert_eq!(resumed.loaded_ids().unwrap(), ids(&["f2", "f3"]));
    // Loading everything (f2 and f3 again) replaces rather than duplicates.
    resumed.upsert(&documents(0..5)).unwrap();
    resumed.complete(&stamp(3)).unwrap();
    assert_eq!(
        resumed.state().unwrap(),
        LoadState::Complete {
            stamp: stamp(3),
            loaded: 5
        }
    );
    // A create repeated after it succeeded (a retry whose first answer was lost) is
    // refused once the load is complete: the collection is no longer a fresh partial one.
    let again = resumed.create(&stamp(3)).unwrap_err();
    assert!(again.to_string().contains("already exists"), "{again}");

    // 2,500 facts: stored in three requests of at most 1,000, listed in pages of 1,000.
    let many = ChromaEngine::connect(&spec(&chroma.url, "many")).unwrap();
    let mut big = stamp(3);
    big.facts = 2500;
    many.create(&big).unwrap();
    let records: Vec<(String, [f32; 3])> = (0..2500)
        .map(|i| (format!("fact-{i}"), [1.0, i as f32 / 2500.0, 0.5]))
        .collect();
    let documents: Vec<EngineDocument<'_>> = records
        .iter()
        .map(|(id, vector)| EngineDocument {
            id,
            text: "a fact",
            vector,
        })
        .collect();
    many.upsert(&documents).unwrap();
    let expected: HashSet<String> = records.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(many.loaded_ids().unwrap(), expected);
    assert_eq!(
        many.state().unwrap(),
        LoadState::Partial {
            stamp: big,
            loaded: 2500
        }
    );
}

#[test]
#[ignore = "needs Chroma (scripts/install_chroma.sh); .ci/run runs it by name"]
fn dropping_removes_the_collection_once() {
    let chroma = Chroma::start();
    let engine = ChromaEngine::connect(&spec(&chroma.url, "facts")).unwrap();
    engine.create(&stamp(3)).unwrap();
    engine.upsert(&documents(0..2)).unwrap();
    assert!(engine.drop_collection().unwrap());
    assert_eq!(engine.state().unwrap(), LoadState::Missing);
    assert!(!engine.drop_collection().unwrap());
}

#[test]
#[ignore = "needs Chroma (scripts/install_chroma.sh); .ci/run runs it by name"]
fn searching_a_missing_collection_or_with_the_wrong_dimension_fails_clearly() {
    let chroma = Chroma::start();
    let engine = ChromaEngine::connect(&spec(&chroma.url, "facts")).unwrap();
    let query = [1.0f32, 0.0, 0.0];
    let missing = backend_error(engine.vector_search(&[&query], 3), &chroma.url);
    assert!(
        missing.contains("collection facts does not exist"),
        "{missing}"
    );

    engine.create(&stamp(3)).unwrap();
    engine.upsert(&documents(0..5)).unwrap();
    engine.complete(&stamp(3)).unwrap();
    let short = [0.6f32, 0.8];
    let wrong = backend_error(engine.vector_search(&[&query, &short], 3), &chroma.url);
    assert!(
        wrong.contains("query vector 2 has dimension 2")
            && wrong.contains("vectors of dimension 3"),
        "{wrong}"
    );

    // Chroma's own check, for a collection whose stamp claims 2 dimensions although it
    // holds 3-dimensional vectors (written behind the client's back).
    let other = ChromaEngine::connect(&spec(&chroma.url, "mislabelled")).unwrap();
    other.create(&stamp(2)).unwrap();
    let id = collection(&chroma, "mislabelled")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let upsert = format!(
        "{}/api/v2/tenants/default_tenant/databases/default_database/collections/{id}/upsert",
        chroma.url
    );
    ureq::post(&upsert)
        .header("Content-Type", "application/json")
        .send(json!({"ids": ["f1"], "embeddings": [[1.0, 0.0, 0.0]]}).to_string())
        .unwrap();
    let error = other.vector_search(&[&short], 3).unwrap_err();
    assert_eq!(error.exit_code(), 3, "{error}");
    let message = error.to_string();
    assert!(
        message.contains("collection mislabelled")
            && message.contains("dimension mismatch")
            && message.contains("dimension of 3, got 2"),
        "{message}"
    );
}

#[test]
fn an_unreachable_server_is_a_backend_error_after_retries() {
    let url = format!("http://127.0.0.1:{}", free_port());
    let engine = ChromaEngine::connect(&spec(&url, "facts")).unwrap();
    let started = Instant::now();
    let message = backend_error(engine.state(), &url);
    assert!(message.contains("cannot reach the server"), "{message}");
    // Four retries, waiting about 0.5, 1, 2 and 4 s (each scaled by 0.5 to 1.5): at least
    // 0.5 x 7.5 s.
    assert!(started.elapsed() >= Duration::from_secs_f64(3.75));
}

#[test]
fn a_server_that_never_answers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    // Accepts every connection and holds it open, unanswered, until the test ends.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let mut spec = spec(&url, "facts");
    spec.timeout = Duration::from_secs(1);
    let engine = ChromaEngine::connect(&spec).unwrap();
    let message = backend_error(engine.state(), &url);
    assert!(
        message.contains("timed out: no answer within 1 s"),
        "{message}"
    );
}

#[test]
fn a_rejected_token_is_fatal_and_never_shown() {
    const TOKEN: &str = "chroma-token-sentinel-5d2e";
    let server = Server::start(|_, _| {
        Reply::status(401, r#"{"error":"AuthError","message":"Unauthorized"}"#)
    });
    let url = server.base_url.trim_end_matches("/v1").to_owned();
    std::env::set_var("HYDE_EVAL_CHROMA_TEST_TOKEN", TOKEN);
    let mut spec = spec(&url, "facts");
    spec.secret_env = Some("HYDE_EVAL_CHROMA_TEST_TOKEN".into());
    let engine = ChromaEngine::connect(&spec).unwrap();
    let error = engine.state().unwrap_err();
    assert!(matches!(error, Error::BackendFatal(_)), "{error:?}");
    let message = backend_error::<()>(Err(error), &url);
    assert!(
        message.contains("HTTP 401") && message.contains("HYDE_EVAL_CHROMA_TEST_TOKEN"),
        "{message}"
    );
    assert!(!message.contains(TOKEN), "{message}");
    // Not retried; the token went in both headers Chroma servers read.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "GET");
    assert_eq!(
        requests[0].path,
        "/api/v2/tenants/default_tenant/databases/default_database/collections/facts"
    );
    assert_eq!(requests[0].header("x-chroma-token"), Some(TOKEN));
    let bearer = format!("Bearer {TOKEN}");
    assert_eq!(requests[0].header("authorization"), Some(bearer.as_str()));
}

#[test]
fn specs_chroma_cannot_serve_are_usage_errors() {
    let mut exact = spec("http://127.0.0.1:8000", "facts");
    exact.index = VectorIndex::Exact;
    let error = ChromaEngine::connect(&exact).err().unwrap();
    assert_eq!(error.exit_code(), 2);
    assert!(
        error
            .to_string()
            .starts_with("engine 'prod' (chroma at http://127.0.0.1:8000, collection facts): chroma has no exact vector search"),
        "{error}"
    );

    let mut unset = spec("http://127.0.0.1:8000", "facts");
    unset.secret_env = Some("HYDE_EVAL_CHROMA_TEST_UNSET".into());
    let error = ChromaEngine::connect(&unset).err().unwrap();
    assert_eq!(error.exit_code(), 2);
    assert!(
        error
            .to_string()
            .contains("environment variable HYDE_EVAL_CHROMA_TEST_UNSET is not set"),
        "{error}"
    );

    for (url, collection, problem) in [
        (
            "127.0.0.1:8000",
            "facts",
            "is not an http:// or https:// address",
        ),
        (
            "http:///x",
            "facts",
            "is not an http:// or https:// address",
        ),
        ("http://h", "my facts", "is not one Chroma accepts"),
        ("http://h", "ab", "is not one Chroma accepts"),
    ] {
        let error = ChromaEngine::connect(&spec(url, collection)).err().unwrap();
        assert_eq!(error.exit_code(), 2, "{error}");
        assert!(error.to_string().contains(problem), "{error}");
    }
}

#[test]
fn the_http_client_sends_every_method_and_retries_each() {
    // Every path answers 503 the first time it is asked, then echoes the request.
    let server = Server::start(|request, number| {
        if number % 2 == 0 {
            Reply::status(503, "busy")
        } else {
            Reply::json(json!({"method": request.method, "body": request.body}))
        }
    });
    let mut settings = HttpSettings::new(&server.base_url);
    settings.initial_backoff = Duration::from_millis(10);
    let client = HttpClient::new(settings, None);
    let body = json!({"a": 1});
    let cases = [
        (Method::Get, None),
        (Method::Put, Some(&body)),
        (Method::Delete, None),
        (Method::Post, Some(&body)),
    ];
    for (method, body) in cases {
        let answer = client.request_json(method, "/thing", body).unwrap();
        assert_eq!(answer["method"], method.name());
        assert_eq!(answer["body"], body.cloned().unwrap_or(Value::Null));
    }
    let answer = client.post_json("/thing", &body).unwrap();
    assert_eq!(answer["method"], "POST");
    // Five calls, each one failure and one success.
    assert_eq!(client.counts().requests, 10);
    assert_eq!(client.counts().retries, 5);
    let methods: Vec<String> = server.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(
        methods,
        ["GET", "GET", "PUT", "PUT", "DELETE", "DELETE", "POST", "POST", "POST", "POST"]
    );
}
