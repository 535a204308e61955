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
//! [`FlatIndex::search_batch`] answers many queries at once, exactly, in two passes over
//! a block of queries. The screen computes every query's cosine with every fact in low
//! precision: bfloat16 products summed in f32 on CPUs with AVX-512 BF16 (`avx512`),
//! else an f32 matrix multiply (the `gemm` crate). It keeps, per query, every fact whose
//! screening cosine is within twice the screen's error bound of the query's `limit`-th
//! best, so every fact of the final top is kept. The rescoring then computes the kept
//! facts' cosines in f64 as [`FlatIndex::search`] does, a block of facts at a time for
//! all the queries, so each row is read from memory once per block of queries. It
//! returns what `search` returns for each query, bit for bit.

use rayon::prelude::*;

use super::{sort_by_score_then_id, top_by_score_then_id, FactIndex};

/// At most this many queries per matrix multiply: each block of facts is packed once per
/// query block, so larger blocks reuse it more.
const MAX_QUERY_BLOCK: usize = 256;
/// Facts per matrix multiply.
const FACT_BLOCK: usize = 4096;
/// Facts per step of the rescoring: their rows (1.5 MiB at 384 dimensions) stay in
/// cache while every query's candidates among them are rescored.
const RESCORE_BLOCK: usize = 1024;

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
    /// `vector` in f64 (exactly), for the rescoring's four-at-a-time dot products.
    wide: Vec<f64>,
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
            wide: vector.iter().map(|&value| f64::from(value)).collect(),
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
        self.search_queries_by(Scan::for_this_cpu(), &uniform_batch(queries, limit), floor)
    }

    /// What [`FlatIndex::search`] returns for each of `queries` (with its own limit),
    /// computed a block of queries at a time. A query that is the weighted sum of others
    /// of its block (see [`BatchQuery::sum_of`]) has its screening cosines derived from
    /// theirs. Runs on the current rayon pool.
    pub fn search_queries(&self, queries: &[BatchQuery], floor: f64) -> Vec<Vec<(FactIndex, f64)>> {
        self.search_queries_by(Scan::for_this_cpu(), queries, floor)
    }

    /// [`FlatIndex::search_queries`] with the given first pass.
    fn search_queries_by(
        &self,
        scan: Scan,
        queries: &[BatchQuery],
        floor: f64,
    ) -> Vec<Vec<(FactIndex, f64)>> {
        let dimension = self.dimension;
        let facts = self.len();
        if facts == 0 || dimension == 0 {
            return vec![Vec::new(); queries.len()];
        }
        let prepared: Vec<Option<Query>> = queries
            .iter()
            .map(|query| Query::new(query.vector, dimension))
            .collect();
        let positions: Vec<usize> = (0..queries.len()).collect();
        // At least two blocks per thread, so the threads finish together.
        let query_block = queries
            .len()
            .div_ceil(2 * rayon::current_num_threads())
            .clamp(1, MAX_QUERY_BLOCK);
        positions
            .par_chunks(query_block)
            .flat_map_iter(|block| self.search_block(scan, block, queries, &prepared, floor))
            .collect()
    }

    /// The hits of the queries at `block`'s positions in `queries` (`prepared` as
    /// [`Query::new`] made them), searched together.
    fn search_block(
        &self,
        scan: Scan,
        block: &[usize],
        queries: &[BatchQuery],
        prepared: &[Option<Query>],
        floor: f64,
    ) -> Vec<Vec<(FactIndex, f64)>> {
        let error_bound = scan.error_bound(self.dimension);
        let block_queries: Vec<Screened> = block
            .iter()
            .map(|&position| Screened::new(position, block, queries, prepared, error_bound))
            .collect();
        let candidates = self.screen(scan, &block_queries, floor);
        let prepared_block: Vec<Option<&Query>> = block_queries
            .iter()
            .map(|screened| screened.query)
            .collect();
        let mut hits = self.rescore(&prepared_block, &candidates, floor);
        for (screened, hits) in block_queries.iter().zip(&mut hits) {
            let limit = screened.limit;
            match screened.query {
                Some(_) => top_by_score_then_id(hits, limit),
                // A zero or mismatched query scores 0 against every fact.
                None if floor <= 0.0 => {
                    *hits = (0..limit.min(self.len()) as FactIndex)
                        .map(|fact| (fact, 0.0))
                        .collect();
                }
                None => {}
            }
        }
        hits
    }

    /// The first pass over every fact for a block of queries: for each query, in fact
    /// order, every fact whose screening cosine is within its margin (twice its error
    /// bound) of the query's `limit`-th best screening cosine and not below `floor` less
    /// the margin, so every fact of the query's final top is among them. A missing
    /// query keeps nothing. The scanner multiplies the queries that are not derived
    /// (the lanes); a derived query's screening cosines are its weighted sums of its
    /// parts' lanes.
    fn screen(&self, scan: Scan, queries: &[Screened], floor: f64) -> Vec<Vec<(FactIndex, f32)>> {
        let dimension = self.dimension;
        let facts = self.len();
        // Screen order: the scanned queries (the scanner's lanes), then the derived ones.
        let order: Vec<usize> = (0..queries.len())
            .filter(|&query| queries[query].derived.is_none())
            .chain((0..queries.len()).filter(|&query| queries[query].derived.is_some()))
            .collect();
        let lanes = queries
            .iter()
            .filter(|query| query.derived.is_none())
            .count();
        let mut lane_of = vec![0; queries.len()];
        for (slot, &query) in order.iter().enumerate() {
            lane_of[query] = slot;
        }
        let mut matrix = vec![0f32; lanes * dimension];
        for (lane, &query) in order[..lanes].iter().enumerate() {
            if let Some(query) = queries[query].query {
                matrix[lane * dimension..(lane + 1) * dimension].copy_from_slice(&query.unit);
            }
        }
        // Each derived query's parts by lane, with their weights.
        let parts_by_lane: Vec<Vec<(usize, f32)>> = order[lanes..]
            .iter()
            .map(|&query| {
                let parts = queries[query].derived.as_deref().expect("derived");
                parts
                    .iter()
                    .map(|&(part, weight)| (lane_of[part], weight))
                    .collect()
            })
            .collect();
        let mut scanner = scan.scanner(matrix, lanes, dimension);
        let mut candidates: Vec<Vec<(FactIndex, f32)>> = vec![Vec::new(); order.len()];
        let margins: Vec<f32> = order.iter().map(|&query| queries[query].margin).collect();
        let limits: Vec<usize> = order.iter().map(|&query| queries[query].limit).collect();
        let mut cutoffs: Vec<f32> = order
            .iter()
            .zip(&margins)
            .map(|(&query, &margin)| match queries[query].query {
                Some(_) => round_down(floor - f64::from(margin)),
                None => f32::INFINITY,
            })
            .collect();
        // A query's candidates are pruned whenever they have grown by max(limit, 512).
        let mut prune_at: Vec<usize> = limits.iter().map(|&limit| limit + limit.max(512)).collect();
        let fact_block = scanner.fact_block();
        let lane_stride = scanner.lane_stride();
        // The lanes' screening cosines, fact by fact, when some query is derived.
        let mut lane_scores = if parts_by_lane.is_empty() {
            Vec::new()
        } else {
            vec![0f32; fact_block * lane_stride]
        };
        // The bfloat16 scan's CPUs sum 16 derived queries at a time; the portable pass
        // sums them fact by fact in `derived_sums`.
        #[cfg(target_arch = "x86_64")]
        let derived_lanes = (scan == Scan::Bf16 && !parts_by_lane.is_empty())
            .then(|| super::avx512::DerivedLanes::new(&parts_by_lane));
        #[cfg(not(target_arch = "x86_64"))]
        let derived_lanes: Option<()> = None;
        let mut derived_sums = match derived_lanes {
            None if !parts_by_lane.is_empty() => vec![0f32; fact_block],
            _ => Vec::new(),
        };
        let mut inverse_norms = vec![0f32; fact_block];
        for first in (0..facts).step_by(fact_block) {
            let width = fact_block.min(facts - first);
            for (inverse, &squared_norm) in inverse_norms
                .iter_mut()
                .zip(&self.squared_norms[first..first + width])
            {
                *inverse = match squared_norm {
                    0.0 => 0.0,
                    _ => (1.0 / squared_norm.sqrt()) as f32,
                };
            }
            let (lane_candidates, derived_candidates) = candidates.split_at_mut(lanes);
            scanner.scan(
                &self.rows()[first * dimension..(first + width) * dimension],
                &inverse_norms[..width],
                first,
                &cutoffs[..lanes],
                lane_candidates,
                (!lane_scores.is_empty()).then_some(lane_scores.as_mut_slice()),
            );
            match &derived_lanes {
                _ if parts_by_lane.is_empty() => {}
                #[cfg(target_arch = "x86_64")]
                Some(derived_lanes) => derived_lanes.scan(
                    &lane_scores,
                    lane_stride,
                    width,
                    first,
                    &cutoffs[lanes..],
                    derived_candidates,
                ),
                _ => derive_scores(
                    &parts_by_lane,
                    &lane_scores[..width * lane_stride],
                    lane_stride,
                    first,
                    &cutoffs[lanes..],
                    &mut derived_sums,
                    derived_candidates,
                ),
            }
            for (((kept, cutoff), prune_at), (&limit, &margin)) in candidates
                .iter_mut()
                .zip(&mut cutoffs)
                .zip(&mut prune_at)
                .zip(limits.iter().zip(&margins))
            {
                if kept.len() >= *prune_at {
                    *cutoff = prune(kept, limit, margin).max(*cutoff);
                    *prune_at = kept.len() + limit.max(512);
                }
            }
        }
        for ((kept, &limit), &margin) in candidates.iter_mut().zip(&limits).zip(&margins) {
            prune(kept, limit, margin);
        }
        // Back in block order.
        let mut in_order: Vec<Option<Vec<(FactIndex, f32)>>> =
            candidates.into_iter().map(Some).collect();
        (0..queries.len())
            .map(|query| in_order[lane_of[query]].take().expect("each slot once"))
            .collect()
    }

    /// Each query's `candidates` with their f64 cosines, as [`FlatIndex::cosine`]
    /// computes them, those below `floor` dropped. The candidates are visited a block
    /// of facts at a time across the whole block of queries, so each fact's row is read
    /// from memory once for all the queries that kept it.
    fn rescore(
        &self,
        queries: &[Option<&Query>],
        candidates: &[Vec<(FactIndex, f32)>],
        floor: f64,
    ) -> Vec<Vec<(FactIndex, f64)>> {
        let mut hits: Vec<Vec<(FactIndex, f64)>> = candidates
            .iter()
            .map(|kept| Vec::with_capacity(kept.len()))
            .collect();
        let mut next = vec![0usize; queries.len()];
        let mut pairs: Vec<(u32, FactIndex)> = Vec::new();
        for end in (RESCORE_BLOCK..self.len() + RESCORE_BLOCK).step_by(RESCORE_BLOCK) {
            pairs.clear();
            for (row, (kept, next)) in candidates.iter().zip(&mut next).enumerate() {
                while let Some(&(fact, _)) =
                    kept.get(*next).filter(|(fact, _)| (*fact as usize) < end)
                {
                    pairs.push((row as u32, fact));
                    *next += 1;
                }
            }
            self.cosines(queries, &pairs, |row, fact, score| {
                if score >= floor {
                    hits[row as usize].push((fact, score));
                }
            });
        }
        hits
    }

    /// Calls `each(row, fact, cosine)` for every `(row, fact)` of `pairs`, the cosine of
    /// fact `fact` with query `queries[row]` as [`FlatIndex::cosine`] computes it; four
    /// pairs at a time on CPUs with AVX-512 F and VL.
    fn cosines(
        &self,
        queries: &[Option<&Query>],
        pairs: &[(u32, FactIndex)],
        mut each: impl FnMut(u32, FactIndex, f64),
    ) {
        let query_of = |row: u32| queries[row as usize].expect("only scored queries keep facts");
        #[cfg(target_arch = "x86_64")]
        if super::avx512::has_f64_lanes() {
            let mut groups = pairs.chunks_exact(4);
            for group in &mut groups {
                let operands = [0, 1, 2, 3].map(|member| {
                    (
                        query_of(group[member].0).wide.as_slice(),
                        self.row(group[member].1),
                    )
                });
                // SAFETY: has_f64_lanes() holds.
                let lanes = unsafe { super::avx512::dot_lanes(operands) };
                for (&(row, fact), lanes) in group.iter().zip(lanes) {
                    let query = query_of(row);
                    let squared_norm = self.squared_norms[fact as usize];
                    each(
                        row,
                        fact,
                        cosine(sum_lanes(lanes), query.squared_norm, squared_norm),
                    );
                }
            }
            for &(row, fact) in groups.remainder() {
                each(row, fact, self.cosine(fact, query_of(row)));
            }
            return;
        }
        for &(row, fact) in pairs {
            each(row, fact, self.cosine(fact, query_of(row)));
        }
    }

    /// Fact `fact`'s row.
    fn row(&self, fact: FactIndex) -> &[f32] {
        let fact = fact as usize;
        &self.rows()[fact * self.dimension..(fact + 1) * self.dimension]
    }

    /// The cosine of fact `fact` with `query`, from the rows in f64.
    fn cosine(&self, fact: FactIndex, query: &Query) -> f64 {
        cosine(
            dot(query.vector, self.row(fact)),
            query.squared_norm,
            self.squared_norms[fact as usize],
        )
    }
}

/// One vector of [`FlatIndex::search_queries`]' batch.
pub struct BatchQuery<'a> {
    pub vector: &'a [f32],
    /// The hits kept, at most.
    pub limit: usize,
    /// When `vector` is, up to rounding, a weighted sum of other vectors of the batch:
    /// their positions in the batch and their weights (the mean of unit vectors `v_i`
    /// of `n` vectors is the sum of `v_i` weighted `1 / (n |v_i|)`). Empty otherwise.
    /// The screen can then derive this vector's screening cosines from theirs instead
    /// of multiplying it with every fact. The claim is checked: what `vector` differs
    /// from the sum by widens its screen's margin, so the search stays exact.
    pub sum_of: &'a [(usize, f64)],
}

/// `queries` as a batch of plain queries, each keeping `limit` hits.
fn uniform_batch<'a>(queries: &[&'a [f32]], limit: usize) -> Vec<BatchQuery<'a>> {
    queries
        .iter()
        .map(|&vector| BatchQuery {
            vector,
            limit,
            sum_of: &[],
        })
        .collect()
}

/// A derived query's screening cosine is a weighted sum of at most this many lanes.
const MAX_DERIVED_PARTS: usize = 8;
/// A derived query's error bound is the scan's times the sum of its lanes' weights
/// (their cosines' weights in its own, at least 1 for a mean of unit vectors): past this,
/// its wider margin would keep more facts than scanning it saves.
const MAX_DERIVED_GAIN: f64 = 4.0;

/// A query of a block as [`FlatIndex::screen`] treats it.
struct Screened<'q> {
    query: Option<&'q Query<'q>>,
    limit: usize,
    /// Twice the bound on |screening cosine - f64 cosine|.
    margin: f32,
    /// For a derived query: the queries of the block (by position in it) whose screening
    /// cosines, weighted, are its own.
    derived: Option<Vec<(usize, f32)>>,
}

impl<'q> Screened<'q> {
    /// Query `position` of `queries`, screened with the queries at `block`'s positions,
    /// by a scan whose screening cosines err by at most `error_bound`.
    fn new(
        position: usize,
        block: &[usize],
        queries: &[BatchQuery],
        prepared: &'q [Option<Query<'q>>],
        error_bound: f32,
    ) -> Screened<'q> {
        let query = prepared[position].as_ref();
        let scanned = Screened {
            query,
            limit: queries[position].limit,
            margin: 2.0 * error_bound,
            derived: None,
        };
        match query
            .and_then(|query| derivation(query, queries[position].sum_of, block, queries, prepared))
        {
            Some(Derivation {
                parts,
                gain,
                residual,
            }) => {
                // Each part's screening cosine s_i errs by at most e from its cosine c_i,
                // and the query's cosine is sum(a_i c_i) + <r, f> / (|q| |f|), r the
                // residual of the sum: so sum(a_i s_i) errs by at most gain x e +
                // |r| / |q|, plus the f32 roundings of the weights and of the sum (at
                // most (parts + 4) x 2^-23 x gain, each |s_i| < 2) and the f64 ones of
                // the weights and the residual (well under 2^-40).
                let slack = 2f64.powi(-40);
                let bound = gain
                    * (f64::from(error_bound) + (parts.len() + 4) as f64 * 2f64.powi(-23) + slack)
                    + residual * (1.0 + slack)
                    + slack;
                Screened {
                    margin: round_up(2.0 * bound),
                    derived: Some(parts),
                    ..scanned
                }
            }
            None => scanned,
        }
    }
}

/// How a query's screening cosines derive from other queries' lanes.
struct Derivation {
    /// The parts, by position in the block, with the weights `a_i = w_i |v_i| / |q|` of
    /// their cosines in the query's.
    parts: Vec<(usize, f32)>,
    /// The sum of the weights' magnitudes.
    gain: f64,
    /// The norm of what the query differs from the weighted sum by, over |q|.
    residual: f64,
}

/// How `query` derives from the queries `sum_of` names, when they are all scanned
/// queries of `block` (so their lanes are computed with it) and the derivation saves
/// work.
fn derivation(
    query: &Query,
    sum_of: &[(usize, f64)],
    block: &[usize],
    queries: &[BatchQuery],
    prepared: &[Option<Query>],
) -> Option<Derivation> {
    if sum_of.is_empty() || sum_of.len() > MAX_DERIVED_PARTS {
        return None;
    }
    let norm = query.squared_norm.sqrt();
    let mut residual: Vec<f64> = query.wide.clone();
    let mut parts = Vec::with_capacity(sum_of.len());
    let mut gain = 0.0;
    for &(position, weight) in sum_of {
        let at = block.iter().position(|&member| member == position)?;
        if !queries[position].sum_of.is_empty() {
            return None;
        }
        let part = prepared[position].as_ref()?;
        for (left, &value) in residual.iter_mut().zip(part.vector) {
            *left -= weight * f64::from(value);
        }
        let cosine_weight = weight * part.squared_norm.sqrt() / norm;
        gain += cosine_weight.abs();
        parts.push((at, cosine_weight as f32));
    }
    let residual = residual.iter().map(|left| left * left).sum::<f64>().sqrt() / norm;
    (gain.is_finite() && gain <= MAX_DERIVED_GAIN && residual.is_finite()).then_some(Derivation {
        parts,
        gain,
        residual,
    })
}

/// Appends to `candidates[d]` each fact `first + i` whose screening cosine with derived
/// query d, the weighted sum of its `parts`' lane scores (fact i's at
/// `lane_scores[i * lane_stride..]`) formed in the parts' order, is at least
/// `cutoffs[d]`. Part by part over the facts (`sums` is room for them), so the facts'
/// sums are independent.
fn derive_scores(
    parts: &[Vec<(usize, f32)>],
    lane_scores: &[f32],
    lane_stride: usize,
    first: usize,
    cutoffs: &[f32],
    sums: &mut [f32],
    candidates: &mut [Vec<(FactIndex, f32)>],
) {
    let width = lane_scores.len() / lane_stride;
    for ((parts, kept), &cutoff) in parts.iter().zip(candidates).zip(cutoffs) {
        let sums = &mut sums[..width];
        sums.fill(0.0);
        for &(lane, weight) in parts {
            for (sum, scores) in sums.iter_mut().zip(lane_scores.chunks_exact(lane_stride)) {
                *sum += weight * scores[lane];
            }
        }
        for (offset, &score) in sums.iter().enumerate() {
            if score >= cutoff {
                kept.push(((first + offset) as FactIndex, score));
            }
        }
    }
}

/// How [`FlatIndex::search_batch`] screens facts before rescoring the survivors in f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// f32 matrix multiply (the `gemm` crate), on every CPU.
    F32,
    /// bfloat16 products summed in f32 (`avx512`), on CPUs with AVX-512 BF16.
    #[cfg(target_arch = "x86_64")]
    Bf16,
}

impl Scan {
    /// The fastest scan this CPU runs.
    fn for_this_cpu() -> Scan {
        #[cfg(target_arch = "x86_64")]
        if super::avx512::available() {
            return Scan::Bf16;
        }
        Scan::F32
    }

    /// This scan's bound on |screening cosine - f64 cosine| for vectors of `dimension`
    /// entries.
    fn error_bound(self, dimension: usize) -> f32 {
        match self {
            Scan::F32 => f32_error_bound(dimension),
            #[cfg(target_arch = "x86_64")]
            Scan::Bf16 => super::avx512::error_bound(dimension),
        }
    }

    /// A scanner for one block of `queries` unit queries (`matrix`, row-major).
    fn scanner(self, matrix: Vec<f32>, queries: usize, dimension: usize) -> Scanner {
        match self {
            Scan::F32 => Scanner::F32 {
                matrix,
                queries,
                scores: vec![0f32; queries * FACT_BLOCK],
            },
            #[cfg(target_arch = "x86_64")]
            Scan::Bf16 => Scanner::Bf16(super::avx512::PackedQueries::new(
                &matrix, queries, dimension,
            )),
        }
    }
}

/// One block of queries, ready to be screened against blocks of facts.
enum Scanner {
    F32 {
        /// The unit queries, row-major.
        matrix: Vec<f32>,
        queries: usize,
        /// Queries x facts of one fact block.
        scores: Vec<f32>,
    },
    #[cfg(target_arch = "x86_64")]
    Bf16(super::avx512::PackedQueries),
}

impl Scanner {
    /// Entries per fact in the lane scores [`Scanner::scan`] writes: the lanes, padded.
    fn lane_stride(&self) -> usize {
        match self {
            Scanner::F32 { queries, .. } => *queries,
            #[cfg(target_arch = "x86_64")]
            Scanner::Bf16(packed) => packed.lane_stride(),
        }
    }

    /// Facts per call of [`Scanner::scan`].
    fn fact_block(&self) -> usize {
        match self {
            Scanner::F32 { .. } => FACT_BLOCK,
            #[cfg(target_arch = "x86_64")]
            Scanner::Bf16(_) => super::avx512::FACT_BLOCK,
        }
    }

    /// Appends to `candidates[j]` each fact `first + i` (its f32 row in `rows`, the
    /// inverse of its norm `inverse_norms[i]`) whose screening cosine with query j is at
    /// least `cutoffs[j]`, with that cosine; and, given `lane_scores`, writes fact i's
    /// screening cosine with query j at `lane_scores[i * lane_stride + j]`.
    fn scan(
        &mut self,
        rows: &[f32],
        inverse_norms: &[f32],
        first: usize,
        cutoffs: &[f32],
        candidates: &mut [Vec<(FactIndex, f32)>],
        mut lane_scores: Option<&mut [f32]>,
    ) {
        match self {
            Scanner::F32 { matrix, scores, .. } => {
                let queries = candidates.len();
                let width = inverse_norms.len();
                let dimension = rows.len() / width;
                // SAFETY: lhs is queries x dimension (row stride `dimension`); rhs is
                // dimension x width, column c being row c of `rows`; dst is queries x
                // width with row stride `width`, inside `scores`.
                unsafe {
                    gemm::gemm(
                        queries,
                        width,
                        dimension,
                        scores.as_mut_ptr(),
                        1,
                        width as isize,
                        false,
                        matrix.as_ptr(),
                        1,
                        dimension as isize,
                        rows.as_ptr(),
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
                for (row, (kept, &cutoff)) in candidates.iter_mut().zip(cutoffs).enumerate() {
                    let row_scores = &scores[row * width..(row + 1) * width];
                    for (offset, (&score, &inverse)) in
                        row_scores.iter().zip(inverse_norms).enumerate()
                    {
                        let score = score * inverse;
                        if let Some(lane_scores) = lane_scores.as_deref_mut() {
                            lane_scores[offset * queries + row] = score;
                        }
                        if score >= cutoff {
                            kept.push(((first + offset) as FactIndex, score));
                        }
                    }
                }
            }
            #[cfg(target_arch = "x86_64")]
            Scanner::Bf16(packed) => {
                packed.scan(rows, inverse_norms, first, cutoffs, candidates, lane_scores)
            }
        }
    }
}

/// A bound on |f32 cosine - f64 cosine| for vectors of `dimension` entries. With
/// u = 2^-24 and a row's norm r, the f32 product of the unit query with the row errs by
/// at most dimension x u x r (one rounding per multiply-add, summing |q_i f_i| <= r);
/// rounding the unit query adds u x r, and the inverse norm and the product by it u
/// each once the sum is divided by r. That is at most (dimension + 4) x u, rounded up
/// to (dimension + 8) x u.
fn f32_error_bound(dimension: usize) -> f32 {
    (dimension + 8) as f32 * f32::EPSILON / 2.0
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
    sum_lanes(lanes)
}

/// The lanes of [`dot`] summed pairwise, in a fixed order.
fn sum_lanes(lanes: [f64; LANES]) -> f64 {
    ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6]))
        + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]))
}

/// Keeps the candidates whose screening cosine is within `margin` of the `limit`-th
/// best and returns that cut-off, rounded down to f32 (unchanged candidates and `-inf`
/// when there are fewer; none and `inf` when `limit` is 0).
fn prune(kept: &mut Vec<(FactIndex, f32)>, limit: usize, margin: f32) -> f32 {
    if limit == 0 {
        kept.clear();
        return f32::INFINITY;
    }
    if kept.len() <= limit {
        return f32::NEG_INFINITY;
    }
    // Selected as integers that order as the scores do.
    let mut keys: Vec<u32> = kept.iter().map(|&(_, score)| ordered_bits(score)).collect();
    let position = keys.len() - limit;
    let (_, &mut nth, _) = keys.select_nth_unstable(position);
    let nth = if nth & 0x8000_0000 != 0 {
        f32::from_bits(nth & 0x7fff_ffff)
    } else {
        f32::from_bits(!nth)
    };
    let cutoff = round_down(f64::from(nth) - f64::from(margin));
    kept.retain(|&(_, score)| score >= cutoff);
    cutoff
}

/// `value`'s bits as an integer that orders as [`f32::total_cmp`] orders the values.
fn ordered_bits(value: f32) -> u32 {
    let bits = value.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The smallest f32 at least `value`.
fn round_up(value: f64) -> f32 {
    let rounded = value as f32;
    if f64::from(rounded) < value {
        rounded.next_up()
    } else {
        rounded
    }
}

/// The largest f32 at most `value` (`-inf` below f32's range).
fn round_down(value: f64) -> f32 {
    let rounded = value as f32;
    if f64::from(rounded) > value {
        rounded.next_down()
    } else {
        rounded
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

    /// [`FlatIndex::search_batch`] with the given first pass.
    fn search_batch_by(
        index: &FlatIndex,
        scan: Scan,
        queries: &[&[f32]],
        limit: usize,
        floor: f64,
    ) -> Vec<Vec<(FactIndex, f64)>> {
        index.search_queries_by(scan, &uniform_batch(queries, limit), floor)
    }

    /// Every first pass this CPU runs.
    fn scans() -> Vec<Scan> {
        let mut scans = vec![Scan::F32];
        if Scan::for_this_cpu() != Scan::F32 {
            scans.push(Scan::for_this_cpu());
        }
        scans
    }

    #[test]
    fn batched_search_equals_the_one_query_search() {
        // An even and an odd dimension (the bfloat16 pass pads pairs, the rescoring
        // has a tail of 5).
        for dimension in [48, 37] {
            let mut facts: Vec<Vec<f32>> = (0..9_000).map(|seed| vector(seed, dimension)).collect();
            // Exact duplicates (ties broken by id), a zero vector, and facts that differ
            // from fact 17 by less than bfloat16 can tell apart.
            facts[8_000] = facts[17].clone();
            facts[4_100] = facts[17].clone();
            facts[5] = vec![0.0; dimension];
            for near in 100..300 {
                facts[near] = facts[17].clone();
                facts[near][near % dimension] *= 1.0 + (near - 99) as f32 * 1e-5;
            }
            let index = FlatIndex::build(dimension, &facts);
            let mut queries: Vec<Vec<f32>> = (0..150)
                .map(|seed| vector(100_000 + seed, dimension))
                .collect();
            queries[3] = facts[17].clone();
            queries[7] = vec![0.0; dimension];
            queries[9] = vec![1.0; dimension - 1];
            let references: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
            for scan in scans() {
                for (limit, floor) in [
                    (0, -1.0),
                    (10, -1.0),
                    (1000, 0.1),
                    (12, 0.25),
                    (20_000, f64::NEG_INFINITY),
                    (1, 0.0),
                    (50, 0.9),
                ] {
                    let batched = search_batch_by(&index, scan, &references, limit, floor);
                    for (query, hits) in queries.iter().zip(&batched) {
                        assert_eq!(
                            *hits,
                            index.search(query, limit, floor),
                            "{scan:?}, dimension {dimension}, limit {limit}, floor {floor}"
                        );
                    }
                }
                let ties = &search_batch_by(&index, scan, &references[3..4], 3, 0.0)[0];
                assert_eq!(
                    ties.iter().map(|hit| hit.0).collect::<Vec<_>>(),
                    vec![17, 4_100, 8_000]
                );
            }
        }
    }

    /// The mean of the unit vectors of `parts`, as `hyde-mean` forms its search vector
    /// (in f64, then rounded; a zero vector adds nothing but counts), and the weights
    /// `1 / (n |v_i|)` of the nonzero parts that make it their sum.
    fn mean_of_units(parts: &[&[f32]]) -> (Vec<f32>, Vec<(usize, f64)>) {
        let mut sum = vec![0f64; parts[0].len()];
        let mut weights = Vec::new();
        for (position, part) in parts.iter().enumerate() {
            let norm = part
                .iter()
                .map(|&v| f64::from(v) * f64::from(v))
                .sum::<f64>()
                .sqrt();
            if norm > 0.0 {
                for (total, &value) in sum.iter_mut().zip(*part) {
                    *total += f64::from(value) / norm;
                }
                weights.push((position, 1.0 / (parts.len() as f64 * norm)));
            }
        }
        let mean = sum
            .iter()
            .map(|&total| (total / parts.len() as f64) as f32)
            .collect();
        (mean, weights)
    }

    #[test]
    fn derived_queries_find_what_their_own_search_finds() {
        for dimension in [48, 37] {
            let mut facts: Vec<Vec<f32>> = (0..9_000).map(|seed| vector(seed, dimension)).collect();
            facts[5] = vec![0.0; dimension];
            facts[4_100] = facts[17].clone();
            let index = FlatIndex::build(dimension, &facts);
            let mut bases: Vec<Vec<f32>> = (0..40)
                .map(|seed| vector(200_000 + seed, dimension))
                .collect();
            // Near each other, as a query and its hypotheses are, so means keep weight.
            for base in 1..40 {
                let previous = bases[base - 1].clone();
                for (value, &before) in bases[base].iter_mut().zip(&previous) {
                    *value = 0.6 * before + 0.4 * *value;
                }
            }
            bases[9] = facts[17].clone();
            bases[30] = vec![0.0; dimension];
            // (parts, scale of the first part's weight): a scale other than 1 misstates
            // the sum.
            let recipes: Vec<(Vec<usize>, f64)> = vec![
                (vec![0, 1, 2, 3], 1.0),
                (vec![4, 5], 1.0),
                (vec![8, 9, 10], 1.0),
                (vec![11, 25, 37], 3.0),
                (vec![20, 21, 22, 23], 1.0),
                (vec![29, 30, 31], 1.0),
            ];
            let mut vectors: Vec<Vec<f32>> = bases.clone();
            let mut sums: Vec<Vec<(usize, f64)>> = vec![Vec::new(); bases.len()];
            for (parts, scale) in &recipes {
                let slices: Vec<&[f32]> =
                    parts.iter().map(|&part| bases[part].as_slice()).collect();
                let (mean, weights) = mean_of_units(&slices);
                vectors.push(mean);
                sums.push(
                    weights
                        .into_iter()
                        .map(|(at, weight)| {
                            (parts[at], if at == 0 { weight * scale } else { weight })
                        })
                        .collect(),
                );
            }
            // Parts that cancel (|mean| tiny: too much gain) and a mean of a mean.
            let opposite: Vec<f32> = bases[14].iter().map(|&value| -value * 1.001).collect();
            vectors.push(opposite.clone());
            sums.push(Vec::new());
            let (cancelling, weights) = mean_of_units(&[&bases[14], &opposite]);
            vectors.push(cancelling);
            sums.push(vec![(14, weights[0].1), (vectors.len() - 2, weights[1].1)]);
            let (chained, weights) = mean_of_units(&[&vectors[40], &bases[39]]);
            vectors.push(chained);
            sums.push(vec![(40, weights[0].1), (39, weights[1].1)]);
            let batch: Vec<BatchQuery> = vectors
                .iter()
                .zip(&sums)
                .enumerate()
                .map(|(position, (vector, sum_of))| BatchQuery {
                    vector,
                    limit: if position < 40 {
                        1000
                    } else {
                        12 + position % 3
                    },
                    sum_of,
                })
                .collect();
            // Which queries derive, with the whole batch in one block.
            let prepared: Vec<Option<Query>> = vectors
                .iter()
                .map(|vector| Query::new(vector, dimension))
                .collect();
            let everyone: Vec<usize> = (0..batch.len()).collect();
            let derived: Vec<usize> = everyone
                .iter()
                .filter(|&&position| {
                    Screened::new(position, &everyone, &batch, &prepared, 0.01)
                        .derived
                        .is_some()
                })
                .copied()
                .collect();
            // The misstated sum derives too, with a margin wide enough for its residual.
            assert_eq!(
                derived,
                vec![40, 41, 42, 43, 44, 45],
                "dimension {dimension}"
            );
            for scan in scans() {
                for floor in [f64::NEG_INFINITY, 0.2] {
                    // In blocks as the threads take them, and as one block, where every
                    // derived query derives.
                    let in_blocks = index.search_queries_by(scan, &batch, floor);
                    let as_one = index.search_block(scan, &everyone, &batch, &prepared, floor);
                    for (query, (in_blocks, as_one)) in
                        batch.iter().zip(in_blocks.iter().zip(&as_one))
                    {
                        let expected = index.search(query.vector, query.limit, floor);
                        assert_eq!(
                            *in_blocks, expected,
                            "{scan:?}, dimension {dimension}, floor {floor}"
                        );
                        assert_eq!(
                            *as_one, expected,
                            "{scan:?}, dimension {dimension}, floor {floor}"
                        );
                    }
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    #[ignore = "needs a processor with AVX-512 F and VL; .ci/run runs it by name"]
    fn four_dot_products_at_a_time_equal_dot_bit_for_bit() {
        assert!(
            super::super::avx512::has_f64_lanes(),
            "this processor has no AVX-512 F and VL"
        );
        for length in [0, 1, 7, 8, 9, 37, 384] {
            let vectors: Vec<Vec<f32>> = (0..8).map(|seed| vector(seed * 31 + 7, length)).collect();
            let wide: Vec<Vec<f64>> = vectors[..4]
                .iter()
                .map(|vector| vector.iter().map(|&value| f64::from(value)).collect())
                .collect();
            let pairs =
                [0, 1, 2, 3].map(|pair| (wide[pair].as_slice(), vectors[4 + pair].as_slice()));
            // SAFETY: has_f64_lanes() holds.
            let lanes = unsafe { super::super::avx512::dot_lanes(pairs) };
            for pair in 0..4 {
                assert_eq!(
                    sum_lanes(lanes[pair]).to_bits(),
                    dot(&vectors[pair], &vectors[4 + pair]).to_bits(),
                    "length {length}, pair {pair}"
                );
            }
        }
    }
}
