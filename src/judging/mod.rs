//! Pooled relevance judging (`hyde-eval judge`): the pool of unjudged (query, fact)
//! pairs ([`pool`]), the session that records each grade as it is given ([`session`]),
//! the terminal UI and its scripted-input twin that drive the same handler ([`tui`]),
//! an LLM's proposed grade beside each pair ([`assist`]), and Cohen's kappa between
//! those proposals and the person's grades ([`agreement`]).

pub mod agreement;
pub mod pool;
pub mod session;
pub mod tui;

use crate::dataset::{Grade, Query, QueryId};
use crate::error::Error;
use crate::generate::HypothesisGenerator;

/// hyde-eval's grading prompt for `--assist`; `{query}` is the rendered pair.
pub const ASSIST_PROMPT: &str = "You judge search results for a developer's notes. \
Grade how well the note answers the query: 2 = it answers the query, 1 = it is related but does not answer it, 0 = not relevant. \
Reply with the digit only.\n\n{query}\n\nGrade:";

/// The LLM's proposed grade for a query and a fact: the first 0, 1 or 2 in its answer;
/// `None` when it gave none or failed.
pub fn assist(
    generator: &dyn HypothesisGenerator,
    query: &Query,
    fact: &str,
) -> Result<Option<Grade>, Error> {
    let pair = Query {
        id: QueryId(format!("{}/judge", query.id.0)),
        text: format!("Query: {}\n\nNote: {}", query.text.trim(), fact.trim()),
        tags: Vec::new(),
        scenario: None,
        expectations: Vec::new(),
    };
    let generation = generator.generate(&pair, 1)?;
    Ok(generation
        .hypotheses
        .ok()
        .and_then(|texts| texts.into_iter().next())
        .and_then(|text| parse_proposal(&text)))
}

/// The first grade digit (0, 1 or 2) of an answer.
pub fn parse_proposal(answer: &str) -> Option<Grade> {
    answer
        .chars()
        .find(char::is_ascii_digit)
        .and_then(|digit| digit.to_digit(10))
        .filter(|&digit| digit <= 2)
        .map(|digit| digit as Grade)
}
