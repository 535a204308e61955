//! An interner of index terms: each distinct term gets a number, in order of first
//! insertion, and its bytes are stored once, back to back in one buffer (no string per
//! term). Look-ups go through an open-addressing table (linear probing, at most half
//! full) of 16-byte slots, each a term's key, length and number. A term of at most 8
//! bytes (most terms) is its own key, its bytes read as one integer, so finding it
//! compares integers and reads nothing else; a longer term's key is its hash, and its
//! bytes are compared only when key and length match. Growing the table reads only the
//! slots.

/// Distinct terms and their numbers (see the module docs).
pub struct TermTable {
    slots: Vec<Slot>,
    /// The terms' bytes, in number order.
    bytes: Vec<u8>,
    /// Where each term ends in `bytes` (term `i` starts where term `i - 1` ends).
    ends: Vec<u32>,
}

/// One slot of a [`TermTable`].
#[derive(Clone, Copy, Default)]
struct Slot {
    /// The term's bytes as an integer (at most 8 bytes), or its hash.
    key: u64,
    length: u32,
    /// The term's number + 1; 0 for an empty slot.
    number: u32,
}

/// Slots of a new table, at least: room for 1,024 terms before it grows.
const INITIAL_SLOTS: usize = 2048;

const MULTIPLIER: u64 = 0xA076_1D64_78BD_642F;

/// The high and low halves of the 128-bit product of `left` and `right`, xor-ed (as
/// wyhash and foldhash mix), so every bit of either input reaches the low bits.
fn fold(left: u64, right: u64) -> u64 {
    let product = u128::from(left) * u128::from(right);
    product as u64 ^ (product >> 64) as u64
}

/// The key of `term`: its bytes little-endian (the first byte lowest) when it has at most
/// 8, read as at most two overlapping words; else the hash of its 8-byte words (the last
/// one read overlapping).
fn key_of(term: &[u8]) -> u64 {
    let word = |at: usize| u64::from_le_bytes(term[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| {
        u64::from(u32::from_le_bytes(
            term[at..at + 4].try_into().expect("4 bytes"),
        ))
    };
    let length = term.len();
    match length {
        0 => 0,
        1..=3 => {
            u64::from(term[0])
                | u64::from(term[length / 2]) << (8 * (length / 2))
                | u64::from(term[length - 1]) << (8 * (length - 1))
        }
        4..=7 => half(0) | half(length - 4) << (8 * (length - 4)),
        8 => word(0),
        _ => {
            let mut hash = length as u64;
            let mut at = 0;
            while at + 8 < length {
                hash = fold(hash ^ word(at), MULTIPLIER);
                at += 8;
            }
            fold(hash ^ word(length - 8), MULTIPLIER)
        }
    }
}

/// The slot where the search for `key` starts, in a table of `mask + 1` slots.
fn home_slot(key: u64, mask: usize) -> usize {
    fold(key, MULTIPLIER) as usize & mask
}

impl TermTable {
    /// An empty table with room for about `terms` terms before it grows.
    pub fn with_room(terms: usize) -> TermTable {
        let slots = (terms * 2).next_power_of_two().max(INITIAL_SLOTS);
        TermTable {
            slots: vec![Slot::default(); slots],
            bytes: Vec::new(),
            ends: Vec::with_capacity(terms),
        }
    }

    /// The number of distinct terms.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Term `number`'s bytes.
    pub fn term(&self, number: u32) -> &[u8] {
        let number = number as usize;
        let start = if number == 0 {
            0
        } else {
            self.ends[number - 1] as usize
        };
        &self.bytes[start..self.ends[number] as usize]
    }

    /// The number of `term`, when it is in the table.
    pub fn get(&self, term: &[u8]) -> Option<u32> {
        self.find(term, key_of(term)).ok()
    }

    /// The number of `term`, numbering it next when it is new; and whether it was.
    #[inline]
    pub fn intern(&mut self, term: &[u8]) -> (u32, bool) {
        let key = key_of(term);
        let slot = match self.find(term, key) {
            Ok(number) => return (number, false),
            Err(slot) => slot,
        };
        let number = self.ends.len() as u32;
        self.bytes.extend_from_slice(term);
        self.ends.push(self.bytes.len() as u32);
        self.slots[slot] = Slot {
            key,
            length: term.len() as u32,
            number: number + 1,
        };
        if self.ends.len() * 2 > self.slots.len() {
            self.grow();
        }
        (number, true)
    }

    /// `Ok(number)` of `term` (whose key is `key`), or `Err(slot)`: the empty slot it
    /// would take.
    #[inline]
    fn find(&self, term: &[u8], key: u64) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut slot = home_slot(key, mask);
        loop {
            let found = self.slots[slot];
            if found.number == 0 {
                return Err(slot);
            }
            if found.key == key
                && found.length as usize == term.len()
                && (term.len() <= 8 || self.term(found.number - 1) == term)
            {
                return Ok(found.number - 1);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Doubles the slots and puts every term back.
    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        let mask = size - 1;
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); size]);
        for found in old.into_iter().filter(|found| found.number != 0) {
            let mut slot = home_slot(found.key, mask);
            while self.slots[slot].number != 0 {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = found;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_numbered_in_order_of_first_insertion() {
        let mut table = TermTable::with_room(0);
        assert_eq!(table.slots.len(), INITIAL_SLOTS);
        // Enough terms to grow the table several times, of every length up to 20 (some
        // sharing their first 8 or last 8 bytes), the empty term and a 0 byte among them.
        let mut words: Vec<Vec<u8>> = (0..5000)
            .map(|index: u64| {
                let digits = format!("{}", index * 7919 % 100_003);
                let mut word = digits.repeat(1 + index as usize % 4).into_bytes();
                word.truncate(1 + index as usize % 20);
                word
            })
            .collect();
        words.extend([
            b"".to_vec(),
            b"a\0".to_vec(),
            b"a".to_vec(),
            b"abcdefgh1".to_vec(),
            b"xabcdefgh1".to_vec(),
        ]);
        let mut distinct: Vec<&[u8]> = Vec::new();
        for word in &words {
            let expected = match distinct.iter().position(|known| known == word) {
                Some(number) => (number as u32, false),
                None => {
                    distinct.push(word);
                    (distinct.len() as u32 - 1, true)
                }
            };
            assert_eq!(table.intern(word), expected, "{word:?}");
        }
        assert_eq!(table.len(), distinct.len());
        for (number, word) in distinct.iter().enumerate() {
            assert_eq!(table.get(word), Some(number as u32));
            assert_eq!(table.term(number as u32), *word);
        }
        assert_eq!(table.get(b"absent"), None);
        assert_eq!(table.get(b"abcdefgh2"), None);
        assert!(table.slots.len() > INITIAL_SLOTS);
    }

    #[test]
    fn keys_of_short_terms_are_their_bytes() {
        for length in 1..=8 {
            let term: Vec<u8> = (1..=length).collect();
            let expected = term
                .iter()
                .enumerate()
                .fold(0u64, |key, (at, &byte)| key | u64::from(byte) << (8 * at));
            assert_eq!(key_of(&term), expected, "{length}");
        }
        // Longer terms that differ in one byte hash differently.
        for length in 9..=24 {
            let base = vec![b'a'; length];
            for position in 0..length {
                let mut changed = base.clone();
                changed[position] = b'b';
                assert_ne!(key_of(&base), key_of(&changed), "{length} {position}");
            }
        }
        assert_eq!(TermTable::with_room(5000).slots.len(), 16_384);
    }
}
