//! `hyde-eval completions SHELL` and `hyde-eval man`: the scripts and pages name every
//! subcommand; the bash script completes them in a real bash; the man page renders
//! without a warning in groff.

mod common;

use std::path::Path;
use std::process::Command;

use clap::CommandFactory;

/// The top-level subcommands, listed by hand from `hyde-eval --help`.
const SUBCOMMANDS: [&str; 15] = [
    "run",
    "merge",
    "baseline",
    "compare",
    "configurations",
    "models",
    "sweep",
    "report",
    "eval",
    "dataset",
    "record",
    "engine",
    "cache",
    "completions",
    "man",
];

/// Every subcommand path of the parser, nested ones joined by `-` (`baseline-update`).
fn subcommand_paths() -> Vec<String> {
    fn walk(command: &clap::Command, prefix: &str, paths: &mut Vec<String>) {
        for sub in command.get_subcommands() {
            let path = if prefix.is_empty() {
                sub.get_name().to_owned()
            } else {
                format!("{prefix}-{}", sub.get_name())
            };
            paths.push(path.clone());
            walk(sub, &path, paths);
        }
    }
    let mut paths = Vec::new();
    walk(&hyde_eval::cli::Cli::command(), "", &mut paths);
    paths
}

fn succeed(args: &[&str]) -> String {
    let output = common::hyde_eval(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "hyde-eval {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_parser_has_the_subcommands_listed_by_hand() {
    let paths = subcommand_paths();
    for name in SUBCOMMANDS {
        assert!(paths.iter().any(|path| path == name), "{name}: {paths:?}");
    }
}

/// What bash offers for the command line `words` (the last one being completed), with
/// hyde-eval's completion script sourced: the registered function called as bash calls
/// it on TAB.
fn complete_in_bash(words: &[&str]) -> Vec<String> {
    let script = succeed(&["completions", "bash"]);
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("hyde-eval.bash");
    std::fs::write(&path, &script).unwrap();
    // The function the script registers: `complete -F FUNCTION ... hyde-eval`.
    let function = script
        .split_whitespace()
        .skip_while(|word| *word != "-F")
        .nth(1)
        .expect("the script registers a completion function");
    let quoted: Vec<String> = words.iter().map(|word| format!("'{word}'")).collect();
    let line = words.join(" ");
    let current = words.last().unwrap();
    let previous = words[words.len() - 2];
    let probe = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; \
         {function} hyde-eval '{current}' '{previous}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display(),
        quoted.join(" "),
        words.len() - 1,
        line.len()
    );
    let output = Command::new("bash")
        .args(["--norc", "-c", &probe])
        .output()
        .expect("bash runs (this test sources the completion script in it)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completion_offers_every_subcommand() {
    let script = succeed(&["completions", "bash"]);
    for name in SUBCOMMANDS {
        assert!(script.contains(name), "{name} missing from the bash script");
    }
    let offered = complete_in_bash(&["hyde-eval", ""]);
    for name in SUBCOMMANDS {
        assert!(
            offered.iter().any(|offer| offer == name),
            "{name} not offered: {offered:?}"
        );
    }
}

/// A subcommand's options and their values complete (clap_complete's script for a
/// hyphenated name completed nothing past the subcommand: clap-rs/clap#6421).
#[test]
fn bash_completes_a_subcommands_options_and_their_values() {
    assert_eq!(
        complete_in_bash(&["hyde-eval", "run", "--fo"]),
        ["--format", "--force"]
    );
    assert_eq!(
        complete_in_bash(&["hyde-eval", "run", "--configurations", "hyde-3"]),
        ["hyde-3a", "hyde-3b", "hyde-3b-hyp"]
    );
    assert_eq!(
        complete_in_bash(&["hyde-eval", "baseline", "update", "--fr"]),
        ["--from"]
    );
    let semantics = complete_in_bash(&["hyde-eval", "eval", "--format", ""]);
    assert!(semantics.contains(&"json".to_owned()), "{semantics:?}");
}

#[test]
fn zsh_and_fish_completions_name_every_subcommand() {
    let zsh = succeed(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef hyde-eval"), "{zsh}");
    let fish = succeed(&["completions", "fish"]);
    for name in SUBCOMMANDS {
        assert!(
            zsh.contains(&format!("'{name}:")),
            "{name} missing from zsh"
        );
        assert!(
            fish.contains(&format!("-a \"{name}\"")),
            "{name} missing from fish"
        );
    }
}

/// The text groff renders from `page`, or `None` without groff; a groff warning fails.
fn rendered(page: &Path) -> String {
    let output = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww"])
        .arg(page)
        .output()
        .expect("groff runs (apt-get install groff-base)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && stderr.is_empty(), "{stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_man_page_lists_every_subcommand() {
    let page = succeed(&["man"]);
    assert!(page.contains(".TH hyde-eval 1"), "{page}");
    for name in SUBCOMMANDS {
        assert!(
            page.contains(&format!("hyde\\-eval\\-{}(1)", name.replace('-', "\\-"))),
            "{name} missing from the man page"
        );
    }
}

/// The pages render in groff without a warning. groff is not on every machine: .ci/run
/// installs it and runs this test by name.
#[test]
#[ignore = "needs groff (apt-get install groff-base); .ci/run runs it by name"]
fn the_man_pages_render_in_groff_without_a_warning() {
    let work = tempfile::tempdir().unwrap();
    let page = work.path().join("hyde-eval.1");
    std::fs::write(&page, succeed(&["man"])).unwrap();
    let text = rendered(&page);
    for name in SUBCOMMANDS {
        assert!(text.contains(&format!("hyde-eval-{name}(1)")), "{text}");
    }
    let directory = work.path().join("man1");
    succeed(&["man", "--output-dir", directory.to_str().unwrap()]);
    for page in std::fs::read_dir(&directory).unwrap() {
        let page = page.unwrap().path();
        let text = rendered(&page);
        assert!(text.contains("hyde-eval"), "{}: {text}", page.display());
    }
    assert!(rendered(&directory.join("hyde-eval-run.1")).contains("--baseline"));
}

#[test]
fn man_output_dir_writes_a_page_per_subcommand() {
    let work = tempfile::tempdir().unwrap();
    let directory = work.path().join("man1");
    succeed(&["man", "--output-dir", directory.to_str().unwrap()]);
    let mut expected: Vec<String> = subcommand_paths()
        .iter()
        .map(|path| format!("hyde-eval-{path}.1"))
        .collect();
    expected.push("hyde-eval.1".to_owned());
    expected.sort();
    let mut written: Vec<String> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    assert_eq!(written, expected);
    assert!(expected.contains(&"hyde-eval-baseline-update.1".to_owned()));
}
