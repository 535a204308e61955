//! Compressed posting lists, the bulk of a lexical index. Each list is a run of facts in
//! ascending order with a term frequency, stored as variable-length integers in one byte
//! buffer shared by all lists: per posting, the gap from the previous fact shifted left
//! once, with the low bit set when a frequency other than 1 follows. Most postings take
//! one or two bytes instead of eight, and a search still reads only its terms' lists,
//! front to back.

use integer_encoding::VarInt;

use super::FactIndex;

/// The postings of a run of consecutive facts, recorded fact by fact in one buffer: each
/// fact's lists (each once, numbered as the run numbers them) with their frequencies.
#[derive(Default)]
pub struct FactRun {
    /// Per posting: its list's number shifted left once, with the low bit set when a
    /// frequency other than 1 follows as the next entry.
    entries: Vec<u32>,
    /// Where each fact's entries end, in fact order.
    ends: Vec<u32>,
}

impl FactRun {
    /// Records that the current fact is in list `list` `frequency` (>= 1) times; a list
    /// at most once per fact.
    pub fn push(&mut self, list: u32, frequency: u32) {
        debug_assert!(frequency >= 1 && list < 1 << 31);
        if frequency == 1 {
            self.entries.push(list << 1);
        } else {
            self.entries.push((list << 1) | 1);
            self.entries.push(frequency);
        }
    }

    /// Closes the current fact; the next push is the next fact's.
    pub fn end_fact(&mut self) {
        self.ends.push(self.entries.len() as u32);
    }
}

/// One joined list's progress while [`PostingLists::join`] lays the lists out.
#[derive(Clone, Copy, Default)]
struct JoinedList {
    /// The last fact placed.
    last: FactIndex,
    /// Facts placed so far.
    length: u32,
    /// Bytes the list takes (first pass), then where its next byte goes (second).
    bytes: usize,
}

/// The bytes of `value` as a varint (LEB128, as [`VarInt`] encodes it).
fn varint_length(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// Writes `value` as a varint (LEB128) at `bytes[*at..]`, moving `at` past it.
fn put_varint(bytes: &mut [u8], at: &mut usize, mut value: u64) {
    while value >= 0x80 {
        bytes[*at] = value as u8 | 0x80;
        *at += 1;
        value >>= 7;
    }
    bytes[*at] = value as u8;
    *at += 1;
}

/// Calls `visit` with each posting of `runs` (see [`PostingLists::join`]) in fact order:
/// its joined list, as it was before the posting, the varint word of its gap in that list
/// with the flag of a frequency other than 1, and its frequency.
fn for_each_joined_posting(
    runs: &[(FactIndex, &FactRun, &[u32])],
    lists: &mut [JoinedList],
    mut visit: impl FnMut(&mut JoinedList, u64, u32),
) {
    for &(first, run, targets) in runs {
        let mut at = 0;
        for (offset, &end) in run.ends.iter().enumerate() {
            let fact = first + offset as FactIndex;
            while at < end as usize {
                let entry = run.entries[at];
                let list = &mut lists[targets[(entry >> 1) as usize] as usize];
                let gap = if list.length == 0 {
                    fact
                } else {
                    fact - list.last
                };
                let word = (u64::from(gap) << 1) | u64::from(entry & 1);
                let frequency = if entry & 1 == 1 {
                    at += 1;
                    run.entries[at]
                } else {
                    1
                };
                at += 1;
                visit(list, word, frequency);
                list.last = fact;
                list.length += 1;
            }
        }
    }
}

impl PostingLists {
    /// Joins runs of consecutive facts into `list_count` lists packed into one buffer,
    /// as appending every posting to its list's own buffer and packing the buffers in
    /// list order would (the tests' `PostingListsBuilder`): run `(first,
    /// postings, targets)` holds facts `first`, `first + 1`, ..., and its list `i` is
    /// joined list `targets[i]`. Every fact of a run must be greater than every fact of
    /// the runs before it. Two passes over the postings: the first measures each list,
    /// the second writes each posting in its place.
    pub fn join(runs: &[(FactIndex, &FactRun, &[u32])], list_count: usize) -> PostingLists {
        let mut lists = vec![JoinedList::default(); list_count];
        for_each_joined_posting(runs, &mut lists, |list, word, frequency| {
            list.bytes += varint_length(word);
            if word & 1 == 1 {
                list.bytes += varint_length(u64::from(frequency));
            }
        });
        let mut starts = Vec::with_capacity(list_count + 1);
        let mut lengths = Vec::with_capacity(list_count);
        let mut total = 0;
        for list in &mut lists {
            starts.push(total);
            lengths.push(list.length);
            total += list.bytes;
            *list = JoinedList {
                bytes: starts[starts.len() - 1],
                ..JoinedList::default()
            };
        }
        starts.push(total);
        let mut bytes = vec![0u8; total];
        for_each_joined_posting(runs, &mut lists, |list, word, frequency| {
            put_varint(&mut bytes, &mut list.bytes, word);
            if word & 1 == 1 {
                put_varint(&mut bytes, &mut list.bytes, u64::from(frequency));
            }
        });
        PostingLists {
            bytes,
            starts,
            lengths,
        }
    }
}

/// Immutable compressed posting lists (see the module docs).
pub struct PostingLists {
    bytes: Vec<u8>,
    /// Byte offset of each list, and the end of the last.
    starts: Vec<usize>,
    /// Postings per list (the term's document frequency).
    lengths: Vec<u32>,
}

impl PostingLists {
    /// The number of facts in list `list`.
    pub fn length(&self, list: usize) -> usize {
        self.lengths[list] as usize
    }

    /// A copy of these lists with those for which `keep` is false emptied.
    pub fn keeping(&self, keep: impl Fn(usize) -> bool) -> PostingLists {
        let mut bytes = Vec::new();
        let mut starts = Vec::with_capacity(self.starts.len());
        let mut lengths = Vec::with_capacity(self.lengths.len());
        for (list, &length) in self.lengths.iter().enumerate() {
            starts.push(bytes.len());
            if keep(list) {
                bytes.extend_from_slice(&self.bytes[self.starts[list]..self.starts[list + 1]]);
                lengths.push(length);
            } else {
                lengths.push(0);
            }
        }
        starts.push(bytes.len());
        bytes.shrink_to_fit();
        PostingLists {
            bytes,
            starts,
            lengths,
        }
    }

    /// The postings of list `list`: (fact, frequency), facts ascending.
    pub fn postings(&self, list: usize) -> Postings<'_> {
        Postings {
            bytes: &self.bytes[self.starts[list]..self.starts[list + 1]],
            fact: 0,
        }
    }
}

/// Iterator over one compressed posting list.
pub struct Postings<'a> {
    bytes: &'a [u8],
    /// The last fact read (0 before the first, whose gap is its position).
    fact: FactIndex,
}

impl Postings<'_> {
    #[inline]
    fn next_varint(&mut self) -> u64 {
        // Most postings fit one byte: the general decoder is out of line.
        if let Some(&byte) = self.bytes.first().filter(|&&byte| byte < 0x80) {
            self.bytes = &self.bytes[1..];
            return u64::from(byte);
        }
        self.next_long_varint()
    }

    #[cold]
    #[inline(never)]
    fn next_long_varint(&mut self) -> u64 {
        let (value, length) = u64::decode_var(self.bytes).expect("posting lists are well-formed");
        self.bytes = &self.bytes[length..];
        value
    }
}

impl Iterator for Postings<'_> {
    type Item = (FactIndex, u32);

    #[inline]
    fn next(&mut self) -> Option<(FactIndex, u32)> {
        if self.bytes.is_empty() {
            return None;
        }
        let word = self.next_varint();
        self.fact += (word >> 1) as FactIndex;
        let frequency = if word & 1 == 1 {
            self.next_varint() as u32
        } else {
            1
        };
        Some((self.fact, frequency))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends `value` to `bytes` as a varint (LEB128, as [`VarInt`] encodes it), a byte at
    /// a time: most values take one.
    fn push_varint(bytes: &mut Vec<u8>, mut value: u64) {
        while value >= 0x80 {
            bytes.push(value as u8 | 0x80);
            value >>= 7;
        }
        bytes.push(value as u8);
    }

    /// Posting lists built posting by posting, each list in a buffer of its own: the layout
    /// [`PostingLists::join`] must produce. Facts are pushed in ascending order per list.
    #[derive(Default)]
    struct PostingListsBuilder {
        lists: Vec<ListBuilder>,
    }

    #[derive(Default)]
    struct ListBuilder {
        bytes: Vec<u8>,
        /// The last fact pushed (meaningful once `length` > 0).
        last: FactIndex,
        length: u32,
    }

    impl PostingListsBuilder {
        /// Starts a new, empty list; returns its number.
        fn add_list(&mut self) -> usize {
            self.lists.push(ListBuilder::default());
            self.lists.len() - 1
        }

        /// Appends `fact` with `frequency` (>= 1) to list `list`; `fact` must be greater than
        /// every fact already in it.
        fn push(&mut self, list: usize, fact: FactIndex, frequency: u32) {
            let list = &mut self.lists[list];
            debug_assert!(list.length == 0 || fact > list.last, "facts ascend");
            debug_assert!(frequency >= 1);
            let gap = if list.length == 0 {
                fact
            } else {
                fact - list.last
            };
            let has_frequency = frequency != 1;
            push_varint(
                &mut list.bytes,
                (u64::from(gap) << 1) | u64::from(has_frequency),
            );
            if has_frequency {
                push_varint(&mut list.bytes, u64::from(frequency));
            }
            list.last = fact;
            list.length += 1;
        }

        /// Whether list `list` ends with `fact`.
        fn ends_with(&self, list: usize, fact: FactIndex) -> bool {
            let list = &self.lists[list];
            list.length > 0 && list.last == fact
        }

        /// The finished lists, numbered by their position in `order` (a permutation of the
        /// list numbers), packed into one buffer.
        fn finish_in_order(self, order: &[usize]) -> PostingLists {
            debug_assert_eq!(order.len(), self.lists.len());
            let total: usize = self.lists.iter().map(|list| list.bytes.len()).sum();
            let mut lists: Vec<Option<ListBuilder>> = self.lists.into_iter().map(Some).collect();
            let mut bytes = Vec::with_capacity(total);
            let mut starts = Vec::with_capacity(order.len() + 1);
            let mut lengths = Vec::with_capacity(order.len());
            for &number in order {
                let list = lists[number].take().expect("order is a permutation");
                starts.push(bytes.len());
                bytes.extend_from_slice(&list.bytes);
                lengths.push(list.length);
            }
            starts.push(bytes.len());
            PostingLists {
                bytes,
                starts,
                lengths,
            }
        }
    }

    #[test]
    fn lists_round_trip_in_the_requested_order() {
        let mut builder = PostingListsBuilder::default();
        let a = builder.add_list();
        let b = builder.add_list();
        let c = builder.add_list();
        let first: Vec<(FactIndex, u32)> = vec![
            (0, 1),
            (1, 2),
            (63, 1),
            (64, 300),
            (200_000, 1),
            (u32::MAX, 7),
        ];
        for &(fact, frequency) in &first {
            builder.push(a, fact, frequency);
        }
        builder.push(b, 5, 1);
        assert!(builder.ends_with(b, 5) && !builder.ends_with(b, 4) && !builder.ends_with(c, 0));
        let lists = builder.finish_in_order(&[b, c, a]);
        assert_eq!(lists.postings(2).collect::<Vec<_>>(), first);
        assert_eq!(lists.length(2), first.len());
        assert_eq!(lists.postings(0).collect::<Vec<_>>(), vec![(5, 1)]);
        assert_eq!(lists.postings(1).count(), 0);
        assert_eq!(lists.length(1), 0);
    }

    #[test]
    fn kept_lists_read_the_same_and_the_others_are_empty() {
        let mut builder = PostingListsBuilder::default();
        for list in 0..3 {
            builder.add_list();
            for fact in 0..5 {
                builder.push(list, fact * (list as FactIndex + 1), fact + 1);
            }
        }
        let lists = builder.finish_in_order(&[0, 1, 2]);
        let kept = lists.keeping(|list| list != 1);
        for list in [0, 2] {
            assert_eq!(
                kept.postings(list).collect::<Vec<_>>(),
                lists.postings(list).collect::<Vec<_>>()
            );
            assert_eq!(kept.length(list), 5);
        }
        assert_eq!(kept.postings(1).count(), 0);
        assert_eq!(kept.length(1), 0);
        assert!(kept.bytes.len() < lists.bytes.len());
    }

    #[test]
    fn joined_runs_equal_one_builder() {
        // Postings of three lists over facts 0..40, built whole and in three runs whose
        // lists are numbered differently.
        let postings: Vec<(usize, FactIndex, u32)> = (0..40)
            .flat_map(|fact: FactIndex| {
                (0..3)
                    .filter(move |list| (fact as usize + list).is_multiple_of(list + 2))
                    .map(move |list| (list, fact, 1 + fact % 3 * 100))
            })
            .collect();
        let mut whole = PostingListsBuilder::default();
        for _ in 0..3 {
            whole.add_list();
        }
        for &(list, fact, frequency) in &postings {
            whole.push(list, fact, frequency);
        }
        let whole = whole.finish_in_order(&[0, 1, 2]);
        let mut runs = Vec::new();
        for (range, targets) in [
            (0..7, vec![2u32, 0, 1]),
            (7..8, vec![1, 0, 2]),
            (8..40, vec![0, 1, 2]),
        ] {
            let mut run = FactRun::default();
            for fact in range.clone() {
                for &(list, _, frequency) in postings.iter().filter(|posting| posting.1 == fact) {
                    let local = targets
                        .iter()
                        .position(|&target| target as usize == list)
                        .unwrap();
                    run.push(local as u32, frequency);
                }
                run.end_fact();
            }
            runs.push((range.start, run, targets));
        }
        let runs: Vec<(FactIndex, &FactRun, &[u32])> = runs
            .iter()
            .map(|(first, run, targets)| (*first, run, targets.as_slice()))
            .collect();
        let joined = PostingLists::join(&runs, 3);
        assert_eq!(joined.bytes, whole.bytes);
        assert_eq!(joined.starts, whole.starts);
        assert_eq!(joined.lengths, whole.lengths);
    }

    #[test]
    fn varint_lengths_match_the_encoding() {
        for value in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX) << 1 | 1,
            u64::MAX,
        ] {
            let mut bytes = Vec::new();
            push_varint(&mut bytes, value);
            assert_eq!(varint_length(value), bytes.len(), "{value}");
        }
    }

    #[test]
    fn common_postings_take_one_byte() {
        let mut builder = PostingListsBuilder::default();
        let list = builder.add_list();
        for fact in 0..1000 {
            builder.push(list, fact * 3, 1);
        }
        let lists = builder.finish_in_order(&[list]);
        assert_eq!(lists.bytes.len(), 1000);
    }
}
