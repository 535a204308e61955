//! The config file's `[engines.NAME]` tables: search engines a run can take its
//! candidates from (`run --engine NAME`), resolved into [`EngineSpec`]s.
//!
//! ```toml
//! [engines.prod]
//! kind = "chroma"                  # chroma | pgvector
//! url = "http://127.0.0.1:8000"    # pgvector: "postgresql://user@127.0.0.1:5432/db"
//! collection = "facts"             # the Chroma collection or PostgreSQL table
//! secret_env = "CHROMA_TOKEN"      # optional: the variable holding a token or password
//! index = "hnsw"                   # hnsw | exact (exact: pgvector only)
//! ef_search = 40                   # optional HNSW settings: m, ef_construction, ef_search
//! timeout_seconds = 30
//! ```
//!
//! Two tables may name the same collection with different `ef_search` values, to
//! compare what the index's search width costs.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::engine::{EngineKind, EngineSpec, VectorIndex};
use crate::error::Error;

/// Every `[engines.NAME]` table, by name.
pub type EngineTables = BTreeMap<String, EngineTable>;

/// One `[engines.NAME]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineTable {
    kind: String,
    url: String,
    collection: String,
    tenant: Option<String>,
    database: Option<String>,
    secret_env: Option<String>,
    index: Option<String>,
    m: Option<u32>,
    ef_construction: Option<u32>,
    ef_search: Option<u32>,
    timeout_seconds: Option<f64>,
}

/// The most an HNSW setting may be (pgvector allows `m` up to 100 and the search and
/// build widths up to 1,000).
const MAX_HNSW_SETTING: u32 = 1000;

/// The engine `[engines.NAME]` describes, or a usage error naming what is wrong.
pub fn resolve_engine(name: &str, tables: &EngineTables) -> Result<EngineSpec, Error> {
    let Some(table) = tables.get(name) else {
        let known: Vec<&str> = tables.keys().map(String::as_str).collect();
        return Err(Error::Usage(if known.is_empty() {
            format!("--engine {name}: the config file has no [engines.{name}] table (see docs/engines.md)")
        } else {
            format!(
                "--engine {name}: no [engines.{name}] table in the config file{} (it has: {})",
                crate::hints::suggestion(name, &known),
                known.join(", ")
            )
        }));
    };
    let problem = |message: String| Error::Usage(format!("[engines.{name}]: {message}"));
    let kind = EngineKind::parse(&table.kind).ok_or_else(|| {
        problem(format!(
            "kind \"{}\" is not one of {}",
            table.kind,
            EngineKind::CHOICES.join(", ")
        ))
    })?;
    let hnsw_settings = [
        ("m", table.m),
        ("ef_construction", table.ef_construction),
        ("ef_search", table.ef_search),
    ];
    for (setting, value) in hnsw_settings {
        if let Some(value) = value {
            if value == 0 || value > MAX_HNSW_SETTING {
                return Err(problem(format!(
                    "{setting} must be between 1 and {MAX_HNSW_SETTING}, got {value}"
                )));
            }
        }
    }
    let index = match table.index.as_deref().unwrap_or("hnsw") {
        "hnsw" => VectorIndex::Hnsw {
            m: table.m,
            ef_construction: table.ef_construction,
            ef_search: table.ef_search,
        },
        "exact" => {
            if let Some((setting, _)) = hnsw_settings.iter().find(|(_, value)| value.is_some()) {
                return Err(problem(format!(
                    "{setting} is an HNSW setting; index = \"exact\" has none"
                )));
            }
            if kind == EngineKind::Chroma {
                return Err(problem(
                    "Chroma always searches an HNSW index; index = \"exact\" needs kind = \"pgvector\"".into(),
                ));
            }
            VectorIndex::Exact
        }
        other => {
            return Err(problem(format!(
                "index \"{other}\" is not one of hnsw, exact"
            )))
        }
    };
    if kind == EngineKind::Pgvector && (table.tenant.is_some() || table.database.is_some()) {
        return Err(problem(
            "tenant and database are Chroma's; a PostgreSQL database is part of the url".into(),
        ));
    }
    let timeout_seconds = table.timeout_seconds.unwrap_or(60.0);
    if !(timeout_seconds.is_finite() && timeout_seconds > 0.0 && timeout_seconds <= 86_400.0) {
        return Err(problem(format!(
            "timeout_seconds must be more than 0 and at most 86400, got {timeout_seconds}"
        )));
    }
    if table.collection.is_empty() {
        return Err(problem("collection must not be empty".into()));
    }
    Ok(EngineSpec {
        name: name.to_owned(),
        kind,
        url: table.url.trim_end_matches('/').to_owned(),
        collection: table.collection.clone(),
        tenant: table.tenant.clone(),
        database: table.database.clone(),
        secret_env: table.secret_env.clone(),
        index,
        timeout: Duration::from_secs_f64(timeout_seconds),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(text: &str) -> EngineTables {
        #[derive(Deserialize)]
        struct File {
            engines: EngineTables,
        }
        toml::from_str::<File>(text).expect("valid toml").engines
    }

    #[test]
    fn a_chroma_table_resolves_with_hnsw_defaults() {
        let tables = tables(
            "[engines.prod]\nkind = \"chroma\"\nurl = \"http://127.0.0.1:8000/\"\ncollection = \"facts\"\nef_search = 40\n",
        );
        let spec = resolve_engine("prod", &tables).unwrap();
        assert_eq!(spec.kind, EngineKind::Chroma);
        assert_eq!(spec.url, "http://127.0.0.1:8000");
        assert_eq!(
            spec.index,
            VectorIndex::Hnsw {
                m: None,
                ef_construction: None,
                ef_search: Some(40)
            }
        );
        assert_eq!(spec.timeout, Duration::from_secs(60));
    }

    #[test]
    fn exact_chroma_unknown_names_and_bad_settings_are_refused() {
        let tables = tables(
            "[engines.a]\nkind = \"chroma\"\nurl = \"u\"\ncollection = \"c\"\nindex = \"exact\"\n\
             [engines.b]\nkind = \"pgvector\"\nurl = \"u\"\ncollection = \"c\"\nindex = \"exact\"\nef_search = 4\n\
             [engines.c]\nkind = \"elastic\"\nurl = \"u\"\ncollection = \"c\"\n\
             [engines.d]\nkind = \"pgvector\"\nurl = \"u\"\ncollection = \"c\"\nef_search = 0\n",
        );
        let message = |name: &str| resolve_engine(name, &tables).unwrap_err().to_string();
        assert!(
            message("a").contains("needs kind = \"pgvector\""),
            "{}",
            message("a")
        );
        assert!(
            message("b").contains("ef_search is an HNSW setting"),
            "{}",
            message("b")
        );
        assert!(message("c").contains("\"elastic\" is not one of chroma, pgvector"));
        assert!(message("d").contains("between 1 and 1000, got 0"));
        let unknown = message("prd");
        assert!(unknown.contains("no [engines.prd] table"), "{unknown}");
        assert!(unknown.contains("it has: a, b, c, d"), "{unknown}");
    }
}
