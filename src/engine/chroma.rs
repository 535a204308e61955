//! Chroma as a search engine, over its HTTP API v2
//! (`/api/v2/tenants/{tenant}/databases/{database}/collections/...`).
//!
//! One collection holds a dataset's facts: ids, texts and vectors, in an HNSW index with
//! cosine distance (`configuration.hnsw.space = "cosine"`, with `max_neighbors`,
//! `ef_construction` and `ef_search` from the spec's index when given). The load stamp
//! lives in the collection's metadata under `hyde_eval.*` keys, with a `complete` flag
//! that `engine load` sets last. Chroma replaces the whole metadata map on a modify, so
//! [`SearchEngine::complete`] writes back every key it read, with the flag changed.
//!
//! Chroma addresses collections by name only on `GET` and `DELETE`; everything else takes
//! the collection's id, so each operation first reads the collection by name (which also
//! yields the stamp that vector searches check the query dimension against).
//!
//! Chroma ranks no text for this client: [`SearchEngine::text_search`] is a usage error.
//! A token, when the spec names its environment variable, is sent both as `x-chroma-token`
//! (Chroma Cloud, and servers configured for that header) and as `Authorization: Bearer`.
//! A user and password in the url's user info (`http://user:PASSWORD@host:8000`) go as
//! HTTP basic authentication; messages and reports show the url with the password
//! redacted ([`super::redact`]).
//!
//! What a report says about the index ([`SearchEngine::index_report`]) is the
//! collection's `configuration_json` as the server returns it.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::{
    redact, EngineDocument, EngineHit, EngineKind, EngineSpec, LoadStamp, LoadState, SearchEngine,
    VectorIndex,
};
use crate::error::Error;
use crate::http::{map_in_parallel, HttpClient, HttpFailure, HttpSettings, Method, Secret};

const DEFAULT_TENANT: &str = "default_tenant";
const DEFAULT_DATABASE: &str = "default_database";

/// Query vectors sent in one `/query` request.
const QUERY_CHUNK: usize = 100;
/// Records sent in one `/upsert` request (Chroma's default batch limit is 5,461).
const UPSERT_CHUNK: usize = 1000;
/// Ids read in one `/get` page.
const ID_PAGE: usize = 1000;

/// The collection-metadata keys of the load stamp.
const KEY_DATASET_HASH: &str = "hyde_eval.dataset_hash";
const KEY_EMBEDDER: &str = "hyde_eval.embedder";
const KEY_DIMENSION: &str = "hyde_eval.dimension";
const KEY_FACTS: &str = "hyde_eval.facts";
const KEY_COMPLETE: &str = "hyde_eval.complete";

/// A Chroma collection reached over HTTP.
pub struct ChromaEngine {
    name: String,
    /// The base URL as messages show it: any password in its user info redacted.
    shown_url: String,
    /// The url's passwords (as written and decoded), scrubbed from every message.
    passwords: Vec<String>,
    collection: String,
    tenant: String,
    database: String,
    secret_env: Option<String>,
    /// `/api/v2/tenants/{tenant}/databases/{database}/collections`
    collections_path: String,
    /// The `configuration.hnsw` object a new collection is created with.
    hnsw: Value,
    client: HttpClient,
}

/// What a collection record says, as far as this client cares.
struct Stored {
    id: String,
    stamp: LoadStamp,
    complete: bool,
    metadata: Map<String, Value>,
}

impl ChromaEngine {
    /// A client for the collection `spec` names. Nothing is sent yet: an unreachable
    /// server shows at the first operation. Usage errors: a spec of another kind, an exact
    /// index (Chroma indexes every collection with HNSW), a URL that is not http(s), names
    /// Chroma would refuse, and a token variable that is unset.
    pub fn connect(spec: &EngineSpec) -> Result<ChromaEngine, Error> {
        let url = spec.url.trim().trim_end_matches('/').to_owned();
        let shown_url = redact::redacted(&url);
        let passwords = redact::passwords(&url);
        let tenant = spec.tenant.as_deref().unwrap_or(DEFAULT_TENANT).to_owned();
        let database = spec
            .database
            .as_deref()
            .unwrap_or(DEFAULT_DATABASE)
            .to_owned();
        let prefix = format!(
            "engine '{}' ({})",
            spec.name,
            description(&shown_url, &spec.collection, &tenant, &database)
        );
        let usage = |problem: String| Error::Usage(format!("{prefix}: {problem}"));
        if spec.kind != EngineKind::Chroma {
            return Err(usage(format!(
                "is a {} engine, not a chroma one",
                spec.kind.name()
            )));
        }
        let Some(hnsw) = hnsw_configuration(spec.index) else {
            return Err(usage(
                "chroma has no exact vector search: every collection is an HNSW index\n    \
                 hint: give the engine an HNSW index (optionally with m, ef_construction and \
                 ef_search), or use a pgvector engine for exact search"
                    .to_owned(),
            ));
        };
        let has_host = |scheme| {
            url.strip_prefix(scheme)
                .is_some_and(|rest: &str| !rest.is_empty() && !rest.starts_with('/'))
        };
        if !(has_host("http://") || has_host("https://")) {
            return Err(usage(format!(
                "url {:?} is not an http:// or https:// address",
                redact::redacted(&spec.url)
            )));
        }
        if !valid_collection_name(&spec.collection) {
            return Err(usage(format!(
                "collection name {:?} is not one Chroma accepts: 3 to 512 characters from \
                 a-z, A-Z, 0-9, '.', '_' and '-', starting and ending with a letter or digit",
                spec.collection
            )));
        }
        for (what, name) in [("tenant", &tenant), ("database", &database)] {
            if !valid_path_name(name) {
                return Err(usage(format!(
                    "{what} {name:?} may hold only a-z, A-Z, 0-9, '.', '_' and '-'"
                )));
            }
        }
        let secret = match &spec.secret_env {
            Some(variable) => Some(Secret::from_env(variable).map_err(|problem| {
                usage(format!(
                    "{problem}\n    hint: export {variable}=<the Chroma token>, or remove \
                     the engine's secret_env for a server without authentication"
                ))
            })?),
            None => None,
        };
        let mut settings = HttpSettings::new(&url);
        settings.api_key_env = spec.secret_env.clone();
        settings.timeout = spec.timeout;
        let client = HttpClient::new(settings, secret).with_token_header("x-chroma-token");
        Ok(ChromaEngine {
            name: spec.name.clone(),
            collections_path: format!("/api/v2/tenants/{tenant}/databases/{database}/collections"),
            shown_url,
            passwords,
            collection: spec.collection.clone(),
            tenant,
            database,
            secret_env: spec.secret_env.clone(),
            hnsw,
            client,
        })
    }

    /// `engine 'prod' (chroma at ..., collection facts)`: how every message starts.
    fn prefix(&self) -> String {
        format!("engine '{}' ({})", self.name, self.describe())
    }

    /// The error for a request that failed after its retries, the url's passwords
    /// scrubbed from it.
    fn failure(&self, what: &str, failure: HttpFailure) -> Error {
        match self.failure_unscrubbed(what, failure) {
            Error::Backend(message) => Error::Backend(self.scrub(&message)),
            Error::BackendFatal(message) => Error::BackendFatal(self.scrub(&message)),
            other => other,
        }
    }

    /// `text` without the url's passwords.
    fn scrub(&self, text: &str) -> String {
        redact::scrub(&self.passwords, text)
    }

    fn failure_unscrubbed(&self, what: &str, failure: HttpFailure) -> Error {
        let prefix = self.prefix();
        match failure {
            HttpFailure::Status { status, body } if status == 401 || status == 403 => {
                let hint = match &self.secret_env {
                    Some(variable) => format!(
                        "the server rejected the token in {variable}; check its value and \
                         the token's access to tenant {} and database {}",
                        self.tenant, self.database
                    ),
                    None => "the server wants a token: name its environment variable in the \
                             engine's secret_env"
                        .to_owned(),
                };
                Error::BackendFatal(format!(
                    "{prefix}: {what}: HTTP {status} ({}): access denied\n    hint: {hint}",
                    chroma_message(&body)
                ))
            }
            HttpFailure::Status { status, body } => {
                let message = chroma_message(&body);
                if message.contains("expecting embedding with dimension") {
                    Error::Backend(format!(
                        "{prefix}: {what}: dimension mismatch: {message}\n    hint: the \
                         collection was loaded with another embedder; load it again (engine \
                         drop, engine load) or use the embedder it was loaded with"
                    ))
                } else if status == 404 {
                    Error::Backend(format!(
                        "{prefix}: {what}: HTTP 404: {message}\n    hint: is the url the \
                         server's base address (without /api/v2), and do tenant {} and \
                         database {} exist?",
                        self.tenant, self.database
                    ))
                } else {
                    Error::Backend(format!("{prefix}: {what}: HTTP {status}: {message}"))
                }
            }
            HttpFailure::Timeout => Error::Backend(format!(
                "{prefix}: {what}: timed out: no answer within {} s, after {} retries\n    \
                 hint: raise the engine's timeout if the server is busy",
                self.client.settings().timeout.as_secs_f64(),
                self.client.settings().max_retries
            )),
            HttpFailure::Transport(message) => Error::Backend(format!(
                "{prefix}: {what}: cannot reach the server after {} retries: {message}\n    \
                 hint: is Chroma running there? (chroma run --path DIR --host HOST --port PORT)",
                self.client.settings().max_retries
            )),
            HttpFailure::Malformed(message) => {
                Error::Backend(format!("{prefix}: {what}: {message}"))
            }
        }
    }

    /// An answer that parsed as JSON but not as what Chroma sends.
    fn unusable(&self, what: &str, problem: &str) -> Error {
        Error::Backend(format!(
            "{}: {what}: unusable answer: {}",
            self.prefix(),
            self.scrub(&self.client.redact(problem))
        ))
    }

    fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Result<Value, Error> {
        self.client
            .request_json(method, path, body)
            .map_err(|failure| self.failure(what, failure))
    }

    /// The collection's record, or None when there is no collection of that name.
    fn collection_record(&self) -> Result<Option<Value>, Error> {
        let path = format!("{}/{}", self.collections_path, self.collection);
        match self.client.request_json(Method::Get, &path, None) {
            Ok(record) => Ok(Some(record)),
            Err(failure) if is_not_found(&failure) => Ok(None),
            Err(failure) => Err(self.failure("reading the collection", failure)),
        }
    }

    /// The collection's id, stamp and flag: an error when there is no collection (`what`
    /// says what needed it) or it holds no hyde-eval stamp.
    fn stored(&self, what: &str) -> Result<Stored, Error> {
        match self.collection_record()? {
            Some(record) => self.parse_record(&record),
            None => Err(Error::Backend(format!(
                "{}: {what}: collection {} does not exist\n    hint: load it first \
                 (hyde-eval engine load)",
                self.prefix(),
                self.collection
            ))),
        }
    }

    fn parse_record(&self, record: &Value) -> Result<Stored, Error> {
        let what = "reading the collection";
        let id = record
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| self.unusable(what, "the collection record has no id"))?
            .to_owned();
        let metadata = match record.get("metadata") {
            Some(Value::Object(metadata)) => metadata.clone(),
            _ => Map::new(),
        };
        let text = |key: &str| metadata.get(key).and_then(Value::as_str).map(str::to_owned);
        let number = |key: &str| {
            metadata
                .get(key)
                .and_then(Value::as_u64)
                .and_then(|value| usize::try_from(value).ok())
        };
        let (Some(dataset_hash), Some(embedder), Some(dimension), Some(facts), Some(complete)) = (
            text(KEY_DATASET_HASH),
            text(KEY_EMBEDDER),
            number(KEY_DIMENSION),
            number(KEY_FACTS),
            metadata.get(KEY_COMPLETE).and_then(Value::as_bool),
        ) else {
            return Err(Error::Usage(format!(
                "{}: collection {} exists but holds no hyde-eval load stamp (its metadata \
                 lacks {KEY_DATASET_HASH}, {KEY_EMBEDDER}, {KEY_DIMENSION}, {KEY_FACTS} or \
                 {KEY_COMPLETE}): it was not made by hyde-eval engine load\n    hint: name \
                 another collection, or drop this one if it may go",
                self.prefix(),
                self.collection
            )));
        };
        let configuration = record.get("configuration_json");
        let space = ["hnsw", "spann"].iter().find_map(|index| {
            configuration?
                .get(index)?
                .get("space")
                .and_then(Value::as_str)
        });
        if let Some(space) = space.filter(|space| *space != "cosine") {
            return Err(Error::Usage(format!(
                "{}: collection {} measures {space} distance, not cosine\n    hint: drop it \
                 and load it again",
                self.prefix(),
                self.collection
            )));
        }
        Ok(Stored {
            id,
            stamp: LoadStamp {
                dataset_hash,
                embedder,
                dimension,
                facts,
            },
            complete,
            metadata,
        })
    }

    fn records_path(&self, id: &str, operation: &str) -> String {
        format!("{}/{id}/{operation}", self.collections_path)
    }

    fn count(&self, id: &str) -> Result<usize, Error> {
        let what = "counting the collection's records";
        let answer = self.request(Method::Get, &self.records_path(id, "count"), None, what)?;
        answer
            .as_u64()
            .and_then(|count| usize::try_from(count).ok())
            .ok_or_else(|| self.unusable(what, &format!("{answer} is not a count")))
    }

    /// An error when any vector's length differs from the stamp's dimension.
    fn check_dimensions<'a>(
        &self,
        what: &str,
        stamp: &LoadStamp,
        vectors: impl Iterator<Item = (String, &'a [f32])>,
    ) -> Result<(), Error> {
        for (label, vector) in vectors {
            if vector.len() != stamp.dimension {
                return Err(Error::Backend(format!(
                    "{}: {what}: dimension mismatch: {label} has dimension {} but the \
                     collection holds vectors of dimension {} (embedder {})\n    hint: use \
                     the embedder the collection was loaded with, or load it again (engine \
                     drop, engine load)",
                    self.prefix(),
                    vector.len(),
                    stamp.dimension,
                    stamp.embedder
                )));
            }
            if vector.iter().any(|value| !value.is_finite()) {
                return Err(Error::Backend(format!(
                    "{}: {what}: {label} has a component that is not a finite number",
                    self.prefix()
                )));
            }
        }
        Ok(())
    }

    /// One `/query` request: the hits of each of `vectors`, best first.
    fn query(
        &self,
        id: &str,
        vectors: &[&[f32]],
        limit: usize,
    ) -> Result<Vec<Vec<EngineHit>>, Error> {
        let what = searching(vectors.len());
        let body = json!({
            "query_embeddings": vectors,
            "n_results": limit.min(i32::MAX as usize),
            "include": ["distances"],
        });
        let answer = self.request(
            Method::Post,
            &self.records_path(id, "query"),
            Some(&body),
            &what,
        )?;
        let lists = |key: &str| answer.get(key).and_then(Value::as_array);
        let (Some(ids), Some(distances)) = (lists("ids"), lists("distances")) else {
            return Err(self.unusable(&what, "no ids or distances"));
        };
        if ids.len() != vectors.len() || distances.len() != vectors.len() {
            return Err(self.unusable(
                &what,
                &format!(
                    "{} id lists and {} distance lists for {} query vectors",
                    ids.len(),
                    distances.len(),
                    vectors.len()
                ),
            ));
        }
        ids.iter()
            .zip(distances)
            .map(|(ids, distances)| {
                let (Some(ids), Some(distances)) = (ids.as_array(), distances.as_array()) else {
                    return Err(self.unusable(&what, "an id or distance list is not a list"));
                };
                if ids.len() != distances.len() {
                    return Err(self.unusable(&what, "ids and distances differ in length"));
                }
                ids.iter()
                    .zip(distances)
                    .map(|(id, distance)| match (id.as_str(), distance.as_f64()) {
                        (Some(id), Some(distance)) => Ok(EngineHit {
                            id: id.to_owned(),
                            score: 1.0 - distance,
                        }),
                        _ => Err(self.unusable(&what, "an id or distance of the wrong type")),
                    })
                    .collect()
            })
            .collect()
    }
}

impl SearchEngine for ChromaEngine {
    fn describe(&self) -> String {
        description(
            &self.shown_url,
            &self.collection,
            &self.tenant,
            &self.database,
        )
    }

    fn ranks_text(&self) -> bool {
        false
    }

    fn state(&self) -> Result<LoadState, Error> {
        let Some(record) = self.collection_record()? else {
            return Ok(LoadState::Missing);
        };
        let stored = self.parse_record(&record)?;
        let loaded = self.count(&stored.id)?;
        Ok(if stored.complete {
            LoadState::Complete {
                stamp: stored.stamp,
                loaded,
            }
        } else {
            LoadState::Partial {
                stamp: stored.stamp,
                loaded,
            }
        })
    }

    fn create(&self, stamp: &LoadStamp) -> Result<(), Error> {
        let body = json!({
            "name": self.collection,
            "configuration": {"hnsw": self.hnsw},
            "metadata": Value::Object(stamp_metadata(Map::new(), stamp, false)),
        });
        match self
            .client
            .request_json(Method::Post, &self.collections_path, Some(&body))
        {
            Ok(_) => Ok(()),
            // A create whose answer was lost and that was retried: fine if it made this.
            Err(HttpFailure::Status { status: 409, .. }) if matches!(self.state()?, LoadState::Partial { stamp: ref stored, .. } if stored == stamp) => {
                Ok(())
            }
            Err(failure) => Err(self.failure("creating the collection", failure)),
        }
    }

    fn loaded_ids(&self) -> Result<HashSet<String>, Error> {
        let stored = self.stored("listing the loaded ids")?;
        let path = self.records_path(&stored.id, "get");
        let mut ids = HashSet::new();
        let mut offset = 0;
        loop {
            let what = format!("listing the loaded ids from {offset}");
            let body = json!({"include": [], "limit": ID_PAGE, "offset": offset});
            let answer = self.request(Method::Post, &path, Some(&body), &what)?;
            let page = answer
                .get("ids")
                .and_then(Value::as_array)
                .ok_or_else(|| self.unusable(&what, "no ids"))?;
            for id in page {
                let id = id
                    .as_str()
                    .ok_or_else(|| self.unusable(&what, "an id that is not a string"))?;
                ids.insert(id.to_owned());
            }
            if page.len() < ID_PAGE {
                return Ok(ids);
            }
            offset += page.len();
        }
    }

    fn upsert(&self, documents: &[EngineDocument<'_>]) -> Result<(), Error> {
        if documents.is_empty() {
            return Ok(());
        }
        let what = format!("storing {} facts", documents.len());
        let stored = self.stored(&what)?;
        self.check_dimensions(
            &what,
            &stored.stamp,
            documents.iter().map(|document| {
                (
                    format!("the vector of fact {}", document.id),
                    document.vector,
                )
            }),
        )?;
        let path = self.records_path(&stored.id, "upsert");
        for chunk in documents.chunks(UPSERT_CHUNK) {
            let body = json!({
                "ids": chunk.iter().map(|document| document.id).collect::<Vec<_>>(),
                "documents": chunk.iter().map(|document| document.text).collect::<Vec<_>>(),
                "embeddings": chunk.iter().map(|document| document.vector).collect::<Vec<_>>(),
            });
            self.request(Method::Post, &path, Some(&body), &what)?;
        }
        Ok(())
    }

    fn complete(&self, stamp: &LoadStamp) -> Result<(), Error> {
        let what = "marking the load complete";
        let stored = self.stored(what)?;
        if stored.stamp != *stamp {
            return Err(Error::Backend(format!(
                "{}: {what}: the collection is stamped {:?}, not {:?}",
                self.prefix(),
                stored.stamp,
                stamp
            )));
        }
        let body = json!({
            "new_metadata": Value::Object(stamp_metadata(stored.metadata, stamp, true)),
        });
        let path = format!("{}/{}", self.collections_path, stored.id);
        self.request(Method::Put, &path, Some(&body), what)?;
        Ok(())
    }

    fn drop_collection(&self) -> Result<bool, Error> {
        let path = format!("{}/{}", self.collections_path, self.collection);
        match self.client.request_json(Method::Delete, &path, None) {
            Ok(_) => Ok(true),
            Err(failure) if is_not_found(&failure) => Ok(false),
            Err(failure) => Err(self.failure("dropping the collection", failure)),
        }
    }

    fn vector_search(
        &self,
        vectors: &[&[f32]],
        limit: usize,
    ) -> Result<Vec<Vec<EngineHit>>, Error> {
        if vectors.is_empty() {
            return Ok(Vec::new());
        }
        let what = searching(vectors.len());
        let stored = self.stored(&what)?;
        self.check_dimensions(
            &what,
            &stored.stamp,
            vectors
                .iter()
                .enumerate()
                .map(|(index, vector)| (format!("query vector {}", index + 1), *vector)),
        )?;
        if limit == 0 {
            return Ok(vec![Vec::new(); vectors.len()]);
        }
        let chunks: Vec<&[&[f32]]> = vectors.chunks(QUERY_CHUNK).collect();
        let answers = map_in_parallel(&chunks, self.client.settings().max_in_flight, |chunk| {
            self.query(&stored.id, chunk, limit)
        });
        let mut hits = Vec::with_capacity(vectors.len());
        for answer in answers {
            hits.extend(answer?);
        }
        Ok(hits)
    }

    fn index_report(&self) -> Result<String, Error> {
        let what = "reading the collection's configuration";
        let record = self.collection_record()?.ok_or_else(|| {
            Error::Backend(format!(
                "{}: {what}: collection {} does not exist",
                self.prefix(),
                self.collection
            ))
        })?;
        Ok(index_configuration(record.get("configuration_json")))
    }

    fn text_search(&self, texts: &[&str], _limit: usize) -> Result<Vec<Vec<EngineHit>>, Error> {
        Err(Error::Usage(format!(
            "{}: chroma ranks no text here, so {} texts cannot be searched by it\n    hint: \
             configurations with a lexical part take it from the in-process index, or from \
             a pgvector engine",
            self.prefix(),
            texts.len()
        )))
    }
}

/// The `configuration.hnsw` of a new collection: cosine distance, and the spec's HNSW
/// settings where given; None for an exact index, which Chroma has not.
fn hnsw_configuration(index: VectorIndex) -> Option<Value> {
    let VectorIndex::Hnsw {
        m,
        ef_construction,
        ef_search,
    } = index
    else {
        return None;
    };
    let mut hnsw = Map::new();
    hnsw.insert("space".into(), json!("cosine"));
    for (key, value) in [
        ("max_neighbors", m),
        ("ef_construction", ef_construction),
        ("ef_search", ef_search),
    ] {
        if let Some(value) = value {
            hnsw.insert(key.into(), json!(value));
        }
    }
    Some(Value::Object(hnsw))
}

/// `hnsw (max_neighbors 16, ef_construction 100, ef_search 100)`: the index a
/// collection's `configuration_json` describes (`hnsw` on a single-node server, `spann`
/// on a distributed one), its numeric settings in the server's names.
fn index_configuration(configuration: Option<&Value>) -> String {
    for kind in ["hnsw", "spann"] {
        let Some(Value::Object(settings)) = configuration.and_then(|value| value.get(kind)) else {
            continue;
        };
        let wanted: &[&str] = if kind == "hnsw" {
            &["max_neighbors", "ef_construction", "ef_search"]
        } else {
            &[
                "search_nprobe",
                "ef_search",
                "ef_construction",
                "max_neighbors",
            ]
        };
        let shown: Vec<String> = wanted
            .iter()
            .filter_map(|key| settings.get(*key).map(|value| format!("{key} {value}")))
            .collect();
        return if shown.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind} ({})", shown.join(", "))
        };
    }
    "hnsw (the server reports no index configuration)".to_owned()
}

/// What a vector search is doing, for messages.
fn searching(queries: usize) -> String {
    match queries {
        1 => "searching 1 query vector".to_owned(),
        _ => format!("searching {queries} query vectors"),
    }
}

/// `chroma at URL, collection NAME`, with the tenant and database when not the defaults.
fn description(url: &str, collection: &str, tenant: &str, database: &str) -> String {
    let mut text = format!("chroma at {url}, collection {collection}");
    if tenant != DEFAULT_TENANT || database != DEFAULT_DATABASE {
        text.push_str(&format!(", tenant {tenant}, database {database}"));
    }
    text
}

/// `metadata` with the stamp's keys set (others kept: Chroma replaces the whole map).
fn stamp_metadata(
    mut metadata: Map<String, Value>,
    stamp: &LoadStamp,
    complete: bool,
) -> Map<String, Value> {
    metadata.insert(KEY_DATASET_HASH.into(), json!(stamp.dataset_hash));
    metadata.insert(KEY_EMBEDDER.into(), json!(stamp.embedder));
    metadata.insert(KEY_DIMENSION.into(), json!(stamp.dimension));
    metadata.insert(KEY_FACTS.into(), json!(stamp.facts));
    metadata.insert(KEY_COMPLETE.into(), json!(complete));
    metadata
}

/// Chroma's own 404 for a missing collection (not a 404 from a wrong URL).
fn is_not_found(failure: &HttpFailure) -> bool {
    matches!(failure, HttpFailure::Status { status: 404, body } if body.contains("NotFoundError"))
}

/// The `message` of Chroma's error body (`{"error": ..., "message": ...}`), else the body.
fn chroma_message(body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => match value.get("message").and_then(Value::as_str) {
            Some(message) => message.to_owned(),
            None => body.to_owned(),
        },
        Err(_) if body.is_empty() => "no message".to_owned(),
        Err(_) => body.to_owned(),
    }
}

/// Chroma's rule: 3 to 512 characters from `[a-zA-Z0-9._-]`, alphanumeric at both ends.
fn valid_collection_name(name: &str) -> bool {
    let alphanumeric_ends = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    (3..=512).contains(&name.len()) && alphanumeric_ends && valid_path_name(name)
}

/// A name that can stand in a URL path as it is.
fn valid_path_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_names_follow_chromas_rule() {
        assert!(valid_collection_name("facts"));
        assert!(valid_collection_name("dev.mem_v2-1"));
        assert!(!valid_collection_name("ab"));
        assert!(!valid_collection_name("-facts"));
        assert!(!valid_collection_name("facts."));
        assert!(!valid_collection_name("my facts"));
        assert!(!valid_collection_name("facts/../x"));
        assert!(valid_collection_name(&"a".repeat(512)));
        assert!(!valid_collection_name(&"a".repeat(513)));
    }

    #[test]
    fn chroma_error_bodies_yield_their_message() {
        assert_eq!(
            chroma_message(
                r#"{"error":"NotFoundError","message":"Collection [x] does not exist"}"#
            ),
            "Collection [x] does not exist"
        );
        assert_eq!(chroma_message("Bad Gateway"), "Bad Gateway");
        assert_eq!(chroma_message(""), "no message");
    }
}
