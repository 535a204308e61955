//! Rankings: for each query, the ranked facts with their scores. The interchange format
//! between retrieval and metrics (`trec` reads and writes it as TREC run files), and the
//! sink the pipeline hands them to as it makes them.

use crate::dataset::{FactId, QueryId};
use crate::error::Error;

/// One query's ranked results, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryRanking {
    pub query: QueryId,
    pub results: Vec<(FactId, f64)>,
}

/// Takes one configuration's rankings as the pipeline makes them: chunk after chunk of
/// consecutive queries, in dataset order. The pipeline keeps no ranking past its chunk,
/// so the sink decides what of them outlives the run (a `Vec` keeps them all).
pub trait RankingSink: Send {
    fn accept(&mut self, rankings: Vec<QueryRanking>) -> Result<(), Error>;
}

impl RankingSink for Vec<QueryRanking> {
    fn accept(&mut self, rankings: Vec<QueryRanking>) -> Result<(), Error> {
        self.extend(rankings);
        Ok(())
    }
}
