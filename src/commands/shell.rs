//! `hyde-eval completions SHELL` and `hyde-eval man`: print the completion script or the
//! man page that `cli` generates from the command definitions, or write them to files
//! under the write policy.

use crate::cli::{self, CompletionsArgs, ManArgs};
use crate::error::{exit_code, Error};
use crate::write_policy::{self, Policy};

/// `hyde-eval completions SHELL [--output FILE]`: the completion script on stdout or in
/// FILE.
pub fn completions(args: &CompletionsArgs) -> Result<u8, Error> {
    let script = cli::completion_script(args.shell);
    match &args.output {
        None => super::print_to_stdout(&String::from_utf8_lossy(&script))?,
        Some(path) => write_policy::write_file(path, &script, Policy::new(args.force))?,
    }
    Ok(exit_code::OK)
}

/// `hyde-eval man [--output-dir DIR]`: hyde-eval(1) on stdout, or every page in DIR.
pub fn man(args: &ManArgs) -> Result<u8, Error> {
    match &args.output_dir {
        None => {
            let page = cli::man_page().map_err(|source| Error::Write {
                path: "<stdout>".into(),
                source,
            })?;
            super::print_to_stdout(&String::from_utf8_lossy(&page))?;
        }
        Some(directory) => {
            let pages = cli::man_pages().map_err(|source| Error::Write {
                path: directory.clone(),
                source,
            })?;
            write_policy::write_files(directory, &pages, Policy::new(args.force))?;
        }
    }
    Ok(exit_code::OK)
}
