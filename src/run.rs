//! Runs: for each query, the ranked facts with their scores. The interchange format
//! between retrieval and metrics; `trec` reads and writes it as TREC run files.

use crate::dataset::{FactId, QueryId};

/// One query's ranked results, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryRanking {
    pub query: QueryId,
    pub results: Vec<(FactId, f64)>,
}
