//! The terminal table as a person sees it: at 80 and 120 columns (COLUMNS when piped,
//! and a real pseudo-terminal through `script`) no line is wider than the terminal and
//! every number is printed whole; a terminal reporting 0 columns counts as unknown;
//! NO_COLOR leaves no ANSI escape in the output; with colour on, a table is cut into the
//! same column groups as without (escape codes take no width on a terminal).

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
            .map(|cell| cell.trim().trim_end_matches(['*', '▲']))
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

/// What `hyde-eval ARGS` prints to a pseudo-terminal of `columns` columns, with colour
/// on or off (`NO_COLOR`), run in `directory`.
fn terminal_output(
    columns: usize,
    colour: bool,
    directory: &std::path::Path,
    args: &str,
) -> String {
    let cache = tempfile::tempdir().unwrap();
    let inner = format!(
        "stty cols {columns}; {} {args}",
        env!("CARGO_BIN_EXE_hyde-eval")
    );
    let mut command = std::process::Command::new("script");
    command
        .args(["--quiet", "--return", "--command", &inner, "/dev/null"])
        .current_dir(directory)
        .env("HYDE_EVAL_CACHE", cache.path())
        .env_remove("COLUMNS")
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null());
    if !colour {
        command.env("NO_COLOR", "1");
    }
    let output = command
        .output()
        .expect("util-linux `script` runs (it gives the run a pseudo-terminal)");
    let text = String::from_utf8(output.stdout)
        .unwrap()
        .replace("\r\n", "\n");
    assert_eq!(output.status.code(), Some(0), "{text}");
    text
}

/// The header line of each column group, as a terminal shows it (escapes removed).
fn group_headers(text: &str) -> Vec<String> {
    without_escapes(text)
        .lines()
        .filter(|line| line.starts_with("│ configuration "))
        .map(str::to_owned)
        .collect()
}

/// Asserts that at each width, `args` run in `directory` prints the same text with
/// colour on as with it off, once the escapes are removed: the same column groups, each
/// line as wide. Returns the colourless output per width.
fn same_with_and_without_colour(directory: &std::path::Path, args: &str) -> Vec<(usize, String)> {
    [80, 100, 120, 200]
        .into_iter()
        .map(|columns| {
            let coloured = terminal_output(columns, true, directory, args);
            let plain = terminal_output(columns, false, directory, args);
            assert!(coloured.contains("\u{1b}[1m"), "colour is on: {coloured:?}");
            assert!(!plain.contains('\u{1b}'), "NO_COLOR: {plain:?}");
            assert_eq!(
                group_headers(&coloured),
                group_headers(&plain),
                "at {columns} columns, colour changes the column groups:\n{coloured}\n---\n{plain}"
            );
            assert_eq!(without_escapes(&coloured), plain, "at {columns} columns");
            assert!(widest(&plain) <= columns, "{plain}");
            (columns, plain)
        })
        .collect()
}

#[test]
fn colour_takes_no_width_the_readme_table_groups_as_without_colour() {
    // The README's run: every configuration on devmem.
    let outputs = same_with_and_without_colour(&common::repo_path(""), "run --quiet --no-report");
    // "│ configuration ┆" is 17 columns and each of the 11 metric columns 10 (a value
    // and its mark, 7 characters, padded by 2, then a separator): 127 whole. A group of
    // m metrics takes 17 + 10m: 6 fit in 80 columns, 8 in 100, 10 in 120, all 11 in 200.
    for (columns, plain) in outputs {
        let expected = if columns == 200 { 1 } else { 2 };
        assert_eq!(
            group_headers(&plain).len(),
            expected,
            "at {columns} columns:\n{plain}"
        );
    }
}

/// A BEIR collection of 6 documents and 4 queries (one judged document each) in
/// `directory`, where BM25 finds every judged document first.
fn write_beir_collection(directory: &std::path::Path) {
    let documents = [
        (
            "d1",
            "Postgres vacuum",
            "autovacuum reclaims dead tuples in postgres tables",
        ),
        (
            "d2",
            "Redis eviction",
            "redis evicts keys with the allkeys-lru policy when memory is full",
        ),
        (
            "d3",
            "Go modules",
            "go modules pin dependency versions in go.sum",
        ),
        (
            "d4",
            "Kubernetes probes",
            "a readiness probe keeps a pod out of service until it answers",
        ),
        (
            "d5",
            "TLS renewal",
            "cert-manager renews certificates thirty days before expiry",
        ),
        (
            "d6",
            "Kafka retention",
            "kafka deletes log segments older than the retention period",
        ),
    ];
    let corpus: String = documents
        .iter()
        .map(|(id, title, text)| {
            format!("{{\"_id\":\"{id}\",\"title\":\"{title}\",\"text\":\"{text}\"}}\n")
        })
        .collect();
    let queries = [
        ("q1", "how does autovacuum reclaim dead tuples", "d1"),
        (
            "q2",
            "which redis policy evicts keys when memory is full",
            "d2",
        ),
        ("q3", "readiness probe pod service", "d4"),
        ("q4", "kafka log segments retention period", "d6"),
    ];
    let query_lines: String = queries
        .iter()
        .map(|(id, text, _)| format!("{{\"_id\":\"{id}\",\"text\":\"{text}\"}}\n"))
        .collect();
    let mut qrels = String::from("query-id\tcorpus-id\tscore\n");
    for (id, _, document) in queries {
        qrels.push_str(&format!("{id}\t{document}\t1\n"));
    }
    std::fs::create_dir_all(directory.join("qrels")).unwrap();
    std::fs::write(directory.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(directory.join("queries.jsonl"), query_lines).unwrap();
    std::fs::write(directory.join("qrels").join("test.tsv"), qrels).unwrap();
}

#[test]
fn colour_takes_no_width_a_three_configuration_beir_table_groups_as_without_colour() {
    let work = tempfile::tempdir().unwrap();
    write_beir_collection(&work.path().join("beir"));
    let outputs = same_with_and_without_colour(
        work.path(),
        "run --quiet --no-report --dataset beir --dataset-format beir --configurations bm25,dense,blend",
    );
    // 14 metric columns (R, P, nDCG at 1, 3, 5, 10; MRR; MAP): 17 + 14 x 10 = 157
    // columns whole; 6 per group at 80 columns (3 groups), 8 at 100 and 10 at 120 (2
    // groups), whole at 200.
    for (columns, plain) in outputs {
        let expected = match columns {
            80 => 3,
            200 => 1,
            _ => 2,
        };
        assert_eq!(
            group_headers(&plain).len(),
            expected,
            "at {columns} columns:\n{plain}"
        );
    }
}
