//! `hyde-eval baseline update`: stores a run, or an existing results.json, as the
//! regression gate's baseline.
//!
//! The baseline is written under the write policy: it replaces an earlier baseline (a
//! results document, stamped or committed) only when that holds no results of another
//! dataset or of a configuration the new one lacks, unless `--force`.

use crate::cli::BaselineUpdateArgs;
use crate::error::{exit_code, Error};
use crate::report::files::{check_results_replacement, is_results_document};
use crate::report::{render, Document, Format};
use crate::results::stored::StoredResults;
use crate::settings::{self};
use crate::write_policy::{self, Earlier, Policy};

use super::*;

/// `hyde-eval baseline update`: stores a run (or an existing results.json) as the baseline.
pub fn baseline_update(args: &BaselineUpdateArgs) -> Result<u8, Error> {
    let unread = args.run.given().into_iter().find(|flag| match args.from {
        // The stored results are copied as they are: no run options apply.
        Some(_) => *flag != "--quiet",
        // The baseline is one file, --output: no report directory is written.
        None => ["--output-dir", "--no-report"].contains(flag),
    });
    if let Some(flag) = unread {
        return Err(Error::Usage(match &args.from {
            Some(from) => format!(
                "{flag} does not apply: --from stores {} as the baseline as it is, and runs nothing; drop {flag}, or drop --from to store a run made with it",
                from.display()
            ),
            None => format!(
                "{flag} does not apply: baseline update writes the baseline to --output ({}) and no report directory; drop {flag}",
                args.output.display()
            ),
        }));
    }
    let policy = Policy::new(args.force);
    let (bytes, stored) = match &args.from {
        Some(path) => {
            let stored = StoredResults::load(path)?;
            (crate::input::read(path)?, stored)
        }
        None => {
            let (file, mut dataset) = load_inputs(&args.run)?;
            let settings = settings::resolve(&args.run.options(), &file, &dataset.manifest)?;
            // Before the run, so a baseline that may not be replaced fails fast.
            check_baseline(
                args,
                policy,
                &dataset.manifest.name,
                &configuration_names(&settings.run.configurations),
            )?;
            let Execution { results, .. } = in_pool(settings.threads, || {
                execute(&mut dataset, &settings.run, RankingOutputs::default())
            })??;
            let document = Document::Run {
                results: &results,
                columns: &settings.table_metrics,
                gate: None,
            };
            Printer::new().print(&render(Format::Table, &document)?)?;
            judged_warning(args.run.quiet, &results);
            (
                render(Format::Json, &document)?.into_bytes(),
                StoredResults::from_results(&results),
            )
        }
    };
    let configurations: Vec<String> = stored
        .configurations
        .iter()
        .map(|configuration| configuration.name.clone())
        .collect();
    check_baseline(args, policy, &stored.dataset.name, &configurations)?;
    let keep = |path: &std::path::Path| {
        check_results_replacement(path, &stored.dataset.name, &configurations, KEEP_HINT)
    };
    write_policy::write_file_with(
        &args.output,
        policy,
        Earlier::output()
            .recognizing(&is_results_document)
            .keeping(&keep),
        Box::new(|writer| writer.write_all(&bytes)),
    )?;
    note(
        args.run.quiet,
        &format!("baseline written to {}", args.output.display()),
    );
    Ok(exit_code::OK)
}

const KEEP_HINT: &str =
    "store this one under another name (--output FILE), or pass --force to replace the baseline";

/// Checks that `args.output` may take a baseline of `dataset` with `configurations`.
fn check_baseline(
    args: &BaselineUpdateArgs,
    policy: Policy,
    dataset: &str,
    configurations: &[String],
) -> Result<(), Error> {
    let keep = |path: &std::path::Path| {
        check_results_replacement(path, dataset, configurations, KEEP_HINT)
    };
    write_policy::check_file(
        &args.output,
        policy,
        Earlier::output()
            .recognizing(&is_results_document)
            .keeping(&keep),
    )
}

/// The names of `configurations`.
fn configuration_names(configurations: &[crate::configuration::Configuration]) -> Vec<String> {
    configurations
        .iter()
        .map(|configuration| configuration.name.clone())
        .collect()
}
