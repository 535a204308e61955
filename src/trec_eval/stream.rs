//! A run file evaluated as it is read: the file is cut into line-aligned chunks, read in
//! parallel, and each query's block of consecutive lines is evaluated as soon as it
//! ends, from buffers reused by the worker; no per-result record of the whole run is
//! kept.
//!
//! A chunk's first and last blocks may hold only part of a query (chunks end at line
//! ends, not at query ends), so they are kept and evaluated once every chunk is read,
//! joined in file order with the other parts of their query. A query whose lines are
//! spread over the file (a run not grouped by query) is read again whole, by
//! [`super::evaluate_run`]; the outcome is the same either way.

use std::path::Path;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::ranking::descending_key;
use super::{
    evaluate_run, Context, DuplicateResult, EvalOptions, QueryOutcome, RunEvaluation, Worker,
};
use crate::dataset::trec_lines::same_field;
use crate::error::Error;
use crate::input::InputBytes;
use crate::trec::parse::{self, ChunkProblem, QrelsData};

/// Why a run could not be evaluated.
#[derive(Debug)]
pub enum RunFailure {
    /// The file is malformed (the error names the line).
    Input(Error),
    /// A document is listed twice for a query.
    Duplicate(DuplicateResult),
}

/// A query's consecutive lines within one chunk.
enum Block<'a> {
    /// Evaluated where it was read.
    Evaluated(QueryOutcome),
    /// The first or last block of its chunk: documents and keys, in file order.
    Kept(Vec<&'a str>, Vec<u64>),
}

/// What one chunk holds: its blocks in file order and the tag of its last line.
struct ChunkBlocks<'a> {
    blocks: Vec<(&'a str, Block<'a>)>,
    run_id: Option<&'a str>,
}

/// Reads one chunk, evaluating every block but its first and last. An evaluated
/// block's query is named by the qrels' copy of its id, so that the chunk's bytes are
/// not read again once it is read.
fn read_chunk<'a, 'q: 'a>(
    chunk: &'a [u8],
    context: &Context<'q>,
    worker: &mut Worker<'q>,
) -> Result<ChunkBlocks<'a>, ChunkProblem> {
    let mut blocks = Vec::new();
    let mut current: Option<&'a str> = None;
    let mut documents: Vec<&'a str> = Vec::new();
    let mut keys: Vec<u64> = Vec::new();
    let run_id = parse::for_each_result(chunk, |query, document, score| {
        if !current.is_some_and(|current| same_field(current, query)) {
            if let Some(previous) = current {
                let block = if blocks.is_empty() {
                    let depth = documents.len();
                    let kept = Block::Kept(
                        std::mem::replace(&mut documents, Vec::with_capacity(depth)),
                        std::mem::replace(&mut keys, Vec::with_capacity(depth)),
                    );
                    (previous, kept)
                } else {
                    let judgments = context.judgments_of(previous);
                    let outcome = judgments.map(|judgments| {
                        context.evaluate_judged(judgments, &documents, &keys, worker)
                    });
                    documents.clear();
                    keys.clear();
                    let id = judgments.map_or(previous, |judgments| judgments.query);
                    (id, Block::Evaluated(outcome))
                };
                blocks.push(block);
            }
            current = Some(query);
        }
        documents.push(document);
        keys.push(descending_key(score));
    })?;
    if let Some(last) = current {
        blocks.push((last, Block::Kept(documents, keys)));
    }
    Ok(ChunkBlocks { blocks, run_id })
}

/// The blocks of one query, in file order.
type QueryBlocks<'a> = Vec<Block<'a>>;

/// Evaluates the run in `input` (read from `path`) against `qrels`, on the current
/// rayon pool; the same evaluation as [`evaluate_run`] of the parsed run. The pages of
/// each chunk are given back once it is read ([`InputBytes::release`]).
pub fn evaluate_run_file(
    qrels: &QrelsData<'_>,
    path: &Path,
    input: &InputBytes,
    options: &EvalOptions,
) -> Result<RunEvaluation, RunFailure> {
    let context = Context::new(qrels, options);
    let bytes: &[u8] = input;
    let chunks = parse::run_chunks(bytes);
    let read: Vec<Result<ChunkBlocks<'_>, ChunkProblem>> = chunks
        .par_iter()
        .map_init(Worker::default, |worker, chunk| {
            let blocks = read_chunk(chunk, &context, worker);
            input.release(chunk);
            blocks
        })
        .collect();
    let mut run_id = None;
    let mut queries: Vec<(&str, QueryBlocks<'_>)> = Vec::new();
    let mut index_of: FxHashMap<&str, usize> = FxHashMap::default();
    for (number, chunk) in read.into_iter().enumerate() {
        let chunk = chunk.map_err(|problem| {
            RunFailure::Input(parse::chunk_error(path, &chunks, number, problem))
        })?;
        run_id = chunk.run_id.or(run_id);
        for (query, block) in chunk.blocks {
            match index_of.get(query) {
                Some(&index) => queries[index].1.push(block),
                None => {
                    index_of.insert(query, queries.len());
                    queries.push((query, vec![block]));
                }
            }
        }
    }
    let run_id = parse::run_id_or_error(path, run_id).map_err(RunFailure::Input)?;
    let scattered = queries.iter().any(|(_, blocks)| {
        blocks.len() > 1
            && blocks
                .iter()
                .any(|block| matches!(block, Block::Evaluated(_)))
    });
    if scattered {
        let run = parse::parse_run(path, bytes).map_err(RunFailure::Input)?;
        return evaluate_run(qrels, run, options).map_err(RunFailure::Duplicate);
    }
    let outcomes = queries
        .into_par_iter()
        .map_init(Worker::default, |worker, (query, blocks)| {
            let (mut documents, mut keys) = (Vec::new(), Vec::new());
            for block in blocks {
                match block {
                    // Not scattered: the query's only block.
                    Block::Evaluated(outcome) => return (query, outcome),
                    Block::Kept(part_documents, part_keys) => {
                        documents.extend(part_documents);
                        keys.extend(part_keys);
                    }
                }
            }
            (query, context.evaluate(query, &documents, &keys, worker))
        })
        .collect();
    context
        .finish(run_id, outcomes)
        .map_err(RunFailure::Duplicate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::parse::{parse_qrels, parse_run};
    use crate::trec_eval::MeasureSet;

    fn options() -> EvalOptions {
        EvalOptions {
            relevance_level: 1,
            complete: true,
            max_results: 50,
            judged_only: false,
            collection_size: 0,
            measures: MeasureSet::parse(&["all_trec".to_owned()]).unwrap(),
        }
    }

    /// A run of `queries` x 100 results with few distinct scores (ties), its lines in
    /// `order`; long enough for many chunks.
    fn run_text(queries: usize, order: impl Fn(usize, usize) -> (usize, usize)) -> String {
        let mut text = String::new();
        for line in 0..queries * 100 {
            let (query, rank) = order(line, queries);
            let score = (query * 7 + rank * 13) % 9;
            text.push_str(&format!(
                "q{query} Q0 d{} {rank} {score}.5 tag{query}\n",
                (rank * 31 + query) % 400
            ));
        }
        text
    }

    fn evaluations(qrels: &QrelsData<'_>, text: &str) -> (RunEvaluation, RunEvaluation) {
        let input = InputBytes::Read(text.as_bytes().to_vec());
        let streamed = evaluate_run_file(qrels, Path::new("r"), &input, &options())
            .map_err(|failure| format!("{failure:?}"))
            .unwrap();
        let run = parse_run(Path::new("r"), text.as_bytes()).unwrap();
        (streamed, evaluate_run(qrels, run, &options()).unwrap())
    }

    #[test]
    fn streamed_evaluation_equals_the_parsed_run_grouped_or_scattered() {
        let mut qrels_text = String::new();
        for query in 0..400 {
            for document in (0..400).step_by(3 + query % 5) {
                qrels_text.push_str(&format!("q{query} 0 d{document} {}\n", document % 4));
            }
        }
        let qrels = parse_qrels(Path::new("q"), &qrels_text).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        pool.install(|| {
            // Grouped by query (queries cut by chunk ends), then interleaved.
            let grouped = run_text(420, |line, _| (line / 100, line % 100));
            let scattered = run_text(420, |line, queries| (line % queries, line / queries));
            for text in [grouped, scattered] {
                assert!(parse::run_chunks(text.as_bytes()).len() > 10);
                let (streamed, parsed) = evaluations(&qrels, &text);
                assert_eq!(streamed.per_query, parsed.per_query);
                assert_eq!(streamed.summary, parsed.summary);
                assert_eq!(streamed.run_id, parsed.run_id);
                assert_eq!(streamed.unjudged_queries, 20);
                assert_eq!(streamed.missing_from_run, parsed.missing_from_run);
            }
            // A duplicate in a query cut by a chunk end, and one in a later query.
            let mut text = run_text(420, |line, _| (line / 100, line % 100));
            let chunk_end = parse::run_chunks(text.as_bytes())[0].len();
            let query = text[chunk_end..].split(' ').next().unwrap().to_owned();
            text.push_str(&format!("q419 Q0 d9999 1 1 t\n{query} Q0 d9999 1 1 t\n"));
            text.push_str(&format!("{query} Q0 d9999 2 1 t\nq419 Q0 d9999 2 1 t\n"));
            let input = InputBytes::Read(text.into_bytes());
            let error = evaluate_run_file(&qrels, Path::new("r"), &input, &options());
            match error {
                Err(RunFailure::Duplicate(duplicate)) => {
                    assert_eq!(duplicate.document, "d9999");
                    assert_eq!(duplicate.query, query);
                }
                other => panic!("{:?}", other.map(|evaluation| evaluation.per_query.len())),
            }
        });
    }
}
