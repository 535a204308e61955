//! `hyde-eval compare`: several stored results, runs of any system scored against qrels
//! (`--qrels`), or one run per `--embedder`, side by side on one or more metrics with
//! every pair of runs tested; inputs may be labelled (`NAME=FILE`). Writes compare.json,
//! compare.md and compare.tex; with `--qrels`, `--html` adds the comparison's HTML report.

use std::path::{Path, PathBuf};

use crate::cli::{CompareArgs, RunArgs};
use crate::compare::{self, Accounting, ComparedInput, ComparisonKind};
use crate::error::{exit_code, Error};
use crate::report::external_html::{self, ExternalRun};
use crate::report::files::{check_destination, write_directory_keeping};
use crate::report::{render, Document, Format};
use crate::results::stored::StoredResults;
use crate::settings::{self, ConfigFile};
use crate::write_policy::Policy;

use super::*;

/// A `NAME=FILE` argument split into its label and path; a plain `FILE` (no `=`, or a
/// `/` before the first `=`) has no label. An empty NAME is refused.
fn labelled(argument: &Path) -> Result<(Option<String>, PathBuf), Error> {
    let Some(text) = argument.to_str() else {
        return Ok((None, argument.to_path_buf()));
    };
    match text.split_once('=') {
        Some((name, path)) if !name.contains(['/', std::path::MAIN_SEPARATOR]) => {
            if name.trim().is_empty() {
                return Err(Error::Usage(format!(
                    "{text:?}: the label before '=' is empty; write NAME=FILE, or ./{text} for a file named so"
                )));
            }
            Ok((Some(name.to_owned()), PathBuf::from(path)))
        }
        _ => Ok((None, argument.to_path_buf())),
    }
}

/// The label and path of each `[NAME=]FILE` argument: its NAME, else `default(path)`,
/// else (when that default is another run's label too) the path as given.
fn labels(
    arguments: &[PathBuf],
    default: fn(&Path) -> String,
) -> Result<Vec<(String, PathBuf)>, Error> {
    let parsed = arguments
        .iter()
        .map(|argument| labelled(argument))
        .collect::<Result<Vec<_>, Error>>()?;
    let candidates: Vec<String> = parsed
        .iter()
        .map(|(name, path)| name.clone().unwrap_or_else(|| default(path)))
        .collect();
    Ok(parsed
        .into_iter()
        .enumerate()
        .map(|(index, (name, path))| {
            let shared = candidates
                .iter()
                .enumerate()
                .any(|(other, label)| other != index && *label == candidates[index]);
            let label = match name {
                Some(name) => name,
                None if shared && !crate::input::is_stdin(&path) => path.display().to_string(),
                None => candidates[index].clone(),
            };
            (label, path)
        })
        .collect())
}

/// A run file's default label: `stdin` for `-`, else its file name without `.gz` and
/// one more extension (`runs/bm25.run.gz` -> `bm25`).
fn run_file_label(path: &Path) -> String {
    if crate::input::is_stdin(path) {
        return "stdin".to_owned();
    }
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => name.to_owned(),
    }
}

/// A label for a stored results file: its directory's name, else the file name.
fn label_of(path: &Path) -> String {
    path.parent()
        .and_then(|parent| parent.file_name())
        .or_else(|| path.file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Accounting recorded beside a stored results.json (`timings.json`), when present.
fn stored_accounting(results_path: &Path) -> Accounting {
    let timings = results_path.with_file_name("timings.json");
    let Some(value) = std::fs::read(&timings)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
    else {
        return Accounting::default();
    };
    let stages = &value["stages_ms"];
    let embedding = [
        stages["embed_facts_ms"].as_f64(),
        stages["expand_queries_ms"].as_f64(),
    ];
    Accounting {
        embedded_texts: None,
        embedding_ms: embedding.iter().copied().sum::<Option<f64>>(),
        retrieval_ms: stages["retrieve_ms"].as_f64(),
    }
}

/// The run options `compare --qrels` reads: the metric settings and where the comparison
/// goes.
const EXTERNAL_READS: [&str; 11] = [
    "--qrels",
    "--metrics",
    "--config",
    "--k",
    "--relevance-level",
    "--semantics",
    "--depth",
    "--run-name",
    "--output-dir",
    "--no-report",
    "--quiet",
];

/// The run options `compare RESULTS...` reads: which configurations and where the
/// comparison goes.
const STORED_READS: [&str; 6] = [
    "--configurations",
    "--metrics",
    "--run-name",
    "--output-dir",
    "--no-report",
    "--quiet",
];

/// The compared runs, where the report goes and its name.
type Compared = (Vec<ComparedInput>, PathBuf, String);

/// Refuses, before any work, the run options that compare cannot honour in the mode
/// chosen, rather than ignoring them.
fn refuse_unhonoured(args: &CompareArgs) -> Result<(), Error> {
    let run = &args.run;
    if args.metric.is_some() && !run.metrics.is_empty() {
        return Err(Error::Usage(
            "--metric names one metric and --metrics several: name them all with --metrics (e.g. --metrics ndcg@10,map,mrr)".into(),
        ));
    }
    let runs = if args.results.is_empty() {
        run.embedder.len()
    } else {
        args.results.len()
    };
    if runs > compare::MAX_RUNS {
        compare::check_run_count(runs)?;
    }
    if args.html && args.external_qrels().is_none() {
        return Err(Error::Usage(
            "compare --html writes the HTML report of run files compared with --qrels; for stored results or --embedder runs, the HTML report of one run is `hyde-eval run --html` or `hyde-eval report RESULTS`".into(),
        ));
    }
    if args.force && run.no_report {
        return Err(Error::Usage(
            "--force lets the comparison replace an existing one, and --no-report writes none; drop one of them".into(),
        ));
    }
    if run.no_report && run.output_dir.is_some() {
        return Err(Error::Usage(
            "--output-dir is where the comparison goes, which --no-report does not write; drop one of them".into(),
        ));
    }
    if args.html && run.no_report {
        return Err(Error::Usage(
            "--html writes report.html into the comparison's directory, which --no-report turns off; drop one of them".into(),
        ));
    }
    // Scoring run files or reading stored results runs nothing: of the run options, each
    // mode reads only these.
    let reading: Option<(&str, &[&str])> = if args.external_qrels().is_some() {
        Some((
            "compare --qrels scores the run files given against the qrels (each is one column) and runs nothing",
            &EXTERNAL_READS,
        ))
    } else if !args.results.is_empty() {
        Some((
            "compare RESULTS... reads stored results, each with its own runs and metric settings, and runs nothing",
            &STORED_READS,
        ))
    } else {
        None
    };
    if let Some((mode, reads)) = reading {
        if let Some(flag) = run.given().into_iter().find(|flag| !reads.contains(flag)) {
            return Err(Error::Usage(format!(
                "{flag} does not apply: {mode}; of the run options it reads {}: drop {flag}",
                reads.join(", ")
            )));
        }
    }
    if args.external_qrels().is_some() && args.results.len() < 2 {
        return Err(Error::Usage(
            "compare --qrels QRELS needs two or more run files: compare --qrels QRELS REFERENCE.run CANDIDATE.run...".into(),
        ));
    }
    Ok(())
}

/// Runs of any system, scored against `qrels` with hyde-eval's metrics: one column each,
/// holding one configuration named `run`.
fn external(args: &CompareArgs, qrels: &Path) -> Result<Compared, Error> {
    let file = match &args.run.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    let (metrics, depth) = settings::external_metrics(&args.run.options(), &file)?;
    let judgments = super::eval::load_judgments(qrels, metrics.relevance_level, &args.results)?;
    let mut runs = Vec::new();
    for (label, path) in labels(&args.results, run_file_label)? {
        let path = path.as_path();
        let scored = judgments.score(
            EXTERNAL_CONFIGURATION,
            super::eval::load_rankings(path)?,
            &metrics,
            depth,
        )?;
        if !args.run.quiet {
            if scored.unanswered_queries > 0 {
                eprintln!(
                    "note: {label}: {} qrels quer{} without results, scored as empty rankings",
                    scored.unanswered_queries,
                    if scored.unanswered_queries == 1 {
                        "y"
                    } else {
                        "ies"
                    }
                );
            }
            if scored.unjudged_queries > 0 {
                eprintln!(
                    "note: {label}: {} run quer{} without judgments ignored",
                    scored.unjudged_queries,
                    if scored.unjudged_queries == 1 {
                        "y"
                    } else {
                        "ies"
                    }
                );
            }
        }
        let results = judgments.results(&label, &metrics, vec![scored.configuration]);
        runs.push(ComparedInput {
            label,
            source: Some(path.display().to_string()),
            results,
            accounting: Accounting::default(),
        });
    }
    Ok((
        runs,
        args.run
            .output_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("reports")),
        args.run
            .run_name
            .clone()
            .unwrap_or_else(|| "compare".into()),
    ))
}

/// The name of the one configuration each external run holds.
const EXTERNAL_CONFIGURATION: &str = "run";

/// Keeps the `--configurations` named (each must be in some run) of stored results.
fn keep_configurations(runs: &mut [ComparedInput], wanted: &[String]) -> Result<(), Error> {
    if wanted.is_empty() {
        return Ok(());
    }
    let mut known: Vec<&str> = Vec::new();
    for run in runs.iter() {
        for configuration in &run.results.configurations {
            if !known.contains(&configuration.name.as_str()) {
                known.push(&configuration.name);
            }
        }
    }
    if let Some(unknown) = wanted.iter().find(|name| !known.contains(&name.as_str())) {
        return Err(Error::Usage(format!(
            "--configurations: no compared run holds {unknown:?}; they hold {}",
            known.join(", ")
        )));
    }
    for run in runs.iter_mut() {
        run.results
            .configurations
            .retain(|configuration| wanted.contains(&configuration.name));
    }
    Ok(())
}

/// `hyde-eval compare`: stored results, runs of any system against qrels, or one run
/// per `--embedder`.
pub fn compare(args: &CompareArgs) -> Result<u8, Error> {
    refuse_unhonoured(args)?;
    let significance = settings::significance(&args.significance.options())?;
    let kind = if args.external_qrels().is_some() {
        ComparisonKind::RunFiles
    } else if !args.results.is_empty() {
        ComparisonKind::StoredResults
    } else {
        ComparisonKind::Embedders
    };
    let (runs, output_dir, name) = if let Some(qrels) = args.external_qrels() {
        external(args, qrels)?
    } else if !args.results.is_empty() {
        let mut runs = Vec::new();
        for (label, path) in labels(&args.results, label_of)? {
            runs.push(ComparedInput {
                label,
                source: Some(path.display().to_string()),
                results: StoredResults::load(&path)?,
                accounting: stored_accounting(&path),
            });
        }
        keep_configurations(&mut runs, &args.run.configurations)?;
        let name = args
            .run
            .run_name
            .clone()
            .unwrap_or_else(|| "compare".into());
        (
            runs,
            args.run
                .output_dir
                .clone()
                .unwrap_or_else(|| PathBuf::from("reports")),
            name,
        )
    } else {
        if args.run.embedder.len() < 2 {
            return Err(Error::Usage(
                "compare needs two or more --embedder options (e.g. --embedder hash --embedder concept), two results.json files, or --qrels QRELS and two run files".into(),
            ));
        }
        let (file, mut dataset) = load_inputs(&args.run)?;
        let name = args
            .run
            .run_name
            .clone()
            .unwrap_or_else(|| format!("{}-compare", dataset.manifest.name));
        // An embedder's own option (--dimension, --lexicon, --model-dir) goes to the
        // embedders that read it, and must have one.
        let mut reads = Vec::new();
        for embedder in &args.run.embedder {
            reads.push(settings::embedder_option(embedder, &file)?);
        }
        if let Some(flag) = settings::given_embedder_options(&args.run.options())
            .into_iter()
            .find(|flag| !reads.contains(&Some(*flag)))
        {
            return Err(Error::Usage(format!(
                "{flag}: none of the compared embedders ({}) reads it: drop {flag}",
                args.run.embedder.join(", ")
            )));
        }
        if let Some(embedder) =
            args.run
                .embedder
                .iter()
                .enumerate()
                .find_map(|(index, embedder)| {
                    args.run.embedder[..index]
                        .contains(embedder)
                        .then_some(embedder)
                })
        {
            return Err(Error::Usage(format!(
                "--embedder {embedder} is given twice; each compared run is one embedder"
            )));
        }
        let mut runs = Vec::new();
        let mut last_settings = None;
        for (embedder, reads) in args.run.embedder.iter().zip(&reads) {
            let read = |flag: &str| *reads == Some(flag);
            let single = RunArgs {
                embedder: vec![embedder.clone()],
                dimension: args.run.dimension.filter(|_| read("--dimension")),
                lexicon: args.run.lexicon.clone().filter(|_| read("--lexicon")),
                model_dir: args.run.model_dir.clone().filter(|_| read("--model-dir")),
                ..args.run.clone()
            };
            let settings = settings::resolve(&single.options(), &file, &dataset.manifest)?;
            if runs.is_empty() && !args.run.no_report {
                // Before the first run, so a destination that may not be replaced fails fast.
                check_destination(&settings.output_dir, &name, Policy::new(args.force))?;
            }
            let Execution {
                results, output, ..
            } = in_pool(settings.threads, || {
                execute(&mut dataset, &settings.run, RankingOutputs::default())
            })??;
            let accounting = Accounting {
                embedded_texts: Some(output.embedded_texts),
                embedding_ms: Some(
                    output.timings.embed_facts_ms + output.timings.expand_queries_ms,
                ),
                retrieval_ms: Some(output.timings.retrieve_ms),
            };
            runs.push(ComparedInput {
                label: embedder.clone(),
                source: None,
                results: StoredResults::from_results(&results),
                accounting,
            });
            last_settings = Some(settings);
        }
        let settings = last_settings.expect("two or more embedders");
        (runs, settings.output_dir, name)
    };
    let (requested, place) = match &args.metric {
        Some(metric) => (vec![metric.clone()], "--metric"),
        None => (args.run.metrics.clone(), "--metrics"),
    };
    let report = compare::build(kind, &runs, &requested, place, &significance)?;
    let mut printer = Printer::new();
    let document = Document::Compare(&report);
    printer.print(render(args.format.format(), &document)?.trim_end_matches('\n'))?;
    if !args.run.no_report {
        let mut files = vec![
            (
                "compare.json".to_owned(),
                render(Format::Json, &document)?.into_bytes(),
            ),
            (
                "compare.md".to_owned(),
                render(Format::Markdown, &document)?.into_bytes(),
            ),
            (
                "compare.tex".to_owned(),
                render(Format::Latex, &document)?.into_bytes(),
            ),
        ];
        if args.html {
            let labelled: Vec<ExternalRun<'_>> = runs
                .iter()
                .map(|run| (run.label.as_str(), &run.results))
                .collect();
            files.push((
                crate::report::html::PAGE.to_owned(),
                external_html::page(&report, &labelled)
                    .map_err(|error| Error::Write {
                        path: output_dir.join(crate::report::html::PAGE),
                        source: std::io::Error::other(error.to_string()),
                    })?
                    .into_bytes(),
            ));
        }
        let policy = Policy::new(args.force);
        let keep = || {
            if policy.force {
                return Ok(());
            }
            check_comparison_replacement(&output_dir.join(&name), &report)
        };
        keep()?;
        let directory = write_directory_keeping(&output_dir, &name, files, policy, &keep)?;
        note(
            args.run.quiet,
            &format!("comparison written to {}", directory.display()),
        );
    }
    Ok(exit_code::OK)
}

/// What [`check_comparison_replacement`] reads of a stored `compare.json`.
#[derive(serde::Deserialize)]
struct StoredComparison {
    dataset: String,
    /// The compared metrics (version 2 on); version 1 compared one, `metric`.
    #[serde(default)]
    metrics: Vec<String>,
    #[serde(default)]
    metric: Option<String>,
    runs: Vec<StoredComparedRun>,
    rows: Vec<StoredCompareRow>,
}

#[derive(serde::Deserialize)]
struct StoredComparedRun {
    label: String,
}

#[derive(serde::Deserialize)]
struct StoredCompareRow {
    configuration: String,
}

/// Refuses to replace the comparison in `directory` when its `compare.json` compares
/// another dataset, or runs, configurations or metrics `report` lacks: replacing it
/// would lose them. A directory without a readable `compare.json` has nothing to lose here.
fn check_comparison_replacement(
    directory: &Path,
    report: &compare::CompareReport,
) -> Result<(), Error> {
    let stored_path = directory.join("compare.json");
    let Some(stored) = std::fs::read(&stored_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<StoredComparison>(&bytes).ok())
    else {
        return Ok(());
    };
    let missing = |stored: Vec<String>, new: Vec<&str>| -> Vec<String> {
        stored
            .into_iter()
            .filter(|name| !new.contains(&name.as_str()))
            .collect()
    };
    let metrics = missing(
        stored.metrics.into_iter().chain(stored.metric).collect(),
        report.metrics.iter().map(String::as_str).collect(),
    );
    let runs = missing(
        stored.runs.into_iter().map(|run| run.label).collect(),
        report.runs.iter().map(|run| run.label.as_str()).collect(),
    );
    let configurations = missing(
        stored
            .rows
            .into_iter()
            .map(|row| row.configuration)
            .collect(),
        report
            .rows
            .iter()
            .map(|row| row.configuration.as_str())
            .collect(),
    );
    let problem = if stored.dataset != report.dataset {
        format!(
            "holds a comparison on dataset {:?}, not {:?}",
            stored.dataset, report.dataset
        )
    } else if !runs.is_empty() {
        format!(
            "holds a comparison of runs this one lacks ({}); replacing it would lose them",
            runs.join(", ")
        )
    } else if !configurations.is_empty() {
        format!(
            "holds a comparison of configurations this one lacks ({}); replacing it would lose them",
            configurations.join(", ")
        )
    } else if !metrics.is_empty() {
        format!(
            "holds a comparison on metrics this one lacks ({}); replacing it would lose them",
            metrics.join(", ")
        )
    } else {
        return Ok(());
    };
    Err(Error::Refused(
        crate::error::Problem::new(&stored_path, None, problem).with_hint(format!(
            "keep both by naming this comparison (--run-name NAME), or pass --force to replace {}",
            directory.display()
        )),
    ))
}
