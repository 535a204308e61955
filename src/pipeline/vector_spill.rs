//! Query and hypothesis vectors set aside on disk from the end of the shared stages
//! until their chunk of queries is retrieved. The shared stages embed every query and
//! hypothesis at once (one batch plan, one cache pass, one offline check), but a chunk
//! reads only its own queries' vectors: at 10k queries with three hypotheses each,
//! 384-d, that is 61 MB that would otherwise stay resident beside the fact vectors for
//! the whole retrieval. Each chunk's vectors are contiguous in the file and come back
//! in one read.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};

use super::QueryExpansion;
use crate::error::Error;

/// Query and hypothesis vectors totalling this many bytes or more are worth a
/// temporary file.
pub const VECTOR_SPILL_MIN_BYTES: usize = 32 << 20;

/// The vectors taken from a run's query expansions.
pub(super) struct SpilledVectors {
    file: File,
    dimension: usize,
    /// The row at which each query's vectors start, and the total row count last.
    first_rows: Vec<u64>,
    /// Whether each query's first row is the query's own vector (the others are its
    /// hypotheses').
    has_query_vector: Vec<bool>,
}

/// A query's own vector (when it has one), then its hypotheses'.
fn vectors_of(expansion: &QueryExpansion) -> impl Iterator<Item = &Vec<f32>> {
    expansion
        .query_vector
        .iter()
        .chain(&expansion.hypothesis_vectors)
}

fn spill_error(source: std::io::Error) -> Error {
    Error::Write {
        path: std::env::temp_dir().join("(hyde-eval spilled query vectors)"),
        source,
    }
}

impl SpilledVectors {
    /// Moves the vectors of `expansions` into a temporary file when they total at least
    /// `min_bytes`, and gives their memory back; `None` (nothing moved) below.
    pub(super) fn take(
        expansions: &mut [QueryExpansion],
        min_bytes: usize,
    ) -> Result<Option<SpilledVectors>, Error> {
        let vectors = || expansions.iter().flat_map(vectors_of);
        let dimension = vectors().next().map_or(0, Vec::len);
        let total: usize = vectors().map(Vec::len).sum();
        if total * 4 < min_bytes || dimension == 0 {
            return Ok(None);
        }
        if vectors().any(|vector| vector.len() != dimension) {
            return Err(spill_error(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "query and hypothesis vectors differ in dimension",
            )));
        }
        let file = tempfile::tempfile().map_err(spill_error)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let mut first_rows = Vec::with_capacity(expansions.len() + 1);
        let mut has_query_vector = Vec::with_capacity(expansions.len());
        let mut row = 0u64;
        for expansion in expansions.iter() {
            first_rows.push(row);
            has_query_vector.push(expansion.query_vector.is_some());
            for vector in vectors_of(expansion) {
                for value in vector {
                    out.write_all(&value.to_le_bytes()).map_err(spill_error)?;
                }
                row += 1;
            }
        }
        first_rows.push(row);
        let file = out
            .into_inner()
            .map_err(|error| spill_error(error.into_error()))?;
        // Only once everything is safely written is it released.
        for expansion in expansions.iter_mut() {
            expansion.query_vector = None;
            expansion.hypothesis_vectors = Vec::new();
        }
        crate::memory::release_freed_memory();
        Ok(Some(SpilledVectors {
            file,
            dimension,
            first_rows,
            has_query_vector,
        }))
    }

    /// Puts back the vectors of `expansions`: the queries from position `first` on.
    pub(super) fn restore(
        &self,
        first: usize,
        expansions: &mut [QueryExpansion],
    ) -> Result<(), Error> {
        let row_bytes = self.dimension * 4;
        let start = self.first_rows[first];
        let end = self.first_rows[first + expansions.len()];
        let mut bytes = vec![0u8; (end - start) as usize * row_bytes];
        let mut file = &self.file;
        file.seek(SeekFrom::Start(start * row_bytes as u64))
            .map_err(spill_error)?;
        file.read_exact(&mut bytes).map_err(spill_error)?;
        let mut rows = bytes.chunks_exact(row_bytes).map(|row| {
            row.chunks_exact(4)
                .map(|value| f32::from_le_bytes([value[0], value[1], value[2], value[3]]))
                .collect::<Vec<f32>>()
        });
        for (position, expansion) in (first..).zip(expansions.iter_mut()) {
            let count = (self.first_rows[position + 1] - self.first_rows[position]) as usize;
            let mut own = rows.by_ref().take(count);
            if self.has_query_vector[position] {
                expansion.query_vector = own.next();
            }
            expansion.hypothesis_vectors = own.collect();
        }
        Ok(())
    }
}
