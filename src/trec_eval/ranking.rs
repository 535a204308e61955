//! One query's ranking as trec_eval orders it (score descending, then docno descending,
//! cut to `-M`), computed without sorting the whole result list: only the judged results
//! are sorted, and each unjudged result is placed among them by binary search. Every
//! trec_eval measure reads nothing but the grades in rank order, and every unjudged
//! result has the same grade, so the ranks of the judged results give the ranking. A
//! query whose results are listed in that order already (as retrieval systems write
//! runs) is not sorted at all: each result's rank is its position.
//!
//! Documents are hashed once: the hash serves both the duplicate check over the query's
//! results (a bit set; only the rare documents whose bit is already set are compared) and
//! the lookup in the query's judgments (a bit-set filter, then a hash table).

use super::{NOT_JUDGED, POOL_UNJUDGED};
use crate::dataset::Grade;

/// A score as an integer with the reverse order (for non-NaN values, -0.0 equal to
/// 0.0): ascending keys are descending scores, so sorting compares integers.
pub(super) fn descending_key(score: f64) -> u64 {
    let bits = (score + 0.0).to_bits();
    if bits >> 63 == 1 {
        bits
    } else {
        !(bits | (1 << 63))
    }
}

/// The high and low halves of `a * b` folded together (a multiply-and-fold mix).
#[inline]
fn fold_multiply(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    product as u64 ^ (product >> 64) as u64
}

/// A 64-bit hash of a docno, over all its bytes: docnos are short, so it reads them
/// eight bytes at a time (the last word overlapping the previous one).
#[inline]
fn document_hash(bytes: &[u8]) -> u64 {
    const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
    const MULTIPLIER: u64 = 0x2d35_8dcc_aa6c_78a5;
    let word = |at: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(word)
    };
    let length = bytes.len();
    let mut hash = SEED ^ length as u64;
    if length >= 8 {
        let mut at = 0;
        while at + 8 < length {
            hash = fold_multiply(hash ^ word(at), MULTIPLIER);
            at += 8;
        }
        hash = fold_multiply(hash ^ word(length - 8), MULTIPLIER);
    } else {
        let mut tail = [0u8; 8];
        tail[..length].copy_from_slice(bytes);
        hash = fold_multiply(hash ^ u64::from_le_bytes(tail), MULTIPLIER);
    }
    fold_multiply(hash, SEED)
}

/// The bit of `hash` in a bit set of `words` 64-bit words (a power of two): word index
/// and mask, from the hash's high half (hash tables use the low bits).
#[inline]
fn bit_of(hash: u64, words: usize) -> (usize, u64) {
    let bit = (hash >> 32) as usize & (words * 64 - 1);
    (bit / 64, 1 << (bit % 64))
}

/// The hash whose [`bit_of`] is a document's second bit in the duplicate check (a Bloom
/// filter of two bits per document: a document is compared with the earlier ones only
/// when both its bits are set, which a repeat always finds).
#[inline]
fn second_bit_hash(hash: u64) -> u64 {
    hash.rotate_left(24)
}

/// For each of `targets`, how many of the ascending `keys` are smaller (as
/// `partition_point(|key| key < target)`): binary searches run in lockstep, their steps
/// independent of the keys, so that the processor overlaps the searches' memory reads.
#[inline]
fn lower_bounds<const N: usize>(keys: &[u64], targets: [u64; N]) -> [usize; N] {
    if keys.is_empty() {
        return [0; N];
    }
    let mut bases = [0; N];
    let mut length = keys.len();
    while length > 1 {
        let half = length / 2;
        for (base, &target) in bases.iter_mut().zip(&targets) {
            // A conditional move: the comparison's outcome is a coin toss.
            *base =
                std::hint::select_unpredictable(keys[*base + half] < target, *base + half, *base);
        }
        length -= half;
    }
    let mut bounds = [0; N];
    for ((bound, &base), &target) in bounds.iter_mut().zip(&bases).zip(&targets) {
        *bound = base + usize::from(keys[base] < target);
    }
    bounds
}

/// One qrels query's judgments, as ranking reads them; refilled for each query, so that
/// its buffers are reused and warm in cache.
#[derive(Default)]
pub(super) struct JudgedQuery<'a> {
    /// Bit-set filter of the judged documents' hashes (1 in 64 false positives).
    filter: Vec<u64>,
    /// Open addressing by document hash: index + 1 into `documents`, 0 when empty.
    slots: Vec<u32>,
    /// (hash, docno, grade) of each judged document.
    documents: Vec<(u64, &'a str, Grade)>,
    /// Every judged grade of the query (for the measures that read the judgments).
    pub(super) grades: Vec<Grade>,
}

impl<'a> JudgedQuery<'a> {
    /// Holds `judgments`, a query's (docno, grade) pairs, from now on.
    pub(super) fn fill(&mut self, judgments: &[(&'a str, Grade)]) {
        self.documents.clear();
        self.documents.extend(
            judgments
                .iter()
                .map(|&(document, grade)| (document_hash(document.as_bytes()), document, grade)),
        );
        let count = self.documents.len();
        self.filter.clear();
        self.filter.resize(count.next_power_of_two(), 0);
        let mask = (count * 4).next_power_of_two() - 1;
        self.slots.clear();
        self.slots.resize(mask + 1, 0);
        for (index, &(hash, _, _)) in self.documents.iter().enumerate() {
            let (word, bit) = bit_of(hash, self.filter.len());
            self.filter[word] |= bit;
            let mut slot = hash as usize & mask;
            while self.slots[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = index as u32 + 1;
        }
        self.grades.clear();
        self.grades
            .extend(self.documents.iter().map(|&(_, _, grade)| grade));
    }

    /// The grade of `document` (hashed to `hash`), if judged.
    #[inline]
    fn grade(&self, hash: u64, document: &str) -> Option<Grade> {
        let (word, bit) = bit_of(hash, self.filter.len());
        if self.filter[word] & bit == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let entry = self.slots[slot];
            if entry == 0 {
                return None;
            }
            let (known_hash, known, grade) = self.documents[entry as usize - 1];
            if known_hash == hash && known == document {
                return Some(grade);
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// Buffers reused from query to query by one worker.
#[derive(Default)]
pub(super) struct Scratch {
    /// Each result's document hash (kept until the next query, to clear `seen`).
    hashes: Vec<u64>,
    /// Duplicate check: a bit set of the hashes seen (128 bits per result).
    seen: Vec<u64>,
    /// Results whose bit was already set: duplicates, or (mostly) not.
    suspects: Vec<u32>,
    /// (key, position, grade) of the judged results.
    judged: Vec<(u64, u32, Grade)>,
    judged_keys: Vec<u64>,
    /// (key, position) of the unjudged results.
    unjudged: Vec<(u64, u32)>,
    /// `ahead[p]`: unjudged results ranked after the first `p` judged ones, before the rest.
    ahead: Vec<u32>,
    /// The result: grades in rank order.
    pub(super) grades: Vec<Grade>,
}

/// Fills `scratch.grades` with the grades of a query's results in trec_eval's order,
/// cut to `max_results`: `NOT_JUDGED` for documents the qrels do not list,
/// `POOL_UNJUDGED` for those they list with a negative grade. `documents` and `keys`
/// ([`descending_key`] of each score) are in file order. `Err` is the position of the
/// first document listed a second time.
pub(super) fn rank(
    documents: &[&str],
    keys: &[u64],
    judged: &JudgedQuery<'_>,
    max_results: usize,
    scratch: &mut Scratch,
) -> Result<(), usize> {
    let words = (documents.len() * 2).next_power_of_two();
    if scratch.seen.len() == words {
        for &hash in &scratch.hashes {
            scratch.seen[bit_of(hash, words).0] = 0;
            scratch.seen[bit_of(second_bit_hash(hash), words).0] = 0;
        }
    } else {
        scratch.seen.clear();
        scratch.seen.resize(words, 0);
    }
    scratch.hashes.clear();
    scratch.suspects.clear();
    scratch.judged.clear();
    scratch.unjudged.clear();
    scratch.unjudged.resize(documents.len(), (0, 0));
    let mut unjudged = 0;
    // Whether a key is smaller than the one before it (a score greater), and whether
    // two in a row are equal: most runs list each query's results ranked already.
    let (mut out_of_order, mut tied) = (false, false);
    let mut previous_key = 0;
    // The hashes first, in a loop of their own: each is independent of the others, so
    // the processor overlaps their multiplications.
    scratch.hashes.extend(
        documents
            .iter()
            .map(|document| document_hash(document.as_bytes())),
    );
    for (position, ((&document, &key), &hash)) in
        documents.iter().zip(keys).zip(&scratch.hashes).enumerate()
    {
        out_of_order |= key < previous_key;
        tied |= key == previous_key && position > 0;
        previous_key = key;
        let (word, bit) = bit_of(hash, words);
        let (second_word, second_bit) = bit_of(second_bit_hash(hash), words);
        if scratch.seen[word] & bit != 0 && scratch.seen[second_word] & second_bit != 0 {
            scratch.suspects.push(position as u32);
        }
        scratch.seen[word] |= bit;
        scratch.seen[second_word] |= second_bit;
        let grade = judged.grade(hash, document);
        scratch.unjudged[unjudged] = (key, position as u32);
        unjudged += usize::from(grade.is_none());
        if let Some(grade) = grade {
            let grade = if grade < 0 { POOL_UNJUDGED } else { grade };
            scratch.judged.push((key, position as u32, grade));
        }
    }
    scratch.unjudged.truncate(unjudged);
    for &suspect in &scratch.suspects {
        let suspect = suspect as usize;
        let hash = scratch.hashes[suspect];
        let earlier = &scratch.hashes[..suspect];
        if (0..suspect)
            .any(|other| earlier[other] == hash && documents[other] == documents[suspect])
        {
            return Err(suspect);
        }
    }
    let returned = documents.len().min(max_results);
    scratch.grades.clear();
    scratch.grades.resize(returned, NOT_JUDGED);
    if !out_of_order && (!tied || ties_in_order(documents, keys)) {
        // Already in trec_eval's order: each result's rank is its position.
        for &(_, position, grade) in &scratch.judged {
            if let Some(slot) = scratch.grades.get_mut(position as usize) {
                *slot = grade;
            }
        }
        return Ok(());
    }
    // Judged results in trec_eval's order: key ascending (score descending), then docno
    // descending.
    scratch.judged.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| documents[b.1 as usize].cmp(documents[a.1 as usize]))
    });
    scratch.judged_keys.clear();
    scratch
        .judged_keys
        .extend(scratch.judged.iter().map(|&(key, _, _)| key));
    let judged_count = scratch.judged.len();
    scratch.ahead.clear();
    scratch.ahead.resize(judged_count + 1, 0);
    // Judged results with a smaller key come first; among equal keys, those with a
    // greater docno.
    let mut place = |key: u64, position: u32, mut after: usize| {
        while after < judged_count
            && scratch.judged_keys[after] == key
            && documents[scratch.judged[after].1 as usize] > documents[position as usize]
        {
            after += 1;
        }
        scratch.ahead[after] += 1;
    };
    let mut groups = scratch.unjudged.chunks_exact(4);
    for group in &mut groups {
        let keys = [group[0].0, group[1].0, group[2].0, group[3].0];
        let bounds = lower_bounds(&scratch.judged_keys, keys);
        for (&(key, position), bound) in group.iter().zip(bounds) {
            place(key, position, bound);
        }
    }
    for &(key, position) in groups.remainder() {
        place(key, position, lower_bounds(&scratch.judged_keys, [key])[0]);
    }
    let mut unjudged_ahead = 0;
    for (index, &(_, _, grade)) in scratch.judged.iter().enumerate() {
        unjudged_ahead += scratch.ahead[index] as usize;
        let rank = index + unjudged_ahead;
        if rank < returned {
            scratch.grades[rank] = grade;
        }
    }
    Ok(())
}

/// Whether the results with equal keys (equal scores) next to each other are in
/// trec_eval's order among themselves: docno descending.
fn ties_in_order(documents: &[&str], keys: &[u64]) -> bool {
    keys.windows(2)
        .zip(documents.windows(2))
        .all(|(keys, documents)| keys[0] != keys[1] || documents[0] > documents[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

    /// The ranking by sorting every result, as trec_eval does.
    fn sorted_grades(
        results: &[(&str, f64)],
        judgments: &FxHashMap<&str, Grade>,
        max_results: usize,
    ) -> Vec<Grade> {
        let mut sorted = results.to_vec();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(a.0)));
        sorted
            .iter()
            .take(max_results)
            .map(|(document, _)| match judgments.get(document) {
                None => NOT_JUDGED,
                Some(&grade) if grade < 0 => POOL_UNJUDGED,
                Some(&grade) => grade,
            })
            .collect()
    }

    /// The judgments of `names` that `grade_at` grades (by position), as a map and as
    /// the query `rank` reads.
    fn judged_names(
        names: &[String],
        grade_at: impl Fn(usize) -> Option<Grade>,
    ) -> (FxHashMap<&str, Grade>, JudgedQuery<'_>) {
        let grades: FxHashMap<&str, Grade> = names
            .iter()
            .enumerate()
            .filter_map(|(index, name)| Some((name.as_str(), grade_at(index)?)))
            .collect();
        let judgments: Vec<(&str, Grade)> = grades
            .iter()
            .map(|(&document, &grade)| (document, grade))
            .collect();
        let mut judged = JudgedQuery::default();
        judged.fill(&judgments);
        (grades, judged)
    }

    /// Checks that `rank` gives the grades of a full sort of `results` at every cut.
    fn assert_ranks_as_sorted(
        results: &[(&str, f64)],
        (grades, judged): &(FxHashMap<&str, Grade>, JudgedQuery<'_>),
        cuts: &[usize],
        scratch: &mut Scratch,
    ) {
        let documents: Vec<&str> = results.iter().map(|r| r.0).collect();
        let keys: Vec<u64> = results.iter().map(|r| descending_key(r.1)).collect();
        for &max_results in cuts {
            rank(&documents, &keys, judged, max_results, scratch).unwrap();
            assert_eq!(
                scratch.grades,
                sorted_grades(results, grades, max_results),
                "-M {max_results}, {results:?}"
            );
        }
    }

    #[test]
    fn ranks_equal_a_full_sort_with_ties_and_cuts() {
        let names: Vec<String> = (0..60).map(|i| format!("d{:02}", (i * 37) % 60)).collect();
        let judged = judged_names(&names, |index| {
            (index % 3 != 0).then_some((index % 5) as Grade - 1)
        });
        let mut scratch = Scratch::default();
        // Few distinct scores, so that most results tie and docnos decide.
        for distinct in [1, 2, 3, 7, 60] {
            let results: Vec<(&str, f64)> = names
                .iter()
                .enumerate()
                .map(|(index, name)| (name.as_str(), ((index * 13) % distinct) as f64 - 1.0))
                .collect();
            assert_ranks_as_sorted(&results, &judged, &[1, 5, 59, 60, usize::MAX], &mut scratch);
        }
        // The first repeat is reported, among many documents (whose bits collide).
        let many: Vec<String> = (0..5000).map(|i| format!("doc{i}")).collect();
        let mut documents: Vec<&str> = many.iter().map(String::as_str).collect();
        documents.extend(["doc17", "doc3"]);
        let keys = vec![descending_key(1.0); documents.len()];
        assert_eq!(
            rank(&documents, &keys, &judged.1, usize::MAX, &mut scratch),
            Err(5000)
        );
        assert_eq!(
            rank(
                &documents[..5000],
                &keys[..5000],
                &judged.1,
                3,
                &mut scratch
            ),
            Ok(())
        );
    }

    #[test]
    fn ranked_results_equal_a_full_sort() {
        // Results listed in rank order already (score descending), as most runs list
        // them: ties with docnos descending (trec_eval's order), then ascending (not it),
        // and one result out of order.
        let names: Vec<String> = (0..40).map(|i| format!("d{:02}", (i * 7) % 40)).collect();
        let judged = judged_names(&names, |index| {
            (index % 4 != 1).then_some((index % 3) as Grade - 1)
        });
        let mut scratch = Scratch::default();
        for distinct in [1, 3, 40] {
            let scored: Vec<(&str, f64)> = names
                .iter()
                .enumerate()
                .map(|(index, name)| (name.as_str(), (index % distinct) as f64))
                .collect();
            let mut in_order = scored.clone();
            in_order.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(a.0)));
            let mut ties_reversed = scored.clone();
            ties_reversed.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
            let mut one_swapped = in_order.clone();
            one_swapped.swap(5, 30);
            for results in [&in_order, &ties_reversed, &one_swapped] {
                assert_ranks_as_sorted(results, &judged, &[1, 7, 40, usize::MAX], &mut scratch);
            }
        }
    }

    #[test]
    fn lockstep_lower_bounds_equal_partition_points() {
        for length in 0..40 {
            // Repeated keys, so that equal keys sit on both sides of a search's steps.
            let keys: Vec<u64> = (0..length).map(|index| index / 3 * 2).collect();
            for first in 0..30 {
                let targets = [first, first + 1, 0, u64::MAX];
                let bounds = lower_bounds(&keys, targets);
                for (target, bound) in targets.into_iter().zip(bounds) {
                    let expected = keys.partition_point(|&key| key < target);
                    assert_eq!(bound, expected, "{length} keys, target {target}");
                }
            }
        }
    }

    #[test]
    fn keys_order_scores_descending() {
        let scores = [
            f64::INFINITY,
            3.5,
            1.0,
            0.0,
            -0.0,
            -1e-300,
            -2.0,
            f64::NEG_INFINITY,
        ];
        for pair in scores.windows(2) {
            assert!(
                descending_key(pair[0]) <= descending_key(pair[1]),
                "{pair:?}"
            );
        }
        assert_eq!(descending_key(0.0), descending_key(-0.0));
    }
}
