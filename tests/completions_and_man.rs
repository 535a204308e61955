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

#[test]
fn bash_completion_offers_every_subcommand() {
    let script = succeed(&["completions", "bash"]);
    for name in SUBCOMMANDS {
        assert!(script.contains(name), "{name} missing from the bash script");
    }
    // Source it in bash and complete `hyde-eval <TAB>`.
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("hyde-eval.bash");
    std::fs::write(&path, &script).unwrap();
    // The function the script registers: `complete -F FUNCTION ... hyde-eval`.
    let function = script
        .split_whitespace()
        .skip_while(|word| *word != "-F")
        .nth(1)
        .expect("the script registers a completion function");
    let probe = format!(
        "source {}; COMP_WORDS=(hyde-eval ''); COMP_CWORD=1; COMP_LINE='hyde-eval '; \
         COMP_POINT=10; {function} hyde-eval '' hyde-eval; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let Ok(output) = Command::new("bash").args(["--norc", "-c", &probe]).output() else {
        eprintln!("SKIPPED sourcing the bash completion: bash is not installed");
        return;
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let offered = String::from_utf8(output.stdout).unwrap();
    let offered: Vec<&str> = offered.lines().collect();
    for name in SUBCOMMANDS {
        assert!(offered.contains(&name), "{name} not offered: {offered:?}");
    }
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
fn rendered(page: &Path) -> Option<String> {
    let output = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww"])
        .arg(page)
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && stderr.is_empty(), "{stderr}");
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn the_man_page_lists_every_subcommand_and_renders_cleanly() {
    let page = succeed(&["man"]);
    assert!(page.contains(".TH hyde-eval 1"), "{page}");
    for name in SUBCOMMANDS {
        assert!(
            page.contains(&format!("hyde\\-eval\\-{}(1)", name.replace('-', "\\-"))),
            "{name} missing from the man page"
        );
    }
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hyde-eval.1"), &page).unwrap();
    match rendered(&work.path().join("hyde-eval.1")) {
        Some(text) => {
            for name in SUBCOMMANDS {
                assert!(text.contains(&format!("hyde-eval-{name}(1)")), "{text}");
            }
        }
        None => eprintln!("SKIPPED rendering the man page: groff is not installed"),
    }
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
    if let Some(text) = rendered(&directory.join("hyde-eval-run.1")) {
        assert!(text.contains("--baseline"), "{text}");
    }
}
