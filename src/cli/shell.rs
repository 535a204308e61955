//! Options of `completions` and `man`, and the two texts they print: shell completion
//! scripts (clap_complete) and the roff man pages (clap_mangen), both generated from the
//! same clap definitions as the parser, so they list every subcommand and option as it is.

use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Cli;

pub(super) const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  hyde-eval completions bash > ~/.local/share/bash-completion/completions/hyde-eval
  hyde-eval completions zsh > ~/.zfunc/_hyde-eval        (with fpath+=(~/.zfunc) in ~/.zshrc)
  hyde-eval completions fish > ~/.config/fish/completions/hyde-eval.fish";

pub(super) const MAN_EXAMPLES: &str = "\
Examples:
  hyde-eval man | man -l -
  hyde-eval man --output-dir ~/.local/share/man/man1
      hyde-eval.1 and one page per subcommand (hyde-eval-run.1, ...), for `man hyde-eval-run`";

/// `hyde-eval completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `hyde-eval man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write hyde-eval.1 and a page per subcommand into this directory (created when
    /// missing) instead of printing hyde-eval.1
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

/// The completion script of `shell` for every command and option.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "hyde-eval", &mut script);
    script
}

/// The man page `hyde-eval(1)` in roff: the synopsis, the options and every subcommand.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut page)?;
    Ok(page)
}

/// Writes `hyde-eval.1` and `hyde-eval-SUBCOMMAND.1` (nested subcommands joined by `-`)
/// into `directory`.
pub fn write_man_pages(directory: &Path) -> std::io::Result<()> {
    clap_mangen::generate_to(Cli::command(), directory)
}
