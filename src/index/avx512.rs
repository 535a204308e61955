//! AVX-512 kernels of [`super::FlatIndex::search_batch`]: the bfloat16 screen and the
//! f64 rescoring of its survivors.
//!
//! The screen, on CPUs with AVX-512 BF16, is the search's first pass: every
//! query of a block against every fact, with the vectors rounded to bfloat16 and the
//! products summed in f32 by `vdpbf16ps`, which does twice the multiply-adds per
//! instruction of an f32 multiply-add. It only screens: a fact is kept while its
//! screening cosine is within twice [`error_bound`] of the query's `limit`-th best, and
//! the kept facts are rescored in f64 from the f32 rows, so the search stays exact.
//!
//! The rescoring ([`dot_lanes`], on CPUs with AVX-512 F and VL) forms four f64 dot
//! products at once, each with the same roundings in the same order as `vector::dot`.
//!
//! Layout: a block of facts is rounded to bfloat16 row by row, each row a run of `u32`
//! pairs (entries 2p and 2p + 1). The queries are rounded once per block and stored pair
//! by pair, 32 queries per pair side by side, so one pair of one fact, broadcast, meets
//! 32 queries in two registers. The kernel holds [`FACT_GROUP`] facts x 32 queries of
//! sums in 16 registers.

use std::arch::x86_64::{
    __m512, __m512bh, __m512i, _mm256_loadu_ps, _mm256_maskz_loadu_ps, _mm512_add_pd,
    _mm512_cmp_ps_mask, _mm512_cvtne2ps_pbh, _mm512_cvtps_pd, _mm512_dpbf16_ps, _mm512_loadu_pd,
    _mm512_loadu_ps, _mm512_loadu_si512, _mm512_mask_add_ps, _mm512_mask_i32gather_ps,
    _mm512_mask_storeu_epi16, _mm512_maskz_loadu_pd, _mm512_maskz_loadu_ps, _mm512_mul_pd,
    _mm512_mul_ps, _mm512_set1_epi32, _mm512_set1_ps, _mm512_setzero_pd, _mm512_setzero_ps,
    _mm512_storeu_pd, _mm512_storeu_ps, _CMP_GE_OQ,
};

use super::FactIndex;

/// Facts per block: a block's bfloat16 rows (768 KiB at 384 dimensions) stay in the
/// core's L2 cache while every query group of the block passes over them.
pub(super) const FACT_BLOCK: usize = 1024;
/// Queries per kernel call: two registers of 16 lanes.
const QUERY_GROUP: usize = 32;
/// Facts per kernel call: 8 facts x 2 registers of sums, plus the 2 query registers and
/// the broadcast pair, fit AVX-512's 32 registers.
const FACT_GROUP: usize = 8;

/// Whether this CPU runs the bfloat16 scan.
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512bf16")
}

/// A bound on |screening cosine - f64 cosine| for vectors of `dimension` entries.
///
/// With u = 2^-8 (bfloat16, round to nearest even) and v = 2^-24 (f32): rounding the
/// unit query q and a row f (norm r in [1, 2)) to bfloat16 changes each product
/// q_i f_i by at most (2u + u^2) |q_i f_i|, and sum |q_i f_i| <= r (1 + v); the f32
/// sums add one rounding per entry, at most dimension x v x r (1 + 2u)^2. Entries and
/// partial results below f32's smallest normal are flushed to zero, less than
/// 3 x dimension x 2^-126 in all. Multiplying by the rounded inverse norm adds the f32
/// path's 4v. Divided by r >= 1 this stays under 2u + 2u^2 + (dimension + 8) v for
/// dimensions up to 16,000.
pub(super) fn error_bound(dimension: usize) -> f32 {
    let unit = 2f64.powi(-8);
    let bound = 2.0 * unit
        + 2.0 * unit * unit
        + (dimension + 8) as f64 * f64::from(f32::EPSILON) / 2.0
        + 3.0 * dimension as f64 * f64::from(f32::MIN_POSITIVE);
    bound as f32
}

/// `value` rounded to bfloat16, to nearest even (the values are finite).
fn bf16_bits(value: f32) -> u32 {
    let bits = value.to_bits();
    (bits + 0x7fff + ((bits >> 16) & 1)) >> 16
}

/// A block of unit queries in bfloat16, pair by pair, [`QUERY_GROUP`] queries side by
/// side; a missing query (zero, or past the block's end) is all zeros and never kept.
pub(super) struct PackedQueries {
    queries: usize,
    pairs: usize,
    /// Group g, pair p, query j: `values[(g * pairs + p) * QUERY_GROUP + j]`.
    values: Vec<u32>,
    /// The f32 rows of one fact block in bfloat16, row by row, `pairs` per row.
    facts: Vec<u32>,
}

impl PackedQueries {
    /// Packs `units` (`queries` rows of `dimension` f32 values, row-major).
    pub(super) fn new(units: &[f32], queries: usize, dimension: usize) -> PackedQueries {
        let pairs = dimension.div_ceil(2);
        let groups = queries.div_ceil(QUERY_GROUP);
        let mut values = vec![0u32; groups * pairs * QUERY_GROUP];
        for (query, unit) in units.chunks_exact(dimension).enumerate() {
            let (group, lane) = (query / QUERY_GROUP, query % QUERY_GROUP);
            for (pair, entries) in unit.chunks(2).enumerate() {
                let low = bf16_bits(entries[0]);
                let high = entries.get(1).map_or(0, |&value| bf16_bits(value));
                values[(group * pairs + pair) * QUERY_GROUP + lane] = low | (high << 16);
            }
        }
        PackedQueries {
            queries,
            pairs,
            values,
            facts: vec![0u32; FACT_BLOCK * pairs],
        }
    }

    /// Entries per fact in the lane scores [`PackedQueries::scan`] writes: the queries,
    /// rounded up to whole groups.
    pub(super) fn lane_stride(&self) -> usize {
        self.queries.div_ceil(QUERY_GROUP) * QUERY_GROUP
    }

    /// Screens facts `first..first + inverse_norms.len()` (their f32 `rows`, and the
    /// inverse of each row's norm, 0 for a zero row) against every query: each fact whose
    /// screening cosine with query j is at least `cutoffs[j]` is appended to
    /// `candidates[j]` with that cosine. Given `lane_scores`, fact i's screening cosine
    /// with query j is also written at `lane_scores[i * lane_stride + j]`.
    pub(super) fn scan(
        &mut self,
        rows: &[f32],
        inverse_norms: &[f32],
        first: usize,
        cutoffs: &[f32],
        candidates: &mut [Vec<(FactIndex, f32)>],
        lane_scores: Option<&mut [f32]>,
    ) {
        let width = inverse_norms.len();
        let dimension = rows.len() / width.max(1);
        assert!(width <= FACT_BLOCK && rows.len() == width * dimension);
        assert!(cutoffs.len() == self.queries && candidates.len() == self.queries);
        assert!(dimension.div_ceil(2) == self.pairs);
        let lane_stride = self.lane_stride();
        let lane_scores = lane_scores.map(|scores| {
            assert!(scores.len() >= width * lane_stride);
            scores.as_mut_ptr()
        });
        // SAFETY: `available()` was checked before any PackedQueries was made (see
        // FlatIndex::search_queries), and the kernels index only within the asserted
        // sizes: a lane score is written at fact i < width, lane < lane_stride.
        unsafe { self.scan_avx512(rows, inverse_norms, first, cutoffs, candidates, lane_scores) }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    fn scan_avx512(
        &mut self,
        rows: &[f32],
        inverse_norms: &[f32],
        first: usize,
        cutoffs: &[f32],
        candidates: &mut [Vec<(FactIndex, f32)>],
        lane_scores: Option<*mut f32>,
    ) {
        let pairs = self.pairs;
        let lane_stride = self.lane_stride();
        let dimension = rows.len() / inverse_norms.len().max(1);
        for (row, packed) in rows
            .chunks_exact(dimension)
            .zip(self.facts.chunks_exact_mut(pairs))
        {
            round_row(row, packed);
        }
        let width = inverse_norms.len();
        let mut lane_cutoffs = [f32::INFINITY; QUERY_GROUP];
        for group in 0..self.queries.div_ceil(QUERY_GROUP) {
            let group_first = group * QUERY_GROUP;
            let group_queries = QUERY_GROUP.min(self.queries - group_first);
            lane_cutoffs[..group_queries]
                .copy_from_slice(&cutoffs[group_first..group_first + group_queries]);
            lane_cutoffs[group_queries..].fill(f32::INFINITY);
            let queries = &self.values[group * pairs * QUERY_GROUP..][..pairs * QUERY_GROUP];
            for fact_first in (0..width).step_by(FACT_GROUP) {
                let facts = FACT_GROUP.min(width - fact_first);
                let sums = group_sums(queries, &self.facts[fact_first * pairs..], pairs, facts);
                for (offset, fact_sums) in sums.iter().enumerate().take(facts) {
                    let inverse = _mm512_set1_ps(inverse_norms[fact_first + offset]);
                    let fact = (first + fact_first + offset) as FactIndex;
                    for (half, &half_sums) in fact_sums.iter().enumerate() {
                        let scores = _mm512_mul_ps(half_sums, inverse);
                        if let Some(lane_scores) = lane_scores {
                            // SAFETY: fact_first + offset < width and the 16 lanes end
                            // within lane_stride (see `scan`).
                            unsafe {
                                _mm512_storeu_ps(
                                    lane_scores.add(
                                        (fact_first + offset) * lane_stride
                                            + group_first
                                            + 16 * half,
                                    ),
                                    scores,
                                );
                            }
                        }
                        // SAFETY: lane_cutoffs holds 32 f32 values.
                        let lane_cutoff =
                            unsafe { _mm512_loadu_ps(lane_cutoffs.as_ptr().add(16 * half)) };
                        // A half past the last query has only infinite cut-offs.
                        let half_first = (group_first + 16 * half).min(candidates.len());
                        push_kept(scores, lane_cutoff, fact, &mut candidates[half_first..]);
                    }
                }
            }
        }
    }
}

/// The derived queries of a block (see `vector::Screened`), 16 side by side: for each
/// group of 16, per part slot, the lanes of the queries' parts in that slot, their
/// weights, and which queries have a part there.
pub(super) struct DerivedLanes {
    groups: Vec<Vec<PartSlot>>,
    queries: usize,
}

/// One part slot of 16 derived queries: each query's part's lane and weight, and a bit
/// for each query that has a part in the slot.
type PartSlot = ([i32; 16], [f32; 16], u16);

impl DerivedLanes {
    /// The derived queries whose parts are `parts` (per query, its parts' lanes and
    /// weights, in order).
    pub(super) fn new(parts: &[Vec<(usize, f32)>]) -> DerivedLanes {
        let groups = parts
            .chunks(16)
            .map(|group| {
                let slots = group.iter().map(Vec::len).max().unwrap_or(0);
                (0..slots)
                    .map(|slot| {
                        let mut lanes = [0i32; 16];
                        let mut weights = [0f32; 16];
                        let mut mask = 0u16;
                        for (member, query_parts) in group.iter().enumerate() {
                            if let Some(&(lane, weight)) = query_parts.get(slot) {
                                lanes[member] = lane as i32;
                                weights[member] = weight;
                                mask |= 1 << member;
                            }
                        }
                        (lanes, weights, mask)
                    })
                    .collect()
            })
            .collect();
        DerivedLanes {
            groups,
            queries: parts.len(),
        }
    }

    /// Appends to `candidates[d]` each fact `first + i` (i < `width`) whose screening
    /// cosine with derived query d, the weighted sum of its parts' lane scores (fact i's
    /// at `lane_scores[i * lane_stride..]`) formed in its parts' order, is at least
    /// `cutoffs[d]`, with that cosine.
    pub(super) fn scan(
        &self,
        lane_scores: &[f32],
        lane_stride: usize,
        width: usize,
        first: usize,
        cutoffs: &[f32],
        candidates: &mut [Vec<(FactIndex, f32)>],
    ) {
        assert!(lane_scores.len() >= width * lane_stride);
        assert!(cutoffs.len() == self.queries && candidates.len() == self.queries);
        assert!(self
            .groups
            .iter()
            .flatten()
            .all(|(lanes, _, _)| lanes.iter().all(|&lane| (lane as usize) < lane_stride)));
        // SAFETY: `available()` was checked before any DerivedLanes was made (see
        // vector::FlatIndex::screen), and every lane read is below `lane_stride` in a row
        // of the asserted scores.
        unsafe { self.scan_avx512(lane_scores, lane_stride, width, first, cutoffs, candidates) }
    }

    #[target_feature(enable = "avx512f")]
    fn scan_avx512(
        &self,
        lane_scores: &[f32],
        lane_stride: usize,
        width: usize,
        first: usize,
        cutoffs: &[f32],
        candidates: &mut [Vec<(FactIndex, f32)>],
    ) {
        for (group, slots) in self.groups.iter().enumerate() {
            let group_first = 16 * group;
            let members = 16.min(self.queries - group_first);
            let mut group_cutoffs = [f32::INFINITY; 16];
            group_cutoffs[..members].copy_from_slice(&cutoffs[group_first..group_first + members]);
            // SAFETY: each array holds 16 values.
            let (cutoff, slots): (__m512, Vec<(__m512i, __m512, u16)>) = unsafe {
                (
                    _mm512_loadu_ps(group_cutoffs.as_ptr()),
                    slots
                        .iter()
                        .map(|(lanes, weights, mask)| {
                            (
                                _mm512_loadu_si512(lanes.as_ptr().cast()),
                                _mm512_loadu_ps(weights.as_ptr()),
                                *mask,
                            )
                        })
                        .collect(),
                )
            };
            for fact in 0..width {
                let row = lane_scores[fact * lane_stride..].as_ptr();
                let mut sums = _mm512_setzero_ps();
                for &(lanes, weights, mask) in &slots {
                    // SAFETY: the lanes are below lane_stride (asserted in `scan`), so
                    // every lane read is inside the row.
                    let scores = unsafe {
                        _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), mask, lanes, row)
                    };
                    sums = _mm512_mask_add_ps(sums, mask, sums, _mm512_mul_ps(scores, weights));
                }
                push_kept(
                    sums,
                    cutoff,
                    (first + fact) as FactIndex,
                    &mut candidates[group_first..],
                );
            }
        }
    }
}

/// Appends `(fact, scores[j])` to `candidates[j]` for each lane j whose score is at least
/// `cutoffs[j]` (lanes past `candidates`' end have infinite cut-offs and are never kept).
#[target_feature(enable = "avx512f")]
fn push_kept(
    scores: __m512,
    cutoffs: __m512,
    fact: FactIndex,
    candidates: &mut [Vec<(FactIndex, f32)>],
) {
    let mut kept = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(scores, cutoffs);
    if kept == 0 {
        return;
    }
    let mut lanes = [0f32; 16];
    // SAFETY: `lanes` holds 16 f32 values.
    unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), scores) };
    while kept != 0 {
        let lane = kept.trailing_zeros() as usize;
        kept &= kept - 1;
        candidates[lane].push((fact, lanes[lane]));
    }
}

/// Rounds `row` to bfloat16 into `packed` (pairs of entries, the last padded with 0).
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
fn round_row(row: &[f32], packed: &mut [u32]) {
    let halves = packed.as_mut_ptr().cast::<i16>();
    for start in (0..row.len()).step_by(32) {
        let count = 32.min(row.len() - start);
        let low_mask = if count >= 16 {
            0xffff
        } else {
            (1u16 << count) - 1
        };
        let high_mask = if count >= 32 {
            0xffff
        } else if count > 16 {
            (1u16 << (count - 16)) - 1
        } else {
            0
        };
        // SAFETY: the masks cover only entries start..start + count of `row`, and of
        // `packed`'s 2 x pairs >= row.len() halves; an odd row's last half stays 0 from
        // the zeroed store of its pair below.
        unsafe {
            let low = _mm512_maskz_loadu_ps(low_mask, row.as_ptr().add(start));
            let high = _mm512_maskz_loadu_ps(high_mask, row.as_ptr().add(start + 16));
            let rounded: __m512bh = _mm512_cvtne2ps_pbh(high, low);
            let store_mask = if count == 32 {
                u32::MAX
            } else {
                (1u32 << count) - 1
            };
            let store_mask = if count % 2 == 1 {
                (store_mask << 1) | 1
            } else {
                store_mask
            };
            _mm512_mask_storeu_epi16(
                halves.add(start),
                store_mask,
                std::mem::transmute::<__m512bh, __m512i>(rounded),
            );
        }
    }
}

/// The f32 sums of `facts` (at most [`FACT_GROUP`]) facts' bfloat16 rows with a group of
/// [`QUERY_GROUP`] packed queries: `[fact][half]`, lane j of half h for query 16h + j.
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
fn group_sums(
    queries: &[u32],
    facts: &[u32],
    pairs: usize,
    count: usize,
) -> [[__m512; 2]; FACT_GROUP] {
    let mut sums = [[_mm512_setzero_ps(); 2]; FACT_GROUP];
    assert!(queries.len() >= pairs * QUERY_GROUP && facts.len() >= count * pairs);
    if count == FACT_GROUP {
        for pair in 0..pairs {
            // SAFETY: pair < pairs, so the two loads read queries[pair * 32..pair * 32 + 32]
            // and fact f's entry is facts[f * pairs + pair], both inside the asserted sizes.
            unsafe {
                let low = _mm512_loadu_si512(queries.as_ptr().add(pair * QUERY_GROUP).cast());
                let high = _mm512_loadu_si512(queries.as_ptr().add(pair * QUERY_GROUP + 16).cast());
                for (fact, fact_sums) in sums.iter_mut().enumerate() {
                    let broadcast = as_bf16(_mm512_set1_epi32(
                        *facts.get_unchecked(fact * pairs + pair) as i32,
                    ));
                    fact_sums[0] = _mm512_dpbf16_ps(fact_sums[0], as_bf16(low), broadcast);
                    fact_sums[1] = _mm512_dpbf16_ps(fact_sums[1], as_bf16(high), broadcast);
                }
            }
        }
    } else {
        for pair in 0..pairs {
            // SAFETY: as above, for the `count` facts there are.
            unsafe {
                let low = _mm512_loadu_si512(queries.as_ptr().add(pair * QUERY_GROUP).cast());
                let high = _mm512_loadu_si512(queries.as_ptr().add(pair * QUERY_GROUP + 16).cast());
                for (fact, fact_sums) in sums.iter_mut().enumerate().take(count) {
                    let broadcast = as_bf16(_mm512_set1_epi32(facts[fact * pairs + pair] as i32));
                    fact_sums[0] = _mm512_dpbf16_ps(fact_sums[0], as_bf16(low), broadcast);
                    fact_sums[1] = _mm512_dpbf16_ps(fact_sums[1], as_bf16(high), broadcast);
                }
            }
        }
    }
    sums
}

/// The same 512 bits read as 32 bfloat16 values.
#[target_feature(enable = "avx512f")]
fn as_bf16(bits: __m512i) -> __m512bh {
    // SAFETY: both are 512-bit vectors of plain bits.
    unsafe { std::mem::transmute::<__m512i, __m512bh>(bits) }
}

/// Whether this CPU runs [`dot_lanes`].
pub(super) fn has_f64_lanes() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
}

/// The 8 lane sums of the f64 dot product of each of four pairs of equally long
/// vectors (the first already in f64, converted exactly from f32), formed exactly as
/// `vector::dot` forms them: entry i multiplied in f64 and
/// added to lane i mod 8, in order. Four pairs at once keep four chains of additions in
/// flight. A lane with no entry left adds +0, which changes no sum (a lane starts at +0
/// and so never holds -0).
///
/// # Safety
/// The CPU must have AVX-512 F and VL ([`has_f64_lanes`]).
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) unsafe fn dot_lanes(pairs: [(&[f64], &[f32]); 4]) -> [[f64; 8]; 4] {
    let length = pairs[0].0.len();
    assert!(pairs
        .iter()
        .all(|(a, b)| a.len() == length && b.len() == length));
    let mut sums = [_mm512_setzero_pd(); 4];
    let whole = length / 8 * 8;
    for start in (0..whole).step_by(8) {
        // SAFETY: start + 8 <= length for every vector.
        unsafe {
            for (sum, (a, b)) in sums.iter_mut().zip(pairs) {
                let a = _mm512_loadu_pd(a.as_ptr().add(start));
                let b = _mm512_cvtps_pd(_mm256_loadu_ps(b.as_ptr().add(start)));
                *sum = _mm512_add_pd(*sum, _mm512_mul_pd(a, b));
            }
        }
    }
    if whole < length {
        let mask = (1u8 << (length - whole)) - 1;
        // SAFETY: the mask reads only entries whole..length.
        unsafe {
            for (sum, (a, b)) in sums.iter_mut().zip(pairs) {
                let a = _mm512_maskz_loadu_pd(mask, a.as_ptr().add(whole));
                let b = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, b.as_ptr().add(whole)));
                *sum = _mm512_add_pd(*sum, _mm512_mul_pd(a, b));
            }
        }
    }
    let mut lanes = [[0f64; 8]; 4];
    for (lane, sum) in lanes.iter_mut().zip(sums) {
        // SAFETY: `lane` holds 8 f64 values.
        unsafe { _mm512_storeu_pd(lane.as_mut_ptr(), sum) };
    }
    lanes
}
