//! Amazon Bedrock against a loopback server that plays Bedrock's runtime: it checks
//! every request's AWS Signature Version 4 with its own implementation (itself checked
//! against the published get-vanilla vector), the invoke and Converse bodies of Titan
//! v2, Titan v1 and Cohere Embed v3, and answers as Bedrock does, errors included
//! (expired token, a signature for another region, throttling, a refused dimension).
//! The secret key and session token never reach an output or a written file.

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::http::{fake_vector, Reply, Request, Server};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const ACCESS_KEY: &str = "AKIDHYDEEVALTEST";
const SECRET_KEY: &str = "bedrock-secret-sentinel-4e1d7a";
const SESSION_TOKEN: &str = "bedrock-token-sentinel-9b2c61";
/// The region the fake endpoint serves.
const REGION: &str = "eu-west-3";
const TITAN_V2: &str = "amazon.titan-embed-text-v2:0";

// ---------------------------------------------------------------------------------
// The server's own SigV4 check, written apart from src/embed/sigv4.rs.

/// The parts of an `Authorization: AWS4-HMAC-SHA256 ...` header.
struct Authorization {
    access_key: String,
    day: String,
    region: String,
    service: String,
    signed_headers: Vec<String>,
    signature: String,
}

fn parse_authorization(header: &str) -> Option<Authorization> {
    let rest = header.strip_prefix("AWS4-HMAC-SHA256 ")?;
    let mut credential = None;
    let mut signed = None;
    let mut signature = None;
    for part in rest.split(", ") {
        let (name, value) = part.split_once('=')?;
        match name {
            "Credential" => credential = Some(value),
            "SignedHeaders" => signed = Some(value),
            "Signature" => signature = Some(value),
            _ => return None,
        }
    }
    let scope: Vec<&str> = credential?.split('/').collect();
    if scope.len() != 5 || scope[4] != "aws4_request" {
        return None;
    }
    Some(Authorization {
        access_key: scope[0].to_owned(),
        day: scope[1].to_owned(),
        region: scope[2].to_owned(),
        service: scope[3].to_owned(),
        signed_headers: signed?.split(';').map(str::to_owned).collect(),
        signature: signature?.to_owned(),
    })
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap();
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut text, byte| {
        text.push_str(&format!("{byte:02x}"));
        text
    })
}

/// Who signs and where: the credentials the server knows and the endpoint's scope.
struct Endpoint<'a> {
    access_key: &'a str,
    secret: &'a str,
    region: &'a str,
    service: &'a str,
}

const BEDROCK: Endpoint<'static> = Endpoint {
    access_key: ACCESS_KEY,
    secret: SECRET_KEY,
    region: REGION,
    service: "bedrock",
};

/// Why AWS would refuse `request` at `endpoint`, in Bedrock's words; `None` when the
/// signature holds. The canonical URI is the path as received, encoded once more (so
/// `%3A` is signed as `%253A`); there is no query.
fn signature_problem(request: &Request, endpoint: &Endpoint<'_>) -> Option<String> {
    let Some(header) = request.header("authorization") else {
        return Some("Missing Authentication Token".into());
    };
    let Some(authorization) = parse_authorization(header) else {
        return Some(format!(
            "Authorization header requires Credential, SignedHeaders and Signature: {header}"
        ));
    };
    if authorization.region != endpoint.region {
        return Some(format!(
            "Credential should be scoped to a valid region, not '{}'.",
            authorization.region
        ));
    }
    if authorization.service != endpoint.service {
        return Some(format!(
            "Credential should be scoped to correct service: '{}'.",
            endpoint.service
        ));
    }
    let required = ["host", "x-amz-date"].into_iter().chain(
        request
            .header("x-amz-security-token")
            .map(|_| "x-amz-security-token"),
    );
    for name in required {
        if !authorization
            .signed_headers
            .iter()
            .any(|signed| signed == name)
        {
            return Some(format!("{name} must be signed"));
        }
    }
    let mut canonical_uri = String::new();
    for byte in request.path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                canonical_uri.push(byte as char)
            }
            other => canonical_uri.push_str(&format!("%{other:02X}")),
        }
    }
    let mut canonical = format!("{}\n{canonical_uri}\n\n", request.method);
    for name in &authorization.signed_headers {
        let value = request.header(name).unwrap_or("");
        canonical.push_str(&format!("{name}:{}\n", value.trim()));
    }
    canonical.push_str(&format!(
        "\n{}\n{}",
        authorization.signed_headers.join(";"),
        to_hex(&Sha256::digest(&request.raw_body))
    ));
    let scope = format!(
        "{}/{}/{}/aws4_request",
        authorization.day, endpoint.region, endpoint.service
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
        request.header("x-amz-date").unwrap_or(""),
        to_hex(&Sha256::digest(canonical.as_bytes()))
    );
    let mut key = format!("AWS4{}", endpoint.secret).into_bytes();
    for part in [
        authorization.day.as_str(),
        endpoint.region,
        endpoint.service,
        "aws4_request",
    ] {
        key = hmac(&key, part.as_bytes());
    }
    let expected = to_hex(&hmac(&key, string_to_sign.as_bytes()));
    if authorization.access_key != endpoint.access_key {
        return Some("The security token included in the request is invalid.".into());
    }
    (expected != authorization.signature).then(|| {
        "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.".into()
    })
}

/// The published suite's get-vanilla request, with `signature`.
fn get_vanilla(signature: &str) -> Request {
    Request {
        method: "GET".into(),
        path: "/".into(),
        headers: vec![
            ("host".into(), "example.amazonaws.com".into()),
            ("x-amz-date".into(), "20150830T123600Z".into()),
            ("authorization".into(), format!("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature={signature}")),
        ],
        body: Value::Null,
        raw_body: Vec::new(),
    }
}

#[test]
fn the_servers_signature_check_accepts_the_published_vector_and_nothing_else() {
    let suite = Endpoint {
        access_key: "AKIDEXAMPLE",
        secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        region: "us-east-1",
        service: "service",
    };
    let published = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";
    assert_eq!(signature_problem(&get_vanilla(published), &suite), None);
    let altered = published.replace("5fa0", "5fa1");
    assert!(signature_problem(&get_vanilla(&altered), &suite)
        .unwrap()
        .contains("does not match"));
    let elsewhere = Endpoint {
        region: "eu-west-1",
        ..suite
    };
    assert!(signature_problem(&get_vanilla(published), &elsewhere)
        .unwrap()
        .contains("scoped to a valid region, not 'us-east-1'"));
}

// ---------------------------------------------------------------------------------
// The fake Bedrock runtime.

fn bedrock_error(status: u16, error_type: &str, message: &str) -> Reply {
    Reply::status(status, &json!({ "message": message }).to_string())
        .with_header("x-amzn-ErrorType", error_type)
}

/// `text` with `%XX` escapes decoded.
fn percent_decode(text: &str) -> String {
    let mut decoded = Vec::new();
    let bytes = text.as_bytes();
    let mut position = 0;
    while position < bytes.len() {
        if bytes[position] == b'%' {
            decoded.push(u8::from_str_radix(&text[position + 1..position + 3], 16).unwrap());
            position += 3;
        } else {
            decoded.push(bytes[position]);
            position += 1;
        }
    }
    String::from_utf8(decoded).unwrap()
}

/// The model id and action of `/model/{modelId}/{action}`.
fn model_and_action(path: &str) -> Option<(String, String)> {
    let rest = path.strip_prefix("/model/")?;
    let (model, action) = rest.rsplit_once('/')?;
    Some((percent_decode(model), action.to_owned()))
}

/// What the fake runtime tallies.
#[derive(Default)]
struct Tally {
    /// Tokens reported in Titan answers and Converse usage.
    tokens: AtomicU64,
}

/// Bedrock's answer to a correctly signed request, or a 400 for a body its model would
/// refuse; `refused_dimension` is a Titan v2 dimension this endpoint's model refuses.
fn answer(request: &Request, tally: &Tally, refused_dimension: Option<u64>) -> Reply {
    let Some((model, action)) = model_and_action(&request.path) else {
        return bedrock_error(404, "UnknownOperationException", "unknown path");
    };
    let body = &request.body;
    let invalid = |problem: String| {
        bedrock_error(
            400,
            "ValidationException",
            &format!(
                "Malformed input request: {problem}, please reformat your input and try again."
            ),
        )
    };
    match (model.as_str(), action.as_str()) {
        (TITAN_V2 | "amazon.titan-embed-text-v1", "invoke") => {
            let Some(text) = body["inputText"].as_str() else {
                return invalid("#: required key [inputText] not found".into());
            };
            let dimension = if model == TITAN_V2 {
                let dimension = body["dimensions"].as_u64().unwrap_or(1024);
                if ![256, 512, 1024].contains(&dimension) || Some(dimension) == refused_dimension {
                    return invalid(format!(
                        "#/dimensions: {dimension} is not a valid enum value"
                    ));
                }
                if body["normalize"] != true {
                    return invalid("#/normalize: expected true".into());
                }
                dimension
            } else {
                if body.get("dimensions").is_some() {
                    return invalid("#: extraneous key [dimensions] is not permitted".into());
                }
                1536
            };
            let tokens = text.split_whitespace().count() as u64;
            tally.tokens.fetch_add(tokens, Ordering::Relaxed);
            Reply::json(json!({"embedding": fake_vector(text, dimension as usize),
                               "inputTextTokenCount": tokens}))
        }
        ("cohere.embed-english-v3", "invoke") => {
            let texts = body["texts"].as_array().cloned().unwrap_or_default();
            if texts.is_empty() || texts.len() > 96 {
                return invalid(format!(
                    "#/texts: expected 1 to 96 texts, got {}",
                    texts.len()
                ));
            }
            if !matches!(
                body["input_type"].as_str(),
                Some("search_query" | "search_document")
            ) || body["truncate"] != "END"
            {
                return invalid("#/input_type or #/truncate".into());
            }
            let vectors: Vec<Vec<f32>> = texts
                .iter()
                .map(|text| fake_vector(text.as_str().unwrap(), 1024))
                .collect();
            Reply::json(json!({"id": "x", "response_type": "embeddings_floats",
                               "texts": texts, "embeddings": vectors}))
        }
        (_, "converse") => {
            let prompt = body["messages"][0]["content"][0]["text"]
                .as_str()
                .unwrap_or("");
            if body["messages"][0]["role"] != "user" || body["inferenceConfig"]["maxTokens"] != 120
            {
                return invalid("#/messages or #/inferenceConfig".into());
            }
            let question = prompt.rsplit("Question:").next().unwrap_or(prompt);
            let question = question.split("\n\n").next().unwrap_or(question).trim();
            tally.tokens.fetch_add(40 + 12, Ordering::Relaxed);
            Reply::json(json!({
                "output": {"message": {"role": "assistant", "content": [
                    {"text": format!("{question} is answered by the deployment notes.")}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 40, "outputTokens": 12, "totalTokens": 52}}))
        }
        _ => bedrock_error(
            404,
            "ResourceNotFoundException",
            "Could not resolve the foundation model",
        ),
    }
}

/// A fake Bedrock runtime for `REGION` that knows `ACCESS_KEY` / `SECRET_KEY`; a request
/// carrying `expired_token` is refused as an expired session (echoing the token, as a
/// careless proxy might), and the first `throttled` requests get 429.
fn bedrock_server(
    expired_token: Option<&'static str>,
    throttled: usize,
    refused_dimension: Option<u64>,
) -> (Server, Arc<Tally>) {
    let tally = Arc::new(Tally::default());
    let counted = Arc::clone(&tally);
    let server = Server::start(move |request, number| {
        if let Some(problem) = signature_problem(request, &BEDROCK) {
            let error_type = if problem.contains("token") {
                "UnrecognizedClientException"
            } else {
                "InvalidSignatureException"
            };
            return bedrock_error(403, error_type, &problem);
        }
        if let Some(token) = request
            .header("x-amz-security-token")
            .filter(|token| Some(*token) == expired_token)
        {
            return bedrock_error(
                403,
                "ExpiredTokenException",
                &format!("The security token included in the request is expired: {token}"),
            );
        }
        if number < throttled {
            return bedrock_error(
                429,
                "ThrottlingException",
                "Too many requests, please wait before trying your request again.",
            );
        }
        answer(request, &counted, refused_dimension)
    });
    (server, tally)
}

/// The fake's endpoint (the loopback server's base URL without its `/v1`).
fn endpoint(server: &Server) -> String {
    server.base_url.trim_end_matches("/v1").to_owned()
}

// ---------------------------------------------------------------------------------
// Running hyde-eval with an AWS environment of the test's making.

/// A scratch directory that is also `HOME` (so no real `~/.aws` is read).
struct Workspace {
    directory: tempfile::TempDir,
}

const AWS_VARIABLES: [&str; 9] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_REGION",
    "BEDROCK_REGION",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
];

/// Environment credentials with the session token.
const ENV_CREDENTIALS: [(&str, &str); 3] = [
    ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
    ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
    ("AWS_SESSION_TOKEN", SESSION_TOKEN),
];

impl Workspace {
    fn new(config: &str) -> Workspace {
        let directory = tempfile::tempdir().unwrap();
        std::fs::write(directory.path().join("hyde-eval.toml"), config).unwrap();
        Workspace { directory }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.directory.path().join(relative)
    }

    fn run(&self, args: &[&str], environment: &[(&str, &str)]) -> Output {
        let mut command = common::command();
        command
            .args(args)
            .arg("--config")
            .arg(self.path("hyde-eval.toml"))
            .arg("--cache-dir")
            .arg(self.path("cache"))
            .env("HOME", self.directory.path());
        if args.first() == Some(&"run") {
            command.arg("--output-dir").arg(self.path("reports"));
        }
        for variable in AWS_VARIABLES {
            command.env_remove(variable);
        }
        command.envs(environment.iter().copied());
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

/// An `[embedders.aws]` table for the fake endpoint.
fn embedder_config(server: &Server, model: &str, extra: &str) -> String {
    format!(
        "[embedders.aws]\nkind = \"bedrock\"\nbase_url = \"{}\"\nmodel = \"{model}\"\n\
         initial_backoff_seconds = 0.01\nmax_retries = 2\ntimeout_seconds = 5\n{extra}\n",
        endpoint(server)
    )
}

const DENSE: [&str; 5] = ["run", "--embedder", "aws", "--configurations", "dense"];

/// Fails when the secret key or the session token appears in an output or in a file
/// under `directory` (but the `.aws` files the test wrote itself).
fn assert_no_secret(outputs: &[&Output], directory: &Path) {
    let secrets = [SECRET_KEY, SESSION_TOKEN];
    for output in outputs {
        for stream in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(stream);
            for secret in secrets {
                assert!(!text.contains(secret), "{secret} leaked into an output");
            }
        }
    }
    let mut pending = vec![directory.to_path_buf()];
    let mut files = 0;
    while let Some(path) = pending.pop() {
        if path.ends_with(".aws") {
            continue;
        }
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
            for secret in secrets {
                assert!(
                    !bytes
                        .windows(secret.len())
                        .any(|window| window == secret.as_bytes()),
                    "{secret} leaked into {}",
                    path.display()
                );
            }
        }
    }
    assert!(files > 0);
}

// ---------------------------------------------------------------------------------
// The tests.

#[test]
fn titan_v2_is_signed_sent_one_text_a_request_cached_and_accounted() {
    let (server, tally) = bedrock_server(None, 0, None);
    let workspace = Workspace::new(&embedder_config(
        &server,
        TITAN_V2,
        &format!("dimensions = 256\nregion = \"{REGION}\""),
    ));
    let first = workspace.run(&DENSE, &ENV_CREDENTIALS);
    assert_success(&first);
    let requests = server.requests();
    // One request per fact and query (220 + 90), each a single text.
    assert_eq!(requests.len(), 310);
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, "/model/amazon.titan-embed-text-v2%3A0/invoke");
        assert_eq!(request.header("x-amz-security-token"), Some(SESSION_TOKEN));
        assert!(request.body["inputText"].is_string());
        assert_eq!(request.body["dimensions"], 256);
        assert_eq!(request.body["normalize"], true);
        assert!(request.header("authorization").unwrap().contains(
            "/eu-west-3/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, "
        ));
    }
    let texts: HashSet<&str> = requests
        .iter()
        .map(|request| request.body["inputText"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 310, "a text was sent twice");
    let results = workspace.results();
    assert_eq!(results["embedder"]["kind"], "bedrock");
    assert_eq!(results["embedder"]["model"], TITAN_V2);
    assert_eq!(results["embedder"]["dimension"], 256);
    let usage = &results["backend"]["embedding"];
    assert_eq!(usage["requests"], 310);
    assert_eq!(usage["texts_embedded"], 310);
    assert_eq!(usage["tokens"], tally.tokens.load(Ordering::Relaxed));

    // Again: everything from the cache, no request, no credentials needed offline.
    let second = workspace.run(&DENSE, &ENV_CREDENTIALS);
    assert_success(&second);
    assert_eq!(server.request_count(), 310);
    assert_eq!(
        workspace.results()["backend"]["embedding"]["texts_from_cache"],
        310
    );
    let offline = workspace.run(
        &[&DENSE[..], &["--offline"]].concat(),
        &[("AWS_REGION", REGION)],
    );
    assert_success(&offline);
    assert_eq!(server.request_count(), 310);
    assert_no_secret(&[&first, &second, &offline], workspace.directory.path());
}

#[test]
fn cohere_v3_batches_input_types_from_a_profile_and_bedrock_region() {
    let (server, _) = bedrock_server(None, 0, None);
    let workspace = Workspace::new(&embedder_config(&server, "cohere.embed-english-v3", ""));
    std::fs::create_dir(workspace.path(".aws")).unwrap();
    std::fs::write(
        workspace.path(".aws/credentials"),
        format!(
            "[default]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = wrong\n\n\
             [team]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n\
             aws_session_token = {SESSION_TOKEN}\n"
        ),
    )
    .unwrap();
    // BEDROCK_REGION comes before AWS_REGION (signed for us-east-1, the fake refuses).
    let output = workspace.run(
        &DENSE,
        &[
            ("AWS_PROFILE", "team"),
            ("BEDROCK_REGION", REGION),
            ("AWS_REGION", "us-east-1"),
        ],
    );
    assert_success(&output);
    let requests = server.requests();
    let sizes: Vec<usize> = requests
        .iter()
        .map(|request| request.body["texts"].as_array().unwrap().len())
        .collect();
    // 220 facts in batches of at most 96, then 90 queries.
    assert_eq!(sizes.iter().sum::<usize>(), 310);
    assert!(sizes.iter().all(|size| *size <= 96));
    assert_eq!(requests.len(), 3 + 1);
    let mut per_type: std::collections::BTreeMap<&str, usize> = Default::default();
    for request in &requests {
        assert_eq!(request.path, "/model/cohere.embed-english-v3/invoke");
        assert_eq!(request.header("x-amz-security-token"), Some(SESSION_TOKEN));
        *per_type
            .entry(request.body["input_type"].as_str().unwrap())
            .or_default() += request.body["texts"].as_array().unwrap().len();
    }
    assert_eq!(
        per_type,
        [("search_document", 220), ("search_query", 90)].into()
    );
    assert_eq!(workspace.results()["embedder"]["dimension"], 1024);

    // AWS_REGION alone is used too; the default profile's unknown key is refused.
    std::fs::remove_dir_all(workspace.path("cache")).unwrap();
    let fallback = workspace.run(&DENSE, &[("AWS_PROFILE", "team"), ("AWS_REGION", REGION)]);
    assert_success(&fallback);
    std::fs::remove_dir_all(workspace.path("cache")).unwrap();
    let wrong_key = workspace.run(&DENSE, &[("AWS_REGION", REGION)]);
    assert_eq!(wrong_key.status.code(), Some(3), "{}", stderr(&wrong_key));
    assert!(
        stderr(&wrong_key).contains("AWS does not recognise the access key"),
        "{}",
        stderr(&wrong_key)
    );
    assert_no_secret(
        &[&output, &fallback, &wrong_key],
        workspace.directory.path(),
    );
}

#[test]
fn an_expired_token_stops_the_run_with_its_hint_and_is_redacted() {
    let (server, _) = bedrock_server(Some(SESSION_TOKEN), 0, None);
    let workspace = Workspace::new(&embedder_config(
        &server,
        "amazon.titan-embed-text-v1",
        &format!("region = \"{REGION}\""),
    ));
    let output = workspace.run(&DENSE, &ENV_CREDENTIALS);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("HTTP 403"), "{message}");
    assert!(message.contains("session token has expired"), "{message}");
    assert!(message.contains("<redacted>"), "{message}");
    assert!(!workspace.path("reports/devmem/results.json").exists());
    // 403 is not retried, and no request starts after it (4 may be in flight).
    assert!(server.request_count() <= 4, "{}", server.request_count());
    assert_no_secret(&[&output], workspace.directory.path());
}

#[test]
fn a_signature_for_another_region_or_with_a_wrong_secret_is_refused_with_the_fix() {
    let (server, _) = bedrock_server(None, 0, None);
    let workspace = Workspace::new(&embedder_config(
        &server,
        TITAN_V2,
        "region = \"us-west-2\"",
    ));
    let output = workspace.run(&DENSE, &ENV_CREDENTIALS);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("not 'us-west-2'"), "{message}");
    assert!(
        message.contains("signed for region us-west-2, which is not the endpoint's"),
        "{message}"
    );

    std::fs::write(
        workspace.path("hyde-eval.toml"),
        embedder_config(&server, TITAN_V2, &format!("region = \"{REGION}\"")),
    )
    .unwrap();
    let wrong_secret = workspace.run(
        &DENSE,
        &[
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
            ("AWS_SECRET_ACCESS_KEY", "not-the-secret"),
        ],
    );
    assert_eq!(wrong_secret.status.code(), Some(3));
    let message = stderr(&wrong_secret);
    assert!(
        message.contains("signature we calculated does not match"),
        "{message}"
    );
    assert!(message.contains("check the secret access key"), "{message}");
    assert_no_secret(&[&output, &wrong_secret], workspace.directory.path());
}

#[test]
fn throttling_is_retried_and_counted() {
    let (server, _) = bedrock_server(None, 2, None);
    let workspace = Workspace::new(&embedder_config(
        &server,
        "cohere.embed-english-v3",
        &format!("region = \"{REGION}\"\nmax_in_flight = 1"),
    ));
    let output = workspace.run(&DENSE, &ENV_CREDENTIALS);
    assert_success(&output);
    // Four batches; the first was refused twice and sent a third time, signed afresh.
    assert_eq!(server.request_count(), 4 + 2);
    let usage = &workspace.results()["backend"]["embedding"];
    assert_eq!(usage["requests"], 6);
    assert_eq!(usage["retries"], 2);
    assert_eq!(usage["texts_embedded"], 310);
}

#[test]
fn dimensions_a_model_refuses_are_named_before_or_by_the_server() {
    let (server, _) = bedrock_server(None, 0, Some(1024));
    for (model, dimensions, expected) in [
        (
            TITAN_V2,
            384,
            "dimensions 384 is not one Titan Text Embeddings v2 accepts: 256, 512 or 1024",
        ),
        ("amazon.titan-embed-text-v1", 512, "fixed dimension (1536)"),
        ("cohere.embed-english-v3", 1024, "fixed dimension (1024)"),
    ] {
        let workspace = Workspace::new(&embedder_config(
            &server,
            model,
            &format!("region = \"{REGION}\"\ndimensions = {dimensions}"),
        ));
        let output = workspace.run(&DENSE, &ENV_CREDENTIALS);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(expected), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("hyde-eval.toml"),
            "{}",
            stderr(&output)
        );
    }
    assert_eq!(server.request_count(), 0);

    // A dimension the endpoint's model refuses although the API lists it.
    let workspace = Workspace::new(&embedder_config(
        &server,
        TITAN_V2,
        &format!("region = \"{REGION}\"\ndimensions = 1024"),
    ));
    let output = workspace.run(&DENSE, &ENV_CREDENTIALS);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("HTTP 400"), "{message}");
    assert!(
        message.contains("#/dimensions: 1024 is not a valid enum value"),
        "{message}"
    );
    assert!(server.request_count() > 0);
}

#[test]
fn a_missing_region_or_credentials_are_usage_errors_before_any_request() {
    let (server, _) = bedrock_server(None, 0, None);
    let workspace = Workspace::new(&embedder_config(&server, TITAN_V2, ""));
    let no_region = workspace.run(&DENSE, &ENV_CREDENTIALS);
    assert_eq!(no_region.status.code(), Some(2));
    assert!(
        stderr(&no_region).contains("no AWS region"),
        "{}",
        stderr(&no_region)
    );
    let bad_region = workspace.run(&DENSE, &[("AWS_REGION", "Frankfurt")]);
    assert_eq!(bad_region.status.code(), Some(2));
    assert!(
        stderr(&bad_region).contains("AWS_REGION \"Frankfurt\" is not an AWS region name"),
        "{}",
        stderr(&bad_region)
    );
    let no_credentials = workspace.run(&DENSE, &[("AWS_REGION", REGION)]);
    assert_eq!(no_credentials.status.code(), Some(2));
    let message = stderr(&no_credentials);
    assert!(
        message.contains("[embedders.aws]: no AWS credentials"),
        "{message}"
    );
    assert!(message.contains("AWS_PROFILE"), "{message}");
    assert_eq!(server.request_count(), 0);
}

#[test]
fn converse_writes_hypotheses_signed_and_replays_them_from_the_cache() {
    let (server, tally) = bedrock_server(None, 0, None);
    let config = format!(
        "[generators.claude]\nkind = \"bedrock-converse\"\nbase_url = \"{}\"\n\
         model = \"anthropic.claude-3-haiku-20240307-v1:0\"\nregion = \"{REGION}\"\n\
         max_tokens = 120\ntemperature = 0.5\nstop = [\"\\n\\n\"]\ninitial_backoff_seconds = 0.01\n",
        endpoint(&server)
    );
    let workspace = Workspace::new(&config);
    let args = [
        "run",
        "--generator",
        "claude",
        "--configurations",
        "hyde-3a,multi-hyde",
        "--embedder",
        "hash",
    ];
    let first = workspace.run(&args, &ENV_CREDENTIALS);
    assert_success(&first);
    let requests = server.requests();
    // Converse has no n: three samples a query, one request each.
    assert_eq!(requests.len(), 90 * 3);
    for request in &requests {
        assert_eq!(
            request.path,
            "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
        );
        assert_eq!(
            request.body["inferenceConfig"],
            json!({"maxTokens": 120, "temperature": 0.5, "stopSequences": ["\n\n"]})
        );
        let prompt = request.body["messages"][0]["content"][0]["text"]
            .as_str()
            .unwrap();
        assert!(prompt.ends_with("\n\nHypothetical answer:"), "{prompt}");
    }
    let results = workspace.results();
    assert_eq!(results["generator"]["kind"], "bedrock-converse");
    let generation = &results["backend"]["generation"];
    assert_eq!(generation["prompt_tokens"], 270 * 40);
    assert_eq!(generation["completion_tokens"], 270 * 12);
    assert_eq!(tally.tokens.load(Ordering::Relaxed), 270 * 52);
    let shown = results["queries"][0]["hypotheses"].as_array().unwrap();
    assert!(shown[0]
        .as_str()
        .unwrap()
        .ends_with("is answered by the deployment notes."));

    let second = workspace.run(&args, &ENV_CREDENTIALS);
    assert_success(&second);
    assert_eq!(server.request_count(), 270);
    assert_eq!(
        workspace.results()["backend"]["generation"]["hypotheses_from_cache"],
        270
    );

    // `record` writes them with their provenance, from the cache.
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
            "claude",
            "--dataset",
            copy.to_str().unwrap(),
            "--configurations",
            "hyde-3a,multi-hyde",
        ],
        &ENV_CREDENTIALS,
    );
    assert_success(&record);
    assert_eq!(server.request_count(), 270);
    let recorded = std::fs::read_to_string(copy.join("hypotheses.jsonl")).unwrap();
    let line: Value = serde_json::from_str(recorded.lines().next().unwrap()).unwrap();
    assert_eq!(line["source"]["generator"], "bedrock-converse (claude)");
    assert_eq!(
        line["source"]["model"],
        "anthropic.claude-3-haiku-20240307-v1:0"
    );
    assert_no_secret(&[&first, &second, &record], workspace.directory.path());
}
