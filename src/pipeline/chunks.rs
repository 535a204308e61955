//! Chunked facts (`--chunk TOKENS,OVERLAP`): each fact's text split into windows of
//! words ([`ChunkSpec::windows`]), every window embedded as a document through the same
//! provider and cache as whole facts, and the fact each window belongs to, for the
//! best-chunk (MaxP) vector search ([`ChunkOwners`]).
//!
//! Only the vector index is chunked: the lexical signals score the whole fact.

use crate::embed::CorpusTexts;
use crate::error::Error;
use crate::index::{ChunkOwners, FactIndex};
use crate::text::ChunkSpec;

/// The windows of a corpus' texts, fact after fact in corpus order.
pub struct ChunkedTexts<'t> {
    facts: &'t dyn CorpusTexts,
    spec: ChunkSpec,
    chunks: usize,
}

impl<'t> ChunkedTexts<'t> {
    /// The windows of `facts` (read once here to count them) and the fact each belongs
    /// to.
    pub fn new(
        facts: &'t dyn CorpusTexts,
        spec: ChunkSpec,
    ) -> Result<(ChunkedTexts<'t>, ChunkOwners), Error> {
        let mut owners: Vec<FactIndex> = Vec::with_capacity(facts.len());
        let mut fact: FactIndex = 0;
        facts.for_each_chunk(256, &mut |texts| {
            for text in texts {
                let windows = spec.windows(text).len();
                owners.extend(std::iter::repeat_n(fact, windows));
                fact += 1;
            }
            Ok(())
        })?;
        let chunked = ChunkedTexts {
            facts,
            spec,
            chunks: owners.len(),
        };
        Ok((chunked, ChunkOwners::new(owners, facts.len())))
    }
}

impl CorpusTexts for ChunkedTexts<'_> {
    fn len(&self) -> usize {
        self.chunks
    }

    fn for_each_chunk(
        &self,
        size: usize,
        visit: &mut dyn FnMut(&[&str]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.facts.for_each_chunk(size, &mut |texts| {
            let windows: Vec<&str> = texts
                .iter()
                .flat_map(|text| self.spec.windows(text))
                .collect();
            windows.chunks(size).try_for_each(&mut *visit)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_window_is_listed_once_with_its_fact() {
        let facts: Vec<&str> = vec!["a b c d e", "short", "", "p q r s t u v"];
        let spec = ChunkSpec::new(3, 1).unwrap();
        let (chunked, owners) = ChunkedTexts::new(&facts, spec).unwrap();
        // "a b c d e": windows at words 0 and 2 (a b c, c d e); "short" and "" one
        // each; seven words: windows at 0, 2, 4 (p q r, r s t, t u v).
        assert_eq!(chunked.len(), 7);
        assert_eq!(owners.chunks(), 7);
        let mut listed = Vec::new();
        chunked
            .for_each_chunk(2, &mut |texts| {
                assert!(texts.len() <= 2);
                listed.extend(texts.iter().map(|text| text.to_string()));
                Ok(())
            })
            .unwrap();
        assert_eq!(
            listed,
            ["a b c", "c d e", "short", "", "p q r", "r s t", "t u v"]
        );
    }
}
