//! `hyde-eval merge`: the shards of a run (`run --shard I/N`) combined into the results
//! document, run files and report one `run` writes, then gated as `run` gates. The
//! shards are checked to belong together (see `results::shard`), the dataset they ran
//! is read and checked against their content hash, and their query slices, run files
//! and per-query records are checked against it while the records are recomputed
//! (`results::recompute`); the merging itself is `results::merge`'s.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::cli::{FormatOptions, MergeArgs};
use crate::dataset::built_in::{self, Location};
use crate::dataset::Dataset;
use crate::error::{Error, Problem};
use crate::report::files::{
    check_output_name, judged_qrels, write_report, ReportFile, ReportParts, Timings,
};
use crate::results::merge::{merge as merge_shards, merge_run_files};
use crate::results::recompute::{check_slices, recompute, ShardInput};
use crate::results::shard::{check_shards, ShardResults};
use crate::settings::{self, ConfigFile};

use super::run::{conclude, gate_of, load_baseline, Conclusion, WriteReport};
use super::*;

/// `hyde-eval merge`: returns the process exit code (1 when the gate fails).
pub fn merge(args: &MergeArgs) -> Result<u8, Error> {
    let gate_settings = settings::resolve_gate(&args.gate.options(), &ConfigFile::default())?;
    let baseline = load_baseline(gate_settings.as_ref())?;
    let mut shards = args
        .shards
        .iter()
        .map(|path| ShardResults::load(path))
        .collect::<Result<Vec<_>, _>>()?;
    check_shards(&mut shards)?;
    let run_name = match &args.run_name {
        Some(name) => name.clone(),
        None => {
            let (first_path, first) = &shards[0];
            if let Some((path, shard)) = shards
                .iter()
                .find(|(_, shard)| shard.results.run_name != first.results.run_name)
            {
                return Err(Error::Usage(format!(
                    "the shards have different run names ({} in {}, {} in {}); name the merged run with --run-name",
                    first.results.run_name,
                    first_path.display(),
                    shard.results.run_name,
                    path.display()
                )));
            }
            first.results.run_name.clone()
        }
    };
    check_output_name("run name", &run_name)?;
    crate::trec::check_token("run name", &run_name)?;
    let output_dir = args
        .output_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports"));

    // What the report needs from each shard directory, checked before anything is written.
    let directories: Vec<PathBuf> = shards
        .iter()
        .map(|(path, _)| path.parent().map(Path::to_path_buf).unwrap_or_default())
        .collect();
    let configurations: Vec<String> = shards[0]
        .1
        .results
        .configurations
        .iter()
        .map(|configuration| configuration.name.clone())
        .collect();
    for directory in &directories {
        let needed = std::iter::once("timings.json".to_owned())
            .chain(configurations.iter().map(|name| format!("runs/{name}.run")));
        for relative in needed {
            let path = directory.join(&relative);
            if !path.is_file() {
                return Err(Error::problem(
                    Problem::new(&path, None, "missing from the shard directory")
                        .with_hint("pass the directories `hyde-eval run --shard I/N` wrote, whole"),
                ));
            }
        }
    }
    let timings = directories
        .iter()
        .map(|directory| {
            read_json::<Timings>(
                &directory.join("timings.json"),
                DocumentKind::Timings,
                &|_| "pass the shard directories `hyde-eval run --shard` wrote".into(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;

    let dataset = load_shards_dataset(&shards, args)?;
    crate::progress::stage(
        !args.quiet,
        "recomputing the metrics from the shards' run files",
    );
    check_slices(&shards, &dataset)?;
    let digests = recompute(&shards, &dataset)?;
    let run_depth = shards[0].1.run_depth;
    let (_, shards): (Vec<PathBuf>, Vec<ShardResults>) = shards.into_iter().unzip();
    let results = merge_shards(&shards, digests, &dataset, &run_name);
    let qrels = judged_qrels(&dataset, results.evaluation.settings.relevance_level);
    let queries: Vec<_> = results
        .queries
        .iter()
        .map(|query| query.id.clone())
        .collect();
    let write: WriteReport = Box::new(|extra| {
        let run_files = configurations
            .iter()
            .map(|name| {
                let paths: Vec<PathBuf> = directories
                    .iter()
                    .map(|directory| directory.join(format!("runs/{name}.run")))
                    .collect();
                let queries = &queries;
                let content = ReportFile::Streamed(Box::new(move |writer| {
                    let sources = paths
                        .iter()
                        .map(|path| {
                            std::fs::File::open(path).map(|file| {
                                Box::new(BufReader::with_capacity(1 << 20, file))
                                    as Box<dyn std::io::BufRead>
                            })
                        })
                        .collect::<std::io::Result<Vec<_>>>()?;
                    merge_run_files(sources, queries, run_depth, writer)
                }));
                (name.clone(), content)
            })
            .collect();
        let parts = ReportParts {
            timings: crate::report::json::json_bytes(&Timings::merged(timings)),
            qrels,
            run_files,
            extra,
            policy: crate::write_policy::Policy::new(args.force),
        };
        write_report(&output_dir, &results, parts)
    });
    conclude(Conclusion {
        results: &results,
        gate: gate_of(gate_settings.as_ref(), baseline.as_ref()),
        columns: &shards[0].table_metrics,
        args: &args.gate,
        write: Some((output_dir.as_path(), write)),
        html: args.html,
        quiet: args.quiet,
    })
}

/// The dataset the shards ran: at `--dataset`, else where the first shard read it, with
/// the format and options it recorded; refused (exit code 2) unless its content hash is
/// the one every shard records.
fn load_shards_dataset(shards: &[ShardInput], args: &MergeArgs) -> Result<Dataset, Error> {
    let (shard_path, shard) = &shards[0];
    let source = &shard.dataset_source;
    let path = args.dataset.clone().unwrap_or_else(|| source.path.clone());
    let hint = "pass the dataset directory the shards ran with --dataset DIR (a path the shards recorded is relative to where they ran)";
    let location = if built_in::is_prefixed(&path) {
        built_in::locate(&path, true)?
    } else {
        Location::Directory(path.clone())
    };
    if matches!(location, Location::Directory(_)) && !path.is_dir() {
        let whose = match &args.dataset {
            Some(_) => "--dataset".to_owned(),
            None => format!("the dataset {} names", shard_path.display()),
        };
        return Err(Error::problem(
            Problem::new(&path, None, format!("no such dataset directory ({whose})"))
                .with_hint(hint),
        ));
    }
    crate::progress::stage(!args.quiet, &format!("loading {location}"));
    let dataset = load_dataset(
        &location,
        source.format,
        &FormatOptions {
            split: source.split.clone(),
            docs: source.docs.clone(),
            queries: source.queries.clone(),
            qrels: source.qrels.clone(),
        },
    )?;
    let recorded = &shard.results.dataset.content_hash;
    if dataset.content_hash != *recorded {
        return Err(Error::problem(
            Problem::new(
                &path,
                None,
                format!(
                    "content hash {} is not the hash of the dataset the shards ran ({recorded}, in {})",
                    dataset.content_hash,
                    shard_path.display()
                ),
            )
            .with_hint(hint),
        ));
    }
    Ok(dataset)
}
