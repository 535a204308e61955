//! `hyde-eval fuse`: TREC runs read with trec_eval's rules (`trec::parse`), each query's
//! rankings fused by a run-fusion method of `fusion::runs`, the fused run written as a
//! TREC run to stdout or `-o FILE`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::cli::FuseArgs;
use crate::configuration::ListMethod;
use crate::configuration::{Normalization, DEFAULT_RRF_K, MAX_RESULTS};
use crate::error::{exit_code, Error, Problem};
use crate::fusion::runs::{fuse as fuse_lists, logn_isr, RunFusion};
use crate::trec::parse;

use super::print_to_stdout;

/// One run: each query's (docno, score) list.
type QueryLists = BTreeMap<String, Vec<(String, f64)>>;

/// `hyde-eval fuse`: returns the process exit code.
pub fn fuse(args: &FuseArgs) -> Result<u8, Error> {
    if args.runs.len() < 2 {
        return Err(Error::Usage(format!(
            "fuse needs at least two runs, got {}",
            args.runs.len()
        )));
    }
    if args.method.reads_ranks_only() && args.norm.is_some() {
        return Err(Error::Usage(format!(
            "--norm: {} reads ranks only, so no normalization applies",
            args.method.name()
        )));
    }
    if !args.weights.is_empty() && args.method != ListMethod::Wsum {
        return Err(Error::Usage(format!(
            "--weights: only wsum reads weights, not {}",
            args.method.name()
        )));
    }
    if args.k.is_some() && args.method != ListMethod::Rrf {
        return Err(Error::Usage(format!(
            "--k: only rrf reads k, not {}",
            args.method.name()
        )));
    }
    if args.gamma.is_some() != (args.method == ListMethod::Gmnz) {
        return Err(Error::Usage(match args.gamma {
            Some(_) => format!("--gamma: only gmnz reads gamma, not {}", args.method.name()),
            None => "gmnz needs --gamma (ranx gives it no default)".to_owned(),
        }));
    }
    if let Some(gamma) = args.gamma.filter(|gamma| !gamma.is_finite()) {
        return Err(Error::Usage(format!("--gamma must be finite, got {gamma}")));
    }
    if args.sigma.is_some() && args.method != ListMethod::LognIsr {
        return Err(Error::Usage(format!(
            "--sigma: only logn_isr reads sigma, not {}",
            args.method.name()
        )));
    }
    let sigma = args.sigma.unwrap_or(logn_isr::DEFAULT_SIGMA);
    if !(0.0..=1.0).contains(&sigma) {
        return Err(Error::Usage(format!(
            "--sigma must be between 0 and 1 (as ranx asserts), got {sigma}"
        )));
    }
    if args.depth == 0 || args.depth > MAX_RESULTS {
        return Err(Error::Usage(format!(
            "--depth must be between 1 and {MAX_RESULTS}, got {}",
            args.depth
        )));
    }
    let fusion = RunFusion {
        method: args.method,
        normalization: args.norm.unwrap_or(Normalization::MinMax),
        rrf_k: args.k.unwrap_or(DEFAULT_RRF_K),
        weights: &args.weights,
        gamma: args.gamma.unwrap_or(1.0),
        sigma,
    };
    fusion
        .check(args.runs.len())
        .map_err(|message| Error::Usage(format!("--weights: {message}")))?;

    let tag = args.tag.as_deref().unwrap_or(args.method.name());
    crate::trec::check_token("--tag", tag)?;

    let runs: Vec<QueryLists> = args
        .runs
        .iter()
        .map(|path| read_run(path))
        .collect::<Result<_, _>>()?;
    let mut queries: Vec<&String> = runs.iter().flat_map(|run| run.keys()).collect();
    queries.sort();
    queries.dedup();

    let mut text = String::new();
    for query in queries {
        let lists: Vec<Vec<(&str, f64)>> = runs
            .iter()
            .map(|run| {
                run.get(query).map_or_else(Vec::new, |list| {
                    list.iter()
                        .map(|(document, score)| (document.as_str(), *score))
                        .collect()
                })
            })
            .collect();
        let fused = fuse_lists(&lists, &fusion, args.depth);
        if let Some((document, score)) = fused.iter().find(|(_, score)| !score.is_finite()) {
            return Err(Error::Usage(format!(
                "query {query}: the fused score of document {document} would be {score}: the runs' scores overflow under {} with --norm {} (a run file holds finite scores only); rescale the runs' scores or choose another --norm",
                args.method.name(),
                fusion.normalization.name()
            )));
        }
        for (position, (document, score)) in fused.into_iter().enumerate() {
            writeln!(text, "{query} Q0 {document} {} {score} {tag}", position + 1)
                .expect("writing to a String cannot fail");
        }
    }
    match &args.output {
        Some(path) => crate::write_policy::write_file(
            path,
            text.as_bytes(),
            crate::write_policy::Policy::new(args.force),
        )?,
        None => print_to_stdout(&text)?,
    }
    Ok(exit_code::OK)
}

/// Reads one run: every query's documents with their scores. A document twice in one
/// query, or a score that is not finite, is an error naming the lines.
fn read_run(path: &Path) -> Result<QueryLists, Error> {
    let bytes = crate::input::read(path)?;
    let run = parse::parse_run(path, &bytes)?;
    let text = || String::from_utf8_lossy(&bytes).into_owned();
    let mut lists = QueryLists::new();
    for query in run.queries {
        let mut seen = std::collections::HashSet::with_capacity(query.results.len());
        for &(document, score) in &query.results {
            let problem = |message: String| {
                let lines = parse::lines_naming(&text(), query.query, document);
                Error::problem(Problem::new(path, lines.first().copied(), message))
            };
            if !seen.insert(document) {
                return Err(problem(format!(
                    "document {document} appears twice for query {} (lines {:?})",
                    query.query,
                    parse::lines_naming(&text(), query.query, document)
                )));
            }
            if !score.is_finite() {
                return Err(problem(format!(
                    "score {score} of document {document} for query {} is not finite; fusion needs finite scores",
                    query.query
                )));
            }
        }
        lists.insert(
            query.query.to_owned(),
            query
                .results
                .iter()
                .map(|&(document, score)| (document.to_owned(), score))
                .collect(),
        );
    }
    Ok(lists)
}
