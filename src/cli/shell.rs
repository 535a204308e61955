//! Options of `completions` and `man`, and the two texts they print: shell completion
//! scripts (clap_complete) and the roff man pages (clap_mangen), both generated from the
//! same clap definitions as the parser, so they list every subcommand and option as it is.

use std::path::PathBuf;

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

    /// Write the script to FILE instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// With --output: replace FILE even when hyde-eval did not write it or it was
    /// changed since
    #[arg(long, requires = "output")]
    pub force: bool,
}

/// `hyde-eval man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write hyde-eval.1 and a page per subcommand into this directory (created when
    /// missing) instead of printing hyde-eval.1
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// With --output-dir: replace pages of those names even when hyde-eval did not
    /// write them or they were changed since
    #[arg(long, requires = "output_dir")]
    pub force: bool,
}

/// The completion script of `shell` for every command and option.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "hyde-eval", &mut script);
    if shell == Shell::Bash {
        script = repair_bash_states(&script);
    }
    script
}

/// clap_complete's bash script for a hyphenated binary name spells the states of its
/// subcommands two ways (clap-rs/clap#6421): the loop that reads the command line
/// arrives at `hyde__eval__subcmd__run`, but the case arms are labelled
/// `hyde__subcmd__eval__subcmd__run`, so no subcommand's options or values ever
/// complete. The arms are relabelled as the loop spells them; a script without the
/// second spelling (a fixed clap_complete) is left as it is.
fn repair_bash_states(script: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(script)
        .replace("hyde__subcmd__eval", "hyde__eval")
        .into_bytes()
}

/// The man page `hyde-eval(1)` in roff: the synopsis, the options and every subcommand.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut page)?;
    Ok(page)
}

/// `hyde-eval.1` and `hyde-eval-SUBCOMMAND.1` (nested subcommands joined by `-`), each
/// as (file name, roff), as `clap_mangen::generate_to` names and renders them.
pub fn man_pages() -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    fn collect(command: clap::Command, pages: &mut Vec<(PathBuf, Vec<u8>)>) -> std::io::Result<()> {
        for subcommand in command
            .get_subcommands()
            .filter(|subcommand| !subcommand.is_hide_set())
            .cloned()
        {
            collect(subcommand, pages)?;
        }
        let man = clap_mangen::Man::new(command);
        let mut page = Vec::new();
        man.render(&mut page)?;
        pages.push((PathBuf::from(man.get_filename()), page));
        Ok(())
    }
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let mut pages = Vec::new();
    collect(command, &mut pages)?;
    Ok(pages)
}
