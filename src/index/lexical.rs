//! Lexical signals on one set of postings built from the corpus.
//!
//! - chatcli keyword relevance (chatcli's `Search` / `computeRelevance`, `facts.go`): per keyword, +1 when any content
//!   token matches and +0.5 when any tag token matches; a token matches when it equals
//!   the keyword or, for keywords of 4+ characters, starts with it. The sum is divided by
//!   the number of keywords (blank ones included). Prefix matches are a range scan of the
//!   sorted vocabulary, so no fact is visited that cannot match.
//! - BM25 over content + tags, with the configuration's [`Analyzer`] (default: chatcli's
//!   tokenizer minus its stop words, no stemming; `english`: Lucene's English analyzer),
//!   one set of postings per analyzer in use, Lucene's idf `ln(1 + (N - df + 0.5) / (df + 0.5))` and the classic
//!   `tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))` term weight (rank-equivalent to
//!   Lucene's). Repeated query terms count once per occurrence, as in Anserini.
//!
//! Building is the cost of a lexical run (a search visits only the postings of the query's
//! terms). BM25 postings are built in parallel over runs of consecutive facts, each with
//! its own vocabulary: a fact's terms are slices of its lower-cased text, read once and
//! never stored, each term is interned once per run in a [`TermTable`], a fact's term
//! frequencies are counted per term id as its terms are read, and its postings are
//! appended to the run's one buffer; the runs' vocabularies are then merged and their
//! postings laid out as lists (see [`PostingLists::join`]). The keyword vocabularies are built the same
//! way, then their terms sorted.
//! Postings are stored compressed (see [`super::postings`]). Only the structures some
//! configuration reads are built (see [`LexicalNeeds`]). A keyword vocabulary's list
//! that the chatcli BM25 postings hold too (the same term, the same facts: a content
//! term of a fact without tags, say) is read from them rather than kept twice.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::postings::{FactRun, PostingLists, Postings};
use super::terms::TermTable;
use super::FactIndex;
use crate::dataset::Fact;
use crate::text::{for_each_word_token, Analyzer};

/// BM25's two free parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    pub k1: f64,
    pub b: f64,
}

/// The field of a fact a keyword vocabulary holds the tokens of.
#[derive(Clone, Copy)]
enum Field {
    Content,
    /// The tags joined by spaces.
    Tags,
}

impl Field {
    /// The bytes of this field of `fact`, about.
    fn length(self, fact: &Fact) -> usize {
        match self {
            Field::Content => fact.content.len(),
            Field::Tags => fact.tags.iter().map(|tag| tag.len() + 1).sum(),
        }
    }

    /// Calls `visit` with each of chatcli's tokens of this field of `fact` (its
    /// `word_tokens`), in order; `joined` is room for the joined tags.
    fn for_each_token(self, fact: &Fact, joined: &mut String, visit: impl FnMut(&str)) {
        match self {
            Field::Content => for_each_word_token(&fact.content, visit),
            Field::Tags => {
                joined.clear();
                for (position, tag) in fact.tags.iter().enumerate() {
                    if position > 0 {
                        joined.push(' ');
                    }
                    joined.push_str(tag);
                }
                for_each_word_token(joined, visit);
            }
        }
    }
}

/// The distinct tokens of `field` over `facts` (numbered in order of first occurrence)
/// and, fact by fact, the numbers of the tokens each fact has, each once.
fn vocabulary_part(facts: &[&Fact], field: Field) -> (TermTable, FactRun) {
    // Room for one distinct token in 80 bytes of the field, as for BM25's runs.
    let text: usize = facts.iter().map(|fact| field.length(fact)).sum();
    let mut terms = TermTable::with_room(text / 80);
    let mut postings = FactRun::default();
    // Per token number, the last fact (by offset in the run) that had it.
    let mut last_fact: Vec<u32> = Vec::new();
    let mut joined = String::new();
    for (offset, fact) in facts.iter().enumerate() {
        let offset = offset as u32;
        field.for_each_token(fact, &mut joined, |token| {
            let (number, new) = terms.intern(token.as_bytes());
            if new {
                last_fact.push(offset);
            } else if last_fact[number as usize] != offset {
                last_fact[number as usize] = offset;
            } else {
                return;
            }
            postings.push(number, 1);
        });
        postings.end_fact();
    }
    (terms, postings)
}

/// A sorted vocabulary mapping each distinct token to the facts that contain it.
struct Vocabulary {
    /// Distinct tokens, ascending; term `i`'s facts are list `i` of `facts`, unless
    /// `borrowed` names a list of the chatcli BM25 postings for it.
    terms: Vec<Box<str>>,
    facts: PostingLists,
    /// Per term, the list of the chatcli BM25 postings holding exactly its facts (its
    /// own list is then empty), or [`NOT_BORROWED`]; empty when no list is borrowed.
    borrowed: Vec<u32>,
}

/// A [`Vocabulary`] term whose facts are its own list.
const NOT_BORROWED: u32 = u32::MAX;

impl Vocabulary {
    /// The vocabulary of `field`'s tokens over `facts`: runs of consecutive facts are
    /// read in parallel, each into a [`TermTable`] of its own and one buffer of postings;
    /// the runs' terms are then merged and sorted, and their postings laid out as the
    /// sorted terms' lists (see [`PostingLists::join`]).
    fn build(facts: &[&Fact], field: Field) -> Vocabulary {
        let part_facts = part_facts(facts.len());
        let parts: Vec<(TermTable, FactRun)> = facts
            .par_chunks(part_facts)
            .map(|chunk| vocabulary_part(chunk, field))
            .collect();
        let (terms, numbers) = merge_terms(parts.iter().map(|(terms, _)| terms));
        // Byte order is the order of the terms as strings.
        let mut sorted: Vec<u32> = (0..terms.len() as u32).collect();
        sorted.sort_unstable_by(|&a, &b| terms.term(a).cmp(terms.term(b)));
        let mut position_of = vec![0u32; terms.len()];
        for (position, &number) in sorted.iter().enumerate() {
            position_of[number as usize] = position as u32;
        }
        let targets: Vec<Vec<u32>> = numbers
            .into_iter()
            .map(|numbers| {
                numbers
                    .into_iter()
                    .map(|number| position_of[number as usize])
                    .collect()
            })
            .collect();
        let runs = joined_runs(
            part_facts,
            parts.iter().map(|(_, postings)| postings),
            &targets,
        );
        Vocabulary {
            facts: PostingLists::join(&runs, terms.len()),
            terms: sorted
                .iter()
                .map(|&number| {
                    std::str::from_utf8(terms.term(number))
                        .expect("terms are tokens of UTF-8 text")
                        .into()
                })
                .collect(),
            borrowed: Vec::new(),
        }
    }

    /// Reads from `lender` (the chatcli BM25 postings) every list it holds too: the
    /// same term with the same facts, compared posting by posting. Those lists are
    /// dropped from this vocabulary's own.
    fn borrow_from(&mut self, lender: &Bm25Postings) {
        let facts = &self.facts;
        let borrowed: Vec<u32> = self
            .terms
            .par_iter()
            .enumerate()
            .map(|(list, term)| match lender.terms.get(term.as_bytes()) {
                Some(id)
                    if lender.postings.length(id as usize) == facts.length(list)
                        && lender
                            .postings
                            .postings(id as usize)
                            .map(|(fact, _)| fact)
                            .eq(facts.postings(list).map(|(fact, _)| fact)) =>
                {
                    id
                }
                _ => NOT_BORROWED,
            })
            .collect();
        if borrowed.iter().any(|&id| id != NOT_BORROWED) {
            self.facts = self.facts.keeping(|list| borrowed[list] == NOT_BORROWED);
            self.borrowed = borrowed;
        }
    }

    /// The postings of term `term`: its own list, or the one it borrows from `lender`
    /// (the postings [`Self::borrow_from`] was given).
    fn list<'a>(&'a self, term: usize, lender: Option<&'a PostingLists>) -> Postings<'a> {
        match (self.borrowed.get(term), lender) {
            (Some(&id), Some(lender)) if id != NOT_BORROWED => lender.postings(id as usize),
            _ => self.facts.postings(term),
        }
    }

    /// The facts of every token that matches `keyword` under chatcli's rule, one
    /// iterator per token; `lender` holds the lists this vocabulary borrows.
    fn matching<'a>(
        &'a self,
        keyword: &'a str,
        lender: Option<&'a PostingLists>,
    ) -> impl Iterator<Item = impl Iterator<Item = FactIndex> + 'a> + 'a {
        let allows_prefix = keyword.chars().count() >= 4;
        let start = self.terms.partition_point(|term| &**term < keyword);
        self.terms[start..]
            .iter()
            .take_while(move |term| term.starts_with(keyword))
            .enumerate()
            .filter(move |(_, term)| allows_prefix || &***term == keyword)
            .map(move |(offset, _)| self.list(start + offset, lender).map(|(fact, _)| fact))
    }
}

/// BM25 statistics: postings with term frequencies and document lengths.
struct Bm25Postings {
    /// Each term's number, the number of its posting list.
    terms: TermTable,
    /// Per term id: (fact, term frequency), facts ascending.
    postings: PostingLists,
    lengths: Vec<u32>,
    average_length: f64,
}

/// Which lexical structures a run's configurations read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LexicalNeeds {
    /// chatcli keyword relevance (content and tag vocabularies).
    pub keywords: bool,
    /// BM25 postings, one set per analyzer.
    pub bm25_analyzers: Vec<Analyzer>,
}

/// Lexical postings over a corpus.
pub struct LexicalIndex {
    fact_count: usize,
    /// Content and tag vocabularies, when keyword relevance is needed.
    keyword_vocabularies: Option<(Vocabulary, Vocabulary)>,
    bm25: Vec<(Analyzer, Bm25Postings)>,
}

/// Facts per run of a lexical structure built in parallel, at least.
const MIN_PART_FACTS: usize = 1024;

/// BM25 postings of one run of consecutive facts, with its own term numbering.
struct Bm25Part {
    /// The part's terms, numbered in order of first occurrence.
    terms: TermTable,
    postings: FactRun,
    lengths: Vec<u32>,
}

impl Bm25Part {
    /// The postings of `facts`.
    fn build(facts: &[&Fact], analyzer: Analyzer) -> Bm25Part {
        // Room for one distinct term in 80 bytes of text (a run of 1,024 SciFact
        // abstracts has one in about 96), so most tables never grow.
        let text: usize = facts.iter().map(|fact| fact.content.len()).sum();
        let mut part = Bm25Part {
            terms: TermTable::with_room(text / 80),
            postings: FactRun::default(),
            lengths: Vec::with_capacity(facts.len()),
        };
        // Per term number: the last fact it occurred in (by offset in the part) and its
        // frequency there; `distinct` lists the current fact's terms, each once.
        let mut last_fact: Vec<u32> = Vec::new();
        let mut frequencies: Vec<u32> = Vec::new();
        let mut distinct: Vec<u32> = Vec::new();
        // Content and tags, when there are tags, in one reused string.
        let mut joined = String::new();
        for (offset, fact) in facts.iter().enumerate() {
            let offset = offset as u32;
            let source = if fact.tags.is_empty() {
                fact.content.as_str()
            } else {
                joined.clear();
                joined.push_str(&fact.content);
                for tag in &fact.tags {
                    joined.push(' ');
                    joined.push_str(tag);
                }
                joined.as_str()
            };
            distinct.clear();
            let mut length = 0u32;
            analyzer.for_each_term(source, |term| {
                length += 1;
                // Terms are interned once: only a term not seen before is copied.
                let (id, new) = part.terms.intern(term.as_bytes());
                let id = id as usize;
                if new {
                    last_fact.push(offset);
                    frequencies.push(1);
                    distinct.push(id as u32);
                } else if last_fact[id] != offset {
                    last_fact[id] = offset;
                    frequencies[id] = 1;
                    distinct.push(id as u32);
                } else {
                    frequencies[id] += 1;
                }
            });
            part.lengths.push(length);
            // Each term's list gets this fact once; the order of the lists among
            // themselves does not matter.
            for &id in &distinct {
                part.postings.push(id, frequencies[id as usize]);
            }
            part.postings.end_fact();
        }
        part
    }
}

/// Facts per run of a parallel build over `facts` facts: about four runs per thread, and
/// at least [`MIN_PART_FACTS`].
fn part_facts(facts: usize) -> usize {
    facts
        .div_ceil(4 * rayon::current_num_threads())
        .max(MIN_PART_FACTS)
}

/// The runs' terms merged into one table (a term new to the whole numbered in the order
/// of its first occurrence) and, per run, its terms' numbers in the whole.
fn merge_terms<'p>(
    parts: impl Iterator<Item = &'p TermTable> + Clone,
) -> (TermTable, Vec<Vec<u32>>) {
    // The whole's vocabulary is at least the largest run's, likely twice it.
    let largest = parts.clone().map(TermTable::len).max().unwrap_or(0);
    let mut terms = TermTable::with_room(largest * 2);
    let numbers = parts
        .map(|part| {
            (0..part.len() as u32)
                .map(|number| terms.intern(part.term(number)).0)
                .collect()
        })
        .collect();
    (terms, numbers)
}

/// What [`PostingLists::join`] takes for runs of `part_facts` consecutive facts: run `i`
/// starts at fact `i x part_facts`, and its lists are the whole's `targets[i]`.
fn joined_runs<'p>(
    part_facts: usize,
    postings: impl Iterator<Item = &'p FactRun>,
    targets: &'p [Vec<u32>],
) -> Vec<(FactIndex, &'p FactRun, &'p [u32])> {
    postings
        .zip(targets)
        .enumerate()
        .map(|(number, (postings, targets))| {
            (
                (number * part_facts) as FactIndex,
                postings,
                targets.as_slice(),
            )
        })
        .collect()
}

impl Bm25Postings {
    /// Builds the postings of runs of consecutive facts in parallel, then joins them:
    /// the parts' vocabularies are merged (a term new to the whole keeps the order of
    /// its first occurrence) and each term's lists are
    /// concatenated in fact order.
    fn build(facts: &[&Fact], analyzer: Analyzer) -> Bm25Postings {
        let part_facts = part_facts(facts.len());
        let parts: Vec<Bm25Part> = facts
            .par_chunks(part_facts)
            .map(|chunk| Bm25Part::build(chunk, analyzer))
            .collect();
        let (terms, targets) = merge_terms(parts.iter().map(|part| &part.terms));
        let lengths: Vec<u32> = parts
            .iter()
            .flat_map(|part| part.lengths.iter().copied())
            .collect();
        let runs = joined_runs(
            part_facts,
            parts.iter().map(|part| &part.postings),
            &targets,
        );
        let total: u64 = lengths.iter().map(|&length| u64::from(length)).sum();
        let average_length = if lengths.is_empty() {
            0.0
        } else {
            total as f64 / lengths.len() as f64
        };
        Bm25Postings {
            postings: PostingLists::join(&runs, terms.len()),
            terms,
            lengths,
            average_length,
        }
    }

    /// The document frequency and postings of `term`, when it occurs.
    fn postings(&self, term: &str) -> Option<(usize, Postings<'_>)> {
        self.terms.get(term.as_bytes()).map(|id| {
            (
                self.postings.length(id as usize),
                self.postings.postings(id as usize),
            )
        })
    }
}

impl LexicalIndex {
    /// Builds what `needs` asks for over `facts`, addressed by their position.
    pub fn build(facts: &[&Fact], needs: &LexicalNeeds) -> LexicalIndex {
        let mut keyword_vocabularies = needs.keywords.then(|| {
            (
                Vocabulary::build(facts, Field::Content),
                Vocabulary::build(facts, Field::Tags),
            )
        });
        let mut bm25: Vec<(Analyzer, Bm25Postings)> = Vec::new();
        for &analyzer in &needs.bm25_analyzers {
            if bm25.iter().all(|(known, _)| *known != analyzer) {
                bm25.push((analyzer, Bm25Postings::build(facts, analyzer)));
            }
        }
        let mut index = LexicalIndex {
            fact_count: facts.len(),
            keyword_vocabularies: None,
            bm25,
        };
        if let (Some((content, tags)), Some(lender)) =
            (&mut keyword_vocabularies, index.keyword_lender())
        {
            content.borrow_from(lender);
            tags.borrow_from(lender);
        }
        index.keyword_vocabularies = keyword_vocabularies;
        index
    }

    /// The chatcli BM25 postings, when they are built: the keyword vocabularies borrow
    /// the lists they share with them (see [`Vocabulary::borrow_from`]).
    fn keyword_lender(&self) -> Option<&Bm25Postings> {
        self.bm25
            .iter()
            .find(|(analyzer, _)| *analyzer == Analyzer::Chatcli)
            .map(|(_, postings)| postings)
    }

    /// chatcli keyword relevance of every fact with relevance > 0, by fact position.
    pub fn keyword_relevance(&self, keywords: &[String]) -> Vec<(FactIndex, f64)> {
        self.with_keyword_relevance(keywords, |matches| matches.collect())
    }

    /// Hands `consume` the facts with keyword relevance > 0, in fact order, as they are
    /// read off this thread's accumulators: no list of them is made unless `consume`
    /// makes one (the iterator knows its length).
    pub fn with_keyword_relevance<R>(
        &self,
        keywords: &[String],
        consume: impl FnOnce(&mut ScoredFacts<'_>) -> R,
    ) -> R {
        if keywords.is_empty() {
            return consume(&mut ScoredFacts::empty());
        }
        let (content, tags) = self
            .keyword_vocabularies
            .as_ref()
            .expect("keyword vocabularies are built when a configuration reads keywords");
        let lender = self.keyword_lender().map(|lender| &lender.postings);
        let fact_count = self.fact_count;
        with_accumulators(|accumulators| {
            let Accumulators {
                halves, touched, ..
            } = accumulators;
            // Only keyword relevance credits facts; BM25 alone never allocates these.
            if halves.len() < fact_count {
                halves.resize(fact_count, 0);
            }
            touched.cover(fact_count);
            // A fact's slot holds its credits in half-units (content 2, tags 1) in the low
            // bits, as many as 3 per keyword need, and in the high bits the number of the
            // last pass over several lists that credited it: credits count once per
            // keyword and field, and a fact is in a posting list once, so only a keyword
            // that matches several tokens needs the facts it credited marked. The mark
            // shares the credit's slot, so a posting costs one random access.
            let credit_bits = u64::BITS - (3 * keywords.len() as u64).leading_zeros();
            assert!(credit_bits < u32::BITS, "fewer than 2^31 / 3 keywords");
            let credit_mask = u32::MAX >> (u32::BITS - credit_bits);
            let last_pass = u32::MAX >> credit_bits;
            let mut pass = 0;
            for keyword in keywords {
                let keyword = keyword.trim().to_lowercase();
                if keyword.is_empty() {
                    continue;
                }
                for (vocabulary, credit) in [(content, 2), (tags, 1)] {
                    let mut lists = vocabulary.matching(&keyword, lender);
                    let Some(first) = lists.next() else {
                        continue;
                    };
                    let Some(second) = lists.next() else {
                        for fact in first {
                            let slot = &mut halves[fact as usize];
                            touched.note(fact, *slot == 0);
                            *slot += credit;
                        }
                        continue;
                    };
                    if pass == last_pass {
                        // The pass numbers start again: no mark may stay behind.
                        for &fact in touched.facts() {
                            halves[fact as usize] &= credit_mask;
                        }
                        pass = 0;
                    }
                    pass += 1;
                    let mark = pass << credit_bits;
                    for fact in first.chain(second).chain(lists.flatten()) {
                        let slot = &mut halves[fact as usize];
                        if *slot & !credit_mask != mark {
                            touched.note(fact, *slot == 0);
                            *slot = ((*slot & credit_mask) + credit) | mark;
                        }
                    }
                }
            }
            drain(
                Accumulated::Halves(halves, credit_mask),
                touched,
                2.0 * keywords.len() as f64,
                consume,
            )
        })
    }

    /// BM25 score of every fact that shares a term with `query`, by fact position.
    /// `analyzer` must be one the index was built with.
    pub fn bm25(
        &self,
        query: &str,
        params: Bm25Params,
        analyzer: Analyzer,
    ) -> Vec<(FactIndex, f64)> {
        self.with_bm25(query, params, analyzer, |scores| scores.collect())
    }

    /// Hands `consume` the BM25 score of every fact that shares a term with `query`, in
    /// fact order, as they are read off this thread's accumulators (see
    /// [`Self::with_keyword_relevance`]). `analyzer` must be one the index was built with.
    pub fn with_bm25<R>(
        &self,
        query: &str,
        params: Bm25Params,
        analyzer: Analyzer,
        consume: impl FnOnce(&mut ScoredFacts<'_>) -> R,
    ) -> R {
        let statistics = &self
            .bm25
            .iter()
            .find(|(known, _)| *known == analyzer)
            .expect("BM25 postings are built for every analyzer in use")
            .1;
        let fact_count = statistics.lengths.len() as f64;
        // Distinct terms in first-occurrence order (the order the sums are added in),
        // found through a map so a query of many distinct words stays linear.
        let mut query_terms: Vec<(String, u32)> = Vec::new();
        let mut positions: FxHashMap<String, usize> = FxHashMap::default();
        for token in analyzer.terms(query) {
            match positions.get(&token) {
                Some(&position) => query_terms[position].1 += 1,
                None => {
                    positions.insert(token.clone(), query_terms.len());
                    query_terms.push((token, 1));
                }
            }
        }
        drop(positions);
        with_accumulators(|accumulators| {
            let Accumulators { sums, touched, .. } = accumulators;
            if sums.len() < statistics.lengths.len() {
                sums.resize(statistics.lengths.len(), 0.0);
            }
            touched.cover(statistics.lengths.len());
            for (term, query_frequency) in &query_terms {
                let Some((document_frequency, postings)) = statistics.postings(term) else {
                    continue;
                };
                let document_frequency = document_frequency as f64;
                let idf = (1.0
                    + (fact_count - document_frequency + 0.5) / (document_frequency + 0.5))
                    .ln();
                for (fact, term_frequency) in postings {
                    let length_ratio = if statistics.average_length > 0.0 {
                        f64::from(statistics.lengths[fact as usize]) / statistics.average_length
                    } else {
                        0.0
                    };
                    let term_frequency = f64::from(term_frequency);
                    let weight = term_frequency * (params.k1 + 1.0)
                        / (term_frequency + params.k1 * (1.0 - params.b + params.b * length_ratio));
                    let slot = &mut sums[fact as usize];
                    touched.note(fact, *slot == 0.0);
                    *slot += f64::from(*query_frequency) * idf * weight;
                }
            }
            drain(Accumulated::Scores(sums), touched, 1.0, consume)
        })
    }
}

/// At least one touched fact in this many: [`drain`] scans the sums instead of sorting.
const TOUCHED_SCAN_FRACTION: usize = 16;

/// One search's accumulators: BM25 scores, or keyword credits in half-units.
enum Accumulated<'a> {
    Scores(&'a mut [f64]),
    /// The credits, and the mask of their bits (the others mark passes).
    Halves(&'a mut [u32], u32),
}

impl Accumulated<'_> {
    fn len(&self) -> usize {
        match self {
            Accumulated::Scores(sums) => sums.len(),
            Accumulated::Halves(halves, _) => halves.len(),
        }
    }

    fn read(&self, fact: FactIndex) -> f64 {
        match self {
            Accumulated::Scores(sums) => sums[fact as usize],
            Accumulated::Halves(halves, mask) => f64::from(halves[fact as usize] & mask),
        }
    }

    /// The fact's sum, its slot put back at rest.
    fn take(&mut self, fact: FactIndex) -> f64 {
        match self {
            Accumulated::Scores(sums) => std::mem::take(&mut sums[fact as usize]),
            Accumulated::Halves(halves, mask) => {
                f64::from(std::mem::take(&mut halves[fact as usize]) & *mask)
            }
        }
    }
}

/// Puts the `touched` facts in order and hands them to `consume` with their sums divided by
/// `divisor`; afterwards every slot is at rest again, whatever `consume` read.
fn drain<R>(
    sums: Accumulated<'_>,
    touched: &mut Touched,
    divisor: f64,
    consume: impl FnOnce(&mut ScoredFacts<'_>) -> R,
) -> R {
    // Every credit and BM25 term weight is positive (k1 >= 0 and b in [0, 1] are
    // checked), so a touched sum is never 0 again and the touched facts are exactly the
    // non-zero sums. When they are many, reading those off in order is cheaper than
    // sorting them.
    if touched.count >= sums.len() / TOUCHED_SCAN_FRACTION {
        touched.count = 0;
        match &sums {
            Accumulated::Scores(sums) => {
                for (fact, sum) in sums.iter().enumerate() {
                    touched.note(fact as FactIndex, *sum != 0.0);
                }
            }
            Accumulated::Halves(halves, _) => {
                for (fact, halves) in halves.iter().enumerate() {
                    touched.note(fact as FactIndex, *halves != 0);
                }
            }
        }
    } else {
        touched.facts[..touched.count].sort_unstable();
    }
    let count = std::mem::take(&mut touched.count);
    let mut scored = ScoredFacts {
        sums,
        touched: touched.facts[..count].iter(),
        divisor,
    };
    let result = consume(&mut scored);
    scored.for_each(drop);
    result
}

/// The facts a search has touched, in the order it touched them, written without a
/// branch: a fact is written at `count` every time, and `count` moves on only the first
/// time (at a million facts, most of a keyword search's credits are first credits in no
/// predictable order).
#[derive(Default)]
struct Touched {
    /// At least one more slot than facts, so the slot at `count` always exists.
    facts: Vec<FactIndex>,
    count: usize,
}

impl Touched {
    /// Makes room for `fact_count` facts (`count` is 0 between searches).
    fn cover(&mut self, fact_count: usize) {
        if self.facts.len() <= fact_count {
            self.facts.resize(fact_count + 1, 0);
        }
    }

    /// The facts touched so far.
    fn facts(&self) -> &[FactIndex] {
        &self.facts[..self.count]
    }

    #[inline]
    fn note(&mut self, fact: FactIndex, first: bool) {
        self.facts[self.count] = fact;
        self.count += usize::from(first);
    }
}

/// Facts and their scores in fact order, taken off the accumulators one by one (each
/// slot is put back at rest as it is read).
pub struct ScoredFacts<'a> {
    sums: Accumulated<'a>,
    touched: std::slice::Iter<'a, FactIndex>,
    /// What each sum is divided by (chatcli divides by the number of keywords; its
    /// credits are counted in half-units, so twice that).
    divisor: f64,
}

impl<'a> ScoredFacts<'a> {
    /// The facts and scores still to come, read without taking them off the
    /// accumulators (for a first pass over the scores).
    pub fn peek(&self) -> impl Iterator<Item = (FactIndex, f64)> + '_ {
        let sums = &self.sums;
        let divisor = self.divisor;
        self.touched
            .as_slice()
            .iter()
            .map(move |&fact| (fact, sums.read(fact) / divisor))
    }

    /// What each sum is divided by to make its score. Keyword credits are summed in
    /// half-units, so their sums are whole numbers below 2^32.
    pub fn divisor(&self) -> f64 {
        self.divisor
    }

    /// Like [`Self::peek`], the sums not yet divided by [`Self::divisor`].
    pub fn peek_sums(&self) -> impl Iterator<Item = (FactIndex, f64)> + '_ {
        let sums = &self.sums;
        self.touched
            .as_slice()
            .iter()
            .map(move |&fact| (fact, sums.read(fact)))
    }

    /// Takes the facts still to come off the accumulators, like iterating, with their
    /// sums not yet divided by [`Self::divisor`].
    pub fn take_sums(&mut self) -> impl Iterator<Item = (FactIndex, f64)> + use<'_, 'a> {
        std::iter::from_fn(move || {
            let &fact = self.touched.next()?;
            Some((fact, self.sums.take(fact)))
        })
    }

    fn empty() -> ScoredFacts<'static> {
        ScoredFacts {
            sums: Accumulated::Scores(&mut []),
            touched: [].iter(),
            divisor: 1.0,
        }
    }
}

impl Iterator for ScoredFacts<'_> {
    type Item = (FactIndex, f64);

    fn next(&mut self) -> Option<(FactIndex, f64)> {
        let &fact = self.touched.next()?;
        Some((fact, self.sums.take(fact) / self.divisor))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.touched.size_hint()
    }
}

impl ExactSizeIterator for ScoredFacts<'_> {}

/// One thread's per-fact accumulators for scoring a query against the whole corpus,
/// kept from one search to the next: at a million facts, allocating and zeroing them
/// per query and configuration cost more time than the scoring, and the freed
/// megabytes fragmented the allocator's arenas. Keyword credits are integers (half-units)
/// in a slot half the size of a BM25 sum, so the random accesses of
/// a keyword search stay in a smaller part of the cache. Between searches every slot is
/// at rest: sums and halves 0, no fact touched.
#[derive(Default)]
struct Accumulators {
    /// BM25 sums.
    sums: Vec<f64>,
    /// Keyword credits in half-units, and the pass that last credited each fact.
    halves: Vec<u32>,
    /// The facts whose sum (or credit) is not 0.
    touched: Touched,
}

thread_local! {
    static ACCUMULATORS: std::cell::RefCell<Accumulators> = std::cell::RefCell::default();
}

/// Runs `search` with this thread's accumulators, at rest; `search` sizes the ones it
/// uses. It must leave them at rest (if it panics they are simply dropped).
fn with_accumulators<R>(search: impl FnOnce(&mut Accumulators) -> R) -> R {
    ACCUMULATORS.with(|cell| {
        let mut accumulators = cell.take();
        let result = search(&mut accumulators);
        cell.replace(accumulators);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::FactId;
    use crate::text::word_tokens;
    use std::collections::BTreeMap;

    fn facts(items: &[(&str, &[&str])]) -> Vec<Fact> {
        items
            .iter()
            .enumerate()
            .map(|(index, (content, tags))| Fact {
                id: FactId::from(format!("f{index}")),
                content: content.to_string(),
                tags: tags.iter().map(|tag| tag.to_string()).collect(),
                category: None,
                created_at: None,
                last_accessed: None,
                access_count: 0,
                confidence: None,
                source: None,
            })
            .collect()
    }

    fn refs(facts: &[Fact]) -> Vec<&Fact> {
        facts.iter().collect()
    }

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| word.to_string()).collect()
    }

    #[test]
    fn vocabularies_built_in_runs_list_each_token_with_its_facts() {
        // Enough facts for several runs; capitals, non-ASCII words, repeats and tags.
        let words = [
            "Kafka", "kafka", "ÖLÇÜ", "ölçü", "naïve", "the", "of", "Straße", "v2", "x",
        ];
        let owned: Vec<(String, Vec<String>)> = (0..5000usize)
            .map(|fact| {
                let content = (0..1 + fact % 4)
                    .map(|word| words[(fact * 7 + word * 3) % words.len()])
                    .collect::<Vec<_>>()
                    .join(if fact % 2 == 0 { " " } else { ", " });
                let tags = (0..fact % 3)
                    .map(|tag| format!("Tag{}", (fact + tag) % 11))
                    .collect();
                (content, tags)
            })
            .collect();
        let items: Vec<(&str, Vec<&str>)> = owned
            .iter()
            .map(|(content, tags)| (content.as_str(), tags.iter().map(String::as_str).collect()))
            .collect();
        let items: Vec<(&str, &[&str])> = items
            .iter()
            .map(|(content, tags)| (*content, tags.as_slice()))
            .collect();
        let facts = facts(&items);
        for (field, text) in [
            (
                Field::Content,
                (|fact: &Fact| fact.content.clone()) as fn(&Fact) -> String,
            ),
            (Field::Tags, |fact: &Fact| fact.tags.join(" ")),
        ] {
            let mut expected: BTreeMap<String, Vec<FactIndex>> = BTreeMap::new();
            for (position, fact) in facts.iter().enumerate() {
                for token in word_tokens(&text(fact)) {
                    let list = expected.entry(token).or_default();
                    if list.last() != Some(&(position as FactIndex)) {
                        list.push(position as FactIndex);
                    }
                }
            }
            let vocabulary = Vocabulary::build(&refs(&facts), field);
            let terms: Vec<&str> = vocabulary.terms.iter().map(|term| &**term).collect();
            assert_eq!(
                terms,
                expected.keys().map(String::as_str).collect::<Vec<_>>()
            );
            for (list, facts) in expected.values().enumerate() {
                let listed: Vec<FactIndex> = vocabulary
                    .facts
                    .postings(list)
                    .map(|(fact, _)| fact)
                    .collect();
                assert_eq!(&listed, facts, "{}", terms[list]);
            }
        }
    }

    #[test]
    fn chatcli_relevance_content_tags_and_prefix_rule() {
        let index = LexicalIndex::build(
            &refs(&facts(&[
                ("Use django for the admin", &["go"]),
                ("Compression with zstd; compress logs", &["ops"]),
                ("Go modules need GOFLAGS", &["golang"]),
            ])),
            &LexicalNeeds {
                keywords: true,
                bm25_analyzers: Vec::new(),
            },
        );
        // "go": 2 chars, exact only: f0 tag (+0.5), f2 content (+1); "django" is not a match.
        // "compress": prefix of "compression" and equal to "compress": f1 content once (+1).
        // "" (blank) counts in the denominator only.
        let relevance = index.keyword_relevance(&strings(&["go", "compress", " "]));
        assert_eq!(
            relevance,
            vec![(0, 0.5 / 3.0), (1, 1.0 / 3.0), (2, 1.0 / 3.0)]
        );
        // "gola" (4 chars) is a prefix of the tag "golang" only.
        assert_eq!(index.keyword_relevance(&strings(&["gola"])), vec![(2, 0.5)]);
        // "gol" (3 chars) needs an exact match: none.
        assert!(index.keyword_relevance(&strings(&["gol"])).is_empty());
    }

    #[test]
    fn keyword_credits_count_once_per_keyword_and_field_in_sparse_and_dense_searches() {
        // Words sharing prefixes, so a keyword of 4+ characters matches several tokens
        // of one fact; 300 facts span several 64-fact words of the credited marks.
        let words = [
            "comp",
            "compress",
            "compression",
            "compute",
            "zeta",
            "zetas",
            "other",
        ];
        let corpus: Vec<(String, Vec<&str>)> = (0..300usize)
            .map(|fact| {
                let mut content = (0..3)
                    .map(|slot| words[(fact * 7 + slot * 3 + fact / 11) % words.len()])
                    .collect::<Vec<_>>()
                    .join(" ");
                if fact % 40 == 0 {
                    content.push_str(" rarely rarest");
                }
                if fact % 40 == 1 {
                    content.push_str(" unique uniques");
                }
                (content, vec![words[(fact * 5 + 1) % words.len()]])
            })
            .collect();
        let borrowed: Vec<(&str, &[&str])> = corpus
            .iter()
            .map(|(content, tags)| (content.as_str(), tags.as_slice()))
            .collect();
        let index = LexicalIndex::build(
            &refs(&facts(&borrowed)),
            &LexicalNeeds {
                keywords: true,
                bm25_analyzers: Vec::new(),
            },
        );
        // chatcli's rule, fact by fact: +1 when some content word matches, +0.5 when
        // some tag matches.
        let matches = |token: &str, keyword: &str| {
            token == keyword || (keyword.len() >= 4 && token.starts_with(keyword))
        };
        // "rare" matches 8 facts (sparse: sorted), "comp" and "zeta" most facts (dense:
        // scanned), each through several tokens.
        for keywords in [
            &["rare"][..],
            &["rare", "rarely", "compression"],
            &["comp"],
            &["comp", "zeta"],
            &["zeta", "comp", "compr", "other", "comp"],
            // So many keywords that the numbers of the passes over several lists start
            // again (twice).
            &vec!["comp"; 40_000],
            // The numbers start again just before the last "rare": its facts' marks from
            // the first pass must not be taken for its own. 8,192 passes over several
            // lists, and 100,000 keywords, so pass numbers below 2^13.
            &[
                &["rare"][..],
                &vec!["uniq"; 8190],
                &vec![" "; 91_808],
                &["rare"],
            ]
            .concat(),
        ] {
            let mut distinct: BTreeMap<&str, usize> = BTreeMap::new();
            for keyword in keywords {
                *distinct.entry(keyword).or_default() += 1;
            }
            let expected: Vec<(FactIndex, f64)> = corpus
                .iter()
                .enumerate()
                .filter_map(|(fact, (content, tags))| {
                    let sum: f64 = distinct
                        .iter()
                        .map(|(keyword, &times)| {
                            let content_credit =
                                content.split(' ').any(|token| matches(token, keyword));
                            let tag_credit = tags.iter().any(|tag| matches(tag, keyword));
                            (f64::from(u8::from(content_credit))
                                + 0.5 * f64::from(u8::from(tag_credit)))
                                * times as f64
                        })
                        .sum();
                    (sum > 0.0).then(|| (fact as FactIndex, sum / keywords.len() as f64))
                })
                .collect();
            assert!(!expected.is_empty());
            assert_eq!(
                index.keyword_relevance(&strings(keywords)),
                expected,
                "{keywords:?}"
            );
        }
    }

    #[test]
    fn keyword_lists_borrowed_from_bm25_match_the_same_facts() {
        let corpus = facts(&[
            ("alpha beta the", &[]),
            ("beta gamma", &["beta"]),
            ("alphabet", &["alpha"]),
            ("the gamma", &["delta"]),
        ]);
        let keywords_only = LexicalIndex::build(
            &refs(&corpus),
            &LexicalNeeds {
                keywords: true,
                bm25_analyzers: Vec::new(),
            },
        );
        let lending = LexicalIndex::build(
            &refs(&corpus),
            &LexicalNeeds {
                keywords: true,
                bm25_analyzers: vec![Analyzer::Chatcli],
            },
        );
        let (content, tags) = lending.keyword_vocabularies.as_ref().unwrap();
        let borrowed = |vocabulary: &Vocabulary, term: &str| {
            let list = vocabulary.terms.iter().position(|known| &**known == term);
            vocabulary.borrowed[list.unwrap()] != NOT_BORROWED
        };
        // Same facts in both: borrowed. "alpha" is also a tag of fact 2 and "the" a
        // stop word: kept.
        assert!(borrowed(content, "beta") && borrowed(content, "gamma"));
        assert!(!borrowed(content, "alpha") && !borrowed(content, "the"));
        assert!(borrowed(tags, "delta") && !borrowed(tags, "beta"));
        for keywords in [
            &["alpha"][..],
            &["beta", "the"],
            &["gamma", "delta"],
            &["alph"],
            &["alpha", "beta", "gamma", "delta", "the", "missing"],
        ] {
            assert_eq!(
                lending.keyword_relevance(&strings(keywords)),
                keywords_only.keyword_relevance(&strings(keywords)),
                "{keywords:?}"
            );
        }
    }

    #[test]
    fn bm25_matches_hand_computation() {
        let index = LexicalIndex::build(
            &refs(&facts(&[
                ("redis cache cache", &[]),
                ("postgres cache", &[]),
                ("kafka", &[]),
            ])),
            &LexicalNeeds {
                keywords: false,
                bm25_analyzers: vec![Analyzer::Chatcli, Analyzer::English],
            },
        );
        // N = 3, lengths 3, 2, 1, avgdl = 2. "cache": df = 2, idf = ln(1 + 1.5/2.5).
        let params = Bm25Params { k1: 0.9, b: 0.4 };
        let idf = (1.0f64 + 1.5 / 2.5).ln();
        let weight = |tf: f64, dl: f64| tf * 1.9 / (tf + 0.9 * (0.6 + 0.4 * dl / 2.0));
        let scores = index.bm25("the cache", params, Analyzer::Chatcli);
        assert_eq!(scores.len(), 2);
        assert!((scores[0].1 - idf * weight(2.0, 3.0)).abs() < 1e-12);
        assert!((scores[1].1 - idf * weight(1.0, 2.0)).abs() < 1e-12);
        // A repeated query term counts twice.
        let doubled = index.bm25("cache cache", params, Analyzer::Chatcli);
        assert!((doubled[1].1 - 2.0 * scores[1].1).abs() < 1e-12);
        // The English analyzer stems "caches" to "cach", matching both cache facts alike.
        let stemmed = index.bm25("caches", params, Analyzer::English);
        assert!((stemmed[0].1 - scores[0].1).abs() < 1e-12);
        assert!(index.bm25("caches", params, Analyzer::Chatcli).is_empty());
    }
}
