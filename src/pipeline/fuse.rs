//! Fuse: one configuration's candidates and ranking for one query, by its fusion method
//! ([`crate::fusion`] owns every method; this file only hands them a query's
//! [`crate::fusion::SignalSources`]), and every query's candidate table for sweeps
//! ([`Prepared::candidate_tables`]).
//!
//! No fusion method's knowledge lives here: a new method needs no change to this file.

use super::expand::HydeOutcome;
use super::expand::QueryExpansion;
use super::state::{progress_bar, Prepared};
use crate::configuration::{Configuration, Plan};
use crate::dataset::Query;
use crate::error::Error;
use crate::fusion::{self, CandidateTable, LexicalMemo};
use crate::index::FactIndex;

/// Every query's candidate table for one configuration (see
/// [`Prepared::candidate_tables`]).
#[derive(Debug, Clone)]
pub struct ConfigurationTables {
    pub configuration: Configuration,
    /// One table per dataset query, in dataset order; candidates address facts by
    /// [`FactIndex`] (see [`Prepared::fact_id`]).
    pub tables: Vec<CandidateTable>,
}

impl Prepared<'_> {
    /// The candidate table of every configuration for every query, without fusing,
    /// configurations in input order. Sweeps re-fuse these
    /// tables per parameter point instead of recomputing signals.
    pub fn candidate_tables(&mut self) -> Result<Vec<ConfigurationTables>, Error> {
        let bar = progress_bar(
            self.progress,
            self.queries.len() * self.configurations.len() > 5000,
            self.queries.len(),
            "signals",
        );
        let mut tables: Vec<ConfigurationTables> = self
            .configurations
            .iter()
            .map(|configuration| ConfigurationTables {
                configuration: configuration.clone(),
                tables: Vec::with_capacity(self.queries.len()),
            })
            .collect();
        self.in_chunks(
            |shared, query, expansion| {
                let query_tables = shared
                    .configurations
                    .iter()
                    .zip(&shared.plans)
                    .map(|(configuration, plan)| {
                        shared.query_table(query, expansion, configuration, *plan)
                    })
                    .collect::<Vec<_>>();
                bar.inc(1);
                query_tables
            },
            |_, per_query| {
                for query_tables in per_query {
                    for (configuration, table) in tables.iter_mut().zip(query_tables) {
                        configuration.tables.push(table);
                    }
                }
                Ok(())
            },
        )?;
        bar.finish_and_clear();
        Ok(tables)
    }

    /// The candidate table of one configuration for one query.
    fn query_table(
        &self,
        query: &Query,
        expansion: &QueryExpansion,
        configuration: &Configuration,
        plan: Plan,
    ) -> CandidateTable {
        let (table, _) =
            self.with_signal_sources(query, expansion, configuration, plan, None, |sources| {
                fusion::method(plan.fusion).candidate_table(sources)
            });
        table
    }

    /// One configuration's ranking of one query, how it used HyDE, and the floor its
    /// adaptive floor settled on (when it has one): what fusing its candidate table
    /// gives, mostly without building the table (see [`fusion::Fuser::fused_ranking`]).
    /// `lexical_memo` is the query's, shared by all its configurations.
    pub(super) fn query_ranking(
        &self,
        query: &Query,
        expansion: &QueryExpansion,
        configuration: &Configuration,
        plan: Plan,
        lexical_memo: &LexicalMemo,
    ) -> ConfigurationRanking {
        let ((ranking, settled_floor), hyde) = self.with_signal_sources(
            query,
            expansion,
            configuration,
            plan,
            Some(lexical_memo),
            |sources| {
                let method = fusion::method(plan.fusion);
                (
                    method.fused_ranking(sources),
                    method.adaptive_floor(sources),
                )
            },
        );
        ConfigurationRanking {
            ranking,
            hyde,
            settled_floor,
        }
    }
}

/// One configuration's ranking of one query and what shaped it.
pub(super) struct ConfigurationRanking {
    pub(super) ranking: Vec<(FactIndex, f64)>,
    pub(super) hyde: HydeOutcome,
    /// The floor the adaptive floor settled on; `None` without one.
    pub(super) settled_floor: Option<f64>,
}
