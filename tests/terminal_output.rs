//! The terminal table as a person sees it: at 80 and 120 columns (COLUMNS when piped,
//! and a real pseudo-terminal through `script`) no line is wider than the terminal and
//! every number is printed whole; a terminal reporting 0 columns counts as unknown;
//! NO_COLOR leaves no ANSI escape in the output.

mod common;

use std::process::Output;

const CONFIGURATIONS: &str = "keyword,bm25,dense,hyde-3b-hyp,multi-hyde";

fn run_piped(environment: &[(&str, &str)], output_dir: &std::path::Path) -> Output {
    let mut command = common::command();
    command
        .args(["run", "--quiet", "--configurations", CONFIGURATIONS])
        .arg("--output-dir")
        .arg(output_dir)
        .env_remove("COLUMNS")
        .env_remove("NO_COLOR");
    for (name, value) in environment {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Each (configuration, default table metric) macro value of results.json, as the
/// table prints it (4 decimals).
fn printed_values(output_dir: &std::path::Path) -> Vec<(String, String)> {
    let results: serde_json::Value = serde_json::from_slice(
        &std::fs::read(output_dir.join("devmem").join("results.json")).unwrap(),
    )
    .unwrap();
    let shown: Vec<&str> = results["evaluation"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|metric| metric.as_str().unwrap())
        .filter(|metric| {
            ["recall@", "precision@", "ndcg@"]
                .iter()
                .any(|prefix| metric.starts_with(prefix))
                || ["mrr", "map"].contains(metric)
        })
        .collect();
    assert_eq!(shown.len(), 11, "{shown:?}");
    let mut values = Vec::new();
    for configuration in results["configurations"].as_array().unwrap() {
        let name = configuration["name"].as_str().unwrap();
        for metric in &shown {
            let value = configuration["macro"][metric].as_f64().unwrap();
            values.push((name.to_owned(), format!("{value:.4}")));
        }
    }
    values
}

/// The metric table's rows of `configuration` hold `value` whole.
fn shows_whole(stdout: &str, configuration: &str, value: &str) -> bool {
    stdout.lines().any(|line| {
        let cells: Vec<&str> = line
            .split(['│', '┆'])
            .map(|cell| cell.trim().trim_end_matches('*'))
            .collect();
        cells.get(1) == Some(&configuration) && cells.contains(&value)
    })
}

/// `text` without its ANSI SGR sequences (`ESC [ ... m`).
fn without_escapes(text: &str) -> String {
    let mut plain = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

fn widest(text: &str) -> usize {
    text.lines().map(|line| line.chars().count()).max().unwrap()
}

#[test]
fn piped_output_honours_columns_and_never_splits_a_number() {
    for width in [80, 120] {
        let output_dir = tempfile::tempdir().unwrap();
        let output = run_piped(&[("COLUMNS", &width.to_string())], output_dir.path());
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(widest(&stdout) <= width, "wider than {width}:\n{stdout}");
        for (configuration, value) in printed_values(output_dir.path()) {
            assert!(
                shows_whole(&stdout, &configuration, &value),
                "{configuration} {value} not whole at {width} columns:\n{stdout}"
            );
        }
        // 11 metric columns (R, P, nDCG at 1, 5, 10; MRR; MAP) do not fit in 80
        // or 120 columns, so the table comes in groups that each repeat the header.
        let header_with = |column: &str| {
            stdout
                .lines()
                .position(|line| line.starts_with("│ configuration ") && line.contains(column))
        };
        assert!(
            header_with("R@1").unwrap() < header_with("MAP").unwrap(),
            "{stdout}"
        );
    }
}

#[test]
fn unknown_width_prints_the_table_whole() {
    for columns in [None, Some("0"), Some("wide")] {
        let output_dir = tempfile::tempdir().unwrap();
        let environment: Vec<(&str, &str)> = columns.map(|c| ("COLUMNS", c)).into_iter().collect();
        let output = run_piped(&environment, output_dir.path());
        let stdout = String::from_utf8(output.stdout).unwrap();
        let header = stdout
            .lines()
            .find(|line| line.contains("configuration") && line.contains("R@1"))
            .unwrap();
        for column in ["R@1", "nDCG@10", "MRR", "MAP"] {
            assert!(header.contains(column), "{column} missing from {header}");
        }
    }
}

#[test]
fn no_color_leaves_no_escape_sequence() {
    let output_dir = tempfile::tempdir().unwrap();
    let output = run_piped(&[("NO_COLOR", "1")], output_dir.path());
    assert!(!output.stdout.contains(&0x1b));
    assert!(!output.stderr.contains(&0x1b));
}

/// Runs `hyde-eval run` in a pseudo-terminal of `columns` columns (0: the pty's own
/// report of 0) through util-linux `script` (in every Linux's base system).
fn run_in_terminal(columns: usize, no_color: bool) -> String {
    let output_dir = tempfile::tempdir().unwrap();
    let inner = format!(
        "stty cols {columns}; {} run --quiet --no-report --configurations {CONFIGURATIONS}",
        env!("CARGO_BIN_EXE_hyde-eval")
    );
    let mut command = std::process::Command::new("script");
    command
        .args(["--quiet", "--return", "--command", &inner, "/dev/null"])
        .current_dir(common::repo_path(""))
        .env("HYDE_EVAL_CACHE", output_dir.path())
        .env_remove("COLUMNS")
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null());
    if no_color {
        command.env("NO_COLOR", "1");
    }
    let output = command
        .output()
        .expect("util-linux `script` runs (it gives the run a pseudo-terminal)");
    assert_eq!(output.status.code(), Some(0));
    String::from_utf8(output.stdout)
        .unwrap()
        .replace("\r\n", "\n")
}

#[test]
fn a_terminal_of_80_columns_or_reporting_0_gets_tables_that_fit() {
    let narrow = run_in_terminal(80, true);
    assert!(widest(&narrow) <= 80, "{narrow}");
    assert!(!narrow.contains('\u{1b}'), "NO_COLOR: {narrow:?}");
    // A terminal that reports 0 columns is of unknown width: the table is whole,
    // not squeezed into 0 columns.
    let unknown = run_in_terminal(0, true);
    let header = unknown
        .lines()
        .find(|line| line.contains("configuration") && line.contains("R@1"))
        .unwrap();
    assert!(header.contains("MAP"), "{unknown}");
    // Without NO_COLOR, the best value of each column is bold on a terminal.
    let styled = run_in_terminal(120, false);
    assert!(styled.contains("\u{1b}[1m"), "{styled:?}");
    assert!(widest(&without_escapes(&styled)) <= 120, "{styled}");
}
