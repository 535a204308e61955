//! What one query's configurations share of their lexical searches, found on the first
//! request and dropped with the query: the keyword matches grouped by relevance, per
//! keyword list (`keyword`, `blend`, `hyde-mean` and `multi-hyde` read the query's
//! keywords; `hyde-3a`, `hyde-3b` and `hyde-3b-hyp` the merged ones), and the BM25 top
//! of the query text, per BM25 setting (`bm25` reads it `depth` deep, `hybrid` its first
//! `limit × multiplier`). Only the streaming route reads it.

use std::cell::RefCell;
use std::rc::Rc;

use super::keyword_groups::KeywordGroups;
use crate::index::{select_top_by_score_then_id, Bm25Params, FactIndex, LexicalIndex};
use crate::text::Analyzer;

/// One query's shared lexical results; created per query and dropped with it.
#[derive(Default)]
pub struct LexicalMemo {
    /// Each keyword list searched so far (with the index it was searched in) and its groups.
    keyword_groups: RefCell<Vec<FoundGroups>>,
    /// Each BM25 top found so far: its search, how deep it was asked for, and the top.
    bm25_tops: RefCell<Vec<FoundTop>>,
}

/// A keyword list's groups: the index's address, the keywords and their groups.
type FoundGroups = (usize, Vec<String>, Rc<KeywordGroups>);

/// A BM25 top: its search, how deep it was asked for, and the top.
type FoundTop = (Bm25Search, usize, Vec<(FactIndex, f64)>);

/// What a BM25 top depends on besides its depth.
#[derive(PartialEq)]
struct Bm25Search {
    index: usize,
    query: String,
    k1: u64,
    b: u64,
    analyzer: Analyzer,
}

impl LexicalMemo {
    /// The groups of `keywords`' matches in `lexical`, found on first request (with the
    /// extremes of `temporal` over them, read in the same pass).
    pub fn groups(
        &self,
        lexical: &LexicalIndex,
        keywords: &[String],
        temporal: &[f64],
    ) -> Rc<KeywordGroups> {
        let index = lexical as *const LexicalIndex as usize;
        if let Some((_, _, groups)) = self
            .keyword_groups
            .borrow()
            .iter()
            .find(|(known, words, _)| *known == index && words.as_slice() == keywords)
        {
            return Rc::clone(groups);
        }
        let groups = Rc::new(KeywordGroups::find(lexical, keywords, temporal));
        self.keyword_groups
            .borrow_mut()
            .push((index, keywords.to_vec(), Rc::clone(&groups)));
        groups
    }

    /// The first `limit` facts by BM25 score of `query` (score descending, fact
    /// ascending), as [`LexicalIndex::with_bm25`] and [`select_top_by_score_then_id`]
    /// find them: a top found at least as deep, or holding every match, gives its first
    /// `limit` (the order is total, so those are the same).
    pub fn bm25_top(
        &self,
        lexical: &LexicalIndex,
        query: &str,
        params: Bm25Params,
        analyzer: Analyzer,
        limit: usize,
    ) -> Vec<(FactIndex, f64)> {
        let search = Bm25Search {
            index: lexical as *const LexicalIndex as usize,
            query: query.to_owned(),
            k1: params.k1.to_bits(),
            b: params.b.to_bits(),
            analyzer,
        };
        if let Some((_, _, top)) =
            self.bm25_tops.borrow().iter().find(|(known, depth, top)| {
                *known == search && (limit <= *depth || top.len() < *depth)
            })
        {
            return top[..limit.min(top.len())].to_vec();
        }
        let top = lexical.with_bm25(query, params, analyzer, |scores| {
            select_top_by_score_then_id(scores, limit)
        });
        self.bm25_tops
            .borrow_mut()
            .push((search, limit, top.clone()));
        top
    }
}
