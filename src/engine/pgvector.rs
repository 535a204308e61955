//! PostgreSQL with the pgvector extension as a [`SearchEngine`].
//!
//! The facts live in one table (the spec's `collection`, a plain SQL identifier):
//!
//! ```sql
//! id text PRIMARY KEY, text text, embedding vector(D),
//! tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
//! ```
//!
//! with a GIN index on `tsv`, and the load stamp in the table `hyde_eval_loads` (one row
//! per facts table). Vector search orders by cosine distance (`<=>`), exactly (no index:
//! PostgreSQL scans every row) or through an HNSW index built when the load completes.
//! Text search ranks with `ts_rank_cd` against an OR of the text's English lexemes, so
//! a fact matching any one word is a candidate and facts matching more words rank higher.
//!
//! An HNSW scan returns at most `hnsw.ef_search` rows. A configured `ef_search` is used
//! as it is, as the application that set it would see it (a search deeper than it gets
//! at most that many facts); without one, pgvector's default 40 is raised to the number
//! of facts asked for, up to pgvector's maximum of 1,000.
//!
//! One connection, behind a mutex, serves every call, and is opened again when the
//! server closed it. Up to 64 vectors or texts go in one statement (`unnest ... CROSS
//! JOIN LATERAL`): for 64 queries of 384 dimensions, top 100 of 5,000 rows, it took a median
//! 153 ms exact and 102 ms with HNSW, against 224 ms and 118 ms for a statement per
//! vector. Vectors travel as text literals (`[0.1,0.2]`), which Rust prints with the
//! shortest digits that read back as the same `f32`, so nothing is lost.
//!
//! The connection is unencrypted (`NoTls`; `sslmode=require` is refused): the client is
//! meant for a server on the same host, a private network or a tunnel.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use postgres::config::SslMode;
use postgres::error::SqlState;
use postgres::{Client, Config, NoTls};

use super::{
    EngineDocument, EngineHit, EngineSpec, LoadStamp, LoadState, SearchEngine, VectorIndex,
};
use crate::error::Error;
use crate::http::Secret;

/// The table that holds one load stamp per facts table.
const STAMPS: &str = "hyde_eval_loads";

/// The most HNSW candidates pgvector examines per query (`hnsw.ef_search`'s maximum).
const MAX_EF_SEARCH: usize = 1000;

/// pgvector's default `hnsw.ef_search`; an HNSW scan returns at most this many rows.
const DEFAULT_EF_SEARCH: usize = 40;

/// The most vectors or texts one search statement carries: a larger batch is several
/// statements, each within the statement timeout.
const BATCH: usize = 64;

/// A PostgreSQL + pgvector server holding one facts table.
pub struct PgvectorEngine {
    spec: EngineSpec,
    config: Config,
    /// `spec.url` with any password in it replaced.
    url: String,
    /// The password from `spec.secret_env`, to scrub from messages.
    secret: Option<Secret>,
    session: Mutex<Session>,
    /// Set when a failure showed the connection lost (closed, or the server ending the
    /// session: SQLSTATE 57P01-57P03); read and cleared under the session's lock.
    lost: AtomicBool,
}

/// The connection and what it has learned about the table.
struct Session {
    /// None after the server closed the connection; the next call reconnects.
    client: Option<Client>,
    /// The embedding column's dimension, once read.
    dimension: Option<usize>,
}

impl PgvectorEngine {
    /// Connects to `spec.url` (with the password from `spec.secret_env`, if set) and sets
    /// the statement timeout to `spec.timeout`.
    pub fn connect(spec: &EngineSpec) -> Result<PgvectorEngine, Error> {
        let url = redact_url(&spec.url);
        let prefix = format!(
            "engine '{}' (pgvector at {url}, table {})",
            spec.name, spec.collection
        );
        if !is_identifier(&spec.collection) {
            return Err(Error::Usage(format!(
                "{prefix}: the table name must be a plain SQL identifier (letters, digits and \
                 underscores, not starting with a digit, at most 63 characters)"
            )));
        }
        let mut config: Config = spec.url.parse().map_err(|error: postgres::Error| {
            Error::Usage(format!(
                "{prefix}: not a PostgreSQL connection string: {}",
                scrub_url_password(&spec.url, &error.to_string())
            ))
        })?;
        if config.get_ssl_mode() == SslMode::Require {
            return Err(Error::Usage(format!(
                "{prefix}: sslmode=require, but this client speaks no TLS\n    hint: reach the \
                 server over loopback, a private network or an SSH tunnel, with sslmode=disable \
                 or prefer"
            )));
        }
        let secret = match &spec.secret_env {
            Some(variable) => {
                let secret = Secret::from_env(variable).map_err(|problem| {
                    Error::Usage(format!(
                        "{prefix}: {problem}\n    hint: export {variable}=<the password>"
                    ))
                })?;
                config.password(secret.expose());
                Some(secret)
            }
            None => None,
        };
        config.connect_timeout(spec.timeout);
        let engine = PgvectorEngine {
            spec: spec.clone(),
            config,
            url,
            secret,
            session: Mutex::new(Session {
                client: None,
                dimension: None,
            }),
            lost: AtomicBool::new(false),
        };
        drop(engine.session()?);
        Ok(engine)
    }

    /// `engine 'pg' (pgvector at postgresql://..., table facts)`: the start of every
    /// message.
    fn prefix(&self) -> String {
        format!("engine '{}' ({})", self.spec.name, self.describe())
    }

    /// The table's name, quoted for SQL.
    fn table(&self) -> String {
        format!("\"{}\"", self.spec.collection)
    }

    /// The session, connected (again, if the server closed the connection).
    fn session(&self) -> Result<MutexGuard<'_, Session>, Error> {
        let mut session = self
            .session
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if session.client.as_ref().is_none_or(Client::is_closed) {
            session.client = None;
            session.dimension = None;
            let mut client = self
                .config
                .connect(NoTls)
                .map_err(|error| self.fail("cannot connect", &error))?;
            let milliseconds = self.spec.timeout.as_millis().clamp(1, i32::MAX as u128);
            client
                .batch_execute(&format!("SET statement_timeout = {milliseconds}"))
                .map_err(|error| self.fail("cannot set the statement timeout", &error))?;
            session.client = Some(client);
        }
        Ok(session)
    }

    /// `operation` on the session; run again on a new connection when it failed because
    /// the connection was lost (a server restart, an idle timeout, a terminated backend).
    /// Every operation may run twice: reads trivially, writes because they are one
    /// transaction or one idempotent upsert.
    fn run<T>(
        &self,
        mut operation: impl FnMut(&mut Session) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut session = self.session()?;
        self.lost.store(false, Ordering::Relaxed);
        match operation(&mut session) {
            Err(_)
                if self.lost.swap(false, Ordering::Relaxed)
                    || session.client.as_ref().is_some_and(Client::is_closed) =>
            {
                session.client = None;
                drop(session);
                operation(&mut *self.session()?)
            }
            result => result,
        }
    }

    /// The error for a failed `action`: rejected credentials are fatal, everything else
    /// is a backend failure; a timeout, a missing table or a missing extension says so.
    fn fail(&self, action: &str, error: &postgres::Error) -> Error {
        if error.is_closed()
            || error
                .code()
                .is_some_and(|code| code.code().starts_with("57P"))
        {
            self.lost.store(true, Ordering::Relaxed);
        }
        let prefix = self.prefix();
        let Some(database) = error.as_db_error() else {
            // The client's message is terse (`invalid configuration`); its causes say why.
            let mut text = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                let _ = write!(text, ": {cause}");
                source = cause.source();
            }
            let text = self.scrub(&text);
            if text.contains("password missing") {
                return Error::BackendFatal(format!(
                    "{prefix}: {action}: the server asks for a password\n    hint: set \
                     secret_env in the engine's table to the environment variable holding it"
                ));
            }
            if error.is_closed() || text.contains("connecting") || text.contains("connection") {
                return Error::Backend(format!(
                    "{prefix}: {action}: cannot reach the server: {text}\n    hint: is \
                     PostgreSQL running and listening there?"
                ));
            }
            return Error::Backend(format!("{prefix}: {action}: {text}"));
        };
        let code = database.code();
        let message = self.scrub(database.message());
        if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            let hint = match &self.spec.secret_env {
                Some(variable) => format!("check the password in ${variable}"),
                None => "set secret_env in the engine's table to the environment variable \
                         holding the password"
                    .to_owned(),
            };
            return Error::BackendFatal(format!(
                "{prefix}: {action}: authentication failed: {message}\n    hint: {hint}"
            ));
        }
        if *code == SqlState::QUERY_CANCELED {
            return Error::Backend(format!(
                "{prefix}: {action}: timed out after {} ms (statement_timeout): {message}\n    \
                 hint: raise the engine's timeout",
                self.spec.timeout.as_millis()
            ));
        }
        if *code == SqlState::UNDEFINED_TABLE {
            return self.missing_table();
        }
        if *code == SqlState::UNDEFINED_FILE && message.contains("vector") {
            return Error::Backend(format!(
                "{prefix}: {action}: the pgvector extension is not installed on the server: \
                 {message}"
            ));
        }
        if *code == SqlState::INSUFFICIENT_PRIVILEGE && message.contains("extension") {
            return Error::Backend(format!(
                "{prefix}: {action}: {message}\n    hint: ask the database's owner to run \
                 CREATE EXTENSION vector"
            ));
        }
        let detail = database
            .detail()
            .map(|detail| format!(" ({})", self.scrub(detail)))
            .unwrap_or_default();
        Error::Backend(format!(
            "{prefix}: {action}: {message}{detail} [SQLSTATE {}]",
            code.code()
        ))
    }

    /// The error for a search or listing of a table that does not exist.
    fn missing_table(&self) -> Error {
        Error::Backend(format!(
            "{}: table {} does not exist\n    hint: run `hyde-eval engine load` first",
            self.prefix(),
            self.table()
        ))
    }

    /// `text` with the password removed, wherever it came from.
    fn scrub(&self, text: &str) -> String {
        let text = scrub_url_password(&self.spec.url, text);
        match &self.secret {
            Some(secret) => secret.redact(&text),
            None => text,
        }
    }

    /// The embedding column's dimension; a missing-table error when there is no table.
    fn dimension(&self, session: &mut Session) -> Result<usize, Error> {
        if let Some(dimension) = session.dimension {
            return Ok(dimension);
        }
        let client = connected(session);
        let row = client
            .query_one(
                "SELECT to_regclass($1) IS NOT NULL, \
                 (SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass($1) \
                  AND attname = 'embedding' AND NOT attisdropped)",
                &[&self.table()],
            )
            .map_err(|error| self.fail("cannot read the table's dimension", &error))?;
        let exists: bool = row.get(0);
        let modifier: Option<i32> = row.get(1);
        if !exists {
            return Err(self.missing_table());
        }
        let dimension = modifier
            .and_then(|modifier| usize::try_from(modifier).ok())
            .filter(|dimension| *dimension > 0)
            .ok_or_else(|| {
                Error::Backend(format!(
                    "{}: table {} has no vector(D) column `embedding`: it was not created by \
                     `hyde-eval engine load`\n    hint: name another table, or drop this one",
                    self.prefix(),
                    self.table()
                ))
            })?;
        session.dimension = Some(dimension);
        Ok(dimension)
    }

    /// An error unless every vector has the column's dimension.
    fn check_dimensions<'v>(
        &self,
        dimension: usize,
        vectors: impl IntoIterator<Item = &'v [f32]>,
        what: &str,
    ) -> Result<(), Error> {
        match vectors.into_iter().find(|vector| vector.len() != dimension) {
            Some(vector) => Err(Error::Backend(format!(
                "{}: {what} has dimension {} but table {} holds vectors of dimension \
                 {dimension}\n    hint: use the embedder the table was loaded with, or load \
                 it again",
                self.prefix(),
                vector.len(),
                self.table()
            ))),
            None => Ok(()),
        }
    }

    /// The `ef_search` for a search of `limit` facts: the configured one as it is, else
    /// pgvector's default raised to `limit` (an HNSW scan returns at most `ef_search`
    /// rows), within pgvector's range.
    fn ef_search(&self, limit: usize) -> Option<usize> {
        match self.spec.index {
            VectorIndex::Exact => None,
            VectorIndex::Hnsw { ef_search, .. } => Some(
                ef_search
                    .map_or(DEFAULT_EF_SEARCH.max(limit), |value| value as usize)
                    .clamp(1, MAX_EF_SEARCH),
            ),
        }
    }
}

/// The client of a session that [`PgvectorEngine::session`] returned.
fn connected(session: &mut Session) -> &mut Client {
    session
        .client
        .as_mut()
        .expect("PgvectorEngine::session connects before returning")
}

impl SearchEngine for PgvectorEngine {
    fn describe(&self) -> String {
        format!("pgvector at {}, table {}", self.url, self.spec.collection)
    }

    fn ranks_text(&self) -> bool {
        true
    }

    fn state(&self) -> Result<LoadState, Error> {
        self.run(|session| {
            let client = connected(session);
            let fail = |error: postgres::Error| self.fail("cannot read the load state", &error);
            let row = client
                .query_one(
                    "SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL",
                    &[&self.table(), &STAMPS],
                )
                .map_err(fail)?;
            let (has_table, has_stamps): (bool, bool) = (row.get(0), row.get(1));
            if !has_table {
                return Ok(LoadState::Missing);
            }
            let stamp = if has_stamps {
                client
                    .query_opt(
                        &format!(
                            "SELECT dataset_hash::text, embedder::text, dimension::integer, \
                             facts::bigint, complete::boolean FROM {STAMPS} \
                             WHERE table_name = $1"
                        ),
                        &[&self.spec.collection],
                    )
                    .map_err(fail)?
            } else {
                None
            };
            let Some(stamp) = stamp else {
                return Err(Error::Backend(format!(
                    "{}: table {} exists but has no load stamp in {STAMPS}: it was not created by \
                     `hyde-eval engine load`\n    hint: name another table, or drop this one",
                    self.prefix(),
                    self.table()
                )));
            };
            let dimension: i32 = stamp.get(2);
            let facts: i64 = stamp.get(3);
            let complete: bool = stamp.get(4);
            let corrupt = || {
                Error::Backend(format!(
                    "{}: the load stamp of table {} in {STAMPS} is corrupt (dimension \
                     {dimension}, facts {facts})\n    hint: drop the table with `hyde-eval \
                     engine drop` and load it again",
                    self.prefix(),
                    self.table()
                ))
            };
            let stamp = LoadStamp {
                dataset_hash: stamp.get(0),
                embedder: stamp.get(1),
                dimension: usize::try_from(dimension).map_err(|_| corrupt())?,
                facts: usize::try_from(facts).map_err(|_| corrupt())?,
            };
            let count: i64 = client
                .query_one(&format!("SELECT count(*) FROM {}", self.table()), &[])
                .map_err(fail)?
                .get(0);
            let loaded = usize::try_from(count).unwrap_or_default();
            Ok(if complete {
                LoadState::Complete { stamp, loaded }
            } else {
                LoadState::Partial { stamp, loaded }
            })
        })
    }

    fn create(&self, stamp: &LoadStamp) -> Result<(), Error> {
        let (Ok(dimension), Ok(facts)) =
            (i32::try_from(stamp.dimension), i64::try_from(stamp.facts))
        else {
            return Err(Error::Backend(format!(
                "{}: cannot create table {}: dimension {} or {} facts out of range",
                self.prefix(),
                self.table(),
                stamp.dimension,
                stamp.facts
            )));
        };
        self.run(|session| {
            session.dimension = None;
            let client = connected(session);
            let fail = |error: postgres::Error| {
                self.fail(&format!("cannot create table {}", self.table()), &error)
            };
            let table = self.table();
            let mut transaction = client.transaction().map_err(fail)?;
            transaction
                .batch_execute(&format!(
                    "CREATE EXTENSION IF NOT EXISTS vector;
                     CREATE TABLE IF NOT EXISTS {STAMPS} (
                         table_name text PRIMARY KEY,
                         dataset_hash text NOT NULL,
                         embedder text NOT NULL,
                         dimension integer NOT NULL,
                         facts bigint NOT NULL,
                         complete boolean NOT NULL DEFAULT false
                     );
                     CREATE TABLE {table} (
                         id text PRIMARY KEY,
                         text text NOT NULL,
                         embedding vector({dimension}) NOT NULL,
                         tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
                     );
                     CREATE INDEX ON {table} USING gin (tsv);"
                ))
                .map_err(fail)?;
            transaction
                .execute(
                    &format!(
                        "INSERT INTO {STAMPS} (table_name, dataset_hash, embedder, dimension, \
                         facts, complete) VALUES ($1, $2, $3, $4, $5, false) \
                         ON CONFLICT (table_name) DO UPDATE SET \
                         dataset_hash = EXCLUDED.dataset_hash, embedder = EXCLUDED.embedder, \
                         dimension = EXCLUDED.dimension, facts = EXCLUDED.facts, complete = false"
                    ),
                    &[
                        &self.spec.collection,
                        &stamp.dataset_hash,
                        &stamp.embedder,
                        &dimension,
                        &facts,
                    ],
                )
                .map_err(fail)?;
            transaction.commit().map_err(fail)
        })
    }

    fn loaded_ids(&self) -> Result<HashSet<String>, Error> {
        self.run(|session| {
            let client = connected(session);
            let rows = client
                .query(&format!("SELECT id::text FROM {}", self.table()), &[])
                .map_err(|error| self.fail("cannot list the loaded ids", &error))?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    fn upsert(&self, documents: &[EngineDocument<'_>]) -> Result<(), Error> {
        if documents.is_empty() {
            return Ok(());
        }
        self.run(|session| {
            let dimension = self.dimension(session)?;
            self.check_dimensions(
                dimension,
                documents.iter().map(|document| document.vector),
                "a fact's vector",
            )?;
            // One statement may not update a row twice: the last document with an id wins.
            let mut last: HashMap<&str, usize> = HashMap::with_capacity(documents.len());
            for (position, document) in documents.iter().enumerate() {
                last.insert(document.id, position);
            }
            let mut ids = Vec::with_capacity(last.len());
            let mut texts = Vec::with_capacity(last.len());
            let mut vectors = Vec::with_capacity(last.len());
            for (position, document) in documents.iter().enumerate() {
                if last.get(document.id) == Some(&position) {
                    ids.push(document.id);
                    texts.push(without_nul(document.text));
                    vectors.push(vector_literal(document.vector));
                }
            }
            connected(session)
                .execute(
                    &format!(
                        "INSERT INTO {} (id, text, embedding) \
                         SELECT id, text, embedding::vector \
                         FROM unnest($1::text[], $2::text[], $3::text[]) AS d(id, text, embedding) \
                         ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, \
                         embedding = EXCLUDED.embedding",
                        self.table()
                    ),
                    &[&ids, &texts, &vectors],
                )
                .map_err(|error| self.fail(&format!("cannot store {} facts", ids.len()), &error))?;
            Ok(())
        })
    }

    /// Builds the HNSW index the spec asks for (dropping any other vector index first;
    /// an exact spec leaves none), analyzes the table and marks the stamp complete. The
    /// index build is exempt from the statement timeout: it takes minutes on large tables.
    fn complete(&self, stamp: &LoadStamp) -> Result<(), Error> {
        self.run(|session| {
            let client = connected(session);
            let table = self.table();
            let fail = |error: postgres::Error| {
                self.fail(&format!("cannot complete the load of {table}"), &error)
            };
            let (Ok(dimension), Ok(facts)) =
                (i32::try_from(stamp.dimension), i64::try_from(stamp.facts))
            else {
                return Err(Error::Backend(format!(
                    "{}: cannot complete the load: dimension {} or {} facts out of range",
                    self.prefix(),
                    stamp.dimension,
                    stamp.facts
                )));
            };
            let mut transaction = client.transaction().map_err(fail)?;
            let indexes = transaction
                .query(
                    "SELECT i.indexrelid::regclass::text FROM pg_index i \
                     JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam \
                     WHERE i.indrelid = to_regclass($1) AND a.amname IN ('hnsw', 'ivfflat')",
                    &[&table],
                )
                .map_err(fail)?;
            for index in &indexes {
                let name: String = index.get(0);
                transaction
                    .batch_execute(&format!("DROP INDEX {name}"))
                    .map_err(fail)?;
            }
            if let VectorIndex::Hnsw {
                m, ef_construction, ..
            } = self.spec.index
            {
                let mut options = Vec::new();
                if let Some(m) = m {
                    options.push(format!("m = {m}"));
                }
                if let Some(ef_construction) = ef_construction {
                    options.push(format!("ef_construction = {ef_construction}"));
                }
                let with = if options.is_empty() {
                    String::new()
                } else {
                    format!(" WITH ({})", options.join(", "))
                };
                transaction
                    .batch_execute(&format!(
                        "SET LOCAL statement_timeout = 0;
                         CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops){with};"
                    ))
                    .map_err(fail)?;
            }
            transaction
                .batch_execute(&format!("ANALYZE {table}"))
                .map_err(fail)?;
            let updated = transaction
                .execute(
                    &format!(
                        "UPDATE {STAMPS} SET complete = true, dataset_hash = $2, embedder = $3, \
                         dimension = $4, facts = $5 WHERE table_name = $1"
                    ),
                    &[
                        &self.spec.collection,
                        &stamp.dataset_hash,
                        &stamp.embedder,
                        &dimension,
                        &facts,
                    ],
                )
                .map_err(fail)?;
            if updated == 0 {
                return Err(Error::Backend(format!(
                    "{}: table {table} has no load stamp to complete\n    hint: run `hyde-eval \
                     engine load`, which creates it",
                    self.prefix()
                )));
            }
            transaction.commit().map_err(fail)
        })
    }

    fn drop_collection(&self) -> Result<bool, Error> {
        self.run(|session| {
            session.dimension = None;
            let client = connected(session);
            let table = self.table();
            let fail = |error: postgres::Error| self.fail(&format!("cannot drop {table}"), &error);
            let mut transaction = client.transaction().map_err(fail)?;
            let row = transaction
                .query_one(
                    "SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL",
                    &[&table, &STAMPS],
                )
                .map_err(fail)?;
            let (has_table, has_stamps): (bool, bool) = (row.get(0), row.get(1));
            if has_table {
                transaction
                    .batch_execute(&format!("DROP TABLE {table}"))
                    .map_err(fail)?;
            }
            let stamps = if has_stamps {
                transaction
                    .execute(
                        &format!("DELETE FROM {STAMPS} WHERE table_name = $1"),
                        &[&self.spec.collection],
                    )
                    .map_err(fail)?
            } else {
                0
            };
            transaction.commit().map_err(fail)?;
            Ok(has_table || stamps > 0)
        })
    }

    fn vector_search(
        &self,
        vectors: &[&[f32]],
        limit: usize,
    ) -> Result<Vec<Vec<EngineHit>>, Error> {
        if vectors.is_empty() || limit == 0 {
            return Ok(vec![Vec::new(); vectors.len()]);
        }
        self.run(|session| {
            let dimension = self.dimension(session)?;
            self.check_dimensions(dimension, vectors.iter().copied(), "a query vector")?;
            let ef_search = self.ef_search(limit);
            // An exact scan breaks ties by id; an HNSW scan must order by distance alone to
            // use the index.
            let tie = if ef_search.is_none() { ", id" } else { "" };
            let sql = format!(
                "SELECT q.ord, f.id::text, f.distance \
                 FROM unnest($1::text[]::vector[]) WITH ORDINALITY AS q(v, ord) \
                 CROSS JOIN LATERAL (SELECT id, embedding <=> q.v AS distance FROM {} \
                                     ORDER BY embedding <=> q.v{tie} LIMIT $2) AS f \
                 ORDER BY q.ord, f.distance, f.id",
                self.table()
            );
            let fail = |error: postgres::Error| {
                self.fail(
                    &format!("vector search of {} queries", vectors.len()),
                    &error,
                )
            };
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let client = connected(session);
            let mut hits = Vec::with_capacity(vectors.len());
            for chunk in vectors.chunks(BATCH) {
                let literals: Vec<String> =
                    chunk.iter().map(|vector| vector_literal(vector)).collect();
                let rows = match ef_search {
                    Some(ef_search) => {
                        let mut transaction = client.transaction().map_err(fail)?;
                        transaction
                            .batch_execute(&format!("SET LOCAL hnsw.ef_search = {ef_search}"))
                            .map_err(fail)?;
                        let rows = transaction
                            .query(&sql, &[&literals, &limit])
                            .map_err(fail)?;
                        transaction.commit().map_err(fail)?;
                        rows
                    }
                    None => client.query(&sql, &[&literals, &limit]).map_err(fail)?,
                };
                let mut chunk_hits = vec![Vec::new(); chunk.len()];
                for row in rows {
                    let ordinal: i64 = row.get(0);
                    let distance: Option<f64> = row.get(2);
                    if let Some(list) = usize::try_from(ordinal - 1)
                        .ok()
                        .and_then(|index| chunk_hits.get_mut(index))
                    {
                        list.push(EngineHit {
                            id: row.get(1),
                            score: 1.0 - distance.unwrap_or(f64::NAN),
                        });
                    }
                }
                hits.extend(chunk_hits);
            }
            Ok(hits)
        })
    }

    fn text_search(&self, texts: &[&str], limit: usize) -> Result<Vec<Vec<EngineHit>>, Error> {
        if texts.is_empty() || limit == 0 {
            return Ok(vec![Vec::new(); texts.len()]);
        }
        self.run(|session| {
            let client = connected(session);
            // The query is an OR of the text's English lexemes, each quoted for tsquery's
            // input syntax (quotes and backslashes doubled) so nothing in the text is parsed
            // as an operator. A text without lexemes (stop words only) matches nothing.
            let sql = format!(
                "SELECT q.ord, f.id::text, f.rank \
                 FROM unnest($1::text[]) WITH ORDINALITY AS q(text, ord) \
                 CROSS JOIN LATERAL ( \
                     SELECT string_agg('''' || replace(replace(lexeme, E'\\\\', E'\\\\\\\\'), \
                                                       '''', '''''') || '''', ' | ')::tsquery \
                            AS query \
                     FROM unnest(tsvector_to_array(to_tsvector('english', q.text))) AS l(lexeme) \
                 ) AS w \
                 CROSS JOIN LATERAL (SELECT id, ts_rank_cd(tsv, w.query) AS rank FROM {} \
                                     WHERE tsv @@ w.query ORDER BY rank DESC, id LIMIT $2) AS f \
                 ORDER BY q.ord, f.rank DESC, f.id",
                self.table()
            );
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let mut hits = Vec::with_capacity(texts.len());
            for chunk in texts.chunks(BATCH) {
                // PostgreSQL text cannot hold NUL.
                let chunk: Vec<String> = chunk.iter().map(|text| without_nul(text)).collect();
                let rows = client.query(&sql, &[&chunk, &limit]).map_err(|error| {
                    self.fail(&format!("text search of {} queries", texts.len()), &error)
                })?;
                let mut chunk_hits = vec![Vec::new(); chunk.len()];
                for row in rows {
                    let ordinal: i64 = row.get(0);
                    let rank: f32 = row.get(2);
                    if let Some(list) = usize::try_from(ordinal - 1)
                        .ok()
                        .and_then(|index| chunk_hits.get_mut(index))
                    {
                        list.push(EngineHit {
                            id: row.get(1),
                            score: f64::from(rank),
                        });
                    }
                }
                hits.extend(chunk_hits);
            }
            Ok(hits)
        })
    }
}

/// Whether `name` is a plain SQL identifier, safe to quote and compare as written.
fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(first) if first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
        && name.len() <= 63
}

/// `text` with any NUL replaced by a space: PostgreSQL text cannot hold NUL.
fn without_nul(text: &str) -> String {
    text.replace('\0', " ")
}

/// pgvector's text form of a vector: `[0.1,0.2,0.3]`.
fn vector_literal(vector: &[f32]) -> String {
    let mut literal = String::with_capacity(vector.len() * 12 + 2);
    literal.push('[');
    for (position, value) in vector.iter().enumerate() {
        if position > 0 {
            literal.push(',');
        }
        let _ = write!(literal, "{value}");
    }
    literal.push(']');
    literal
}

/// Where passwords sit in a connection URL: in its user info
/// (`postgresql://user:PASSWORD@host`) and its `password=` parameters.
fn url_passwords(url: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let start = url.find("://").map_or(0, |at| at + 3);
    let authority_end = url[start..]
        .find(['/', '?'])
        .map_or(url.len(), |at| start + at);
    if let Some(at) = url[start..authority_end].rfind('@') {
        if let Some(colon) = url[start..start + at].find(':') {
            ranges.push(start + colon + 1..start + at);
        }
    }
    if let Some(question) = url.find('?') {
        let mut offset = question + 1;
        for pair in url[question + 1..].split('&') {
            if pair.starts_with("password=") {
                ranges.push(offset + "password=".len()..offset + pair.len());
            }
            offset += pair.len() + 1;
        }
    }
    ranges.retain(|range| !range.is_empty());
    ranges
}

/// `url` as messages show it: its passwords, if it has any, replaced.
fn redact_url(url: &str) -> String {
    let mut redacted = String::with_capacity(url.len());
    let mut copied = 0;
    for range in url_passwords(url) {
        redacted.push_str(&url[copied..range.start]);
        redacted.push_str("<redacted>");
        copied = range.end;
    }
    redacted.push_str(&url[copied..]);
    redacted
}

/// `text` (a message from the client or the server) with the passwords of connection
/// URL `url` replaced.
fn scrub_url_password(url: &str, text: &str) -> String {
    url_passwords(url)
        .into_iter()
        .fold(text.to_owned(), |text, range| {
            text.replace(&url[range], "<redacted>")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_plain_names_only() {
        assert!(is_identifier("facts"));
        assert!(is_identifier("_facts_2"));
        assert!(is_identifier(&"a".repeat(63)));
        assert!(!is_identifier(&"a".repeat(64)));
        assert!(!is_identifier(""));
        assert!(!is_identifier("2facts"));
        assert!(!is_identifier("facts\"; DROP TABLE x; --"));
        assert!(!is_identifier("public.facts"));
        assert!(!is_identifier("faits_é"));
    }

    #[test]
    fn vectors_print_as_pgvector_literals_that_read_back_exactly() {
        assert_eq!(vector_literal(&[0.5, -1.0, 0.1]), "[0.5,-1,0.1]");
        assert_eq!(vector_literal(&[]), "[]");
        let value = 0.1f32 + 0.2f32;
        let literal = vector_literal(&[value]);
        let back: f32 = literal[1..literal.len() - 1].parse().unwrap();
        assert_eq!(back.to_bits(), value.to_bits());
    }

    #[test]
    fn passwords_in_urls_are_redacted() {
        assert_eq!(
            redact_url("postgresql://hyde:s3cret@127.0.0.1:5432/db"),
            "postgresql://hyde:<redacted>@127.0.0.1:5432/db"
        );
        assert_eq!(
            redact_url("postgresql://hyde@127.0.0.1/db?password=s3cret&sslmode=disable"),
            "postgresql://hyde@127.0.0.1/db?password=<redacted>&sslmode=disable"
        );
        assert_eq!(
            redact_url("postgresql://hyde@127.0.0.1:5432/db"),
            "postgresql://hyde@127.0.0.1:5432/db"
        );
        assert_eq!(
            redact_url("postgres://u:p@h/db?password=x"),
            "postgres://u:<redacted>@h/db?password=<redacted>"
        );
        assert_eq!(
            scrub_url_password("postgresql://u:s3cret@h/db", "failed for u:s3cret"),
            "failed for u:<redacted>"
        );
    }
}
