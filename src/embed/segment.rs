//! Corpus segments: a cached provider's whole corpus index (the fact matrix)
//! stored as one file in the provider's cache namespace, and memory-mapped by the next
//! run instead of being rebuilt from one cache entry per fact.
//!
//! A segment is `segments/<key>.segment`: a 32-byte header (the magic `HYDESEG2`, then
//! the dimension, the row count and the xxh3-64 of the payload, each a little-endian
//! u64), then the rows as little-endian f32 (as [`FlatIndex::rows`] holds them). The key
//! covers the segment format, the provider's embedding space, the input type of documents and every fact text in corpus order, so a change
//! to either misses. A segment is written through a temporary and renamed into place,
//! never modified in place, so a map of it stays valid. A damaged one (short, padded,
//! or failing its checksum) is ignored and rewritten.

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

use crate::cache::hex;
use crate::error::Error;
use crate::index::FlatIndex;
use crate::interrupt::write_through_temporary_with;

const MAGIC: &[u8; 8] = b"HYDESEG2";
/// Names the segment format inside every segment key ([`MAGIC`]'s last byte): a segment
/// of another format is never looked up, so it is neither served nor counted as damaged.
pub const FORMAT: &str = "corpus-segment-2";
const HEADER_BYTES: usize = 32;
/// Where the header keeps the payload's checksum.
const CHECKSUM_AT: u64 = 24;
/// Rows converted to bytes at once while hashing and writing.
const ROWS_PER_BLOCK: usize = 16 * 1024;

/// What a segment lookup found.
pub enum SegmentLookup {
    Hit(FlatIndex),
    Miss,
    /// Present but unusable; the reason names the file.
    Damaged(String),
}

/// The segments of one cache namespace.
pub struct SegmentStore {
    directory: PathBuf,
}

impl SegmentStore {
    /// The segments kept under the namespace directory `namespace`.
    pub fn new(namespace: &Path) -> SegmentStore {
        SegmentStore {
            directory: namespace.join("segments"),
        }
    }

    fn path(&self, key: &[u8; 32]) -> PathBuf {
        self.directory.join(format!("{}.segment", hex(key)))
    }

    /// The index stored under `key`, mapped in place, if it is whole and has `rows`
    /// rows (and `dimension` columns, unless that is 0: not known yet).
    pub fn load(&self, key: &[u8; 32], rows: usize, dimension: usize) -> SegmentLookup {
        let path = self.path(key);
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return SegmentLookup::Miss
            }
            Err(error) => return SegmentLookup::Damaged(format!("{}: {error}", path.display())),
        };
        // SAFETY: segments are replaced by rename, never written in place, so the mapped
        // file does not change while the map lives.
        let map = match unsafe { memmap2::Mmap::map(&file) } {
            Ok(map) => map,
            Err(error) => return SegmentLookup::Damaged(format!("{}: {error}", path.display())),
        };
        let damaged =
            |reason: &str| SegmentLookup::Damaged(format!("{}: {reason}", path.display()));
        if map.len() < HEADER_BYTES || &map[..8] != MAGIC {
            return damaged("not a hyde-eval segment (bad header)");
        }
        let field = |at: usize| u64::from_le_bytes(map[at..at + 8].try_into().expect("8 bytes"));
        let (stored_dimension, stored_rows, checksum) =
            (field(8), field(16), field(CHECKSUM_AT as usize));
        let expected_bytes = stored_dimension
            .checked_mul(stored_rows)
            .and_then(|values| values.checked_mul(4))
            .and_then(|bytes| bytes.checked_add(HEADER_BYTES as u64));
        if expected_bytes != Some(map.len() as u64) {
            return damaged("truncated or padded");
        }
        if stored_rows != rows as u64 || (dimension != 0 && stored_dimension != dimension as u64) {
            return damaged("its shape does not match the corpus");
        }
        if xxhash_rust::xxh3::xxh3_64(&map[HEADER_BYTES..]) != checksum {
            return damaged("checksum mismatch");
        }
        match FlatIndex::from_mapped(stored_dimension as usize, rows, map, HEADER_BYTES) {
            Some(index) => SegmentLookup::Hit(index),
            None => damaged("cannot be used on this machine"),
        }
    }

    /// Stores `index` under `key`, replacing any previous segment.
    pub fn store(&self, key: &[u8; 32], index: &FlatIndex) -> Result<(), Error> {
        std::fs::create_dir_all(&self.directory).map_err(|source| Error::Write {
            path: self.directory.clone(),
            source,
        })?;
        let dimension = index.dimension();
        write_through_temporary_with(&self.path(key), false, |file| {
            // The checksum is known only after the rows: it is written last, over the
            // header's placeholder, so the rows are converted and written once.
            file.write_all(MAGIC)?;
            for field in [dimension as u64, index.len() as u64, 0] {
                file.write_all(&field.to_le_bytes())?;
            }
            let mut hasher = Xxh3::new();
            let mut block = Vec::with_capacity(ROWS_PER_BLOCK * dimension.max(1) * 4);
            for rows in index.rows().chunks(ROWS_PER_BLOCK * dimension.max(1)) {
                block.clear();
                for value in rows {
                    block.extend_from_slice(&value.to_le_bytes());
                }
                hasher.update(&block);
                file.write_all(&block)?;
            }
            file.seek(SeekFrom::Start(CHECKSUM_AT))?;
            file.write_all(&hasher.digest().to_le_bytes())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> FlatIndex {
        FlatIndex::build(
            3,
            &[
                vec![1.0, 2.0, 2.0],
                vec![0.0, 0.0, 0.0],
                vec![-3.0, 0.0, 4.0],
            ],
        )
    }

    #[test]
    fn a_stored_segment_maps_back_to_the_same_rows() {
        let directory = tempfile::tempdir().unwrap();
        let store = SegmentStore::new(directory.path());
        let key = [7u8; 32];
        assert!(matches!(store.load(&key, 3, 3), SegmentLookup::Miss));
        store.store(&key, &index()).unwrap();
        let SegmentLookup::Hit(mapped) = store.load(&key, 3, 3) else {
            panic!("the stored segment was not found whole");
        };
        assert!(mapped.is_mapped());
        // Each row scaled by the power of two putting its norm in [1, 2): (1, 2, 2) has
        // norm 3, so halved; a zero row; (-3, 0, 4) has norm 5, so quartered.
        let expected = [0.5, 1.0, 1.0, 0.0, 0.0, 0.0, -0.75, 0.0, 1.0];
        assert_eq!(mapped.rows(), expected.as_slice());
        assert_eq!(
            mapped.search(&[1.0, 2.0, 2.0], 3, f64::NEG_INFINITY),
            index().search(&[1.0, 2.0, 2.0], 3, f64::NEG_INFINITY)
        );
    }

    #[test]
    fn damaged_or_mismatched_segments_are_never_served() {
        let directory = tempfile::tempdir().unwrap();
        let store = SegmentStore::new(directory.path());
        let key = [9u8; 32];
        store.store(&key, &index()).unwrap();
        assert!(matches!(store.load(&key, 4, 3), SegmentLookup::Damaged(_)));
        assert!(matches!(
            store.load(&key, 3, 384),
            SegmentLookup::Damaged(_)
        ));
        let path = store.path(&key);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        match store.load(&key, 3, 3) {
            SegmentLookup::Damaged(reason) => assert!(reason.contains("checksum"), "{reason}"),
            _ => panic!("a flipped bit was served"),
        }
        std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
        match store.load(&key, 3, 3) {
            SegmentLookup::Damaged(reason) => assert!(reason.contains("truncated"), "{reason}"),
            _ => panic!("a truncated segment was served"),
        }
    }
}
