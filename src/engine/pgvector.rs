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
//! The spec's timeout bounds every wait on the server, on the client's side of the
//! socket: connecting, start-up and authentication together, and each statement (the
//! server's `statement_timeout` is set to the same value and cancels a slow statement
//! first, with its own message; the client gives up [`ANSWER_GRACE`] later, when the
//! server did not answer at all, and drops the connection). The one statement without
//! a limit, `engine load`'s HNSW index build, is watched instead: every timeout, a second
//! connection checks the server still answers.
//!
//! What a report says about the index comes from the server: the index's kind and
//! options from the catalog (`pg_index`, `pg_class.reloptions`), the `hnsw.ef_search` in
//! force from `current_setting`, and whether the planner used the index from `EXPLAIN`
//! of the search statement itself ([`SearchEngine::index_report`]).
//!
//! The connection is unencrypted (`NoTls`; `sslmode=require` is refused): the client is
//! meant for a server on the same host, a private network or a tunnel. A password in the
//! url or from `secret_env` never appears in a message ([`super::redact`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio_postgres::config::SslMode;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Row};

use super::{
    redact, EngineDocument, EngineHit, EngineSpec, LoadStamp, LoadState, SearchEngine, VectorIndex,
};
use crate::error::Error;
use crate::http::Secret;

/// The table that holds one load stamp per facts table.
const STAMPS: &str = "hyde_eval_loads";

/// The most HNSW candidates pgvector examines per query (`hnsw.ef_search`'s maximum).
const MAX_EF_SEARCH: usize = 1000;

/// pgvector's default `hnsw.ef_search`; an HNSW scan returns at most this many rows.
const DEFAULT_EF_SEARCH: usize = 40;

/// The vector indexes on table `$1` from the catalog: quoted name, access method and
/// options (`{m=4,ef_construction=8}`).
const VECTOR_INDEXES: &str = "SELECT quote_ident(c.relname), a.amname::text, \
     coalesce(c.reloptions, ARRAY[]::text[]) \
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
     JOIN pg_am a ON a.oid = c.relam \
     WHERE i.indrelid = to_regclass($1) AND a.amname IN ('hnsw', 'ivfflat') \
     ORDER BY c.relname";

/// pgvector's defaults for an HNSW index built without options.
const DEFAULT_M: u32 = 16;
const DEFAULT_EF_CONSTRUCTION: u32 = 64;

/// The most vectors or texts one search statement carries: a larger batch is several
/// statements, each within the statement timeout.
const BATCH: usize = 64;

/// How much longer than the server's `statement_timeout` the client waits for an
/// answer: a live server cancels a slow statement first and says so; past this, the
/// server is taken to be not answering.
pub const ANSWER_GRACE: Duration = Duration::from_millis(500);

/// A PostgreSQL + pgvector server holding one facts table.
pub struct PgvectorEngine {
    spec: EngineSpec,
    config: Config,
    /// `spec.url` with any password in it replaced.
    url: String,
    /// The passwords of `spec.url` and from `spec.secret_env`, to scrub from messages.
    passwords: Vec<String>,
    secret: Option<Secret>,
    session: Mutex<Session>,
    /// Set when a failure showed the connection lost (closed, or the server ending the
    /// session: SQLSTATE 57P01-57P03); read and cleared under the session's lock.
    lost: AtomicBool,
    /// Set when the server did not answer in time: the connection is dropped and the
    /// operation not tried again (that would wait as long once more).
    stalled: AtomicBool,
    /// What each search depth's statement was planned as (see [`Plan`]), by depth.
    plans: Mutex<BTreeMap<usize, Plan>>,
}

/// How PostgreSQL planned the vector search of one depth, from `EXPLAIN` of the
/// statement itself.
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    /// The vector index the plan scans, when it scans one.
    index: Option<String>,
    /// `hnsw.ef_search` in force for the statement (`current_setting`), for HNSW plans.
    ef_search: Option<String>,
}

/// The connection and what it has learned about the table.
struct Session {
    /// None after the server closed the connection; the next call reconnects.
    link: Option<Link>,
    /// The embedding column's dimension, once read.
    dimension: Option<usize>,
}

/// One open connection: the client, and the runtime that drives its socket (the
/// connection task runs while the client waits in [`wait`]).
struct Link {
    client: Client,
    runtime: Runtime,
    /// How long one statement may wait for its answer.
    deadline: Duration,
}

impl Link {
    /// Waits for `work` on this connection for at most the statement deadline.
    fn wait<T>(
        &self,
        work: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, Failure> {
        wait(&self.runtime, self.deadline, work)
    }

    fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

/// Why a wait on the server ended without a result.
#[derive(Debug)]
enum Failure {
    /// The client or the server said why.
    Postgres(tokio_postgres::Error),
    /// No answer within this long.
    NoAnswer(Duration),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(error: tokio_postgres::Error) -> Failure {
        Failure::Postgres(error)
    }
}

/// Runs `work` on `runtime` for at most `deadline`.
fn wait<T>(
    runtime: &Runtime,
    deadline: Duration,
    work: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, Failure> {
    runtime.block_on(async {
        match tokio::time::timeout(deadline, work).await {
            Ok(result) => result.map_err(Failure::Postgres),
            Err(_) => Err(Failure::NoAnswer(deadline)),
        }
    })
}

impl PgvectorEngine {
    /// Connects to `spec.url` (with the password from `spec.secret_env`, if set) and sets
    /// the statement timeout to `spec.timeout`.
    pub fn connect(spec: &EngineSpec) -> Result<PgvectorEngine, Error> {
        let url = redact::redacted(&spec.url);
        let mut passwords = redact::passwords(&spec.url);
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
        let mut config: Config = spec.url.parse().map_err(|error: tokio_postgres::Error| {
            Error::Usage(format!(
                "{prefix}: not a PostgreSQL connection string: {}",
                redact::scrub(&passwords, &error.to_string())
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
                passwords.push(secret.expose().to_owned());
                Some(secret)
            }
            None => None,
        };
        config.connect_timeout(spec.timeout);
        let engine = PgvectorEngine {
            spec: spec.clone(),
            config,
            url,
            passwords,
            secret,
            session: Mutex::new(Session {
                link: None,
                dimension: None,
            }),
            lost: AtomicBool::new(false),
            stalled: AtomicBool::new(false),
            plans: Mutex::new(BTreeMap::new()),
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

    /// How long one statement may wait for the server's answer.
    fn statement_deadline(&self) -> Duration {
        self.spec.timeout + ANSWER_GRACE
    }

    /// A new connection, its statement timeout set; connecting, start-up and
    /// authentication together take at most the spec's timeout.
    fn open(&self) -> Result<Link, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| {
                Error::Backend(format!(
                    "{}: cannot start the client's runtime: {error}",
                    self.prefix()
                ))
            })?;
        let (client, connection) = wait(&runtime, self.spec.timeout, self.config.connect(NoTls))
            .map_err(|failure| self.fail("cannot connect", &failure))?;
        // The connection task reads and writes the socket whenever the client waits.
        runtime.spawn(connection);
        let link = Link {
            client,
            runtime,
            deadline: self.statement_deadline(),
        };
        let milliseconds = self.spec.timeout.as_millis().clamp(1, i32::MAX as u128);
        link.wait(
            link.client
                .batch_execute(&format!("SET statement_timeout = {milliseconds}")),
        )
        .map_err(|failure| self.fail("cannot set the statement timeout", &failure))?;
        Ok(link)
    }

    /// The session, connected (again, if the server closed the connection).
    fn session(&self) -> Result<MutexGuard<'_, Session>, Error> {
        let mut session = self
            .session
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if session.link.as_ref().is_none_or(Link::is_closed) {
            session.link = None;
            session.dimension = None;
            session.link = Some(self.open()?);
        }
        Ok(session)
    }

    /// `operation` on the session; run again on a new connection when it failed because
    /// the connection was lost (a server restart, an idle timeout, a terminated backend),
    /// not when the server did not answer in time. Every operation may run twice: reads
    /// trivially, writes because they are one transaction or one idempotent upsert.
    fn run<T>(
        &self,
        mut operation: impl FnMut(&mut Session) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut session = self.session()?;
        self.lost.store(false, Ordering::Relaxed);
        self.stalled.store(false, Ordering::Relaxed);
        match operation(&mut session) {
            Err(error) if self.stalled.swap(false, Ordering::Relaxed) => {
                session.link = None;
                Err(error)
            }
            Err(_)
                if self.lost.swap(false, Ordering::Relaxed)
                    || session.link.as_ref().is_some_and(Link::is_closed) =>
            {
                session.link = None;
                drop(session);
                operation(&mut *self.session()?)
            }
            result => result,
        }
    }

    /// The error for a failed `action`: rejected credentials are fatal, everything else
    /// is a backend failure; a timeout, a missing table or a missing extension says so.
    fn fail(&self, action: &str, failure: &Failure) -> Error {
        let prefix = self.prefix();
        let error = match failure {
            Failure::NoAnswer(deadline) => {
                self.stalled.store(true, Ordering::Relaxed);
                return Error::Backend(format!(
                    "{prefix}: {action}: no answer within {} s: something accepts connections \
                     there but does not answer as PostgreSQL\n    hint: is PostgreSQL (not \
                     another service, not a stopped process) listening there? Raise the \
                     engine's timeout_seconds if the server is only slow",
                    deadline.as_secs_f64()
                ));
            }
            Failure::Postgres(error) => error,
        };
        if error.is_closed()
            || error
                .code()
                .is_some_and(|code| code.code().starts_with("57P"))
        {
            self.lost.store(true, Ordering::Relaxed);
        }
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

    /// `text` with the passwords removed, wherever they came from.
    fn scrub(&self, text: &str) -> String {
        let text = redact::scrub(&self.passwords, text);
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
        let link = connected(session);
        let row = link
            .wait(link.client.query_one(
                "SELECT to_regclass($1) IS NOT NULL, \
                 (SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass($1) \
                  AND attname = 'embedding' AND NOT attisdropped)",
                &[&self.table()],
            ))
            .map_err(|failure| self.fail("cannot read the table's dimension", &failure))?;
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

    /// The vector indexes on the table, from the catalog: quoted name, access method
    /// (`hnsw`, `ivfflat`) and options (`m=4`, ...).
    fn vector_indexes(&self, link: &Link) -> Result<Vec<(String, String, Vec<String>)>, Failure> {
        let rows = link.wait(link.client.query(VECTOR_INDEXES, &[&self.table()]))?;
        Ok(rows
            .iter()
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .collect())
    }

    /// Runs `EXPLAIN` of the search statement `sql` with `params` on `transaction` (where
    /// the search's settings are in force), once per search depth `limit`, and records
    /// which vector index, if any, the plan scans, and the `hnsw.ef_search` in force.
    fn record_plan(
        &self,
        runtime: &Runtime,
        deadline: Duration,
        transaction: &tokio_postgres::Transaction<'_>,
        limit: usize,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<(), Failure> {
        if self.plans_lock().contains_key(&limit) {
            return Ok(());
        }
        let table = self.table();
        let indexes: Vec<String> = wait(
            runtime,
            deadline,
            transaction.query(VECTOR_INDEXES, &[&table]),
        )?
        .iter()
        .map(|row| row.get(0))
        .collect();
        let explain = format!("EXPLAIN {sql}");
        let lines: Vec<String> = wait(runtime, deadline, transaction.query(&explain, params))?
            .iter()
            .map(|row: &Row| row.get(0))
            .collect();
        let index = indexes.into_iter().find(|name| {
            let scan = format!(" using {name} on ");
            lines.iter().any(|line| line.contains(&scan))
        });
        let ef_search = match index {
            Some(_) => wait(
                runtime,
                deadline,
                transaction.query("SELECT current_setting('hnsw.ef_search', true)", &[]),
            )?
            .first()
            .and_then(|row| row.get::<_, Option<String>>(0)),
            None => None,
        };
        self.plans_lock().insert(limit, Plan { index, ef_search });
        Ok(())
    }

    fn plans_lock(&self) -> MutexGuard<'_, BTreeMap<usize, Plan>> {
        self.plans
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for `build` (the index build) for as long as it takes while the server
    /// answers: every `self.spec.timeout`, a second connection must answer `SELECT 1`
    /// within the timeout, else the build is given up as the server not answering.
    fn while_answering<T>(
        &self,
        runtime: &Runtime,
        build: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, Failure> {
        let timeout = self.spec.timeout;
        runtime.block_on(async {
            let mut build = std::pin::pin!(build);
            let mut probe: Option<Client> = None;
            loop {
                if let Ok(result) = tokio::time::timeout(timeout, build.as_mut()).await {
                    return result.map_err(Failure::Postgres);
                }
                if probe.as_ref().is_none_or(Client::is_closed) {
                    let (client, connection) =
                        match tokio::time::timeout(timeout, self.config.connect(NoTls)).await {
                            Ok(connected) => connected?,
                            Err(_) => return Err(Failure::NoAnswer(timeout)),
                        };
                    tokio::spawn(connection);
                    probe = Some(client);
                }
                if let Some(client) = &probe {
                    match tokio::time::timeout(timeout, client.simple_query("SELECT 1")).await {
                        Ok(answer) => drop(answer?),
                        Err(_) => return Err(Failure::NoAnswer(timeout)),
                    }
                }
            }
        })
    }
}

/// The link of a session that [`PgvectorEngine::session`] returned.
fn connected(session: &mut Session) -> &mut Link {
    session
        .link
        .as_mut()
        .expect("PgvectorEngine::session connects before returning")
}

/// `hnsw (m 4, ef_construction 8, ef_search 40)`: an index's kind and options as the
/// catalog holds them (pgvector's defaults named as such), and the `ef_search` a search
/// ran with.
fn index_description(method: &str, options: &[String], ef_search: Option<&str>) -> String {
    let option = |name: &str| {
        options
            .iter()
            .find_map(|option| option.strip_prefix(&format!("{name}=")))
            .map(str::to_owned)
    };
    let mut settings = Vec::new();
    if method == "hnsw" {
        for (name, default) in [
            ("m", DEFAULT_M),
            ("ef_construction", DEFAULT_EF_CONSTRUCTION),
        ] {
            settings.push(match option(name) {
                Some(value) => format!("{name} {value}"),
                None => format!("{name} {default} (default)"),
            });
        }
    } else {
        settings.extend(options.iter().map(|option| option.replacen('=', " ", 1)));
    }
    if let Some(ef_search) = ef_search {
        settings.push(format!("ef_search {ef_search}"));
    }
    if settings.is_empty() {
        method.to_owned()
    } else {
        format!("{method} ({})", settings.join(", "))
    }
}

/// What the searches ran on, from the table's vector `indexes` (name, method, options)
/// and each search depth's [`Plan`]: `hnsw (m 4, ef_construction 8, ef_search 40)` when
/// every plan scanned the index, `exact scan, index not used (...)` when none did though
/// the table has one, `exact scan (no vector index)` without one; per depth when the
/// depths' plans differ.
fn index_summary(
    indexes: &[(String, String, Vec<String>)],
    plans: &BTreeMap<usize, Plan>,
) -> String {
    let describe = |name: &str, ef_search: Option<&str>| {
        indexes
            .iter()
            .find(|(index, _, _)| index == name)
            .map_or_else(
                || name.to_owned(),
                |(_, method, options)| index_description(method, options, ef_search),
            )
    };
    let unused = || match indexes.first() {
        None => "exact scan (no vector index)".to_owned(),
        Some((name, _, _)) => format!(
            "exact scan, index not used (the table's {} is not in PostgreSQL's plan)",
            describe(name, None)
        ),
    };
    let parts: Vec<(usize, String)> = plans
        .iter()
        .map(|(depth, plan)| {
            let part = match &plan.index {
                Some(name) => describe(name, plan.ef_search.as_deref()),
                None => unused(),
            };
            (*depth, part)
        })
        .collect();
    match parts.first() {
        None => match indexes.first() {
            Some((name, _, _)) => describe(name, None),
            None => unused(),
        },
        Some((_, first)) if parts.iter().all(|(_, part)| part == first) => first.clone(),
        Some(_) => parts
            .iter()
            .map(|(depth, part)| format!("{part} for searches of depth {depth}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
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
            let link = connected(session);
            let fail = |failure: Failure| self.fail("cannot read the load state", &failure);
            let table = self.table();
            let row = link
                .wait(link.client.query_one(
                    "SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL",
                    &[&table, &STAMPS],
                ))
                .map_err(fail)?;
            let (has_table, has_stamps): (bool, bool) = (row.get(0), row.get(1));
            if !has_table {
                return Ok(LoadState::Missing);
            }
            let stamp = if has_stamps {
                link.wait(link.client.query_opt(
                    &format!(
                        "SELECT dataset_hash::text, embedder::text, dimension::integer, \
                         facts::bigint, complete::boolean FROM {STAMPS} \
                         WHERE table_name = $1"
                    ),
                    &[&self.spec.collection],
                ))
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
            let count: i64 = link
                .wait(
                    link.client
                        .query_one(&format!("SELECT count(*) FROM {table}"), &[]),
                )
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
            let Link {
                client,
                runtime,
                deadline,
            } = connected(session);
            let fail = |failure: Failure| {
                self.fail(&format!("cannot create table {}", self.table()), &failure)
            };
            let table = self.table();
            let transaction = wait(runtime, *deadline, client.transaction()).map_err(fail)?;
            wait(
                runtime,
                *deadline,
                transaction.batch_execute(&format!(
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
                )),
            )
            .map_err(fail)?;
            wait(
                runtime,
                *deadline,
                transaction.execute(
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
                ),
            )
            .map_err(fail)?;
            wait(runtime, *deadline, transaction.commit()).map_err(fail)
        })
    }

    fn loaded_ids(&self) -> Result<HashSet<String>, Error> {
        self.run(|session| {
            let link = connected(session);
            let rows = link
                .wait(
                    link.client
                        .query(&format!("SELECT id::text FROM {}", self.table()), &[]),
                )
                .map_err(|failure| self.fail("cannot list the loaded ids", &failure))?;
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
            let link = connected(session);
            link.wait(link.client.execute(
                &format!(
                    "INSERT INTO {} (id, text, embedding) \
                         SELECT id, text, embedding::vector \
                         FROM unnest($1::text[], $2::text[], $3::text[]) AS d(id, text, embedding) \
                         ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text, \
                         embedding = EXCLUDED.embedding",
                    self.table()
                ),
                &[&ids, &texts, &vectors],
            ))
            .map_err(|failure| self.fail(&format!("cannot store {} facts", ids.len()), &failure))?;
            Ok(())
        })
    }

    /// Builds the HNSW index the spec asks for (dropping any other vector index first;
    /// an exact spec leaves none), analyzes the table and marks the stamp complete. The
    /// index build is exempt from the statement timeout: it takes minutes on large tables.
    fn complete(&self, stamp: &LoadStamp) -> Result<(), Error> {
        self.run(|session| {
            let Link {
                client,
                runtime,
                deadline,
            } = connected(session);
            let deadline = *deadline;
            let table = self.table();
            let fail = |failure: Failure| {
                self.fail(&format!("cannot complete the load of {table}"), &failure)
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
            let transaction = wait(runtime, deadline, client.transaction()).map_err(fail)?;
            let indexes = wait(
                runtime,
                deadline,
                transaction.query(
                    "SELECT i.indexrelid::regclass::text FROM pg_index i \
                     JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam \
                     WHERE i.indrelid = to_regclass($1) AND a.amname IN ('hnsw', 'ivfflat')",
                    &[&table],
                ),
            )
            .map_err(fail)?;
            for index in &indexes {
                let name: String = index.get(0);
                wait(
                    runtime,
                    deadline,
                    transaction.batch_execute(&format!("DROP INDEX {name}")),
                )
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
                // The build takes minutes on large tables: no statement timeout, but the
                // server must keep answering a second connection.
                wait(
                    runtime,
                    deadline,
                    transaction.batch_execute("SET LOCAL statement_timeout = 0"),
                )
                .map_err(fail)?;
                self.while_answering(
                    runtime,
                    transaction.batch_execute(&format!(
                        "CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops){with}"
                    )),
                )
                .map_err(fail)?;
                let milliseconds = self.spec.timeout.as_millis().clamp(1, i32::MAX as u128);
                wait(
                    runtime,
                    deadline,
                    transaction
                        .batch_execute(&format!("SET LOCAL statement_timeout = {milliseconds}")),
                )
                .map_err(fail)?;
            }
            wait(
                runtime,
                deadline,
                transaction.batch_execute(&format!("ANALYZE {table}")),
            )
            .map_err(fail)?;
            let updated = wait(
                runtime,
                deadline,
                transaction.execute(
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
                ),
            )
            .map_err(fail)?;
            if updated == 0 {
                return Err(Error::Backend(format!(
                    "{}: table {table} has no load stamp to complete\n    hint: run `hyde-eval \
                     engine load`, which creates it",
                    self.prefix()
                )));
            }
            wait(runtime, deadline, transaction.commit()).map_err(fail)
        })
    }

    fn drop_collection(&self) -> Result<bool, Error> {
        self.run(|session| {
            session.dimension = None;
            let Link {
                client,
                runtime,
                deadline,
            } = connected(session);
            let deadline = *deadline;
            let table = self.table();
            let fail = |failure: Failure| self.fail(&format!("cannot drop {table}"), &failure);
            let transaction = wait(runtime, deadline, client.transaction()).map_err(fail)?;
            let row = wait(
                runtime,
                deadline,
                transaction.query_one(
                    "SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL",
                    &[&table, &STAMPS],
                ),
            )
            .map_err(fail)?;
            let (has_table, has_stamps): (bool, bool) = (row.get(0), row.get(1));
            if has_table {
                wait(
                    runtime,
                    deadline,
                    transaction.batch_execute(&format!("DROP TABLE {table}")),
                )
                .map_err(fail)?;
            }
            let stamps = if has_stamps {
                wait(
                    runtime,
                    deadline,
                    transaction.execute(
                        &format!("DELETE FROM {STAMPS} WHERE table_name = $1"),
                        &[&self.spec.collection],
                    ),
                )
                .map_err(fail)?
            } else {
                0
            };
            wait(runtime, deadline, transaction.commit()).map_err(fail)?;
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
            let fail = |failure: Failure| {
                self.fail(
                    &format!("vector search of {} queries", vectors.len()),
                    &failure,
                )
            };
            let depth = limit;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let Link {
                client,
                runtime,
                deadline,
            } = connected(session);
            let deadline = *deadline;
            let mut hits = Vec::with_capacity(vectors.len());
            for chunk in vectors.chunks(BATCH) {
                let literals: Vec<String> =
                    chunk.iter().map(|vector| vector_literal(vector)).collect();
                let transaction = wait(runtime, deadline, client.transaction()).map_err(fail)?;
                if let Some(ef_search) = ef_search {
                    wait(
                        runtime,
                        deadline,
                        transaction
                            .batch_execute(&format!("SET LOCAL hnsw.ef_search = {ef_search}")),
                    )
                    .map_err(fail)?;
                }
                self.record_plan(
                    runtime,
                    deadline,
                    &transaction,
                    depth,
                    &sql,
                    &[&literals[..1].to_vec(), &limit],
                )
                .map_err(fail)?;
                let rows = wait(
                    runtime,
                    deadline,
                    transaction.query(&sql, &[&literals, &limit]),
                )
                .map_err(fail)?;
                wait(runtime, deadline, transaction.commit()).map_err(fail)?;
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

    fn index_report(&self) -> Result<String, Error> {
        self.run(|session| {
            let link = connected(session);
            let indexes = self
                .vector_indexes(link)
                .map_err(|failure| self.fail("cannot read the table's indexes", &failure))?;
            Ok(index_summary(&indexes, &self.plans_lock()))
        })
    }

    fn text_search(&self, texts: &[&str], limit: usize) -> Result<Vec<Vec<EngineHit>>, Error> {
        if texts.is_empty() || limit == 0 {
            return Ok(vec![Vec::new(); texts.len()]);
        }
        self.run(|session| {
            let link = connected(session);
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
                let rows = link
                    .wait(link.client.query(&sql, &[&chunk, &limit]))
                    .map_err(|failure| {
                        self.fail(&format!("text search of {} queries", texts.len()), &failure)
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
    fn the_index_summary_says_per_depth_what_the_plans_scanned() {
        let indexes = vec![(
            "facts_embedding_idx".to_owned(),
            "hnsw".to_owned(),
            vec!["m=4".to_owned()],
        )];
        let plan = |index: Option<&str>, ef_search: Option<&str>| Plan {
            index: index.map(str::to_owned),
            ef_search: ef_search.map(str::to_owned),
        };
        // No search yet: the catalog alone, ef_construction at pgvector's default.
        assert_eq!(
            index_summary(&indexes, &BTreeMap::new()),
            "hnsw (m 4, ef_construction 64 (default))"
        );
        let mut plans = BTreeMap::new();
        plans.insert(10, plan(Some("facts_embedding_idx"), Some("40")));
        plans.insert(100, plan(Some("facts_embedding_idx"), Some("40")));
        assert_eq!(
            index_summary(&indexes, &plans),
            "hnsw (m 4, ef_construction 64 (default), ef_search 40)"
        );
        // The deeper search's plan scans the table.
        plans.insert(100, plan(None, None));
        assert_eq!(
            index_summary(&indexes, &plans),
            "hnsw (m 4, ef_construction 64 (default), ef_search 40) for searches of depth 10; \
             exact scan, index not used (the table's hnsw (m 4, ef_construction 64 (default)) \
             is not in PostgreSQL's plan) for searches of depth 100"
        );
        let mut scans = BTreeMap::new();
        scans.insert(10, plan(None, None));
        scans.insert(100, plan(None, None));
        assert_eq!(index_summary(&[], &scans), "exact scan (no vector index)");
        let ivfflat = vec![(
            "facts_ivf".to_owned(),
            "ivfflat".to_owned(),
            vec!["lists=100".to_owned()],
        )];
        assert_eq!(
            index_summary(&ivfflat, &BTreeMap::new()),
            "ivfflat (lists 100)"
        );
    }
}
