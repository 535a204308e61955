//! hyde-eval's own dataset layout: a directory with `dataset.toml` (optional),
//! `facts.jsonl` (or chatcli's `memory_index.json`), `queries.jsonl`, `qrels.tsv` and
//! `hypotheses.jsonl` (optional). See docs/dataset-format.md.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::built_in::BuiltIn;
use super::lines::{split_lines, Line};
use super::manifest::{self, Manifest, MANIFEST_FILE};
use super::records::{fact_from_record, strip_position, FactRecord};
use super::{
    chatcli, check_id, ContentHasher, Dataset, Expectation, Fact, FactId, HypothesisSource,
    Judgment, Qrels, Query, QueryId, RecordedHypotheses,
};
use crate::error::{Error, Problem, Problems};
use crate::input::{self, Entry};

pub const FACTS_FILE: &str = "facts.jsonl";
pub const QUERIES_FILE: &str = "queries.jsonl";
pub const QRELS_FILE: &str = "qrels.tsv";
pub const HYPOTHESES_FILE: &str = "hypotheses.jsonl";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryRecord {
    id: String,
    text: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    scenario: Option<String>,
    #[serde(default)]
    expect: Vec<Expectation>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HypothesesRecord {
    query_id: String,
    hypotheses: Vec<String>,
    #[serde(default)]
    source: Option<HypothesisSource>,
}

/// Where a native dataset's files are read from: a directory, or a set built into the
/// binary (whose files read as the directory's do).
#[derive(Debug, Clone, Copy)]
pub(super) enum DatasetFiles<'a> {
    Directory(&'a Path),
    BuiltIn(&'static BuiltIn),
}

impl DatasetFiles<'_> {
    /// The dataset's root, as messages and `Dataset::root` name it (`built-in:devmem`
    /// for a built-in set).
    fn root(self) -> PathBuf {
        match self {
            DatasetFiles::Directory(root) => root.to_path_buf(),
            DatasetFiles::BuiltIn(built_in) => built_in.label(),
        }
    }

    /// The path of the file `name`: in a directory, `NAME.gz` when only that exists.
    fn path(self, name: &str) -> PathBuf {
        match self {
            DatasetFiles::Directory(root) => input::or_gzipped(&root.join(name)),
            DatasetFiles::BuiltIn(_) => self.root().join(name),
        }
    }

    /// What is at the file `name`.
    fn entry(self, name: &str) -> Entry {
        match self {
            DatasetFiles::Directory(_) => input::entry(&self.path(name)),
            DatasetFiles::BuiltIn(built_in) => match built_in.file(name) {
                Some(_) => Entry::RegularFile,
                None => Entry::Missing,
            },
        }
    }

    /// The bytes of the file `name` (of at most `limit` bytes), `None` when absent.
    fn read_optional(self, name: &str, limit: u64) -> Result<Option<Vec<u8>>, Error> {
        match self {
            DatasetFiles::Directory(root) => input::read_optional(&root.join(name), limit),
            DatasetFiles::BuiltIn(built_in) => Ok(built_in.file(name).map(<[u8]>::to_vec)),
        }
    }

    /// The bytes of the file `name`; a missing one is refused.
    fn read_required(self, name: &str) -> Result<Vec<u8>, Error> {
        let path = self.path(name);
        match self.entry(name) {
            Entry::Other(what) => Err(input::not_a_file(&path, what)),
            Entry::Missing => Err(Error::problem(
                Problem::new(&path, None, "missing").with_hint(format!(
                    "a dataset directory needs {name}; see docs/dataset-format.md"
                )),
            )),
            Entry::RegularFile => self
                .read_optional(name, u64::MAX)?
                .ok_or_else(|| Error::problem(Problem::new(&path, None, "missing"))),
        }
    }
}

pub(super) fn load(root: &Path) -> Result<Dataset, Error> {
    if !root.is_dir() {
        return Err(Error::problem(
            Problem::new(root, None, "not a dataset directory").with_hint(
                "a dataset is a directory holding facts.jsonl, queries.jsonl and qrels.tsv",
            ),
        ));
    }
    let directory_name = root
        .canonicalize()
        .ok()
        .and_then(|path| {
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "dataset".to_owned());
    load_files(DatasetFiles::Directory(root), &directory_name)
}

/// Loads the dataset built into the binary as `built_in`.
pub(super) fn load_built_in(built_in: &'static BuiltIn) -> Result<Dataset, Error> {
    load_files(DatasetFiles::BuiltIn(built_in), built_in.name)
}

/// Loads the dataset whose files `files` reads; `directory_name` is its name when its
/// manifest gives none.
fn load_files(files: DatasetFiles<'_>, directory_name: &str) -> Result<Dataset, Error> {
    let root = &files.root();
    let mut hasher = ContentHasher::default();

    let manifest_path = files.path(MANIFEST_FILE);
    let manifest_bytes = files.read_optional(MANIFEST_FILE, input::SMALL_FILE_LIMIT)?;
    let mut manifest = if let Some(bytes) = manifest_bytes {
        hasher.add(MANIFEST_FILE, &bytes);
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::problem(Problem::new(&manifest_path, None, "not valid UTF-8")))?;
        manifest::parse(&manifest_path, &text, directory_name)?
    } else {
        Manifest::defaults(directory_name)
    };

    // The files are read (and hashed) in their fixed order, but the facts are parsed
    // last and only then are the queries' and the qrels' fact ids checked: what
    // outlives loading then sits below the facts in memory rather than in the gaps
    // their parsing leaves, so a spilled corpus' memory can go back to the system
    // (see `SpilledFacts`). Each file's problems are still reported together, in
    // line order, the fact list's first.
    let fact_list = read_fact_list(files, &mut hasher)?;
    let mut query_problems = Problems::default();
    let (queries, query_lines) = load_queries(files, &mut hasher, &mut query_problems)?;
    let query_ids: HashSet<&str> = queries.iter().map(|query| query.id.0.as_str()).collect();
    let mut qrel_problems = Problems::default();
    let (qrels, judged_facts) = load_qrels(files, &query_ids, &mut hasher, &mut qrel_problems)?;
    let mut hypothesis_problems = Problems::default();
    let hypotheses = load_hypotheses(files, &query_ids, &mut hasher, &mut hypothesis_problems)?;
    drop(query_ids);
    let mut problems = Problems::default();
    let facts = fact_list.parse(&mut problems);
    let fact_ids: HashSet<&str> = facts.iter().map(|fact| fact.id.as_str()).collect();
    check_expectations(
        files,
        &queries,
        &query_lines,
        &fact_ids,
        &mut query_problems,
    );
    check_judged_facts(files, &judged_facts, &fact_ids, &mut qrel_problems);
    drop((fact_ids, judged_facts, query_lines));
    for mut file_problems in [query_problems, qrel_problems, hypothesis_problems] {
        file_problems.sort_by_line();
        problems.append(file_problems);
    }
    let concept_lexicon = match (&manifest.concept_lexicon, files) {
        (Some(relative), DatasetFiles::BuiltIn(built_in)) => {
            let path = root.join(relative);
            let bytes = built_in.file(relative).ok_or_else(|| {
                Error::problem(Problem::new(
                    &path,
                    None,
                    "missing from the built-in dataset",
                ))
            })?;
            hasher.add(relative, bytes);
            let text = String::from_utf8(bytes.to_vec())
                .map_err(|_| Error::problem(Problem::new(&path, None, "not valid UTF-8")))?;
            Some((path, text))
        }
        (Some(relative), DatasetFiles::Directory(root)) => {
            let Some(path) = input::inside(root, Path::new(relative)) else {
                return Err(Error::problem(
                    Problem::new(
                        &manifest_path,
                        None,
                        format!("concept_lexicon {relative:?} points outside the dataset directory"),
                    )
                    .with_hint("name a file inside the dataset directory, e.g. concept_lexicon = \"concepts.toml\" (symlinks are followed)"),
                ));
            };
            let bytes = input::read_limited(&path, input::SMALL_FILE_LIMIT)?;
            hasher.add(relative, &bytes);
            let text = String::from_utf8(bytes)
                .map_err(|_| Error::problem(Problem::new(&path, None, "not valid UTF-8")))?;
            Some((path, text))
        }
        (None, _) => None,
    };
    problems.into_result()?;

    let mut notes = Vec::new();
    if !manifest.now_is_explicit {
        let latest = facts
            .iter()
            .filter_map(|fact| fact.last_used().max(fact.created_at))
            .max();
        // Without any fact timestamp every age is 0 and there is nothing to note.
        if let Some(latest) = latest {
            manifest.now = latest;
            notes.push(format!(
                "{} sets no `now`; fact ages are measured from the latest fact timestamp, {}",
                MANIFEST_FILE,
                manifest.now.to_rfc3339()
            ));
        }
    }
    let future = facts
        .iter()
        .filter(|fact| fact.last_used().is_some_and(|time| time > manifest.now))
        .count();
    if future > 0 {
        notes.push(format!(
            "{future} fact(s) were last used after the dataset's now ({}); their age counts as 0 days",
            manifest.now.to_rfc3339()
        ));
    }
    let built_in = match files {
        DatasetFiles::BuiltIn(built_in) => Some(built_in.name),
        DatasetFiles::Directory(_) => None,
    };
    let (content_hash, files) = hasher.finish();
    Ok(Dataset {
        manifest,
        root: root.clone(),
        facts,
        queries,
        qrels,
        hypotheses,
        content_hash,
        files,
        notes,
        concept_lexicon,
        built_in,
    })
}

/// The fact list of a dataset directory alone (`facts.jsonl` or `memory_index.json`),
/// validated as [`load`] validates it: for drafting queries for a set that has none.
pub fn load_facts(root: &Path) -> Result<Vec<Fact>, Error> {
    let list = read_fact_list(DatasetFiles::Directory(root), &mut ContentHasher::default())?;
    let mut problems = Problems::default();
    let facts = list.parse(&mut problems);
    problems.into_result()?;
    Ok(facts)
}

/// The fact list's bytes, read and hashed before the other files, parsed after them.
enum FactList {
    Jsonl { path: PathBuf, bytes: Vec<u8> },
    Chatcli { path: PathBuf, bytes: Vec<u8> },
}

fn read_fact_list(files: DatasetFiles<'_>, hasher: &mut ContentHasher) -> Result<FactList, Error> {
    let root = &files.root();
    let jsonl = files.path(FACTS_FILE);
    let chatcli_file = files.path(chatcli::MEMORY_INDEX_FILE);
    for name in [FACTS_FILE, chatcli::MEMORY_INDEX_FILE] {
        if let Entry::Other(what) = files.entry(name) {
            return Err(input::not_a_file(&files.path(name), what));
        }
    }
    let present = |name| files.entry(name) == Entry::RegularFile;
    match (present(FACTS_FILE), present(chatcli::MEMORY_INDEX_FILE)) {
        (true, true) => Err(Error::problem(
            Problem::new(
                root,
                None,
                format!(
                    "both {FACTS_FILE} and {} are present; a dataset has one fact list",
                    chatcli::MEMORY_INDEX_FILE
                ),
            )
            .with_hint("remove one of them"),
        )),
        (false, false) => Err(Error::problem(no_fact_list(files))),
        (false, true) => {
            let bytes = files.read_required(chatcli::MEMORY_INDEX_FILE)?;
            hasher.add(chatcli::MEMORY_INDEX_FILE, &bytes);
            Ok(FactList::Chatcli {
                path: chatcli_file,
                bytes,
            })
        }
        (true, false) => {
            let bytes = files.read_required(FACTS_FILE)?;
            hasher.add(FACTS_FILE, &bytes);
            Ok(FactList::Jsonl { path: jsonl, bytes })
        }
    }
}

impl FactList {
    /// The facts (the bytes are freed before the facts are returned).
    fn parse(self, problems: &mut Problems) -> Vec<Fact> {
        match self {
            FactList::Chatcli { path, bytes } => {
                chatcli::parse_memory_index(&path, &bytes, problems)
            }
            FactList::Jsonl { path, bytes } => {
                let mut facts = Vec::new();
                let mut seen = HashMap::new();
                for line in split_lines(&path, &bytes, problems) {
                    let Some(record) = parse_json_line::<FactRecord>(&path, &line, problems) else {
                        continue;
                    };
                    if let Some(fact) =
                        fact_from_record(&path, Some(line.number), record, &mut seen, problems)
                    {
                        facts.push(fact);
                    }
                }
                if facts.is_empty() && problems.is_empty() {
                    problems.push(
                        Problem::new(&path, None, "no facts")
                            .with_hint("add one JSON object per line"),
                    );
                }
                facts
            }
        }
    }
}

/// The problem of a dataset directory with no fact list; when it holds another format's
/// files, they are named with the options that read them. The format is not guessed: it
/// decides how the files are read (a BEIR split, a TREC file name), which a command line
/// states.
fn no_fact_list(files: DatasetFiles<'_>) -> Problem {
    let root = &files.root();
    let foreign = match files {
        DatasetFiles::Directory(root) => super::import::foreign_layout(root),
        DatasetFiles::BuiltIn(_) => None,
    };
    let Some(layout) = foreign else {
        return Problem::new(
            root,
            None,
            format!(
                "no fact list: expected {FACTS_FILE} or chatcli's {}",
                chatcli::MEMORY_INDEX_FILE
            ),
        );
    };
    let format = layout.format.name();
    Problem::new(
        root,
        None,
        format!(
            "holds a {} collection ({}), not hyde-eval's layout ({FACTS_FILE}, {QUERIES_FILE}, {QRELS_FILE})",
            format.to_uppercase(),
            layout.files
        ),
    )
    .with_hint(format!(
        "add {} to read it (or convert it once: hyde-eval dataset import --from {format} {} DIR)",
        layout.options,
        root.display()
    ))
}

/// The queries and the line each is on (their expectations are checked once the facts
/// are known, by [`check_expectations`]).
fn load_queries(
    files: DatasetFiles<'_>,
    hasher: &mut ContentHasher,
    problems: &mut Problems,
) -> Result<(Vec<Query>, Vec<usize>), Error> {
    let path = files.path(QUERIES_FILE);
    let bytes = files.read_required(QUERIES_FILE)?;
    hasher.add(QUERIES_FILE, &bytes);
    let mut queries = Vec::new();
    let mut lines = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in split_lines(&path, &bytes, problems) {
        let Some(record) = parse_json_line::<QueryRecord>(&path, &line, problems) else {
            continue;
        };
        let mut valid = true;
        if let Err(message) = check_id("query", &record.id) {
            problems.push(Problem::new(&path, Some(line.number), message));
            valid = false;
        } else if let Some(first) = seen.get(&record.id) {
            problems.push(Problem::new(
                &path,
                Some(line.number),
                format!(
                    "duplicate query id {:?} (first defined on line {first})",
                    record.id
                ),
            ));
            valid = false;
        } else {
            seen.insert(record.id.clone(), line.number);
        }
        if record.text.trim().is_empty() {
            problems.push(
                Problem::new(
                    &path,
                    Some(line.number),
                    format!("query {:?} has empty text", record.id),
                )
                .with_hint("remove the query or write its text"),
            );
            valid = false;
        }
        if valid {
            lines.push(line.number);
            queries.push(Query {
                id: QueryId(record.id),
                text: record.text,
                tags: record.tags,
                scenario: record.scenario,
                expectations: record.expect,
            });
        }
    }
    if queries.is_empty() && problems.is_empty() {
        problems.push(
            Problem::new(&path, None, "no queries").with_hint("add one JSON object per line"),
        );
    }
    Ok((queries, lines))
}

/// Checks every query's expectations (`lines` gives each query's line).
fn check_expectations(
    files: DatasetFiles<'_>,
    queries: &[Query],
    lines: &[usize],
    fact_ids: &HashSet<&str>,
    problems: &mut Problems,
) {
    let path = files.path(QUERIES_FILE);
    for (query, &line) in queries.iter().zip(lines) {
        for expectation in &query.expectations {
            if let Some(message) = expectation_problem(expectation, fact_ids) {
                problems.push(
                    Problem::new(&path, Some(line), format!("query {:?}: {message}", query.id.0))
                        .with_hint("expectation kinds: in_top, all_in_top, ranked_above, abstain, score_above (see docs/gate-and-statistics.md)"),
                );
            }
        }
    }
}

/// What is wrong with an expectation, if anything.
fn expectation_problem(expectation: &Expectation, fact_ids: &HashSet<&str>) -> Option<String> {
    if let Some(unknown) = expectation
        .facts()
        .into_iter()
        .find(|fact| !fact_ids.contains(fact.as_str()))
    {
        return Some(format!("expectation names unknown fact id {:?}", unknown.0));
    }
    match expectation {
        Expectation::InTop { n: 0, .. } | Expectation::AllInTop { n: 0, .. } => {
            Some("expectation has n = 0; n counts results from 1".into())
        }
        Expectation::AllInTop { facts, .. } if facts.is_empty() => {
            Some("all_in_top expectation lists no facts".into())
        }
        Expectation::ScoreAbove { value, .. } if !value.is_finite() => {
            Some("score_above value must be finite".into())
        }
        Expectation::RankedAbove { fact, over } if fact == over => Some(format!(
            "ranked_above expectation asks {:?} to rank above itself",
            fact.0
        )),
        _ => None,
    }
}

/// The judgments, and every judged fact with its line (checked once the facts are
/// known, by [`check_judged_facts`]).
fn load_qrels(
    files: DatasetFiles<'_>,
    query_ids: &HashSet<&str>,
    hasher: &mut ContentHasher,
    problems: &mut Problems,
) -> Result<(Qrels, Vec<(usize, FactId)>), Error> {
    let path = files.path(QRELS_FILE);
    let bytes = files.read_required(QRELS_FILE)?;
    hasher.add(QRELS_FILE, &bytes);
    let mut qrels: Qrels = HashMap::new();
    let mut judged_facts = Vec::new();
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let mut judgments = 0usize;
    for (position, line) in split_lines(&path, &bytes, problems).into_iter().enumerate() {
        let fields: Vec<&str> = line.text.split('\t').map(str::trim).collect();
        if position == 0 && fields.len() == 3 && fields[2].eq_ignore_ascii_case("grade") {
            continue;
        }
        let mut report = |message: String, hint: &str| {
            let mut problem = Problem::new(&path, Some(line.number), message);
            if !hint.is_empty() {
                problem = problem.with_hint(hint);
            }
            problems.push(problem);
        };
        if fields.len() != 3 {
            report(
                format!(
                    "expected 3 TAB-separated fields (query_id, fact_id, grade), found {}",
                    fields.len()
                ),
                "separate the fields with a single TAB character",
            );
            continue;
        }
        let (query, fact, grade_text) = (fields[0], fields[1], fields[2]);
        let grade = match super::parse_grade(grade_text) {
            Ok(grade) if grade >= 0 => grade,
            Ok(grade) => {
                report(
                    format!("grade {grade} is negative"),
                    "use 0 for judged not relevant",
                );
                continue;
            }
            Err(message) => {
                report(
                    message,
                    "grades are integers: 0 = not relevant, 1 = related, 2 = answers it",
                );
                continue;
            }
        };
        judgments += 1;
        if !query_ids.contains(query) {
            report(
                format!("unknown query id {query:?}"),
                "every qrels query must be in queries.jsonl",
            );
            continue;
        }
        if let Some(first) = seen.get(&(query.to_owned(), fact.to_owned())) {
            report(
                format!("duplicate judgment for ({query}, {fact}); first on line {first}"),
                "",
            );
            continue;
        }
        seen.insert((query.to_owned(), fact.to_owned()), line.number);
        let fact = FactId::from(fact.to_owned());
        judged_facts.push((line.number, fact.clone()));
        qrels
            .entry(QueryId(query.to_owned()))
            .or_default()
            .push(Judgment { fact, grade });
    }
    if judgments == 0 && problems.is_empty() {
        problems.push(
            Problem::new(&path, None, "no judgments").with_hint(
                "add one query_id<TAB>fact_id<TAB>grade line per judgment; without them nothing can be scored",
            ),
        );
    }
    Ok((qrels, judged_facts))
}

/// Reports every judged fact that is not in the fact list.
fn check_judged_facts(
    files: DatasetFiles<'_>,
    judged_facts: &[(usize, FactId)],
    fact_ids: &HashSet<&str>,
    problems: &mut Problems,
) {
    let path = files.path(QRELS_FILE);
    for (line, fact) in judged_facts {
        if !fact_ids.contains(fact.as_str()) {
            problems.push(
                Problem::new(
                    &path,
                    Some(*line),
                    format!("unknown fact id {:?}", fact.as_str()),
                )
                .with_hint("every qrels fact must be in the fact list"),
            );
        }
    }
}

fn load_hypotheses(
    files: DatasetFiles<'_>,
    query_ids: &HashSet<&str>,
    hasher: &mut ContentHasher,
    problems: &mut Problems,
) -> Result<HashMap<QueryId, RecordedHypotheses>, Error> {
    let path = files.path(HYPOTHESES_FILE);
    let mut recorded = HashMap::new();
    let Some(bytes) = files.read_optional(HYPOTHESES_FILE, u64::MAX)? else {
        return Ok(recorded);
    };
    hasher.add(HYPOTHESES_FILE, &bytes);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in split_lines(&path, &bytes, problems) {
        let Some(record) = parse_json_line::<HypothesesRecord>(&path, &line, problems) else {
            continue;
        };
        let report = |problems: &mut Problems, message: String| {
            problems.push(Problem::new(&path, Some(line.number), message));
        };
        if !query_ids.contains(record.query_id.as_str()) {
            report(problems, format!("unknown query id {:?}", record.query_id));
            continue;
        }
        if let Some(first) = seen.get(&record.query_id) {
            report(
                problems,
                format!(
                    "second hypotheses line for query {:?} (first on line {first})",
                    record.query_id
                ),
            );
            continue;
        }
        seen.insert(record.query_id.clone(), line.number);
        if let Some(index) = record
            .hypotheses
            .iter()
            .position(|text| text.trim().is_empty())
        {
            report(
                problems,
                format!(
                    "hypothesis {} of query {:?} is empty",
                    index + 1,
                    record.query_id
                ),
            );
            continue;
        }
        recorded.insert(
            QueryId(record.query_id),
            RecordedHypotheses {
                texts: record.hypotheses,
                source: record.source,
            },
        );
    }
    Ok(recorded)
}

/// Parses one JSON line, recording a problem (with the column) when it is malformed.
fn parse_json_line<T: for<'de> Deserialize<'de>>(
    path: &Path,
    line: &Line<'_>,
    problems: &mut Problems,
) -> Option<T> {
    match serde_json::from_str::<T>(line.text) {
        Ok(record) => Some(record),
        Err(error) => {
            problems.push(
                Problem::new(
                    path,
                    Some(line.number),
                    format!("{} (column {})", strip_position(&error), error.column()),
                )
                .with_hint("each line must be one JSON object; see docs/dataset-format.md"),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts are parsed after the other files, and the fact ids the queries and
    /// qrels name are checked after that: the report still lists the fact list's
    /// problems first, then each file's in line order.
    #[test]
    fn problems_are_reported_by_file_then_line() {
        let directory = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(directory.path().join(name), text);
        write(
            FACTS_FILE,
            "{\"id\":\"f1\",\"content\":\"one\"}\n{\"id\":\"f2\",\"content\":\"\"}\n",
        )
        .unwrap();
        write(
            QUERIES_FILE,
            "{\"id\":\"q1\",\"text\":\"a\",\"expect\":[{\"kind\":\"in_top\",\"fact\":\"f9\",\"n\":1}]}\n\
             {\"id\":\"q2\",\"text\":\" \"}\n",
        )
        .unwrap();
        write(QRELS_FILE, "q1\tf8\t1\nq1\tf1\tx\n").unwrap();
        write(
            HYPOTHESES_FILE,
            "{\"query_id\":\"q7\",\"hypotheses\":[\"h\"]}\n",
        )
        .unwrap();
        let Err(Error::Invalid(invalid)) = load(directory.path()) else {
            panic!("the dataset has problems");
        };
        let located: Vec<(String, Option<usize>)> = invalid
            .problems
            .iter()
            .map(|problem| {
                let name = problem.path.file_name().unwrap().to_string_lossy();
                (name.into_owned(), problem.line)
            })
            .collect();
        let expected = [
            (FACTS_FILE, 2),
            (QUERIES_FILE, 1),
            (QUERIES_FILE, 2),
            (QRELS_FILE, 1),
            (QRELS_FILE, 2),
            (HYPOTHESES_FILE, 1),
        ];
        assert_eq!(
            located,
            expected
                .iter()
                .map(|&(name, line)| (name.to_owned(), Some(line)))
                .collect::<Vec<_>>()
        );
        assert!(invalid.problems[1]
            .message
            .contains("unknown fact id \"f9\""));
        assert!(invalid.problems[3]
            .message
            .contains("unknown fact id \"f8\""));
    }
}
