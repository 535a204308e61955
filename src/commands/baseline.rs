//! `hyde-eval baseline update`: stores a run, or an existing results.json, as the
//! regression gate's baseline.

use crate::cli::BaselineUpdateArgs;
use crate::error::{exit_code, Error};
use crate::report::files::write_file_atomically;
use crate::report::{render, Document, Format};
use crate::results::stored::StoredResults;
use crate::settings::{self};

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
    let bytes = match &args.from {
        Some(path) => {
            StoredResults::load(path)?;
            crate::input::read(path)?
        }
        None => {
            let (file, mut dataset) = load_inputs(&args.run)?;
            let settings = settings::resolve(&args.run.options(), &file, &dataset.manifest)?;
            let Execution { results, .. } = in_pool(settings.threads, || {
                execute(&mut dataset, &settings.run, RankingOutputs::default())
            })??;
            let document = Document::Run {
                results: &results,
                columns: &settings.table_metrics,
                gate: None,
            };
            Printer::new().print(&render(Format::Table, &document)?)?;
            render(Format::Json, &document)?.into_bytes()
        }
    };
    write_file_atomically(&args.output, &bytes)?;
    note(
        args.run.quiet,
        &format!("baseline written to {}", args.output.display()),
    );
    Ok(exit_code::OK)
}
