//! Compressed posting lists, the bulk of a lexical index. Each list is a run of facts in
//! ascending order with a term frequency, stored as variable-length integers in one byte
//! buffer shared by all lists: per posting, the gap from the previous fact shifted left
//! once, with the low bit set when a frequency other than 1 follows. Most postings take
//! one or two bytes instead of eight, and a search still reads only its terms' lists,
//! front to back.

use integer_encoding::VarInt;

use super::FactIndex;

/// Appends `value` to `bytes` as a varint.
fn push_varint(bytes: &mut Vec<u8>, value: u64) {
    let mut buffer = [0u8; 10];
    let length = value.encode_var(&mut buffer);
    bytes.extend_from_slice(&buffer[..length]);
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

    /// The finished lists, numbered as they were added.
    pub fn finish(self) -> PostingLists {
        let order: Vec<usize> = (0..self.lists.len()).collect();
        self.finish_in_order(&order)
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
    fn common_postings_take_one_byte() {
        let mut builder = PostingListsBuilder::default();
        let list = builder.add_list();
        for fact in 0..1000 {
            builder.push(list, fact * 3, 1);
        }
        let lists = builder.finish();
        assert_eq!(lists.bytes.len(), 1000);
    }
}
