//! Indexes over a prepared corpus: lexical (chatcli keyword relevance and BM25 on shared
//! vocabulary postings) and vector (a flat matrix of normalized fact vectors), plus the
//! temporal signal. Facts are addressed by their position in the corpus, which is sorted
//! by fact id, so "ties by id ascending" is "ties by position ascending" everywhere.

mod lexical;
mod temporal;
mod vector;

pub use lexical::{Bm25Params, LexicalIndex, LexicalNeeds};
pub use temporal::temporal_score;
pub use vector::FlatIndex;

/// Position of a fact in the prepared corpus (sorted by fact id).
pub type FactIndex = u32;

/// Sorts `(fact, score)` pairs by score descending, then fact ascending (= id ascending).
pub fn sort_by_score_then_id(scored: &mut [(FactIndex, f64)]) {
    scored.sort_by(|(fact_a, score_a), (fact_b, score_b)| {
        score_b.total_cmp(score_a).then(fact_a.cmp(fact_b))
    });
}
