//! Real backends against a loopback server in this process, one wire protocol at a time
//! (OpenAI, Voyage and Cohere embeddings; OpenAI chat completions): request shapes,
//! retries on 429 with Retry-After, fallbacks on repeated 500s and timeouts, clear errors
//! on unusable answers with nothing cached, zero requests on a second run, `--offline`,
//! `record`, `cache stats|clear`, and an API key that never leaves the request header.

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::http::{chat_completion, fake_vector, openai_embeddings, Reply, Request, Server};
use serde_json::{json, Value};

const SENTINEL_KEY: &str = "sk-hyde-eval-sentinel-7f3a9c";

/// A scratch directory with a config file, a cache and an output directory.
struct Workspace {
    directory: tempfile::TempDir,
}

impl Workspace {
    fn new(config: &str) -> Workspace {
        let directory = tempfile::tempdir().unwrap();
        std::fs::write(directory.path().join("hyde-eval.toml"), config).unwrap();
        Workspace { directory }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.directory.path().join(relative)
    }

    /// Runs hyde-eval with the workspace's config, cache and output directory.
    fn run(&self, args: &[&str], key: Option<&str>) -> Output {
        let mut command = common::command();
        command.args(args);
        if args.first() != Some(&"cache") {
            command.arg("--config").arg(self.path("hyde-eval.toml"));
        }
        command
            .arg("--cache-dir")
            .arg(self.path("cache"))
            .env_remove("HYDE_EVAL_TEST_KEY");
        if args.first() == Some(&"run") {
            command.arg("--output-dir").arg(self.path("reports"));
        }
        if let Some(key) = key {
            command.env("HYDE_EVAL_TEST_KEY", key);
        }
        command.output().unwrap()
    }

    fn results(&self) -> Value {
        let text = std::fs::read_to_string(self.path("reports/devmem/results.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_success(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(output));
}

fn embedder_config(kind: &str, base_url: &str, extra: &str) -> String {
    format!(
        "[embedders.remote]\nkind = \"{kind}\"\nbase_url = \"{base_url}\"\nmodel = \"test-embed\"\n\
         initial_backoff_seconds = 0.01\nmax_retries = 2\ntimeout_seconds = 5\n{extra}\n"
    )
}

fn configuration<'a>(results: &'a Value, name: &str) -> &'a Value {
    results["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|configuration| configuration["name"] == name)
        .unwrap()
}

/// Texts sent in all embedding requests (OpenAI and Voyage put them in `input`).
fn embedded_inputs(requests: &[Request], field: &str) -> Vec<String> {
    requests
        .iter()
        .flat_map(|request| request.body[field].as_array().cloned().unwrap_or_default())
        .map(|text| text.as_str().unwrap().to_owned())
        .collect()
}

/// devmem's facts, queries and hypotheses: 220 + 90 + 270 texts.
fn devmem_hypotheses() -> HashSet<String> {
    std::fs::read_to_string(common::repo_path("datasets/devmem/hypotheses.jsonl"))
        .unwrap()
        .lines()
        .flat_map(|line| {
            let record: Value = serde_json::from_str(line).unwrap();
            record["hypotheses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|text| text.as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether an embeddings request's `input` holds any of `texts`.
fn embeds_any_of(request: &Request, texts: &HashSet<String>) -> bool {
    inputs_of(request).is_some_and(|inputs| {
        inputs
            .iter()
            .any(|text| text.as_str().is_some_and(|text| texts.contains(text)))
    })
}

/// The texts of an embeddings request: `input` (OpenAI, Voyage) or `texts` (Cohere).
fn inputs_of(request: &Request) -> Option<&Vec<Value>> {
    request.body["input"]
        .as_array()
        .or_else(|| request.body["texts"].as_array())
}

/// An embeddings answer in `protocol`'s shape for the request's texts.
fn answer_in(protocol: &str, request: &Request, dimension: usize) -> Value {
    match protocol {
        "cohere" => {
            let vectors: Vec<Vec<f32>> = inputs_of(request)
                .unwrap()
                .iter()
                .map(|text| fake_vector(text.as_str().unwrap(), dimension))
                .collect();
            json!({"embeddings": {"float": vectors}})
        }
        _ => openai_embeddings(request, dimension),
    }
}

const VECTOR_CONFIGURATIONS: &str = "dense,hyde-3b-hyp,multi-hyde";

#[test]
fn openai_embeddings_are_batched_cached_and_replayed_without_requests() {
    let server = Server::start(|request, _| Reply::json(openai_embeddings(request, 16)));
    let workspace = Workspace::new(&embedder_config(
        "openai",
        &server.base_url,
        "batch_size = 50\ndimensions = 16\napi_key_env = \"HYDE_EVAL_TEST_KEY\"",
    ));
    let args = [
        "run",
        "--embedder",
        "remote",
        "--configurations",
        VECTOR_CONFIGURATIONS,
    ];
    let first = workspace.run(&args, Some(SENTINEL_KEY));
    assert_success(&first);
    let requests = server.requests();
    for request in &requests {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/v1/embeddings")
        );
        assert_eq!(request.body["model"], "test-embed");
        assert_eq!(request.body["dimensions"], 16);
        assert_eq!(request.body["encoding_format"], "float");
        assert!(request.body["input"].as_array().unwrap().len() <= 50);
        assert_eq!(
            request.header("authorization"),
            Some(&*format!("Bearer {SENTINEL_KEY}"))
        );
    }
    // Every fact, query and hypothesis once: 220 + 90 + 270 (devmem has 3 per query).
    let inputs = embedded_inputs(&requests, "input");
    assert_eq!(inputs.len(), 220 + 90 + 270);
    let first_results = workspace.results();
    assert_eq!(first_results["backend"]["embedding"]["texts_embedded"], 580);
    assert_eq!(first_results["backend"]["embedding"]["texts_from_cache"], 0);
    assert_eq!(first_results["backend"]["embedding"]["tokens"], 580 * 3);
    assert_eq!(first_results["embedder"]["dimension"], 16);
    let dense = &configuration(&first_results, "dense")["backend"];
    assert_eq!(dense["texts_embedded"], 220 + 90);
    assert_eq!(
        configuration(&first_results, "multi-hyde")["backend"]["texts_embedded"],
        580
    );

    // Same inputs again: no request, same numbers, everything from the cache.
    let second = workspace.run(&args, Some(SENTINEL_KEY));
    assert_success(&second);
    assert_eq!(server.request_count(), requests.len());
    let second_results = workspace.results();
    assert_eq!(
        second_results["backend"]["embedding"]["texts_from_cache"],
        580
    );
    assert_eq!(second_results["backend"]["embedding"]["requests"], 0);
    for name in VECTOR_CONFIGURATIONS.split(',') {
        assert_eq!(
            configuration(&first_results, name)["macro"],
            configuration(&second_results, name)["macro"]
        );
        assert_eq!(
            configuration(&first_results, name)["per_query"],
            configuration(&second_results, name)["per_query"]
        );
    }

    // --offline needs no key and makes no request.
    let offline = workspace.run(&[&args[..], &["--offline"]].concat(), None);
    assert_success(&offline);
    assert_eq!(server.request_count(), requests.len());

    // Without the key and without --offline, the run stops before any request.
    let missing_key = workspace.run(&args, None);
    assert_eq!(missing_key.status.code(), Some(2));
    assert!(
        stderr(&missing_key).contains("HYDE_EVAL_TEST_KEY is not set"),
        "{}",
        stderr(&missing_key)
    );

    // The key is nowhere but in the request header.
    assert_no_sentinel(
        &[&first, &second, &offline, &missing_key],
        workspace.directory.path(),
    );
}

/// Fails when the sentinel key appears in any output or any file under `directory`.
fn assert_no_sentinel(outputs: &[&Output], directory: &Path) {
    for output in outputs {
        for stream in [&output.stdout, &output.stderr] {
            assert!(!String::from_utf8_lossy(stream).contains(SENTINEL_KEY));
        }
    }
    let mut pending = vec![directory.to_path_buf()];
    let mut files = 0;
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending.extend(
                std::fs::read_dir(&path)
                    .unwrap()
                    .flatten()
                    .map(|entry| entry.path()),
            );
        } else {
            files += 1;
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes
                    .windows(SENTINEL_KEY.len())
                    .any(|window| window == SENTINEL_KEY.as_bytes()),
                "the API key leaked into {}",
                path.display()
            );
        }
    }
    assert!(files > 0);
}

#[test]
fn voyage_sends_input_types_and_hypotheses_as_configured() {
    let server = Server::start(|request, _| Reply::json(openai_embeddings(request, 8)));
    let workspace = Workspace::new(&embedder_config(
        "voyage",
        &server.base_url,
        "output_dimension_unused = 1",
    ));
    // An unknown key is an error with a suggestion before anything is sent.
    let typo = workspace.run(&["run", "--embedder", "remote"], Some(SENTINEL_KEY));
    assert_eq!(typo.status.code(), Some(2));
    assert!(
        stderr(&typo).contains("output_dimension_unused"),
        "{}",
        stderr(&typo)
    );
    assert_eq!(server.request_count(), 0);

    std::fs::write(
        workspace.path("hyde-eval.toml"),
        embedder_config(
            "voyage",
            &server.base_url,
            "dimensions = 8\napi_key_env = \"HYDE_EVAL_TEST_KEY\"\nhypothesis_input = \"query\"",
        ),
    )
    .unwrap();
    let output = workspace.run(
        &[
            "run",
            "--embedder",
            "remote",
            "--configurations",
            "hyde-3b-hyp",
        ],
        Some(SENTINEL_KEY),
    );
    assert_success(&output);
    let hypotheses = devmem_hypotheses();
    let mut by_type: std::collections::BTreeMap<String, usize> = Default::default();
    for request in server.requests() {
        assert_eq!(request.path, "/v1/embeddings");
        assert_eq!(request.body["output_dimension"], 8);
        assert!(request.body.get("dimensions").is_none());
        let input_type = request.body["input_type"].as_str().unwrap().to_owned();
        for text in request.body["input"].as_array().unwrap() {
            let kind = if hypotheses.contains(text.as_str().unwrap()) {
                "hypothesis"
            } else {
                "other"
            };
            *by_type.entry(format!("{input_type}/{kind}")).or_default() += 1;
        }
    }
    // Facts as documents; queries and (as configured) hypotheses as queries.
    assert_eq!(by_type.get("document/other"), Some(&220));
    assert_eq!(by_type.get("query/other"), Some(&90));
    assert!(by_type
        .get("query/hypothesis")
        .is_some_and(|count| *count > 0));
    assert_eq!(by_type.get("document/hypothesis"), None);
}

#[test]
fn cohere_uses_its_own_fields_and_answer_shape() {
    let server = Server::start(|request, _| {
        let texts = request.body["texts"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let vectors: Vec<Vec<f32>> = texts
            .iter()
            .map(|text| fake_vector(text.as_str().unwrap(), 12))
            .collect();
        Reply::json(json!({"id": "x", "embeddings": {"float": vectors},
                           "meta": {"billed_units": {"input_tokens": texts.len() * 2}}}))
    });
    let workspace = Workspace::new(&embedder_config(
        "cohere",
        &server.base_url,
        "batch_size = 96\napi_key_env = \"HYDE_EVAL_TEST_KEY\"",
    ));
    let output = workspace.run(
        &["run", "--embedder", "remote", "--configurations", "dense"],
        Some(SENTINEL_KEY),
    );
    assert_success(&output);
    let requests = server.requests();
    assert!(requests.iter().all(|request| request.path == "/v1/embed"));
    assert!(requests
        .iter()
        .all(|request| request.body["embedding_types"] == json!(["float"])));
    let types: HashSet<&str> = requests
        .iter()
        .map(|request| request.body["input_type"].as_str().unwrap())
        .collect();
    assert_eq!(types, HashSet::from(["search_document", "search_query"]));
    // 220 facts in batches of at most 96, then 90 queries.
    let sizes: Vec<usize> = requests
        .iter()
        .map(|request| request.body["texts"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 310);
    assert!(sizes.iter().all(|size| *size <= 96));
    let results = workspace.results();
    assert_eq!(results["embedder"]["dimension"], 12);
    assert_eq!(results["backend"]["embedding"]["tokens"], 620);
}

#[test]
fn a_429_with_retry_after_is_waited_out_and_counted() {
    let server = Server::start(|request, number| {
        if number == 0 {
            Reply::status(429, "{\"error\": \"rate limited\"}").with_header("Retry-After", "1")
        } else {
            Reply::json(openai_embeddings(request, 8))
        }
    });
    let workspace = Workspace::new(&embedder_config(
        "openai",
        &server.base_url,
        "batch_size = 500",
    ));
    let started = Instant::now();
    let output = workspace.run(
        &["run", "--embedder", "remote", "--configurations", "dense"],
        None,
    );
    assert_success(&output);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After: 1 was not honoured"
    );
    // The refused batch was sent again: facts twice (refused, then accepted), queries once.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body, requests[1].body);
    let results = workspace.results();
    assert_eq!(results["backend"]["embedding"]["requests"], 3);
    assert_eq!(results["backend"]["embedding"]["retries"], 1);
}

#[test]
fn repeated_500s_on_hypotheses_fall_back_to_the_query_vector_and_cache_nothing() {
    let hypotheses = devmem_hypotheses();
    let server = Server::start(move |request, _| {
        if embeds_any_of(request, &hypotheses) {
            Reply::status(500, "{\"error\": \"overloaded\"}")
        } else {
            Reply::json(openai_embeddings(request, 8))
        }
    });
    let workspace = Workspace::new(&embedder_config(
        "openai",
        &server.base_url,
        "max_in_flight = 2",
    ));
    let output = workspace.run(
        &[
            "run",
            "--embedder",
            "remote",
            "--configurations",
            VECTOR_CONFIGURATIONS,
        ],
        None,
    );
    assert_success(&output);
    assert!(stderr(&output).contains("fell back"), "{}", stderr(&output));
    let results = workspace.results();
    for name in ["hyde-3b-hyp", "multi-hyde"] {
        let configuration = configuration(&results, name);
        let eligible = configuration["hyde"]["eligible_queries"].as_u64().unwrap();
        assert!(eligible > 0);
        assert_eq!(configuration["hyde"]["hypotheses_used"], 0, "{name}");
        assert_eq!(
            configuration["hyde"]["fallback_no_hypothesis"], eligible,
            "{name}"
        );
        assert_eq!(
            configuration["backend"]["hypothesis_embedding_failures"], eligible,
            "{name}"
        );
    }

    // Nothing of the failed hypotheses was cached: a healthy server gets asked for them.
    let healthy = Server::start(|request, _| Reply::json(openai_embeddings(request, 8)));
    std::fs::write(
        workspace.path("hyde-eval.toml"),
        embedder_config("openai", &healthy.base_url, ""),
    )
    .unwrap();
    // A new base URL is a new embedding space: everything is asked again.
    assert_success(&workspace.run(
        &[
            "run",
            "--embedder",
            "remote",
            "--configurations",
            VECTOR_CONFIGURATIONS,
        ],
        None,
    ));
    assert_eq!(embedded_inputs(&healthy.requests(), "input").len(), 580);
}

/// A handler that answers a request the same way whatever its arrival number.
type AnswerFor = dyn Fn(&Request) -> Reply + Send + Sync;

#[test]
fn hypothesis_embeddings_slower_than_the_timeout_fall_back() {
    let hypotheses = devmem_hypotheses();
    let server = Server::start(move |request, _| {
        let reply = Reply::json(openai_embeddings(request, 8));
        if embeds_any_of(request, &hypotheses) {
            reply.delayed(Duration::from_millis(1500))
        } else {
            reply
        }
    });
    // One attempt of at most half a second per request.
    let config = embedder_config("openai", &server.base_url, "max_in_flight = 16")
        .replace("timeout_seconds = 5", "timeout_seconds = 0.5")
        .replace("max_retries = 2", "max_retries = 0");
    let workspace = Workspace::new(&config);
    let output = workspace.run(
        &[
            "run",
            "--embedder",
            "remote",
            "--configurations",
            "dense,hyde-3b-hyp",
        ],
        None,
    );
    assert_success(&output);
    assert!(
        stderr(&output).contains("no answer within the timeout"),
        "{}",
        stderr(&output)
    );
    let results = workspace.results();
    let hyde = configuration(&results, "hyde-3b-hyp");
    assert_eq!(hyde["hyde"]["fallback_no_hypothesis"], 90);
    assert_eq!(hyde["backend"]["hypothesis_embedding_failures"], 90);
}

#[test]
fn unusable_answers_are_clear_errors_and_nothing_is_cached() {
    let cases: Vec<(&str, Box<AnswerFor>, &str)> = vec![
        (
            "malformed JSON",
            Box::new(|_: &Request| Reply::status(200, "{\"data\": [")),
            "answer is not JSON",
        ),
        (
            "one vector short",
            Box::new(|request: &Request| {
                let mut answer = openai_embeddings(request, 8);
                answer["data"].as_array_mut().unwrap().pop();
                Reply::json(answer)
            }),
            "vectors for",
        ),
        (
            "wrong dimension",
            Box::new(|request: &Request| Reply::json(openai_embeddings(request, 7))),
            "has 7 dimensions, expected 8 (the configured dimensions)",
        ),
        (
            "per-token vectors (llama.cpp without pooling)",
            Box::new(|request: &Request| {
                let count = request.body["input"].as_array().unwrap().len();
                let data: Vec<Value> = (0..count)
                    .map(|index| json!({"index": index, "embedding": [[0.1, 0.2], [0.3, 0.4]]}))
                    .collect();
                Reply::json(json!({"data": data}))
            }),
            "--pooling mean",
        ),
        (
            "NaN spelled as a string",
            Box::new(|request: &Request| {
                let count = request.body["input"].as_array().unwrap().len();
                let data: Vec<Value> = (0..count)
                    .map(|index| json!({"index": index, "embedding": [0.5, "NaN"]}))
                    .collect();
                Reply::json(json!({"data": data}))
            }),
            "not a number",
        ),
    ];
    for (case, handler, expected) in cases {
        let server = Server::start(move |request, _| handler(request));
        let workspace = Workspace::new(&embedder_config(
            "openai",
            &server.base_url,
            "dimensions = 8",
        ));
        let output = workspace.run(
            &["run", "--embedder", "remote", "--configurations", "dense"],
            None,
        );
        assert_eq!(output.status.code(), Some(3), "{case}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(expected),
            "{case}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("embedding provider openai (test-embed at http://127.0.0.1"),
            "{case}"
        );
        let stats = workspace.run(&["cache", "stats"], None);
        assert_success(&stats);
        let listing = String::from_utf8_lossy(&stats.stdout);
        assert!(listing.contains("test-embed"), "{listing}");
        let row = listing
            .lines()
            .find(|line| line.contains("test-embed"))
            .unwrap();
        let cells: Vec<&str> = row.split('┆').map(str::trim).collect();
        assert_eq!(cells[5], "0", "{case}: something was cached: {row}");
    }
}

#[test]
fn offline_without_a_cache_names_what_is_missing() {
    let workspace = Workspace::new(&embedder_config("openai", "http://127.0.0.1:9/v1", ""));
    let output = workspace.run(
        &[
            "run",
            "--embedder",
            "remote",
            "--configurations",
            "dense",
            "--offline",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(3));
    let message = stderr(&output);
    assert!(
        message.contains("--offline: 220 of 220 texts have no cached embedding from openai"),
        "{message}"
    );
    assert!(message.contains("run once without --offline"), "{message}");
}

fn chat_config(base_url: &str, extra: &str) -> String {
    format!(
        "[generators.llm]\nkind = \"openai-chat\"\nbase_url = \"{base_url}\"\nmodel = \"test-chat\"\n\
         max_tokens = 120\ntemperature = 0.5\ninitial_backoff_seconds = 0.01\nmax_retries = 1\n{extra}\n"
    )
}

#[test]
fn chat_hypotheses_use_n_then_seeded_calls_and_replay_from_the_cache() {
    // The server ignores `n`, as llama.cpp's does: one choice per request.
    let server = Server::start(|request, _| Reply::json(chat_completion(request, 1)));
    let workspace = Workspace::new(&chat_config(&server.base_url, "stop = [\"\\n\\n\"]"));
    let args = [
        "run",
        "--generator",
        "llm",
        "--configurations",
        "hyde-3a,multi-hyde",
        "--embedder",
        "hash",
    ];
    let first = workspace.run(&args, None);
    assert_success(&first);
    let requests = server.requests();
    // Per query: one request with n = 3, then seeded calls for samples 1 and 2.
    assert_eq!(requests.len(), 90 * 3);
    for request in &requests {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.body["model"], "test-chat");
        assert_eq!(request.body["max_tokens"], 120);
        assert_eq!(request.body["temperature"], 0.5);
        assert_eq!(request.body["stop"], json!(["\n\n"]));
        let prompt = request.body["messages"][0]["content"].as_str().unwrap();
        assert!(prompt.ends_with("\n\nHypothetical answer:"), "{prompt}");
    }
    let with_n = requests
        .iter()
        .filter(|request| request.body["n"] == 3)
        .count();
    let seeds: HashSet<u64> = requests
        .iter()
        .filter_map(|request| request.body["seed"].as_u64())
        .collect();
    assert_eq!(with_n, 90);
    assert_eq!(seeds, HashSet::from([1, 2]));

    let results = workspace.results();
    assert_eq!(results["generator"]["kind"], "openai-chat");
    // Diagnostics show the generated hypotheses, not the dataset's recording.
    let shown = results["queries"][0]["hypotheses"].as_array().unwrap();
    assert_eq!(shown.len(), 3);
    assert!(
        shown[0].as_str().unwrap().ends_with("variant 0."),
        "{shown:?}"
    );
    assert_eq!(results["generator"]["sources"][0]["prompt"], "chatcli-3a");
    let multi = configuration(&results, "multi-hyde");
    assert_eq!(multi["hyde"]["hypotheses_used"], 90);
    assert_eq!(multi["backend"]["llm_requests"], 270);
    assert_eq!(multi["backend"]["hypotheses_generated"], 270);
    assert!(
        multi["backend"]["generation_latency_ms_p95"]
            .as_f64()
            .unwrap()
            >= multi["backend"]["generation_latency_ms_p50"]
                .as_f64()
                .unwrap()
    );
    assert_eq!(
        results["backend"]["generation"]["completion_tokens"],
        270 * 12
    );

    let second = workspace.run(&args, None);
    assert_success(&second);
    assert_eq!(
        server.request_count(),
        requests.len(),
        "the second run sent requests"
    );
    let replayed = workspace.results();
    assert_eq!(
        replayed["backend"]["generation"]["hypotheses_from_cache"],
        270
    );
    for name in ["hyde-3a", "multi-hyde"] {
        assert_eq!(
            configuration(&results, name)["per_query"],
            configuration(&replayed, name)["per_query"]
        );
    }

    // `record` writes the cached hypotheses with their provenance, without a request.
    let copy = workspace.path("devmem");
    std::fs::create_dir_all(&copy).unwrap();
    for file in ["dataset.toml", "facts.jsonl", "queries.jsonl", "qrels.tsv"] {
        std::fs::copy(
            common::repo_path("datasets/devmem").join(file),
            copy.join(file),
        )
        .unwrap();
    }
    let record = workspace.run(
        &[
            "record",
            "--generator",
            "llm",
            "--dataset",
            copy.to_str().unwrap(),
            "--configurations",
            "hyde-3a,multi-hyde",
        ],
        None,
    );
    assert_success(&record);
    assert_eq!(server.request_count(), requests.len());
    let recorded = std::fs::read_to_string(copy.join("hypotheses.jsonl")).unwrap();
    assert_eq!(recorded.lines().count(), 90);
    let line: Value = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
    assert_eq!(line["hypotheses"].as_array().unwrap().len(), 3);
    assert_eq!(line["source"]["model"], "test-chat");
    assert_eq!(line["source"]["prompt"], "chatcli-3a");
    assert_eq!(line["source"]["temperature"], 0.5);
    // Recorded hypotheses are replaced only with --force, checked before any request;
    // no other dataset file, --force or not.
    let record_again = |extra: &[&str]| {
        let mut args = vec![
            "record",
            "--generator",
            "llm",
            "--dataset",
            copy.to_str().unwrap(),
            "--configurations",
            "hyde-3a,multi-hyde",
        ];
        args.extend_from_slice(extra);
        workspace.run(&args, None)
    };
    let refused = record_again(&[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("hypotheses.jsonl: exists; refusing to replace it"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let facts = copy.join("facts.jsonl");
    let refused = record_again(&["--output", facts.to_str().unwrap(), "--force"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("an input of this command"));
    assert_success(&record_again(&["--force"]));
    assert_eq!(server.request_count(), requests.len());
    assert_eq!(
        std::fs::read_to_string(copy.join("hypotheses.jsonl")).unwrap(),
        recorded
    );
    // Replaying the recording gives the live run's rankings.
    let replay = common::command()
        .args([
            "run",
            "--quiet",
            "--configurations",
            "hyde-3a,multi-hyde",
            "--run-name",
            "replay",
            "--dataset",
        ])
        .arg(&copy)
        .arg("--output-dir")
        .arg(workspace.path("reports"))
        .output()
        .unwrap();
    assert_success(&replay);
    let replay: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace.path("reports/replay/results.json")).unwrap(),
    )
    .unwrap();
    for name in ["hyde-3a", "multi-hyde"] {
        assert_eq!(
            configuration(&results, name)["per_query"],
            configuration(&replay, name)["per_query"]
        );
    }
}

/// `record`'s progress names its generation stage from the moment it starts, and the
/// heartbeat counts the queries done (never the stale load stage).
#[test]
fn record_progress_names_the_generation_stage() {
    let server = Server::start(|request, _| {
        Reply::json(chat_completion(request, 1)).delayed(Duration::from_millis(5))
    });
    let workspace = Workspace::new(&chat_config(&server.base_url, "max_in_flight = 2"));
    let output = workspace.path("hypotheses.jsonl");
    let mut command = common::command();
    command
        .args(["record", "--generator", "llm", "--n", "1", "--output"])
        .arg(&output)
        .arg("--config")
        .arg(workspace.path("hyde-eval.toml"))
        .arg("--cache-dir")
        .arg(workspace.path("cache"))
        .env("HYDE_EVAL_PROGRESS_INTERVAL_MS", "1");
    let result = command.output().unwrap();
    assert_success(&result);
    let stderr = String::from_utf8(result.stderr).unwrap();
    let stage = "hyde-eval: generating 90 queries' hypotheses (1 each) with generator llm";
    let start = stderr.find(&format!("{stage} (")).expect(&stderr);
    let after: Vec<&str> = stderr[start..].lines().skip(1).collect();
    // 90 requests of at least 5 ms, two at a time: the 1 ms heartbeat beats many times.
    let beats: Vec<&&str> = after
        .iter()
        .filter(|line| line.starts_with(&format!("{stage}: ")))
        .collect();
    assert!(!beats.is_empty(), "{stderr}");
    assert!(beats.iter().any(|line| line.contains("/90 (")), "{stderr}");
    assert!(
        !after
            .iter()
            .any(|line| line.starts_with("hyde-eval: loading")),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&output).unwrap().lines().count(),
        90
    );
}

#[test]
fn chat_failures_and_timeouts_fall_back_per_query_and_are_not_cached() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    // Every request fails twice with 500 (first try and its one retry), then the
    // server hangs past the client's timeout for the rest.
    let server = Server::start(move |request, _| {
        let call = counter.fetch_add(1, Ordering::SeqCst);
        if request.body["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .contains("deploy")
        {
            Reply::json(chat_completion(request, 1)).delayed(Duration::from_millis(1500))
        } else if call.is_multiple_of(2) {
            Reply::status(500, "{\"error\": \"boom\"}")
        } else {
            Reply::status(503, "")
        }
    });
    let workspace = Workspace::new(&chat_config(
        &server.base_url,
        "timeout_seconds = 0.5\nmax_in_flight = 8",
    ));
    let args = ["run", "--generator", "llm", "--configurations", "hyde-3a"];
    let output = workspace.run(&args, None);
    assert_success(&output);
    let results = workspace.results();
    let hyde = &configuration(&results, "hyde-3a")["hyde"];
    assert_eq!(hyde["eligible_queries"], 90);
    assert_eq!(hyde["hypotheses_used"], 0);
    assert_eq!(hyde["fallback_no_hypothesis"], 90);
    assert_eq!(
        configuration(&results, "hyde-3a")["backend"]["generation_failures"],
        90
    );
    assert_eq!(results["backend"]["generation"]["failures"], 90);
    // Falling back to the original keywords gives exactly keyword-only retrieval.
    let keyword = workspace.run(
        &[
            "run",
            "--configurations",
            "keyword",
            "--run-name",
            "keyword",
        ],
        None,
    );
    assert_success(&keyword);
    let keyword: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace.path("reports/keyword/results.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        configuration(&results, "hyde-3a")["macro"],
        configuration(&keyword, "keyword")["macro"]
    );

    // Nothing was cached: the next run asks again.
    let before = server.request_count();
    assert_success(&workspace.run(&args, None));
    assert!(server.request_count() >= before + 90);
}

#[test]
fn rejected_credentials_stop_the_run_and_the_key_never_leaks() {
    // The server echoes the Authorization header back, as some proxies do.
    let server = Server::start(|request, _| {
        Reply::status(
            401,
            &format!(
                "{{\"error\": \"invalid key {}\"}}",
                request.header("authorization").unwrap_or("")
            ),
        )
    });
    let workspace = Workspace::new(&chat_config(
        &server.base_url,
        "api_key_env = \"HYDE_EVAL_TEST_KEY\"",
    ));
    let output = workspace.run(
        &["run", "--generator", "llm", "--configurations", "hyde-3a"],
        Some(SENTINEL_KEY),
    );
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains("HTTP 401"), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("<redacted>"),
        "{}",
        stderr(&output)
    );
    assert_no_sentinel(&[&output], workspace.directory.path());
}

/// hyde-3b-hyp with the remote embedder and the chat generator, one hypothesis a query.
const ONE_HYPOTHESIS_RUN: [&str; 7] = [
    "run",
    "--embedder",
    "remote",
    "--generator",
    "llm",
    "--configurations",
    "hyde-3b-hyp",
];

#[test]
fn cache_stats_and_clear_report_per_provider() {
    let server = Server::start(|request, _| {
        if request.path.ends_with("/embeddings") {
            Reply::json(openai_embeddings(request, 8))
        } else {
            Reply::json(chat_completion(request, 1))
        }
    });
    let config = format!(
        "{}{}",
        embedder_config("openai", &server.base_url, ""),
        chat_config(&server.base_url, "")
    );
    let workspace = Workspace::new(&config);
    assert_success(&workspace.run(&ONE_HYPOTHESIS_RUN, None));
    let stats = workspace.run(&["cache", "stats"], None);
    assert_success(&stats);
    let listing = String::from_utf8_lossy(&stats.stdout).into_owned();
    let row = |model: &str| -> Vec<String> {
        let line = listing
            .lines()
            .find(|line| line.contains(model))
            .unwrap_or_else(|| panic!("{listing}"));
        line.split('┆')
            .map(|cell| cell.trim().trim_matches('│').trim().to_owned())
            .collect()
    };
    // 220 facts + 90 queries + 90 hypotheses; 90 hypotheses.
    assert_eq!(row("test-embed")[5], "400", "{listing}");
    assert_eq!(row("test-chat")[5], "90", "{listing}");

    // A damaged entry is reported by stats, ignored by the next run and replaced.
    let entry = cache_entries(&workspace.path("cache/embeddings")).remove(0);
    let bytes = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, &bytes[..bytes.len() / 2]).unwrap();
    let listing =
        String::from_utf8_lossy(&workspace.run(&["cache", "stats"], None).stdout).into_owned();
    assert!(
        listing.lines().any(|line| line.contains("test-embed")
            && line
                .split('┆')
                .nth(8)
                .is_some_and(|cell| cell.trim() == "1")),
        "{listing}"
    );
    let before = server.request_count();
    let rerun = workspace.run(&ONE_HYPOTHESIS_RUN, None);
    assert_success(&rerun);
    assert!(
        stderr(&rerun).contains("1 damaged cache entries were ignored and replaced"),
        "{}",
        stderr(&rerun)
    );
    assert_eq!(server.request_count(), before + 1);
    assert_eq!(std::fs::read(&entry).unwrap(), bytes);

    let cleared = workspace.run(&["cache", "clear", "--provider", "openai-chat"], None);
    assert_success(&cleared);
    assert!(String::from_utf8_lossy(&cleared.stdout).contains("removed 90 entries in 1 namespaces"));
    let unknown = workspace.run(&["cache", "clear", "--provider", "nothing-like-it"], None);
    assert_eq!(unknown.status.code(), Some(2));
    assert_success(&workspace.run(&["cache", "clear"], None));
    assert!(
        String::from_utf8_lossy(&workspace.run(&["cache", "stats"], None).stdout)
            .contains("is empty")
    );
}

/// Every cache entry under `directory`, sorted.
fn cache_entries(directory: &Path) -> Vec<PathBuf> {
    files_named(directory, "entry")
}

/// The files under `directory` (at any depth) with `extension`, sorted.
fn files_named(directory: &Path, extension: &str) -> Vec<PathBuf> {
    let mut pending = vec![directory.to_path_buf()];
    let mut files = Vec::new();
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending.extend(
                std::fs::read_dir(&path)
                    .unwrap()
                    .flatten()
                    .map(|entry| entry.path()),
            );
        } else if path.extension().is_some_and(|found| found == extension) {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
fn killing_a_run_while_it_writes_the_cache_leaves_a_cache_the_next_run_reads() {
    let server = Server::start(|request, _| Reply::json(openai_embeddings(request, 64)));
    let workspace = Workspace::new(&embedder_config(
        "openai",
        &server.base_url,
        "batch_size = 32",
    ));
    let dataset = workspace.path("large");
    common::write_synthetic_dataset(&dataset, 6_000, 200);
    let dataset = dataset.to_str().unwrap().to_owned();
    let args = [
        "run",
        "--quiet",
        "--embedder",
        "remote",
        "--configurations",
        "dense,multi-hyde",
        "--dataset",
        &dataset,
    ];
    let spawn = |cache: &str| {
        common::command()
            .args(args)
            .arg("--config")
            .arg(workspace.path("hyde-eval.toml"))
            .arg("--cache-dir")
            .arg(workspace.path(cache))
            .arg("--output-dir")
            .arg(workspace.path(&format!("reports-{cache}")))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };

    // An uninterrupted run into its own cache: the reference, and how many embedding
    // requests a run makes (the progress the kills below are timed by).
    let before_reference = server.request_count();
    let reference = spawn("reference-cache").wait_with_output().unwrap();
    assert_success(&reference);
    let requests = server.request_count() - before_reference;
    assert!(requests > 100, "{requests} requests");
    let reference_results =
        std::fs::read(workspace.path("reports-reference-cache/large/results.json")).unwrap();

    // SIGKILL (no clean-up possible) at three points while the cache is being filled.
    let entries = || -> usize {
        let listing =
            String::from_utf8_lossy(&workspace.run(&["cache", "stats"], None).stdout).into_owned();
        listing
            .lines()
            .find(|line| line.contains("test-embed"))
            .map_or(0, |line| {
                line.split('┆').nth(5).unwrap().trim().parse().unwrap()
            })
    };
    // Each kill lands once the server has answered a quarter of a run's requests in
    // that run, whatever the machine's load: the cache fills a quarter at a time, and
    // each kill comes while entries are being written.
    for kill in 1..=3 {
        let started = server.request_count();
        let mut child = spawn("cache");
        let deadline = Instant::now() + Duration::from_secs(120);
        while server.request_count() < started + requests / 4
            && Instant::now() < deadline
            && child.try_wait().unwrap().is_none()
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = child.kill();
        child.wait().unwrap();
        if kill == 1 {
            // The first kill landed while the cache was being filled.
            let written = entries();
            assert!(
                written > 0 && written < 6_600,
                "{written} entries after the first kill"
            );
        }
    }
    let resumed = spawn("cache").wait_with_output().unwrap();
    assert_success(&resumed);
    assert!(
        !stderr(&resumed).contains("damaged"),
        "{}",
        stderr(&resumed)
    );
    let stats = workspace.run(&["cache", "stats"], None);
    let listing = String::from_utf8_lossy(&stats.stdout).into_owned();
    let row: Vec<&str> = listing
        .lines()
        .find(|line| line.contains("test-embed"))
        .unwrap()
        .split('┆')
        .map(str::trim)
        .collect();
    // 6,000 facts + 200 queries + 400 hypotheses, none damaged, and the corpus' segment.
    assert_eq!((row[5], row[6], row[8]), ("6600", "1", "0"), "{listing}");

    // Replayed offline, the interrupted-then-resumed cache gives the reference numbers.
    let before = server.request_count();
    let offline = common::command()
        .args(args)
        .arg("--offline")
        .arg("--config")
        .arg(workspace.path("hyde-eval.toml"))
        .arg("--cache-dir")
        .arg(workspace.path("cache"))
        .arg("--output-dir")
        .arg(workspace.path("reports-cache"))
        .output()
        .unwrap();
    assert_success(&offline);
    assert_eq!(server.request_count(), before);
    let results: Value = serde_json::from_slice(
        &std::fs::read(workspace.path("reports-cache/large/results.json")).unwrap(),
    )
    .unwrap();
    let reference: Value = serde_json::from_slice(&reference_results).unwrap();
    assert_eq!(
        results["configurations"][0]["per_query"],
        reference["configurations"][0]["per_query"]
    );
    assert_eq!(
        results["configurations"][1]["per_query"],
        reference["configurations"][1]["per_query"]
    );
}

#[test]
fn every_embedding_protocol_retries_falls_back_and_refuses_bad_answers() {
    for protocol in ["openai", "voyage", "cohere"] {
        let workspace_for = |server: &Server| {
            Workspace::new(&embedder_config(
                protocol,
                &server.base_url,
                "api_key_env = \"HYDE_EVAL_TEST_KEY\"",
            ))
        };
        let run = |workspace: &Workspace, configuration: &str| {
            workspace.run(
                &[
                    "run",
                    "--embedder",
                    "remote",
                    "--configurations",
                    configuration,
                ],
                Some(SENTINEL_KEY),
            )
        };

        // 429 with Retry-After on the first request, then answers.
        let server = Server::start(move |request, number| {
            if number == 0 {
                Reply::status(429, "{}").with_header("Retry-After", "0.2")
            } else {
                Reply::json(answer_in(protocol, request, 8))
            }
        });
        let workspace = workspace_for(&server);
        assert_success(&run(&workspace, "dense"));
        let retries = &workspace.results()["backend"]["embedding"]["retries"];
        assert_eq!(*retries, 1, "{protocol}");

        // Repeated 500s on the hypotheses: those queries fall back and the run completes.
        let hypotheses = devmem_hypotheses();
        let server = Server::start(move |request, _| {
            if embeds_any_of(request, &hypotheses) {
                Reply::status(500, "{}")
            } else {
                Reply::json(answer_in(protocol, request, 8))
            }
        });
        let workspace = workspace_for(&server);
        assert_success(&run(&workspace, "hyde-3b-hyp"));
        let results = workspace.results();
        let hyde = &configuration(&results, "hyde-3b-hyp")["hyde"];
        assert_eq!(hyde["fallback_no_hypothesis"], 90, "{protocol}");

        // One vector short: exit 3, named, nothing cached.
        let server = Server::start(move |request, _| {
            let mut answer = answer_in(protocol, request, 8);
            let vectors = match protocol {
                "cohere" => &mut answer["embeddings"]["float"],
                _ => &mut answer["data"],
            };
            vectors.as_array_mut().unwrap().pop();
            Reply::json(answer)
        });
        let workspace = workspace_for(&server);
        let output = run(&workspace, "dense");
        assert_eq!(
            output.status.code(),
            Some(3),
            "{protocol}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("vectors for"),
            "{protocol}: {}",
            stderr(&output)
        );
        assert!(
            cache_entries(&workspace.path("cache/embeddings")).is_empty(),
            "{protocol}"
        );
    }
}

#[test]
fn a_large_corpus_is_kept_as_one_segment_and_mapped_on_the_next_run() {
    let server = Server::start(|request, _| Reply::json(openai_embeddings(request, 16)));
    let workspace = Workspace::new(&embedder_config(
        "openai",
        &server.base_url,
        "batch_size = 500\ndimensions = 16",
    ));
    // 5,000 facts: above the 4,096 from which a corpus is stored as a segment.
    let dataset = workspace.path("synth");
    common::write_synthetic_dataset(&dataset, 5000, 20);
    let args = [
        "run",
        "--embedder",
        "remote",
        "--configurations",
        "dense",
        "--dataset",
        dataset.to_str().unwrap(),
    ];
    let results = |workspace: &Workspace| -> Value {
        let reports = workspace.path("reports");
        let report = std::fs::read_dir(&reports)
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path();
        serde_json::from_str(&std::fs::read_to_string(report.join("results.json")).unwrap())
            .unwrap()
    };

    let first = workspace.run(&args, None);
    assert_success(&first);
    let fresh = results(&workspace);
    assert_eq!(
        embedded_inputs(&server.requests(), "input").len(),
        5000 + 20
    );
    let cache = workspace.path("cache");
    let segments = files_named(&cache, "segment");
    assert_eq!(segments.len(), 1, "one segment for the corpus");
    // Header (32 bytes) + 5,000 rows of 16 f32.
    assert_eq!(
        std::fs::metadata(&segments[0]).unwrap().len(),
        32 + 5000 * 16 * 4
    );

    // Without any per-fact entry, the corpus comes from the segment: only the 20 queries
    // are requested again, and the results are the same.
    for entry in cache_entries(&cache) {
        std::fs::remove_file(entry).unwrap();
    }
    let requests_before = server.request_count();
    let mapped = workspace.run(&args, None);
    assert_success(&mapped);
    let sent_again = embedded_inputs(&server.requests()[requests_before..], "input");
    assert_eq!(sent_again.len(), 20, "only the queries are embedded again");
    let replayed = results(&workspace);
    assert_eq!(replayed["backend"]["embedding"]["texts_from_cache"], 5000);
    assert_eq!(fresh["configurations"], {
        let mut configurations = replayed["configurations"].clone();
        // Accounting differs (requests, cache hits); the rankings and metrics may not.
        configurations[0]["backend"] = fresh["configurations"][0]["backend"].clone();
        configurations
    });

    // A damaged segment is counted and ignored: the corpus is fetched again (there are
    // no per-fact entries now), the results are the same, and the segment is rewritten.
    let mut bytes = std::fs::read(&segments[0]).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&segments[0], &bytes).unwrap();
    let requests_before = server.request_count();
    let repaired = workspace.run(&args, None);
    assert_success(&repaired);
    assert_eq!(
        embedded_inputs(&server.requests()[requests_before..], "input").len(),
        5000
    );
    let after_damage = results(&workspace);
    assert_eq!(
        after_damage["backend"]["embedding"]["corrupt_entries_ignored"],
        1
    );
    assert_eq!(
        after_damage["configurations"][0]["per_query"],
        fresh["configurations"][0]["per_query"]
    );
    let requests_before = server.request_count();
    let offline = workspace.run(&[&args[..], &["--offline"]].concat(), None);
    assert_success(&offline);
    assert_eq!(server.request_count(), requests_before);
    assert_eq!(
        results(&workspace)["backend"]["embedding"]["corrupt_entries_ignored"],
        0
    );
}
