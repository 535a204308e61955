//! Compressed posting lists, the bulk of a lexical index. Each list is a run of facts in
//! ascending order with a term frequency, stored as variable-length integers in one byte
//! buffer shared by all lists: per posting, the gap from the previous fact shifted left
//! once, with the low bit set when a frequency other than 1 follows. Most postings take
//! one or two bytes instead of eight, and a search still reads only its terms' lists,
//! front to back.

use integer_encoding::VarInt;

use super::FactIndex;

/// Appends `value` to `bytes` as a varint (LEB128, as [`VarInt`] encodes it), a byte at
/// a time: most values take one.
fn push_varint(bytes: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        bytes.push(value as u8 | 0x80);
        value >>= 7;
    }
    bytes.push(value as u8);
}

/// Posting lists under construction: facts are pushed in ascending order per list.
#[derive(Default)]
pub struct PostingListsBuilder {
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
    pub fn add_list(&mut self) -> usize {
        self.lists.push(ListBuilder::default());
        self.lists.len() - 1
    }

    /// Appends `fact` with `frequency` (>= 1) to list `list`; `fact` must be greater than
    /// every fact already in it.
    pub fn push(&mut self, list: usize, fact: FactIndex, frequency: u32) {
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
    pub fn ends_with(&self, list: usize, fact: FactIndex) -> bool {
        let list = &self.lists[list];
        list.length > 0 && list.last == fact
    }

    /// The finished lists, numbered by their position in `order` (a permutation of the
    /// list numbers), packed into one buffer.
    pub fn finish_in_order(self, order: &[usize]) -> PostingLists {
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

    /// Joins lists built over consecutive runs of facts into `list_count` lists, packed
    /// into one buffer: list `i` of part `k` continues joined list `parts[k].1[i]`. Every
    /// fact of a part must be greater than every fact of the parts before it. A part's
    /// list is copied as it is, but for its first posting, whose gap is re-encoded from
    /// the joined list's last fact.
    pub fn join(parts: Vec<(PostingListsBuilder, Vec<usize>)>, list_count: usize) -> PostingLists {
        // The pieces of each joined list, in part order, flat: joined list `j`'s are
        // `pieces[piece_starts[j]..piece_starts[j + 1]]`, as (part, list).
        let mut piece_starts = vec![0usize; list_count + 1];
        let mut total = 0;
        for (builder, targets) in &parts {
            debug_assert_eq!(builder.lists.len(), targets.len());
            for (list, &target) in builder.lists.iter().zip(targets) {
                piece_starts[target + 1] += 1;
                total += list.bytes.len();
            }
        }
        for joined in 0..list_count {
            piece_starts[joined + 1] += piece_starts[joined];
        }
        let mut filled = piece_starts.clone();
        let mut pieces = vec![(0u32, 0u32); piece_starts[list_count]];
        for (part, (_, targets)) in parts.iter().enumerate() {
            for (list, &target) in targets.iter().enumerate() {
                pieces[filled[target]] = (part as u32, list as u32);
                filled[target] += 1;
            }
        }
        // A re-encoded gap is never longer than the fact it replaces.
        let mut bytes = Vec::with_capacity(total);
        let mut starts = Vec::with_capacity(list_count + 1);
        let mut lengths = Vec::with_capacity(list_count);
        for joined in 0..list_count {
            starts.push(bytes.len());
            let mut length = 0;
            let mut last: Option<FactIndex> = None;
            for &(part, list) in &pieces[piece_starts[joined]..piece_starts[joined + 1]] {
                let list = &parts[part as usize].0.lists[list as usize];
                if list.length == 0 {
                    continue;
                }
                match last {
                    None => bytes.extend_from_slice(&list.bytes),
                    Some(last) => {
                        // The part's first posting holds its fact itself as the gap.
                        let (word, word_length) =
                            u64::decode_var(&list.bytes).expect("posting lists are well-formed");
                        let fact = (word >> 1) as FactIndex;
                        debug_assert!(fact > last, "parts ascend");
                        push_varint(&mut bytes, (u64::from(fact - last) << 1) | (word & 1));
                        bytes.extend_from_slice(&list.bytes[word_length..]);
                    }
                }
                last = Some(list.last);
                length += list.length;
            }
            lengths.push(length);
        }
        starts.push(bytes.len());
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
            first: true,
        }
    }
}

/// Iterator over one compressed posting list.
pub struct Postings<'a> {
    bytes: &'a [u8],
    fact: FactIndex,
    first: bool,
}

impl Postings<'_> {
    fn next_varint(&mut self) -> u64 {
        // Most postings fit one byte: skip the general decoder for them.
        if let Some(&byte) = self.bytes.first().filter(|&&byte| byte < 0x80) {
            self.bytes = &self.bytes[1..];
            return u64::from(byte);
        }
        let (value, length) = u64::decode_var(self.bytes).expect("posting lists are well-formed");
        self.bytes = &self.bytes[length..];
        value
    }
}

impl Iterator for Postings<'_> {
    type Item = (FactIndex, u32);

    fn next(&mut self) -> Option<(FactIndex, u32)> {
        if self.bytes.is_empty() {
            return None;
        }
        let word = self.next_varint();
        let gap = (word >> 1) as FactIndex;
        self.fact = if self.first { gap } else { self.fact + gap };
        self.first = false;
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
    fn joined_parts_equal_one_builder() {
        // Postings of three lists over facts 0..40, built whole and in three parts whose
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
        let mut parts = Vec::new();
        for (range, targets) in [
            (0..7, vec![2, 0, 1]),
            (7..8, vec![1, 0, 2]),
            (8..40, vec![0, 1, 2]),
        ] {
            let mut part = PostingListsBuilder::default();
            for _ in 0..3 {
                part.add_list();
            }
            for &(list, fact, frequency) in &postings {
                if range.contains(&fact) {
                    let local = targets.iter().position(|&target| target == list).unwrap();
                    part.push(local, fact, frequency);
                }
            }
            parts.push((part, targets));
        }
        let joined = PostingListsBuilder::join(parts, 3);
        assert_eq!(joined.bytes, whole.bytes);
        assert_eq!(joined.starts, whole.starts);
        assert_eq!(joined.lengths, whole.lengths);
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
