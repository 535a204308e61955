//! `hyde-eval configurations`: the built-in presets, with the parameters each reads, as
//! a terminal table or, for tools, JSON, CSV or Markdown.

use serde::Serialize;

use crate::cli::{ConfigurationsArgs, OutputFormat};
use crate::configuration::{Preset, PARAM_NAMES};
use crate::error::{exit_code, Error};

use super::print_line;

/// Bumped whenever a field of `configurations --format json` changes meaning or is
/// removed.
pub const CONFIGURATIONS_SCHEMA_VERSION: u32 = 1;

/// One preset, as `configurations` lists it.
#[derive(Serialize)]
struct PresetEntry {
    name: &'static str,
    description: &'static str,
    reproduces: &'static str,
    parameters: Vec<&'static str>,
    /// Whether `run` without `--configurations` runs it.
    in_default_run: bool,
}

#[derive(Serialize)]
struct ConfigurationsDocument {
    schema_version: u32,
    configurations: Vec<PresetEntry>,
}

fn entries() -> Vec<PresetEntry> {
    Preset::ALL
        .iter()
        .map(|preset| {
            let plan = preset.plan();
            PresetEntry {
                name: preset.name(),
                description: preset.description(),
                reproduces: preset.source(),
                parameters: PARAM_NAMES
                    .iter()
                    .copied()
                    .filter(|name| crate::fusion::plan_reads(&plan, name))
                    .collect(),
                in_default_run: preset.in_default_run(),
            }
        })
        .collect()
}

const HEADER: [&str; 4] = [
    "configuration",
    "what it does",
    "reproduces",
    "parameters it reads",
];

/// `hyde-eval configurations`: the built-in presets on stdout in `--format`.
pub fn configurations(args: &ConfigurationsArgs) -> Result<u8, Error> {
    let entries = entries();
    let rows = || {
        entries.iter().map(|entry| {
            vec![
                entry.name.to_owned(),
                entry.description.to_owned(),
                entry.reproduces.to_owned(),
                entry.parameters.join(", "),
            ]
        })
    };
    let text = match args.format {
        OutputFormat::Table => {
            let mut table = crate::report::fit::new_prose_table();
            table.set_header(HEADER.to_vec());
            for row in rows() {
                table.add_row(row);
            }
            table.to_string()
        }
        OutputFormat::Json => {
            let bytes = crate::report::json::json_bytes(&ConfigurationsDocument {
                schema_version: CONFIGURATIONS_SCHEMA_VERSION,
                configurations: entries,
            });
            String::from_utf8(bytes).expect("JSON is UTF-8")
        }
        OutputFormat::Csv => {
            let mut writer = csv::Writer::from_writer(Vec::new());
            let written = std::iter::once(HEADER.map(str::to_owned).to_vec())
                .chain(rows())
                .try_for_each(|row| writer.write_record(row));
            let bytes = written
                .and_then(|()| {
                    writer
                        .into_inner()
                        .map_err(|error| error.into_error().into())
                })
                .map_err(|error| Error::Usage(format!("cannot write CSV: {error}")))?;
            String::from_utf8(bytes).expect("CSV of UTF-8 text is UTF-8")
        }
        OutputFormat::Markdown => crate::report::markdown::table(&HEADER, rows()),
    };
    print_line(text.trim_end_matches('\n'))?;
    Ok(exit_code::OK)
}
