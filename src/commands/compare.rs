//! `hyde-eval compare`: several stored results, or one run per `--embedder`, side by side
//! with paired significance tests.

use std::path::{Path, PathBuf};

use crate::cli::{CompareArgs, RunArgs};
use crate::compare::{self, Accounting};
use crate::error::{exit_code, Error};
use crate::report::files::{check_destination, write_directory};
use crate::report::{render, Document, Format};
use crate::results::stored::StoredResults;
use crate::settings::{self};

use super::*;

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

/// `hyde-eval compare`: stored results, or one run per `--embedder`.
pub fn compare(args: &CompareArgs) -> Result<u8, Error> {
    let significance = settings::significance(&args.significance.options())?;
    let (runs, output_dir, name) = if !args.results.is_empty() {
        let mut runs = Vec::new();
        for path in &args.results {
            runs.push((
                label_of(path),
                StoredResults::load(path)?,
                stored_accounting(path),
            ));
        }
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
                "compare needs two or more --embedder options (e.g. --embedder hash --embedder concept) or two results.json files".into(),
            ));
        }
        let (file, mut dataset) = load_inputs(&args.run)?;
        let name = args
            .run
            .run_name
            .clone()
            .unwrap_or_else(|| format!("{}-compare", dataset.manifest.name));
        let mut runs = Vec::new();
        let mut last_settings = None;
        for embedder in &args.run.embedder {
            let single = RunArgs {
                embedder: vec![embedder.clone()],
                ..args.run.clone()
            };
            let settings = settings::resolve(&single.options(), &file, &dataset.manifest)?;
            if runs.is_empty() && !args.run.no_report {
                // Before the first run, so a destination that may not be replaced fails fast.
                check_destination(&settings.output_dir, &name)?;
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
            runs.push((
                embedder.clone(),
                StoredResults::from_results(&results),
                accounting,
            ));
            last_settings = Some(settings);
        }
        let settings = last_settings.expect("two or more embedders");
        (runs, settings.output_dir, name)
    };
    let report = compare::build(&runs, args.metric.as_deref(), &significance)?;
    let mut printer = Printer::new();
    let document = Document::Compare(&report);
    printer.print(&render(Format::Table, &document)?)?;
    if !args.run.no_report {
        let directory = write_directory(
            &output_dir,
            &name,
            [
                (
                    "compare.json".into(),
                    render(Format::Json, &document)?.into_bytes(),
                ),
                (
                    "compare.md".into(),
                    render(Format::Markdown, &document)?.into_bytes(),
                ),
            ],
        )?;
        note(
            args.run.quiet,
            &format!("comparison written to {}", directory.display()),
        );
    }
    Ok(exit_code::OK)
}
