//! Query and hypothesis vectors set aside on disk as soon as they are made, until their
//! chunk of queries is retrieved. The shared stages embed every query in one call and
//! every hypothesis in a second (one batch plan, one cache pass, one offline check), but
//! a chunk reads only its own queries' vectors: at 100k queries with three hypotheses
//! each, 384-d, that is 614 MB that would otherwise sit in memory beside everything
//! else. The query vectors go to the file before the hypotheses are embedded, so the two
//! never need memory at once. Each chunk's vectors come back in two reads, one per
//! section of the file.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};

use super::expand::QueryExpansion;
use crate::error::Error;

/// Query and hypothesis vectors totalling this many bytes or more are worth a
/// temporary file.
pub const VECTOR_SPILL_MIN_BYTES: usize = 32 << 20;

fn spill_error(source: std::io::Error) -> Error {
    Error::Write {
        path: std::env::temp_dir().join("(hyde-eval spilled query vectors)"),
        source,
    }
}

/// Vectors being written: the query section first, then the hypothesis section.
pub(super) struct VectorSpillWriter {
    out: BufWriter<File>,
    dimension: usize,
    rows: u64,
    /// The first row of each query's own vector (and the section's end last).
    query_rows: Vec<u64>,
    /// The first row of each query's hypothesis vectors (and the section's end last).
    hypothesis_rows: Vec<u64>,
}

impl VectorSpillWriter {
    /// A writer for vectors of `dimension` values.
    pub(super) fn new(dimension: usize) -> Result<VectorSpillWriter, Error> {
        let file = tempfile::tempfile().map_err(spill_error)?;
        Ok(VectorSpillWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            dimension,
            rows: 0,
            query_rows: Vec::new(),
            hypothesis_rows: Vec::new(),
        })
    }

    fn write_row(&mut self, vector: &[f32]) -> Result<(), Error> {
        if vector.len() != self.dimension {
            return Err(spill_error(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "query and hypothesis vectors differ in dimension",
            )));
        }
        for value in vector {
            self.out
                .write_all(&value.to_le_bytes())
                .map_err(spill_error)?;
        }
        self.rows += 1;
        Ok(())
    }

    /// Moves every query's own vector into the file and frees it.
    pub(super) fn take_query_vectors(
        &mut self,
        expansions: &mut [QueryExpansion],
    ) -> Result<(), Error> {
        for expansion in expansions.iter_mut() {
            self.query_rows.push(self.rows);
            if let Some(vector) = expansion.query_vector.take() {
                self.write_row(&vector)?;
            }
        }
        self.query_rows.push(self.rows);
        crate::memory::release_freed_memory();
        Ok(())
    }

    /// Moves every query's hypothesis vectors into the file and frees them.
    pub(super) fn take_hypothesis_vectors(
        &mut self,
        expansions: &mut [QueryExpansion],
    ) -> Result<(), Error> {
        for expansion in expansions.iter_mut() {
            self.hypothesis_rows.push(self.rows);
            for vector in std::mem::take(&mut expansion.hypothesis_vectors) {
                self.write_row(&vector)?;
            }
        }
        self.hypothesis_rows.push(self.rows);
        crate::memory::release_freed_memory();
        Ok(())
    }

    /// The file, readable by chunk.
    pub(super) fn finish(self) -> Result<SpilledVectors, Error> {
        let file = self
            .out
            .into_inner()
            .map_err(|error| spill_error(error.into_error()))?;
        Ok(SpilledVectors {
            file,
            dimension: self.dimension,
            query_rows: self.query_rows,
            hypothesis_rows: self.hypothesis_rows,
        })
    }
}

/// The vectors taken from a run's query expansions.
pub(super) struct SpilledVectors {
    file: File,
    dimension: usize,
    query_rows: Vec<u64>,
    hypothesis_rows: Vec<u64>,
}

impl SpilledVectors {
    /// Reads rows `start..end` of the file.
    fn rows(&self, start: u64, end: u64) -> Result<Vec<Vec<f32>>, Error> {
        let row_bytes = self.dimension * 4;
        let mut bytes = vec![0u8; (end - start) as usize * row_bytes];
        let mut file = &self.file;
        file.seek(SeekFrom::Start(start * row_bytes as u64))
            .map_err(spill_error)?;
        file.read_exact(&mut bytes).map_err(spill_error)?;
        Ok(bytes
            .chunks_exact(row_bytes.max(1))
            .map(|row| {
                row.chunks_exact(4)
                    .map(|value| f32::from_le_bytes([value[0], value[1], value[2], value[3]]))
                    .collect()
            })
            .collect())
    }

    /// Puts back the vectors of `expansions`: the queries from position `first` on.
    pub(super) fn restore(
        &self,
        first: usize,
        expansions: &mut [QueryExpansion],
    ) -> Result<(), Error> {
        let last = first + expansions.len();
        let sections = [(&self.query_rows, true), (&self.hypothesis_rows, false)];
        for (section, own_vector) in sections {
            // A section that was never written (no hypotheses were embedded) is empty.
            if section.is_empty() {
                continue;
            }
            let mut rows = self.rows(section[first], section[last])?.into_iter();
            for (position, expansion) in (first..).zip(expansions.iter_mut()) {
                let count = (section[position + 1] - section[position]) as usize;
                let mut own = rows.by_ref().take(count);
                if own_vector {
                    expansion.query_vector = own.next();
                } else {
                    expansion.hypothesis_vectors = own.collect();
                }
            }
        }
        Ok(())
    }
}
