//! Facts set aside on disk. Once the pipeline has built its lexical index and scored
//! recency, it reads nothing of the facts but their texts, once, to embed them, until
//! the report names the facts it shows. A large corpus' facts are therefore written to
//! an anonymous temporary file before the fact vectors are made, their texts are read
//! back from it a chunk at a time for the embedder ([`SpilledFacts::contents`]), and
//! the facts come back whole after retrieval. The memory they held is given back to the
//! operating system: at a million facts, over 200 MB less resident beside the vectors.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

use chrono::{DateTime, Utc};

use crate::dataset::{Fact, FactId};
use crate::embed::CorpusTexts;
use crate::error::Error;

/// Facts whose texts total this many bytes or more are worth a temporary file.
pub const SPILL_MIN_BYTES: usize = 64 << 20;

/// Facts taken from a dataset, to be put back with [`SpilledFacts::restore`].
pub struct SpilledFacts {
    file: File,
    count: usize,
    /// Where each fact's content (its length, then its bytes) is in the file; freed
    /// once the contents are read ([`SpilledFacts::contents_read`]).
    contents: Vec<u64>,
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
struct FactWriter<W: Write> {
    out: W,
    /// Bytes written so far.
    written: u64,
}

impl<W: Write> FactWriter<W> {
    fn u64(&mut self, value: u64) -> std::io::Result<()> {
        self.out.write_all(&value.to_le_bytes())?;
        self.written += 8;
        Ok(())
    }

    fn text(&mut self, text: &str) -> std::io::Result<()> {
        self.u64(text.len() as u64)?;
        self.out.write_all(text.as_bytes())?;
        self.written += text.len() as u64;
        Ok(())
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

    /// Writes `fact`; returns where its content starts.
    fn fact(&mut self, fact: &Fact) -> std::io::Result<u64> {
        self.text(fact.id.as_str())?;
        let content_start = self.written;
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
        self.u64(fact.confidence.unwrap_or(0.0).to_bits())?;
        self.optional_text(fact.source.as_deref())?;
        Ok(content_start)
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
            source: self.optional_text()?,
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
        let mut writer = FactWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            written: 0,
        };
        let mut contents = Vec::with_capacity(facts.len());
        for fact in facts.iter() {
            contents.push(writer.fact(fact).map_err(spill_error)?);
        }
        let file = writer
            .out
            .into_inner()
            .map_err(|error| spill_error(error.into_error()))?;
        // Only once everything is safely written is it released.
        let count = facts.len();
        *facts = Vec::new();
        crate::memory::release_freed_memory();
        Ok(Some(SpilledFacts {
            file,
            count,
            contents,
        }))
    }

    /// The contents of the facts at `positions` (in the vector they were taken from),
    /// in that order, read from the file a chunk at a time.
    pub fn contents<'a>(&'a self, positions: &'a [u32]) -> SpilledContents<'a> {
        SpilledContents {
            spilled: self,
            positions,
        }
    }

    /// Frees where each content is in the file (8 bytes a fact): once the texts are
    /// embedded, only [`SpilledFacts::restore`] reads the file, from its start. The
    /// contents can no longer be read after this.
    pub fn contents_read(&mut self) {
        self.contents = Vec::new();
    }

    fn read_content(&self, position: u32) -> Result<String, Error> {
        let start = *self.contents.get(position as usize).ok_or_else(changed)?;
        let mut file = &self.file;
        file.seek(SeekFrom::Start(start)).map_err(spill_error)?;
        FactReader(file).text()
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

/// Some spilled facts' contents, in a given order (see [`SpilledFacts::contents`]).
pub struct SpilledContents<'a> {
    spilled: &'a SpilledFacts,
    positions: &'a [u32],
}

impl CorpusTexts for SpilledContents<'_> {
    fn len(&self) -> usize {
        self.positions.len()
    }

    fn for_each_chunk(
        &self,
        size: usize,
        visit: &mut dyn FnMut(&[&str]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        for chunk in self.positions.chunks(size) {
            let texts = chunk
                .iter()
                .map(|&position| self.spilled.read_content(position))
                .collect::<Result<Vec<_>, _>>()?;
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            visit(&texts)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(id: &str, content: &str) -> Fact {
        crate::dataset::collection::plain_fact(id.to_owned(), content.to_owned())
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
        full.source = Some("session".into());
        let original = vec![fact("a", "first fact"), fact("b", ""), full];
        let mut facts = original.clone();
        let spilled = SpilledFacts::take(&mut facts, 1).unwrap().expect("spilled");
        assert!(facts.is_empty());
        spilled.restore(&mut facts).unwrap();
        assert_eq!(facts, original);
    }

    #[test]
    fn contents_are_read_back_in_any_order_and_chunking() {
        let mut tagged = fact("b", "second, with tags");
        tagged.tags = vec!["t".into()];
        tagged.category = Some("c".into());
        let mut facts = vec![fact("a", "first"), tagged, fact("c", ""), fact("d", "ünï")];
        let spilled = SpilledFacts::take(&mut facts, 1).unwrap().expect("spilled");
        let order = [3, 0, 2, 1, 3];
        let contents = spilled.contents(&order);
        assert_eq!(contents.len(), 5);
        let mut chunks: Vec<Vec<String>> = Vec::new();
        contents
            .for_each_chunk(2, &mut |chunk| {
                chunks.push(chunk.iter().map(|text| text.to_string()).collect());
                Ok(())
            })
            .unwrap();
        assert_eq!(
            chunks,
            vec![
                vec!["ünï".to_string(), "first".into()],
                vec!["".into(), "second, with tags".into()],
                vec!["ünï".into()],
            ]
        );
        let missing = [4];
        let error = spilled
            .contents(&missing)
            .for_each_chunk(2, &mut |_| Ok(()))
            .unwrap_err();
        assert!(error.to_string().contains("came back changed"), "{error}");
        let mut spilled = spilled;
        spilled.contents_read();
        spilled.restore(&mut facts).unwrap();
        assert_eq!(facts.len(), 4);
        assert_eq!(facts[1].tags, vec!["t".to_string()]);
    }

    #[test]
    fn small_corpora_stay_in_memory() {
        let mut facts = vec![fact("a", "short")];
        assert!(SpilledFacts::take(&mut facts, 6).unwrap().is_none());
        assert_eq!(facts[0].content, "short");
    }
}
