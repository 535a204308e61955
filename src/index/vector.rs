//! Exact vector search over a flat, row-major matrix of L2-normalized fact vectors.
//!
//! Cosine follows chatcli's vector index (reference section 8): 0 for empty,
//! different-length, non-finite or zero-norm vectors; scores are accumulated in f64. Vectors are normalized once when
//! the index is built, so a search is one dot product per fact.

use super::{sort_by_score_then_id, FactIndex};

/// Fact vectors, normalized, one row per fact.
pub struct FlatIndex {
    dimension: usize,
    rows: Vec<f32>,
}

/// Returns `vector / |vector|`, or `None` when the norm is zero or not finite.
fn normalized(vector: &[f32]) -> Option<Vec<f32>> {
    let norm = vector
        .iter()
        .map(|&value| f64::from(value) * f64::from(value))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return None;
    }
    Some(
        vector
            .iter()
            .map(|&value| (f64::from(value) / norm) as f32)
            .collect(),
    )
}

impl FlatIndex {
    /// Builds the index; every vector must have `dimension` entries (checked by the
    /// embedding layer). Zero vectors stay zero and score 0 against everything.
    pub fn build(dimension: usize, vectors: &[Vec<f32>]) -> FlatIndex {
        let mut rows = Vec::with_capacity(dimension * vectors.len());
        for vector in vectors {
            match normalized(vector) {
                Some(unit) if unit.len() == dimension => rows.extend_from_slice(&unit),
                _ => rows.extend(std::iter::repeat_n(0.0, dimension)),
            }
        }
        FlatIndex { dimension, rows }
    }

    /// Number of indexed facts.
    pub fn len(&self) -> usize {
        self.rows.len().checked_div(self.dimension).unwrap_or(0)
    }

    /// True when no fact is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cosine of `query` with every fact, by fact position.
    pub fn cosine_all(&self, query: &[f32]) -> Vec<f64> {
        let Some(unit) = normalized(query).filter(|unit| unit.len() == self.dimension) else {
            return vec![0.0; self.len()];
        };
        self.rows
            .chunks_exact(self.dimension)
            .map(|row| {
                let dot: f64 = row
                    .iter()
                    .zip(&unit)
                    .map(|(&x, &y)| f64::from(x) * f64::from(y))
                    .sum();
                dot.clamp(-1.0, 1.0)
            })
            .collect()
    }

    /// The `limit` facts most similar to `query` with cosine >= `floor`, sorted by cosine
    /// descending then fact id ascending.
    pub fn search(&self, query: &[f32], limit: usize, floor: f64) -> Vec<(FactIndex, f64)> {
        let mut hits: Vec<(FactIndex, f64)> = self
            .cosine_all(query)
            .into_iter()
            .enumerate()
            .filter(|&(_, score)| score >= floor)
            .map(|(fact, score)| (fact as FactIndex, score))
            .collect();
        sort_by_score_then_id(&mut hits);
        hits.truncate(limit);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degenerate_vectors_score_zero() {
        let index = FlatIndex::build(2, &[vec![1.0, 1.0], vec![0.0, 0.0], vec![f32::NAN, 1.0]]);
        let scores = index.cosine_all(&[1.0, 0.0]);
        assert!((scores[0] - 0.5f64.sqrt()).abs() < 1e-7);
        assert_eq!(&scores[1..], &[0.0, 0.0]);
        assert_eq!(index.cosine_all(&[0.0, 0.0]), vec![0.0; 3]);
        assert_eq!(index.cosine_all(&[1.0]), vec![0.0; 3], "wrong dimension");
    }

    #[test]
    fn search_applies_floor_limit_and_id_tie_break() {
        let index = FlatIndex::build(
            2,
            &[
                vec![0.0, 1.0],
                vec![1.0, 0.0],
                vec![3.0, 0.0],
                vec![0.0, 0.0],
            ],
        );
        assert_eq!(index.len(), 4);
        let hits = index.search(&[2.0, 0.0], 10, 0.25);
        // Facts 1 and 2 tie at 1.0 -> position order; fact 0 (cos 0) and the zero vector fall below the floor.
        assert_eq!(hits, vec![(1, 1.0), (2, 1.0)]);
        assert_eq!(index.search(&[2.0, 0.0], 1, 0.0), vec![(1, 1.0)]);
    }
}
