//! What a format reader produces: facts, queries and judgments with the place each was
//! found, assembled into a validated [`Dataset`].
//!
//! The readers (`beir`, `trec`, `csv_tables`, `smart`) only parse.
//! [`Collection::into_dataset`] checks ids, duplicates and references the way the native
//! loader does, so an imported dataset is exactly as strict as a native one. Anything a
//! reader leaves out (an empty document, a query with no judgments in the chosen split)
//! is reported as a note, never dropped silently.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use super::{check_id, ContentHasher, Dataset, Fact, FactId, Grade, Judgment, Manifest, Qrels};
use super::{Query, QueryId};
use crate::error::{Error, Problem, Problems};

/// Where a judgment came from, for error messages.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: PathBuf,
    pub line: Option<usize>,
}

/// One relevance judgment as a reader found it.
#[derive(Debug, Clone)]
pub struct RawJudgment {
    pub query: String,
    pub fact: String,
    pub grade: Grade,
    pub source: Source,
}

/// What a format reader produces: facts, queries and judgments with their origins.
pub struct Collection {
    pub root: PathBuf,
    /// Name of the collection (e.g. `scifact`); the directory name when `None`.
    pub name: Option<String>,
    pub description: String,
    /// Facts with the place each was defined.
    pub facts: Vec<(Fact, Source)>,
    pub queries: Vec<(Query, Source)>,
    pub judgments: Vec<RawJudgment>,
    pub notes: Vec<String>,
    pub(super) hasher: ContentHasher,
    /// Defects the reader found; reported together with the validation's.
    pub problems: Problems,
}

impl Collection {
    pub fn new(root: &Path, description: impl Into<String>) -> Collection {
        Collection {
            root: root.to_path_buf(),
            name: None,
            description: description.into(),
            facts: Vec::new(),
            queries: Vec::new(),
            judgments: Vec::new(),
            notes: Vec::new(),
            hasher: ContentHasher::default(),
            problems: Problems::default(),
        }
    }

    /// Reads a file of the collection (or its `.gz`), mapped when it is a plain file,
    /// adding it to the content hash.
    pub fn read(&mut self, relative: &Path) -> Result<crate::input::InputBytes, Error> {
        let (name, bytes) = self.open(relative)?;
        self.hasher.add(&name, &bytes);
        Ok(bytes)
    }

    /// Reads a file as [`Collection::read`] does and returns what `parse` makes of its
    /// bytes, while the content hash takes them in beside it on the current rayon pool.
    pub fn read_parsing<T: Send>(
        &mut self,
        relative: &Path,
        parse: impl FnOnce(&[u8]) -> T + Send,
    ) -> Result<T, Error> {
        let (name, bytes) = self.open(relative)?;
        let hasher = &mut self.hasher;
        let ((), parsed) = rayon::join(|| hasher.add(&name, &bytes), || parse(&bytes));
        Ok(parsed)
    }

    /// The bytes of a file of the collection, and its name in the content hash.
    fn open(&self, relative: &Path) -> Result<(String, crate::input::InputBytes), Error> {
        let path = crate::input::or_gzipped(&self.root.join(relative));
        if let crate::input::Entry::Other(what) = crate::input::entry(&path) {
            return Err(crate::input::not_a_file(&path, what));
        }
        if !path.exists() {
            return Err(Error::problem(
                Problem::new(&path, None, "missing").with_hint(
                    "see docs/dataset-format.md (importing collections) for each format's files",
                ),
            ));
        }
        let bytes = crate::input::read_mapped(&path, crate::input::PageIn::Now)?;
        Ok((relative.to_string_lossy().replace('\\', "/"), bytes))
    }

    /// Validates ids and references and builds the dataset; every defect is reported.
    pub fn into_dataset(self) -> Result<Dataset, Error> {
        let mut problems = self.problems;
        let mut fact_lines: FxHashMap<String, Source> = FxHashMap::default();
        let mut facts = Vec::with_capacity(self.facts.len());
        for (fact, source) in self.facts {
            let mut report =
                |message: String| problems.push(Problem::new(&source.path, source.line, message));
            if let Err(message) = check_id("fact", &fact.id.0) {
                report(message);
            } else if let Some(first) = fact_lines.get(fact.id.as_str()) {
                report(format!(
                    "duplicate document id {:?} (first defined{})",
                    fact.id.0,
                    at_line(first)
                ));
            } else if fact.content.trim().is_empty() {
                report(format!("document {:?} has no text", fact.id.0));
            } else {
                fact_lines.insert(fact.id.as_str().to_owned(), source);
                facts.push(fact);
            }
        }
        let mut query_lines: FxHashMap<String, Source> = FxHashMap::default();
        let mut queries = Vec::with_capacity(self.queries.len());
        for (query, source) in self.queries {
            let mut report =
                |message: String| problems.push(Problem::new(&source.path, source.line, message));
            if let Err(message) = check_id("query", &query.id.0) {
                report(message);
            } else if let Some(first) = query_lines.get(&query.id.0) {
                report(format!(
                    "duplicate query id {:?} (first defined{})",
                    query.id.0,
                    at_line(first)
                ));
            } else if query.text.trim().is_empty() {
                report(format!("query {:?} has no text", query.id.0));
            } else {
                query_lines.insert(query.id.0.clone(), source);
                queries.push(query);
            }
        }
        let mut qrels = Qrels::new();
        let mut judged: FxHashMap<(String, String), Source> = FxHashMap::default();
        for judgment in self.judgments {
            let source = &judgment.source;
            let mut report =
                |message: String| problems.push(Problem::new(&source.path, source.line, message));
            if !query_lines.contains_key(&judgment.query) {
                report(format!("unknown query id {:?}", judgment.query));
            } else if !fact_lines.contains_key(&judgment.fact) {
                report(format!("unknown document id {:?}", judgment.fact));
            } else if let Some(first) = judged.get(&(judgment.query.clone(), judgment.fact.clone()))
            {
                report(format!(
                    "document {} is judged twice for query {} (first{})",
                    judgment.fact,
                    judgment.query,
                    at_line(first)
                ));
            } else {
                judged.insert(
                    (judgment.query.clone(), judgment.fact.clone()),
                    judgment.source.clone(),
                );
                qrels
                    .entry(QueryId(judgment.query))
                    .or_default()
                    .push(Judgment {
                        fact: FactId::from(judgment.fact),
                        grade: judgment.grade,
                    });
            }
        }
        if facts.is_empty() && problems.is_empty() {
            problems.push(Problem::new(&self.root, None, "no documents"));
        }
        if queries.is_empty() && problems.is_empty() {
            problems.push(Problem::new(&self.root, None, "no queries"));
        }
        if qrels.is_empty() && problems.is_empty() {
            problems.push(Problem::new(&self.root, None, "no judgments"));
        }
        problems.into_result()?;
        let directory_name = self
            .root
            .canonicalize()
            .ok()
            .and_then(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "dataset".to_owned());
        let mut manifest = Manifest::defaults(&directory_name);
        if let Some(name) = self.name {
            manifest.name = name;
        }
        manifest.description = self.description;
        let (content_hash, files) = self.hasher.finish();
        Ok(Dataset {
            manifest,
            root: self.root,
            facts,
            queries,
            qrels,
            hypotheses: HashMap::new(),
            content_hash,
            files,
            notes: self.notes,
            concept_lexicon: None,
            built_in: None,
        })
    }
}

fn at_line(source: &Source) -> String {
    match source.line {
        Some(line) => format!(" on line {line} of {}", source.path.display()),
        None => format!(" in {}", source.path.display()),
    }
}

/// Maps negative grades (trec_eval's "judged but unjudged") to 0, which hyde-eval's
/// measures treat identically, and says how many there were.
pub fn clamp_negative_grades(judgments: &mut [RawJudgment], notes: &mut Vec<String>) {
    let negative = judgments
        .iter()
        .filter(|judgment| judgment.grade < 0)
        .count();
    if negative > 0 {
        for judgment in judgments.iter_mut() {
            judgment.grade = judgment.grade.max(0);
        }
        notes.push(format!(
            "{negative} judgment(s) with a negative grade (judged but unjudged, as in trec_eval) imported as grade 0, which scores the same"
        ));
    }
}

/// Keeps only the queries that have judgments (and those with a malformed id, for
/// `into_dataset` to refuse), noting how many were left out.
pub fn keep_judged_queries(collection: &mut Collection, why: &str) {
    let judged: HashSet<&str> = collection
        .judgments
        .iter()
        .map(|judgment| judgment.query.as_str())
        .collect();
    let before = collection.queries.len();
    // A query whose id is malformed stays, to be refused with its line.
    collection.queries.retain(|(query, _)| {
        judged.contains(query.id.0.as_str()) || check_id("query", &query.id.0).is_err()
    });
    let left_out = before - collection.queries.len();
    if left_out > 0 {
        collection.notes.push(format!(
            "{left_out} of {before} queries have no judgments {why} and are left out"
        ));
    }
}

/// A fact with only an id and content (what most collections carry).
pub fn plain_fact(id: String, content: String) -> Fact {
    Fact {
        id: FactId::from(id),
        content,
        tags: Vec::new(),
        category: None,
        created_at: None,
        last_accessed: None,
        access_count: 0,
        confidence: None,
        source: None,
    }
}

/// A query with only an id and text.
pub fn plain_query(id: String, text: String) -> Query {
    Query {
        id: QueryId(id),
        text,
        tags: Vec::new(),
        scenario: None,
        expectations: Vec::new(),
    }
}
