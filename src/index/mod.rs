//! Indexes over a prepared corpus: lexical (chatcli keyword relevance and BM25 on shared
//! vocabulary postings) and vector (a flat matrix of normalized fact vectors), plus the
//! temporal signal. Facts are addressed by their position in the corpus, which is sorted
//! by fact id, so "ties by id ascending" is "ties by position ascending" everywhere.

mod lexical;
mod postings;
mod temporal;
mod vector;

pub use lexical::{Bm25Params, LexicalIndex, LexicalNeeds};
pub use temporal::temporal_score;
pub use vector::FlatIndex;

/// Position of a fact in the prepared corpus (sorted by fact id).
pub type FactIndex = u32;

/// Sorts `(fact, score)` pairs by score descending, then fact ascending (= id ascending).
pub fn sort_by_score_then_id(scored: &mut [(FactIndex, f64)]) {
    scored.sort_by(score_then_id);
}

fn score_then_id(a: &(FactIndex, f64), b: &(FactIndex, f64)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Keeps the first `limit` of `scored` in [`sort_by_score_then_id`] order, sorted: they
/// are selected first, then only they are sorted (the order is total, so this equals
/// sorting everything and truncating).
pub fn top_by_score_then_id(scored: &mut Vec<(FactIndex, f64)>, limit: usize) {
    if scored.len() > limit && limit > 0 {
        scored.select_nth_unstable_by(limit - 1, score_then_id);
    }
    scored.truncate(limit);
    sort_by_score_then_id(scored);
}
