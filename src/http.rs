//! The HTTP client every real backend shares: JSON over HTTP (POST for the embedding and
//! chat APIs; GET, POST, PUT and DELETE for search engines) with timeouts, retries with
//! exponential backoff and jitter on 429, 5xx and transport failures (honouring
//! `Retry-After`), a bounded number of requests in flight and an optional
//! requests-per-minute limit.
//!
//! API keys are read from the environment variable a backend names, sent only in the
//! `Authorization` (or provider-specific) header, and redacted from anything a server
//! echoes back: no error, log line or cache entry built here can contain one. Backends
//! that sign each request instead (AWS Signature Version 4) give the client a
//! [`RequestSigner`], asked for fresh headers on every attempt, retries included.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How a backend is reached.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// Base URL including any version prefix, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// The environment variable holding the API key (none for local servers).
    pub api_key_env: Option<String>,
    /// Limit on one request (connect, send, wait, read).
    pub timeout: Duration,
    /// Retries after the first attempt on 429, 5xx, timeouts and connection failures.
    pub max_retries: u32,
    /// The first retry waits about this long; each further retry doubles it.
    pub initial_backoff: Duration,
    pub max_in_flight: usize,
    pub requests_per_minute: Option<u32>,
}

impl HttpSettings {
    /// Defaults for `base_url`: 60 s timeout, 4 retries from 0.5 s, 4 requests in flight.
    pub fn new(base_url: &str) -> HttpSettings {
        HttpSettings {
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key_env: None,
            timeout: Duration::from_secs(60),
            max_retries: 4,
            initial_backoff: Duration::from_millis(500),
            max_in_flight: 4,
            requests_per_minute: None,
        }
    }
}

/// An API key: never printed, never serialized.
#[derive(Clone)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    /// The key in environment variable `name`; an error names the variable, never a value.
    pub fn from_env(name: &str) -> Result<Secret, String> {
        match std::env::var(name) {
            Ok(value) if !value.trim().is_empty() => Ok(Secret(value.trim().to_owned())),
            Ok(_) => Err(format!("environment variable {name} is empty")),
            Err(_) => Err(format!("environment variable {name} is not set")),
        }
    }

    /// The API key the backend table `table` needs: none without `api_key_env` or
    /// under `--offline` (no request is made then); a missing variable is a usage error
    /// with the fix.
    pub fn for_backend(
        table: &str,
        http: &HttpSettings,
        offline: bool,
    ) -> Result<Option<Secret>, crate::error::Error> {
        match (&http.api_key_env, offline) {
            (Some(variable), false) => Secret::from_env(variable).map(Some).map_err(|problem| {
                crate::error::Error::Usage(format!(
                    "{table}: {problem}\n    hint: export {variable}=..., or pass --offline to use only cached answers"
                ))
            }),
            _ => Ok(None),
        }
    }

    /// The value itself, for a client that sends it other than as a bearer token (the
    /// pgvector engine's PostgreSQL password). Never format or log it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced.
    pub fn redact(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_owned();
        }
        text.replace(&self.0, "<redacted>")
    }
}

/// Why a request failed after its retries.
#[derive(Debug, Clone, PartialEq)]
pub enum HttpFailure {
    /// The server answered with this status (the body's start, redacted, for context).
    Status { status: u16, body: String },
    /// No complete answer within the timeout.
    Timeout,
    /// Connection refused, reset, DNS failure and the like.
    Transport(String),
    /// The answer was not JSON.
    Malformed(String),
}

impl HttpFailure {
    /// Authentication and authorization failures: retrying or falling back cannot help.
    pub fn is_fatal(&self) -> bool {
        matches!(self, HttpFailure::Status { status, .. } if *status == 401 || *status == 403)
    }
}

impl std::fmt::Display for HttpFailure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpFailure::Status { status, body } if body.is_empty() => {
                write!(formatter, "HTTP {status}")
            }
            HttpFailure::Status { status, body } => write!(formatter, "HTTP {status}: {body}"),
            HttpFailure::Timeout => formatter.write_str("no answer within the timeout"),
            HttpFailure::Transport(message) => write!(formatter, "connection failed: {message}"),
            HttpFailure::Malformed(message) => write!(formatter, "answer is not JSON: {message}"),
        }
    }
}

/// The HTTP methods a backend uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// Signs one attempt of a request: the headers to add (`Authorization` and whatever the
/// signature covers), from the method, the full URL and the exact body bytes sent.
pub trait RequestSigner: Send + Sync {
    fn headers(&self, method: Method, url: &str, payload: &[u8]) -> Vec<(String, String)>;
    /// `text` with every secret the signer holds replaced.
    fn redact(&self, text: &str) -> String;
}

/// Request counts of one client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpCounts {
    /// Attempts sent, retries included.
    pub requests: u64,
    pub retries: u64,
}

/// A JSON-over-HTTP client for one backend.
pub struct HttpClient {
    agent: ureq::Agent,
    settings: HttpSettings,
    secret: Option<Secret>,
    /// A header that carries the bare secret beside the bearer token (`x-chroma-token`).
    token_header: Option<&'static str>,
    signer: Option<Box<dyn RequestSigner>>,
    in_flight: Mutex<usize>,
    slot_freed: Condvar,
    /// The earliest start of the next request under the requests-per-minute limit.
    next_start: Mutex<Instant>,
    requests: AtomicU64,
    retries: AtomicU64,
}

/// The longest `Retry-After` honoured; beyond it the backoff schedule applies.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

impl HttpClient {
    /// A client; `secret` is sent as a bearer token unless the caller sets its own header.
    pub fn new(settings: HttpSettings, secret: Option<Secret>) -> HttpClient {
        let agent = ureq::Agent::config_builder()
            .tls_config(
                ureq::tls::TlsConfig::builder()
                    .root_certs(ureq::tls::RootCerts::PlatformVerifier)
                    .build(),
            )
            .timeout_global(Some(settings.timeout))
            .http_status_as_error(false)
            .user_agent(concat!("hyde-eval/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        HttpClient {
            agent,
            settings,
            secret,
            token_header: None,
            signer: None,
            in_flight: Mutex::new(0),
            slot_freed: Condvar::new(),
            next_start: Mutex::new(Instant::now()),
            requests: AtomicU64::new(0),
            retries: AtomicU64::new(0),
        }
    }

    /// Also sends the secret, bare, in header `name` (Chroma's `x-chroma-token`), for
    /// servers that read it there rather than from `Authorization: Bearer`.
    pub fn with_token_header(mut self, name: &'static str) -> HttpClient {
        self.token_header = Some(name);
        self
    }

    /// Signs every attempt with `signer` (in addition to any secret).
    pub fn with_signer(mut self, signer: Box<dyn RequestSigner>) -> HttpClient {
        self.signer = Some(signer);
        self
    }

    pub fn settings(&self) -> &HttpSettings {
        &self.settings
    }

    pub fn counts(&self) -> HttpCounts {
        HttpCounts {
            requests: self.requests.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
        }
    }

    /// `text` with the API key (and the signer's secrets) redacted.
    pub fn redact(&self, text: &str) -> String {
        let text = match &self.secret {
            Some(secret) => secret.redact(text),
            None => text.to_owned(),
        };
        match &self.signer {
            Some(signer) => signer.redact(&text),
            None => text,
        }
    }

    /// POSTs `body` to `base_url + path` and returns the JSON answer, retrying what can
    /// be retried.
    pub fn post_json(&self, path: &str, body: &Value) -> Result<Value, HttpFailure> {
        self.request_json(Method::Post, path, Some(body))
    }

    /// Sends `method` to `base_url + path`, with `body` as JSON when given, and returns the
    /// JSON answer, retrying 429, 5xx, timeouts and connection failures (any method: the
    /// callers' requests are idempotent or tolerate a repeat).
    pub fn request_json(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, HttpFailure> {
        let url = format!("{}{}", self.settings.base_url, path);
        let payload = body.map(|body| serde_json::to_vec(body).expect("JSON values serialize"));
        let mut attempt = 0;
        loop {
            let (result, retry_after) = self.attempt(method, &url, payload.as_deref());
            let retryable = match &result {
                Ok(_) => false,
                Err(HttpFailure::Status { status, .. }) => *status == 429 || *status >= 500,
                Err(HttpFailure::Timeout | HttpFailure::Transport(_)) => true,
                Err(HttpFailure::Malformed(_)) => false,
            };
            if !retryable || attempt >= self.settings.max_retries {
                return result;
            }
            let backoff = self.settings.initial_backoff * 2u32.saturating_pow(attempt);
            let jittered = backoff.mul_f64(0.5 + rand::random::<f64>());
            let wait = retry_after
                .filter(|wait| *wait <= MAX_RETRY_AFTER)
                .unwrap_or(jittered);
            std::thread::sleep(wait);
            attempt += 1;
            self.retries.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// One attempt: the answer, and the server's `Retry-After` when it sent one.
    fn attempt(
        &self,
        method: Method,
        url: &str,
        payload: Option<&[u8]>,
    ) -> (Result<Value, HttpFailure>, Option<Duration>) {
        let _slot = self.acquire_slot();
        self.wait_for_rate_limit();
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut response = match self.send(method, url, payload) {
            Ok(response) => response,
            Err(error) => return (Err(self.transport_failure(error)), None),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<f64>().ok())
            .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
            .map(Duration::from_secs_f64);
        let text = match response
            .body_mut()
            .with_config()
            .limit(512 * 1024 * 1024)
            .read_to_string()
        {
            Ok(text) => text,
            Err(error) => return (Err(self.transport_failure(error)), retry_after),
        };
        if !(200..300).contains(&status) {
            let excerpt: String = self.redact(text.trim()).chars().take(300).collect();
            return (
                Err(HttpFailure::Status {
                    status,
                    body: excerpt,
                }),
                retry_after,
            );
        }
        let parsed = serde_json::from_str(&text).map_err(|error| {
            let excerpt: String = self.redact(text.trim()).chars().take(120).collect();
            HttpFailure::Malformed(format!("{error} (answer began {excerpt:?})"))
        });
        (parsed, None)
    }

    /// Sends one request: GET and DELETE carry a body only when given one.
    fn send(
        &self,
        method: Method,
        url: &str,
        payload: Option<&[u8]>,
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let with_body = |builder: ureq::RequestBuilder<ureq::typestate::WithBody>| {
            self.authorize(builder, method, url, payload.unwrap_or_default())
                .header("Content-Type", "application/json")
                .send(payload.unwrap_or_default())
        };
        let without_body =
            |builder: ureq::RequestBuilder<ureq::typestate::WithoutBody>| match payload {
                Some(_) => with_body(builder.force_send_body()),
                None => self.authorize(builder, method, url, &[]).call(),
            };
        match method {
            Method::Get => without_body(self.agent.get(url)),
            Method::Delete => without_body(self.agent.delete(url)),
            Method::Post => with_body(self.agent.post(url)),
            Method::Put => with_body(self.agent.put(url)),
        }
    }

    /// `builder` with the signer's headers and the secret's, when there are any.
    fn authorize<B>(
        &self,
        mut builder: ureq::RequestBuilder<B>,
        method: Method,
        url: &str,
        payload: &[u8],
    ) -> ureq::RequestBuilder<B> {
        if let Some(signer) = &self.signer {
            for (name, value) in signer.headers(method, url, payload) {
                builder = builder.header(name, value);
            }
        }
        let Some(secret) = &self.secret else {
            return builder;
        };
        let builder = builder.header("Authorization", format!("Bearer {}", secret.0));
        match self.token_header {
            Some(name) => builder.header(name, secret.0.as_str()),
            None => builder,
        }
    }

    fn transport_failure(&self, error: ureq::Error) -> HttpFailure {
        match error {
            ureq::Error::Timeout(_) => HttpFailure::Timeout,
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                HttpFailure::Timeout
            }
            other => HttpFailure::Transport(self.redact(&other.to_string())),
        }
    }

    fn acquire_slot(&self) -> SlotGuard<'_> {
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while *in_flight >= self.settings.max_in_flight.max(1) {
            in_flight = self
                .slot_freed
                .wait(in_flight)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *in_flight += 1;
        SlotGuard { client: self }
    }

    fn wait_for_rate_limit(&self) {
        let Some(per_minute) = self.settings.requests_per_minute.filter(|rate| *rate > 0) else {
            return;
        };
        let interval = Duration::from_secs(60) / per_minute;
        let start = {
            let mut next = self
                .next_start
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let start = (*next).max(Instant::now());
            *next = start + interval;
            start
        };
        let now = Instant::now();
        if start > now {
            std::thread::sleep(start - now);
        }
    }
}

/// Releases a request slot when dropped.
struct SlotGuard<'a> {
    client: &'a HttpClient,
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let mut in_flight = self
            .client
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *in_flight -= 1;
        self.client.slot_freed.notify_one();
    }
}

/// Maps `work` over `items` on up to `workers` threads, keeping the input order. For
/// I/O-bound calls (HTTP requests), where rayon's CPU-sized pool would be too small.
pub fn map_in_parallel<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let workers = workers.clamp(1, items.len().max(1));
    if workers == 1 {
        return items.iter().map(work).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(index) else {
                    break;
                };
                let result = work(item);
                results.lock().unwrap_or_else(PoisonError::into_inner)[index] = Some(result);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .into_iter()
        .map(|result| result.expect("every item was mapped"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_never_debug_printed() {
        let secret = Secret("sk-sentinel-1234".into());
        assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
        assert_eq!(
            secret.redact("bad key sk-sentinel-1234 given"),
            "bad key <redacted> given"
        );
    }

    #[test]
    fn parallel_map_keeps_the_input_order() {
        let items: Vec<u64> = (0..100).collect();
        let doubled = map_in_parallel(&items, 7, |item| {
            std::thread::sleep(Duration::from_micros((100 - item) * 10));
            item * 2
        });
        assert_eq!(doubled, (0..100).map(|item| item * 2).collect::<Vec<_>>());
    }
}
