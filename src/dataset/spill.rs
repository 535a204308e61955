//! Facts set aside on disk. Once the pipeline has built its indexes, embedded the
//! corpus and scored its recency, it reads no fact until the report names the facts it
//! shows. A large corpus' facts are therefore written to an anonymous temporary file
//! for the retrieval stage and read back afterwards, and the memory they held is given
//! back to the operating system. At a million facts that is over 300 MB less resident
//! beside the fact vectors.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use chrono::{DateTime, Utc};

use super::{Fact, FactId};
use crate::error::Error;

/// Facts whose texts total this many bytes or more are worth a temporary file.
pub const SPILL_MIN_BYTES: usize = 64 << 20;

/// Facts taken from a dataset, to be put back with [`SpilledFacts::restore`].
pub struct SpilledFacts {
    file: File,
    count: usize,
}

fn spill_error(source: std::io::Error) -> Error {
    Error::Write {
        path: std::env::temp_dir().join("(hyde-eval spilled facts)"),
        source,
    }
}

fn changed() -> Error {
    spill_error(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "a spilled fact came back changed",
    ))
}

/// The binary layout of one fact: every field, fixed-width numbers little-endian.
struct FactWriter<W: Write>(W);

impl<W: Write> FactWriter<W> {
    fn u64(&mut self, value: u64) -> std::io::Result<()> {
        self.0.write_all(&value.to_le_bytes())
    }

    fn text(&mut self, text: &str) -> std::io::Result<()> {
        self.u64(text.len() as u64)?;
        self.0.write_all(text.as_bytes())
    }

    fn optional_text(&mut self, text: Option<&str>) -> std::io::Result<()> {
        self.u64(u64::from(text.is_some()))?;
        text.map_or(Ok(()), |text| self.text(text))
    }

    fn optional_time(&mut self, time: Option<DateTime<Utc>>) -> std::io::Result<()> {
        self.u64(u64::from(time.is_some()))?;
        match time {
            Some(time) => {
                self.u64(time.timestamp() as u64)?;
                self.u64(u64::from(time.timestamp_subsec_nanos()))
            }
            None => Ok(()),
        }
    }

    fn fact(&mut self, fact: &Fact) -> std::io::Result<()> {
        self.text(fact.id.as_str())?;
        self.text(&fact.content)?;
        self.u64(fact.tags.len() as u64)?;
        for tag in &fact.tags {
            self.text(tag)?;
        }
        self.optional_text(fact.category.as_deref())?;
        self.optional_time(fact.created_at)?;
        self.optional_time(fact.last_accessed)?;
        self.u64(fact.access_count)?;
        self.u64(u64::from(fact.confidence.is_some()))?;
        self.u64(fact.confidence.unwrap_or(0.0).to_bits())
    }
}

struct FactReader<R: Read>(R);

impl<R: Read> FactReader<R> {
    fn u64(&mut self) -> Result<u64, Error> {
        let mut bytes = [0u8; 8];
        self.0.read_exact(&mut bytes).map_err(spill_error)?;
        Ok(u64::from_le_bytes(bytes))
    }

    fn flag(&mut self) -> Result<bool, Error> {
        match self.u64()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(changed()),
        }
    }

    fn text(&mut self) -> Result<String, Error> {
        let length = usize::try_from(self.u64()?).map_err(|_| changed())?;
        let mut bytes = vec![0u8; length];
        self.0.read_exact(&mut bytes).map_err(spill_error)?;
        String::from_utf8(bytes).map_err(|_| changed())
    }

    fn optional_text(&mut self) -> Result<Option<String>, Error> {
        if self.flag()? {
            self.text().map(Some)
        } else {
            Ok(None)
        }
    }

    fn optional_time(&mut self) -> Result<Option<DateTime<Utc>>, Error> {
        if !self.flag()? {
            return Ok(None);
        }
        let seconds = self.u64()? as i64;
        let nanoseconds = u32::try_from(self.u64()?).map_err(|_| changed())?;
        DateTime::from_timestamp(seconds, nanoseconds)
            .map(Some)
            .ok_or_else(changed)
    }

    fn fact(&mut self) -> Result<Fact, Error> {
        let id = FactId::from(self.text()?);
        let content = self.text()?;
        let tag_count = self.u64()?;
        let tags = (0..tag_count)
            .map(|_| self.text())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Fact {
            id,
            content,
            tags,
            category: self.optional_text()?,
            created_at: self.optional_time()?,
            last_accessed: self.optional_time()?,
            access_count: self.u64()?,
            confidence: {
                let present = self.flag()?;
                let bits = self.u64()?;
                present.then(|| f64::from_bits(bits))
            },
        })
    }
}

impl SpilledFacts {
    /// Moves `facts` into a temporary file when their texts total at least `min_bytes`,
    /// leaving the vector empty, and gives the freed memory back; `None` (nothing moved)
    /// below.
    pub fn take(facts: &mut Vec<Fact>, min_bytes: usize) -> Result<Option<SpilledFacts>, Error> {
        let total: usize = facts.iter().map(|fact| fact.content.len()).sum();
        if total < min_bytes {
            return Ok(None);
        }
        let file = tempfile::tempfile().map_err(spill_error)?;
        let mut writer = FactWriter(BufWriter::with_capacity(1 << 20, file));
        for fact in facts.iter() {
            writer.fact(fact).map_err(spill_error)?;
        }
        let file = writer
            .0
            .into_inner()
            .map_err(|error| spill_error(error.into_error()))?;
        // Only once everything is safely written is it released.
        let count = facts.len();
        *facts = Vec::new();
        crate::memory::release_freed_memory();
        Ok(Some(SpilledFacts { file, count }))
    }

    /// Puts every fact back into `facts` (the vector they were taken from), in order.
    pub fn restore(self, facts: &mut Vec<Fact>) -> Result<(), Error> {
        let mut file = self.file;
        file.seek(SeekFrom::Start(0)).map_err(spill_error)?;
        let mut reader = FactReader(BufReader::with_capacity(1 << 20, file));
        facts.reserve_exact(self.count);
        for _ in 0..self.count {
            facts.push(reader.fact()?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(id: &str, content: &str) -> Fact {
        crate::dataset::import::plain_fact(id.to_owned(), content.to_owned())
    }

    #[test]
    fn facts_come_back_field_for_field() {
        let mut full = fact("c", "ünïcödé ✓ and\nnew lines");
        full.tags = vec!["alpha".into(), String::new(), "γ".into()];
        full.category = Some("notes".into());
        full.created_at = DateTime::from_timestamp(1_700_000_000, 123_456_789);
        full.last_accessed = DateTime::from_timestamp(-86_400, 0);
        full.access_count = u64::MAX;
        full.confidence = Some(0.3);
        let original = vec![fact("a", "first fact"), fact("b", ""), full];
        let mut facts = original.clone();
        let spilled = SpilledFacts::take(&mut facts, 1).unwrap().expect("spilled");
        assert!(facts.is_empty());
        spilled.restore(&mut facts).unwrap();
        assert_eq!(facts, original);
    }

    #[test]
    fn small_corpora_stay_in_memory() {
        let mut facts = vec![fact("a", "short")];
        assert!(SpilledFacts::take(&mut facts, 6).unwrap().is_none());
        assert_eq!(facts[0].content, "short");
    }
}
