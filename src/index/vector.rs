//! Exact vector search over a flat, row-major matrix of fact vectors.
//!
//! Cosine follows chatcli's vector index (chatcli's vector index, `vindex.go`): computed in
//! f64 from the vectors as embedded; 0 for empty, different-length, non-finite or
//! zero-norm vectors. [`cosine`] forms it so that cosines equal in exact arithmetic come
//! out equal, and ties break by fact id as everywhere else.
//!
//! Each row keeps its fact's vector scaled by a power of two, so its norm is in [1, 2):
//! the scaling is exact (short of parts below 2^-126 of the norm), so every cosine is the
//! one of the vector as embedded, and the f32 scan of [`FlatIndex::search_batch`] can
//! neither overflow nor underflow.
//!
//! [`FlatIndex::search_batch`] answers many queries at once, exactly: blocks of queries
//! times blocks of facts by f32 matrix multiply (the `gemm` crate), a running cut-off per
//! query keeping every fact whose f32 cosine is within twice the f32 error bound of the
//! current top `limit`, then the survivors rescored in f64 as [`FlatIndex::search`]
//! scores them. It returns what `search` returns for each query, bit for bit.

use rayon::prelude::*;

use super::{sort_by_score_then_id, FactIndex};

/// At most this many queries per matrix multiply: each block of facts is packed once per
/// query block, so larger blocks reuse it more.
const MAX_QUERY_BLOCK: usize = 256;
/// Facts per matrix multiply.
const FACT_BLOCK: usize = 4096;

/// Fact vectors, each scaled by a power of two, one row per fact.
pub struct FlatIndex {
    dimension: usize,
    rows: Rows,
    /// Each row's squared norm, as [`dot`] computes it (0 for a zero row).
    squared_norms: Vec<f64>,
}

/// Where the matrix lives: built in memory, or mapped from a stored segment.
enum Rows {
    Owned(Vec<f32>),
    Mapped {
        map: memmap2::Mmap,
        /// Byte offset of the first row in the map (a multiple of 4).
        offset: usize,
        values: usize,
    },
}

impl Rows {
    fn as_slice(&self) -> &[f32] {
        match self {
            Rows::Owned(rows) => rows,
            Rows::Mapped {
                map,
                offset,
                values,
            } => {
                let bytes = &map[*offset..*offset + values * 4];
                // SAFETY: the map is page-aligned and `offset` a multiple of 4, so the
                // pointer is aligned for f32; the length was checked against the map when
                // it was made (FlatIndex::from_mapped); every bit pattern is a valid f32;
                // segments are written little-endian and only read on little-endian
                // targets.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<f32>(), *values) }
            }
        }
    }
}

/// A query as the searches use it: its squared norm, and the unit vector the f32 scan
/// multiplies.
struct Query<'a> {
    vector: &'a [f32],
    squared_norm: f64,
    unit: Vec<f32>,
}

impl Query<'_> {
    /// `None` when `vector` has not `dimension` entries, or its norm is zero or not
    /// finite: such a query scores 0 against every fact.
    fn new(vector: &[f32], dimension: usize) -> Option<Query<'_>> {
        if vector.len() != dimension {
            return None;
        }
        let squared_norm = dot(vector, vector);
        if squared_norm == 0.0 || !squared_norm.is_finite() {
            return None;
        }
        let norm = squared_norm.sqrt();
        let unit = vector
            .iter()
            .map(|&value| (f64::from(value) / norm) as f32)
            .collect();
        Some(Query {
            vector,
            squared_norm,
            unit,
        })
    }
}

/// `vector` scaled by the power of two that puts its norm in [1, 2), or `None` when its
/// norm is zero or not finite.
fn scaled(vector: &[f32]) -> Option<Vec<f32>> {
    let norm = dot(vector, vector).sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return None;
    }
    // The norm of f32 values is a normal f64: its exponent field is its binary exponent.
    let exponent = ((norm.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    let scale = f64::from_bits(((1023 - exponent) as u64) << 52);
    Some(
        vector
            .iter()
            .map(|&value| (f64::from(value) * scale) as f32)
            .collect(),
    )
}

/// The cosine of two vectors from their dot product and squared norms, all computed in
/// f64: `sign(dot) x sqrt(dot^2 / (|q|^2 |f|^2))`. The quotient is rounded once, so
/// whenever the three inputs and the two products are exact (as for small integer
/// vectors, such as the `concept` provider's counts), cosines equal in exact arithmetic
/// are equal here; `dot / (|q| |f|)` rounds each square root apart and can split them.
fn cosine(dot: f64, query_squared_norm: f64, fact_squared_norm: f64) -> f64 {
    if fact_squared_norm == 0.0 {
        return 0.0;
    }
    let magnitude = (dot * dot / (query_squared_norm * fact_squared_norm))
        .sqrt()
        .min(1.0);
    if dot < 0.0 {
        -magnitude
    } else {
        magnitude
    }
}

impl FlatIndex {
    /// Builds the index; every vector must have `dimension` entries (checked by the
    /// embedding layer). Zero vectors stay zero and score 0 against everything.
    pub fn build(dimension: usize, vectors: &[Vec<f32>]) -> FlatIndex {
        let mut index = FlatIndex::with_capacity(dimension, vectors.len());
        for vector in vectors {
            index.push(vector);
        }
        index
    }

    /// An empty index with room for `facts` rows, filled with [`FlatIndex::push`], so a
    /// corpus can be embedded chunk by chunk straight into the matrix.
    pub fn with_capacity(dimension: usize, facts: usize) -> FlatIndex {
        FlatIndex {
            dimension,
            rows: Rows::Owned(Vec::with_capacity(dimension * facts)),
            squared_norms: Vec::with_capacity(facts),
        }
    }

    /// Appends the next fact's vector, scaled (a zero row when its norm is zero or not
    /// finite, or its length is not the index's dimension).
    ///
    /// # Panics
    /// On an index mapped from a segment, which is read-only.
    pub fn push(&mut self, vector: &[f32]) {
        let Rows::Owned(rows) = &mut self.rows else {
            panic!("a mapped index is read-only");
        };
        match scaled(vector) {
            Some(row) if row.len() == self.dimension => {
                self.squared_norms.push(dot(&row, &row));
                rows.extend_from_slice(&row);
            }
            _ => {
                self.squared_norms.push(0.0);
                rows.extend(std::iter::repeat_n(0.0, self.dimension));
            }
        }
    }

    /// An index over `facts` rows of `dimension` little-endian f32 values stored in `map`
    /// from byte `offset` on (rows as [`FlatIndex::rows`] returns them), used in place. `None` when the map is too short, `offset`
    /// is not a multiple of 4, or the target is not little-endian.
    pub fn from_mapped(
        dimension: usize,
        facts: usize,
        map: memmap2::Mmap,
        offset: usize,
    ) -> Option<FlatIndex> {
        let values = dimension.checked_mul(facts)?;
        let end = values.checked_mul(4)?.checked_add(offset)?;
        if !cfg!(target_endian = "little") || !offset.is_multiple_of(4) || map.len() < end {
            return None;
        }
        let mut index = FlatIndex {
            dimension,
            rows: Rows::Mapped {
                map,
                offset,
                values,
            },
            squared_norms: Vec::new(),
        };
        index.squared_norms = index
            .rows()
            .chunks_exact(dimension.max(1))
            .map(|row| dot(row, row))
            .collect();
        Some(index)
    }

    /// The vector dimension.
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// The rows, row-major: each fact's vector scaled by a power of two (see the module
    /// documentation), or zeros.
    pub fn rows(&self) -> &[f32] {
        self.rows.as_slice()
    }

    /// Whether the rows are mapped from a stored segment rather than built in memory.
    pub fn is_mapped(&self) -> bool {
        matches!(self.rows, Rows::Mapped { .. })
    }

    /// Number of indexed facts.
    pub fn len(&self) -> usize {
        self.rows().len().checked_div(self.dimension).unwrap_or(0)
    }

    /// True when no fact is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cosine of `query` with every fact, by fact position.
    pub fn cosine_all(&self, query: &[f32]) -> Vec<f64> {
        let Some(query) = Query::new(query, self.dimension) else {
            return vec![0.0; self.len()];
        };
        (0..self.len() as FactIndex)
            .map(|fact| self.cosine(fact, &query))
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

impl FlatIndex {
    /// What [`FlatIndex::search`] returns for each of `queries`, computed a block of
    /// queries at a time. Runs on the current rayon pool.
    pub fn search_batch(
        &self,
        queries: &[&[f32]],
        limit: usize,
        floor: f64,
    ) -> Vec<Vec<(FactIndex, f64)>> {
        let dimension = self.dimension;
        let facts = self.len();
        if facts == 0 || limit == 0 || dimension == 0 {
            return vec![Vec::new(); queries.len()];
        }
        let margin = scan_margin(dimension);
        let prepared: Vec<Option<Query>> = queries
            .iter()
            .map(|query| Query::new(query, dimension))
            .collect();
        let positions: Vec<usize> = (0..queries.len()).collect();
        // At least two blocks per thread, so the threads finish together.
        let query_block = queries
            .len()
            .div_ceil(2 * rayon::current_num_threads())
            .clamp(1, MAX_QUERY_BLOCK);
        positions
            .par_chunks(query_block)
            .flat_map_iter(|block| {
                let mut matrix = vec![0f32; block.len() * dimension];
                for (row, &query) in block.iter().enumerate() {
                    if let Some(query) = &prepared[query] {
                        matrix[row * dimension..(row + 1) * dimension].copy_from_slice(&query.unit);
                    }
                }
                let mut candidates: Vec<Vec<(FactIndex, f32)>> = vec![Vec::new(); block.len()];
                let mut cutoffs: Vec<f32> = vec![(floor as f32) - margin; block.len()];
                let mut scores = vec![0f32; block.len() * FACT_BLOCK];
                let mut inverse_norms = vec![0f32; FACT_BLOCK];
                for first in (0..facts).step_by(FACT_BLOCK) {
                    let width = FACT_BLOCK.min(facts - first);
                    // SAFETY: lhs is block.len() x dimension (row stride `dimension`); rhs is
                    // dimension x width, column c being fact first + c's row of `rows`;
                    // dst is block.len() x width with row stride `width`, inside `scores`.
                    unsafe {
                        gemm::gemm(
                            block.len(),
                            width,
                            dimension,
                            scores.as_mut_ptr(),
                            1,
                            width as isize,
                            false,
                            matrix.as_ptr(),
                            1,
                            dimension as isize,
                            self.rows()[first * dimension..].as_ptr(),
                            dimension as isize,
                            1,
                            0.0,
                            1.0,
                            false,
                            false,
                            false,
                            gemm::Parallelism::None,
                        );
                    }
                    for (inverse, &squared_norm) in inverse_norms
                        .iter_mut()
                        .zip(&self.squared_norms[first..first + width])
                    {
                        *inverse = match squared_norm {
                            0.0 => 0.0,
                            _ => (1.0 / squared_norm.sqrt()) as f32,
                        };
                    }
                    for (row, kept) in candidates.iter_mut().enumerate() {
                        let cutoff = cutoffs[row];
                        let row_scores = &scores[row * width..(row + 1) * width];
                        for (offset, (&score, &inverse)) in
                            row_scores.iter().zip(&inverse_norms).enumerate()
                        {
                            let score = score * inverse;
                            if score >= cutoff {
                                kept.push(((first + offset) as FactIndex, score));
                            }
                        }
                        if kept.len() >= 2 * limit.max(512) {
                            cutoffs[row] = prune(kept, limit, margin).max(cutoff);
                        }
                    }
                }
                block
                    .iter()
                    .zip(candidates)
                    .map(|(&query, mut kept)| match &prepared[query] {
                        // A zero or mismatched query scores 0 against every fact.
                        None if floor <= 0.0 => (0..limit.min(facts) as FactIndex)
                            .map(|fact| (fact, 0.0))
                            .collect(),
                        None => Vec::new(),
                        Some(query) => {
                            prune(&mut kept, limit, margin);
                            let mut hits: Vec<(FactIndex, f64)> = kept
                                .into_iter()
                                .map(|(fact, _)| (fact, self.cosine(fact, query)))
                                .filter(|&(_, score)| score >= floor)
                                .collect();
                            sort_by_score_then_id(&mut hits);
                            hits.truncate(limit);
                            hits
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The cosine of fact `fact` with `query`, from the rows in f64.
    fn cosine(&self, fact: FactIndex, query: &Query) -> f64 {
        let fact = fact as usize;
        let row = &self.rows()[fact * self.dimension..(fact + 1) * self.dimension];
        cosine(
            dot(query.vector, row),
            query.squared_norm,
            self.squared_norms[fact],
        )
    }
}

/// How far below a query's running `limit`-th best f32 cosine the scan keeps facts, for
/// vectors of `dimension` entries: twice a bound on |f32 cosine - f64 cosine|, so every
/// fact whose f64 cosine reaches the final `limit`-th best is kept. With u = 2^-24 and a
/// row's norm r, the f32 product of the unit query with the row errs by at most
/// dimension x u x r (one rounding per multiply-add, summing |q_i f_i| <= r); rounding
/// the unit query adds u x r, and the inverse norm and the product by it u each once the
/// sum is divided by r. That is at most (dimension + 4) x u, doubled and rounded up.
fn scan_margin(dimension: usize) -> f32 {
    (2 * dimension + 16) as f32 * f32::EPSILON / 2.0
}

/// Lanes of [`dot`]: independent f64 sums the compiler turns into one vector register.
const LANES: usize = 8;

/// The dot product of `a` and `b` in f64: element i is added to lane i mod 8, the lanes
/// are summed pairwise. The order is fixed, so the result is the same on every machine
/// and in every search path.
fn dot(a: &[f32], b: &[f32]) -> f64 {
    let mut lanes = [0f64; LANES];
    let chunks = a.len() / LANES * LANES;
    for (x, y) in a[..chunks]
        .chunks_exact(LANES)
        .zip(b[..chunks].chunks_exact(LANES))
    {
        for lane in 0..LANES {
            lanes[lane] += f64::from(x[lane]) * f64::from(y[lane]);
        }
    }
    for (lane, (&x, &y)) in a[chunks..].iter().zip(&b[chunks..]).enumerate() {
        lanes[lane] += f64::from(x) * f64::from(y);
    }
    ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6]))
        + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]))
}

/// Keeps the candidates whose f32 score is within `margin` of the `limit`-th best and
/// returns that cut-off (unchanged candidates and `-inf` when there are fewer).
fn prune(kept: &mut Vec<(FactIndex, f32)>, limit: usize, margin: f32) -> f32 {
    if kept.len() <= limit {
        return f32::NEG_INFINITY;
    }
    let mut scores: Vec<f32> = kept.iter().map(|&(_, score)| score).collect();
    let (_, &mut nth, _) = scores.select_nth_unstable_by(limit - 1, |a, b| b.total_cmp(a));
    let cutoff = nth - margin;
    kept.retain(|&(_, score)| score >= cutoff);
    cutoff
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

    #[test]
    fn cosines_equal_in_exact_arithmetic_tie_and_break_by_id() {
        // Query (1, 2, 3), |q|^2 = 14; cosine^2 = dot^2 / (14 |f|^2). Facts 0 and 1 are
        // permutations, dot 13 and |f|^2 14: cosine 13/14. Facts 2, 3 and 4 are (0, 0, 1),
        // (2, 2, 1) and (3, 0, 4) scaled by 2^-3: cosine^2 3^2 / (14 x 1), 9^2 / (14 x 9)
        // and 15^2 / (14 x 25), all 9/14. Fact 5 is fact 1 negated: -13/14.
        let index = FlatIndex::build(
            3,
            &[
                vec![1.0, 3.0, 2.0],
                vec![2.0, 1.0, 3.0],
                vec![0.0, 0.0, 1.0],
                vec![2.0, 2.0, 1.0],
                vec![0.375, 0.0, 0.5],
                vec![-2.0, -1.0, -3.0],
            ],
        );
        let query = [1.0, 2.0, 3.0];
        let hits = index.search(&query, 10, f64::NEG_INFINITY);
        assert_eq!(
            hits.iter().map(|hit| hit.0).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 5]
        );
        let scores: Vec<f64> = hits.iter().map(|hit| hit.1).collect();
        assert_eq!(scores[0].to_bits(), scores[1].to_bits());
        assert!((scores[0] - 13.0 / 14.0).abs() < 1e-15);
        assert_eq!(scores[2].to_bits(), scores[3].to_bits());
        assert_eq!(scores[2].to_bits(), scores[4].to_bits());
        assert!((scores[2] - 3.0 / 14f64.sqrt()).abs() < 1e-15);
        assert_eq!(scores[5], -scores[0]);
        assert_eq!(
            index.search_batch(&[&query], 10, f64::NEG_INFINITY)[0],
            hits
        );
    }

    /// A seeded pseudo-random vector in [-1, 1)^dimension.
    fn vector(seed: u64, dimension: usize) -> Vec<f32> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..dimension)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    #[test]
    fn batched_search_equals_the_one_query_search() {
        let dimension = 48;
        let mut facts: Vec<Vec<f32>> = (0..9_000).map(|seed| vector(seed, dimension)).collect();
        // Exact duplicates (ties broken by id), a zero vector and a wrong-length query.
        facts[8_000] = facts[17].clone();
        facts[4_100] = facts[17].clone();
        facts[5] = vec![0.0; dimension];
        let index = FlatIndex::build(dimension, &facts);
        let mut queries: Vec<Vec<f32>> = (0..150)
            .map(|seed| vector(100_000 + seed, dimension))
            .collect();
        queries[3] = facts[17].clone();
        queries[7] = vec![0.0; dimension];
        queries[9] = vec![1.0; dimension - 1];
        let references: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
        for (limit, floor) in [
            (10, -1.0),
            (1000, 0.1),
            (12, 0.25),
            (20_000, f64::NEG_INFINITY),
            (1, 0.0),
        ] {
            let batched = index.search_batch(&references, limit, floor);
            for (query, hits) in queries.iter().zip(&batched) {
                assert_eq!(
                    *hits,
                    index.search(query, limit, floor),
                    "limit {limit}, floor {floor}"
                );
            }
        }
        let ties = &index.search_batch(&references[3..4], 3, 0.0)[0];
        assert_eq!(
            ties.iter().map(|hit| hit.0).collect::<Vec<_>>(),
            vec![17, 4_100, 8_000]
        );
    }
}
