//! Vector search over chunked facts: the flat index holds one row per chunk, and a fact
//! scores as its best chunk (MaxP).
//!
//! Chunks are laid out fact after fact in corpus order, so a tie between chunks broken
//! by row is a tie between facts broken by id. The nearest facts are read off the
//! nearest chunks ([`FlatIndex::search_batch`], exact): the first time a fact appears
//! in the chunk ranking is its best chunk, and a fact that does not appear among the
//! first N chunks scores below every fact that does. A query whose first N chunks name
//! fewer than `limit` facts is searched again, deeper, until they do or every chunk is
//! read.

use super::{FactIndex, FlatIndex};

/// Chunks searched per fact wanted, at first.
const FIRST_DEPTH_PER_FACT: usize = 2;

/// Which fact each row of a chunk index belongs to, in row order (non-decreasing).
pub struct ChunkOwners {
    owners: Vec<FactIndex>,
    facts: usize,
}

impl ChunkOwners {
    /// The owners of the rows; `facts` is the number of facts (each owns at least one
    /// row).
    pub fn new(owners: Vec<FactIndex>, facts: usize) -> ChunkOwners {
        ChunkOwners { owners, facts }
    }

    /// Number of chunks.
    pub fn chunks(&self) -> usize {
        self.owners.len()
    }

    /// The `limit` facts of best chunk cosine with each of `queries`, sorted by that
    /// cosine descending then fact ascending: what [`FlatIndex::search`] would return
    /// over one row per fact holding its best chunk's cosine.
    pub fn search_batch(
        &self,
        chunks: &FlatIndex,
        queries: &[&[f32]],
        limit: usize,
    ) -> Vec<Vec<(FactIndex, f64)>> {
        let limit = limit.min(self.facts);
        if limit == 0 {
            return vec![Vec::new(); queries.len()];
        }
        let mut answers: Vec<Option<Vec<(FactIndex, f64)>>> = vec![None; queries.len()];
        let mut depth = limit.saturating_mul(FIRST_DEPTH_PER_FACT).max(1);
        loop {
            let pending: Vec<usize> = (0..queries.len())
                .filter(|&query| answers[query].is_none())
                .collect();
            if pending.is_empty() {
                break;
            }
            let vectors: Vec<&[f32]> = pending.iter().map(|&query| queries[query]).collect();
            let every_chunk = depth >= self.chunks();
            let hits = chunks.search_batch(&vectors, depth.min(self.chunks()), f64::NEG_INFINITY);
            for (query, chunk_hits) in pending.into_iter().zip(hits) {
                let facts = self.best_per_fact(&chunk_hits, limit);
                if facts.len() == limit || every_chunk {
                    answers[query] = Some(facts);
                }
            }
            depth = depth.saturating_mul(4);
        }
        answers.into_iter().flatten().collect()
    }

    /// The first `limit` distinct facts of a chunk ranking, each with its first (best)
    /// chunk's score.
    fn best_per_fact(
        &self,
        chunk_hits: &[(FactIndex, f64)],
        limit: usize,
    ) -> Vec<(FactIndex, f64)> {
        let mut seen = vec![false; self.facts];
        let mut facts = Vec::with_capacity(limit);
        for &(row, score) in chunk_hits {
            let fact = self.owners[row as usize];
            if !std::mem::replace(&mut seen[fact as usize], true) {
                facts.push((fact, score));
                if facts.len() == limit {
                    break;
                }
            }
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fact_scores_as_its_best_chunk_and_ties_break_by_fact() {
        // Fact 0 owns rows 0 and 1, fact 1 row 2, fact 2 rows 3 and 4.
        let chunks = FlatIndex::build(
            2,
            &[
                vec![0.0, 1.0],
                vec![1.0, 0.0],
                vec![0.6, 0.8],
                vec![0.0, 1.0],
                vec![0.8, 0.6],
            ],
        );
        let owners = ChunkOwners::new(vec![0, 0, 1, 2, 2], 3);
        let query: &[f32] = &[1.0, 0.0];
        // Best chunks: fact 0 row 1 (1.0), fact 2 row 4 (0.8), fact 1 row 2 (0.6).
        let expected = |limit: usize| {
            let all = [(0, 1.0), (2, 0.8f32 as f64), (1, 0.6f32 as f64)];
            all[..limit].to_vec()
        };
        for limit in 1..=3 {
            let found = &owners.search_batch(&chunks, &[query], limit)[0];
            assert_eq!(found.len(), limit);
            for ((fact, score), (want_fact, want_score)) in found.iter().zip(expected(limit)) {
                assert_eq!(*fact, want_fact);
                assert!((score - want_score).abs() < 1e-6, "{score} vs {want_score}");
            }
        }
        // A deeper limit than facts gives every fact once; the query (0, 1) ties facts 0
        // and 2 at 1.0 (rows 0 and 3): fact 0 first.
        let found = &owners.search_batch(&chunks, &[&[0.0, 1.0]], 10)[0];
        let order: Vec<FactIndex> = found.iter().map(|&(fact, _)| fact).collect();
        assert_eq!(order, vec![0, 2, 1]);
    }
}
