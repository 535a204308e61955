//! The search-engine seam: candidate generation served by a real search engine (a
//! vector database, PostgreSQL + pgvector) instead of the in-process indexes.
//!
//! An engine holds a dataset's facts (ids, texts and vectors from one embedder), loaded
//! by `hyde-eval engine load`; a run with `--engine NAME` asks it for each query's vector
//! top-N (and, where the engine ranks text, its lexical top-N). Everything else (HyDE
//! expansion, fusion, metrics, reports, the gate, the caches) stays in-process, so every
//! configuration runs unchanged against the engine.
//!
//! Each engine kind is one file implementing [`SearchEngine`]; [`connect`] builds the one
//! an [`EngineSpec`] names. The load stamp ([`LoadStamp`]) that an engine stores beside
//! the facts (collection metadata, a table) lets a run refuse an engine loaded from other
//! data or another embedder, and a second load see that nothing is left to do.
//!
//! Nothing here changes an engine during a run: only `engine load` and `engine drop`
//! write to it.

use std::collections::HashSet;
use std::time::Duration;

use crate::error::Error;

pub mod chroma;
pub mod pgvector;
pub mod redact;

/// Which engine an `[engines.NAME]` table names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// Chroma over its HTTP API v2 (a local `chroma run`, a distributed deployment or
    /// Chroma Cloud).
    Chroma,
    /// PostgreSQL with the pgvector extension (also Citus, or a managed PostgreSQL).
    Pgvector,
}

impl EngineKind {
    /// The names the config file accepts, in the order `--help` lists them.
    pub const CHOICES: &'static [&'static str] = &["chroma", "pgvector"];

    pub fn parse(name: &str) -> Option<EngineKind> {
        match name {
            "chroma" => Some(EngineKind::Chroma),
            "pgvector" | "postgres" | "postgresql" => Some(EngineKind::Pgvector),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Chroma => "chroma",
            EngineKind::Pgvector => "pgvector",
        }
    }
}

/// How an engine searches vectors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VectorIndex {
    /// An exact scan (pgvector without an index).
    Exact,
    /// An HNSW graph: `m` links per node, `ef_construction` when built, `ef_search`
    /// (None: the engine's default) when queried.
    Hnsw {
        m: Option<u32>,
        ef_construction: Option<u32>,
        ef_search: Option<u32>,
    },
}

/// One engine as the config file's `[engines.NAME]` table describes it, resolved. Its
/// `Debug` form shows the url with any password redacted.
#[derive(Clone, PartialEq)]
pub struct EngineSpec {
    /// The table's name (`prod` in `[engines.prod]`).
    pub name: String,
    pub kind: EngineKind,
    /// Chroma: the server's base URL (`http://127.0.0.1:8000`). pgvector: a connection
    /// URL (`postgresql://user@127.0.0.1:5432/db`) or key=value string. Either may hold a
    /// password; show it only through [`redact::redacted`].
    pub url: String,
    /// The Chroma collection or the PostgreSQL table that holds the facts.
    pub collection: String,
    /// Chroma: tenant and database (default `default_tenant`, `default_database`).
    pub tenant: Option<String>,
    pub database: Option<String>,
    /// The environment variable holding a token (Chroma) or password (PostgreSQL); its
    /// value is never logged, cached or reported.
    pub secret_env: Option<String>,
    pub index: VectorIndex,
    /// Limit on one request or query.
    pub timeout: Duration,
}

impl std::fmt::Debug for EngineSpec {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("EngineSpec")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("url", &redact::redacted(&self.url))
            .field("collection", &self.collection)
            .field("tenant", &self.tenant)
            .field("database", &self.database)
            .field("secret_env", &self.secret_env)
            .field("index", &self.index)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl EngineSpec {
    /// `engine 'NAME' (KIND at URL)`, the url's passwords redacted: how progress names
    /// the engine before it is reached.
    pub fn label(&self) -> String {
        format!(
            "engine '{}' ({} at {})",
            self.name,
            self.kind.name(),
            redact::redacted(&self.url)
        )
    }
}

/// What an engine records beside the facts it holds: which data, embedded how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadStamp {
    /// The dataset's content hash (`Dataset::content_hash`).
    pub dataset_hash: String,
    /// The embedder's cache id (model, dimension, settings).
    pub embedder: String,
    pub dimension: usize,
    /// How many facts a complete load holds.
    pub facts: usize,
}

/// What an engine holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadState {
    /// No collection or table of that name.
    Missing,
    /// Created with `stamp` and holding `loaded` facts, but the load has not finished
    /// (interrupted, or still running): `engine load` resumes it, `run` refuses it.
    Partial { stamp: LoadStamp, loaded: usize },
    /// Every fact loaded and any index built.
    Complete { stamp: LoadStamp, loaded: usize },
}

/// One fact as an engine stores it.
#[derive(Debug, Clone, Copy)]
pub struct EngineDocument<'a> {
    pub id: &'a str,
    pub text: &'a str,
    /// Unit length (the embedders return unit vectors); engines search by cosine.
    pub vector: &'a [f32],
}

/// One fact an engine returned for a query.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineHit {
    pub id: String,
    /// Higher is better: cosine similarity (1 - cosine distance) for vector searches,
    /// the engine's text score for text searches.
    pub score: f64,
}

/// A search engine that holds a dataset's facts and serves candidates for queries.
///
/// Errors are [`Error::Backend`] (retried where transient by the shared HTTP layer or
/// the client) or [`Error::BackendFatal`] (rejected credentials); every message names the
/// engine (`engine 'prod' (chroma at http://...)`) and never contains a secret.
pub trait SearchEngine: Send + Sync {
    /// `chroma at http://127.0.0.1:8000, collection facts`: for messages and reports.
    fn describe(&self) -> String;

    /// Whether [`SearchEngine::text_search`] is served (PostgreSQL full-text search).
    fn ranks_text(&self) -> bool;

    /// What the engine holds under this spec's collection or table.
    fn state(&self) -> Result<LoadState, Error>;

    /// Creates the collection or table, stamped as a partial load of `stamp`. Called only
    /// when [`SearchEngine::state`] is `Missing`.
    fn create(&self, stamp: &LoadStamp) -> Result<(), Error>;

    /// The ids of the facts already stored (for resuming a load).
    fn loaded_ids(&self) -> Result<HashSet<String>, Error>;

    /// Inserts or replaces facts (one batch; the caller sizes batches).
    fn upsert(&self, documents: &[EngineDocument<'_>]) -> Result<(), Error>;

    /// Marks the load complete, building any index the engine builds after loading
    /// (pgvector's HNSW index).
    fn complete(&self, stamp: &LoadStamp) -> Result<(), Error>;

    /// Removes the collection or table; false when there was none.
    fn drop_collection(&self) -> Result<bool, Error>;

    /// The `limit` nearest facts to each vector, best first, in the engine's own order.
    fn vector_search(&self, vectors: &[&[f32]], limit: usize)
        -> Result<Vec<Vec<EngineHit>>, Error>;

    /// The `limit` best facts for each text by the engine's text ranking, best first.
    /// Engines that do not rank text return a usage error.
    fn text_search(&self, texts: &[&str], limit: usize) -> Result<Vec<Vec<EngineHit>>, Error>;

    /// What the vector searches ran on, as the engine reports it (never the config
    /// file's settings): `hnsw (m 4, ef_construction 8, ef_search 40)`, `exact scan,
    /// index not used (...)`. pgvector reads its catalog and the plans of this process's
    /// searches; Chroma, the collection's configuration.
    fn index_report(&self) -> Result<String, Error>;
}

/// `engine 'NAME' (its description)`: how messages name an engine.
pub fn label(name: &str, engine: &dyn SearchEngine) -> String {
    format!("engine '{name}' ({})", engine.describe())
}

/// Connects to the engine `spec` names (checking the spec, reading its secret): pgvector
/// opens its connection (within the spec's timeout), Chroma makes no request yet. Says
/// `connecting to engine ...` on the progress line when `progress`.
pub fn connect(spec: &EngineSpec, progress: bool) -> Result<Box<dyn SearchEngine>, Error> {
    crate::progress::stage(progress, &format!("connecting to {}", spec.label()));
    Ok(match spec.kind {
        EngineKind::Chroma => Box::new(chroma::ChromaEngine::connect(spec)?),
        EngineKind::Pgvector => Box::new(pgvector::PgvectorEngine::connect(spec)?),
    })
}
