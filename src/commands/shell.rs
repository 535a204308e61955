//! `hyde-eval completions SHELL` and `hyde-eval man`: print the completion script or the
//! man page that `cli` generates from the command definitions, or write the man pages
//! into a directory.

use crate::cli::{self, CompletionsArgs, ManArgs};
use crate::error::{exit_code, Error};

/// `hyde-eval completions SHELL`: the completion script on stdout.
pub fn completions(args: &CompletionsArgs) -> Result<u8, Error> {
    let script = cli::completion_script(args.shell);
    super::print_to_stdout(&String::from_utf8_lossy(&script))?;
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
            let written =
                std::fs::create_dir_all(directory).and_then(|()| cli::write_man_pages(directory));
            written.map_err(|source| Error::Write {
                path: directory.clone(),
                source,
            })?;
        }
    }
    Ok(exit_code::OK)
}
