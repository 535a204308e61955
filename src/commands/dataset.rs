//! `hyde-eval dataset synth|import|export|stats|validate`.

use std::path::PathBuf;

use crate::dataset::Dataset;
use crate::error::Error;

use super::*;

/// `hyde-eval dataset import|stats|validate`.
pub fn dataset(command: &crate::cli::DatasetCommand) -> Result<u8, Error> {
    use crate::cli::DatasetCommand;
    use crate::dataset::{import, stats};
    let print_notes = |dataset: &Dataset, quiet: bool| {
        if !quiet {
            for note in &dataset.notes {
                eprintln!("note: {note}");
            }
        }
    };
    match command {
        DatasetCommand::DraftQueries(args) => return super::draft_queries(args),
        DatasetCommand::Synth(args) => {
            let mut options =
                crate::dataset::synth::SynthOptions::new(args.facts, args.queries, args.seed);
            options.vocabulary = args.vocabulary;
            if let Some(topics) = args.topics {
                options.topics = topics;
            }
            let destination = args
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("synth-{}", args.facts)));
            crate::dataset::synth::write(
                &options,
                &destination,
                crate::write_policy::Policy::new(args.force),
            )?;
            print_to_stdout(&format!(
                "wrote {} facts, {} queries ({} topics, seed {}) into {}\n",
                options.facts,
                options.queries,
                options.topics,
                options.seed,
                destination.display()
            ))?;
        }
        DatasetCommand::Export(args) => {
            let built_in = crate::dataset::built_in::named_or_refused(&args.name)?;
            crate::dataset::built_in::export(
                built_in,
                &args.destination,
                crate::write_policy::Policy::new(args.force),
            )?;
            print_to_stdout(&format!(
                "wrote the built-in {} ({} files) into {}\n",
                built_in.name,
                built_in.files.len(),
                args.destination.display()
            ))?;
        }
        DatasetCommand::Import(args) => {
            if args.from == import::Format::Native {
                return Err(Error::Usage(
                    "--from native: the directory is already in hyde-eval's layout; validate it with `hyde-eval dataset validate`".into(),
                ));
            }
            // Before the (possibly long) load, so a destination that may not be
            // written fails fast; checked again once the inputs are known.
            let (parent, name) = crate::write_policy::split_directory(&args.destination)?;
            crate::write_policy::check_directory(
                &parent,
                &name,
                crate::write_policy::Policy::new(args.force),
                crate::write_policy::DirectoryKind::Dataset,
            )?;
            let dataset = load_dataset(
                &Location::Directory(args.source.clone()),
                args.from,
                &args.options,
            )?;
            print_notes(&dataset, args.quiet);
            import::write_native(
                &dataset,
                &args.destination,
                crate::write_policy::Policy::new(args.force),
            )?;
            print_to_stdout(&format!(
                "imported {} facts, {} queries and {} judgments into {}\n",
                dataset.facts.len(),
                dataset.queries.len(),
                dataset.judgment_count(),
                args.destination.display()
            ))?;
        }
        DatasetCommand::Stats(args) => {
            let dataset = load_inspected(&args.inspect)?;
            let summary = stats::stats(&dataset);
            let format = if args.json {
                crate::report::Format::Json
            } else {
                args.format.format()
            };
            let text =
                crate::report::render(format, &crate::report::Document::DatasetStats(&summary))?;
            print_line(text.trim_end_matches('\n'))?;
        }
        DatasetCommand::Validate(args) => {
            let dataset = load_inspected(args)?;
            print_to_stdout(&format!(
                "{}: valid ({} facts, {} queries, {} judgments)\n",
                args.dataset.display(),
                dataset.facts.len(),
                dataset.queries.len(),
                dataset.judgment_count()
            ))?;
        }
    }
    Ok(crate::error::exit_code::OK)
}

/// The dataset `stats` or `validate` names, its notes printed unless quiet.
fn load_inspected(args: &crate::cli::InspectArgs) -> Result<Dataset, Error> {
    let dataset = load_dataset(
        &Location::Directory(args.dataset.clone()),
        args.source.dataset_format,
        &args.source.options,
    )?;
    if !args.quiet {
        for note in &dataset.notes {
            eprintln!("note: {note}");
        }
    }
    Ok(dataset)
}
