//! Each command accepts only the options it uses (clap refuses the rest before any
//! work), `-q` is quiet (except `eval -q`, trec_eval's per-query flag), the commands that
//! print data take `--format table|json|csv|markdown`, and data goes to stdout while
//! notes (stage lines, where reports went) go to stderr.

mod common;

use common::hyde_eval;

#[test]
fn options_a_command_does_not_use_are_refused() {
    for (args, option) in [
        (vec!["sweep", "--html"], "--html"),
        (vec!["record", "--html"], "--html"),
        // record takes only the options it reads: no run options.
        (vec!["record", "--k", "5"], "--k"),
        (vec!["record", "--embedder", "hash"], "--embedder"),
        (vec!["record", "--weights", "0.5,0.3,0.2"], "--weights"),
        // report's reference configuration is --reference; --baseline is a FILE elsewhere.
        (
            vec!["report", "reports/baseline.json", "--baseline", "blend"],
            "--baseline",
        ),
        (vec!["baseline", "update", "--html"], "--html"),
        (
            vec!["dataset", "validate", "datasets/devmem", "--json"],
            "--json",
        ),
    ] {
        let output = hyde_eval(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("unexpected argument '{option}'")),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn dataset_commands_take_q_and_stats_takes_format() {
    let output = hyde_eval(&["dataset", "validate", "datasets/devmem", "-q"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stderr.is_empty());
    assert!(String::from_utf8_lossy(&output.stdout).contains("valid (220 facts, 90 queries"));
    let json = hyde_eval(&[
        "dataset",
        "stats",
        "datasets/devmem",
        "-q",
        "--format",
        "json",
    ]);
    assert_eq!(json.status.code(), Some(0));
    let stats: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(stats["facts"], 220, "{stats}");
    let shorthand = hyde_eval(&["dataset", "stats", "datasets/devmem", "-q", "--json"]);
    assert_eq!(shorthand.stdout, json.stdout);
    let table = hyde_eval(&["dataset", "stats", "datasets/devmem", "-q"]);
    assert!(serde_json::from_slice::<serde_json::Value>(&table.stdout).is_err());
}

#[test]
fn data_goes_to_stdout_and_notes_to_stderr() {
    let output_dir = tempfile::tempdir().unwrap();
    let output = common::command()
        .args(["run", "--configurations", "keyword", "--output-dir"])
        .arg(output_dir.path())
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stdout.contains("│ keyword "), "{stdout}");
    assert!(!stdout.contains("hyde-eval:"), "{stdout}");
    assert!(!stdout.contains("written to"), "{stdout}");
    assert!(stderr.contains("hyde-eval: "), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "reports written to {}",
            output_dir.path().join("devmem").display()
        )),
        "{stderr}"
    );
    // Quiet: nothing on stderr at all.
    let quiet = common::command()
        .args(["run", "-q", "--configurations", "keyword", "--output-dir"])
        .arg(output_dir.path())
        .output()
        .unwrap();
    assert_eq!(quiet.status.code(), Some(0));
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

/// The long help of `args`.
fn help(args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("--help");
    let output = hyde_eval(&args);
    assert_eq!(output.status.code(), Some(0), "{args:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn record_lists_only_the_options_it_reads() {
    let text = help(&["record"]);
    for used in [
        "--generator",
        "--n <N>",
        "--output",
        "--config",
        "--set",
        "--offline",
    ] {
        assert!(text.contains(used), "{used}: {text}");
    }
    for unused in [
        "--k ",
        "--weights",
        "--embedder",
        "--metrics",
        "--top-k",
        "--run-name",
        "--no-report",
        "--semantics",
    ] {
        assert!(!text.contains(unused), "{unused}: {text}");
    }
}

#[test]
fn q_is_quiet_everywhere_but_in_eval() {
    for command in [
        &["run"][..],
        &["merge"],
        &["baseline", "update"],
        &["compare"],
        &["sweep"],
        &["report"],
        &["record"],
        &["dataset", "import"],
        &["dataset", "stats"],
        &["dataset", "validate"],
        &["dataset", "draft-queries"],
        &["judge"],
        &["engine", "load"],
        &["cache", "stats"],
        &["cache", "clear"],
        &["models", "fetch"],
    ] {
        assert!(
            help(command).contains("-q, --quiet"),
            "{command:?} takes -q/--quiet"
        );
    }
    let eval = help(&["eval"]);
    assert!(eval.contains("-q, --per-query"), "{eval}");
    assert!(eval.contains("      --quiet"), "{eval}");
    assert!(
        eval.contains("-q is trec_eval's per-query flag here"),
        "{eval}"
    );
}

#[test]
fn data_commands_take_every_format() {
    for command in [
        &["run"][..],
        &["merge"],
        &["compare"],
        &["sweep"],
        &["report"],
        &["dataset", "stats"],
        &["cache", "stats"],
    ] {
        let text = help(command);
        for format in ["table", "json", "csv", "markdown"] {
            assert!(
                text.contains(&format!("- {format}")),
                "{command:?} --format {format}: {text}"
            );
        }
    }
    let eval = help(&["eval"]);
    for format in ["trec", "json", "csv", "markdown"] {
        assert!(eval.contains(&format!("- {format}")), "{eval}");
    }
}

#[test]
fn dataset_and_cache_stats_in_each_format() {
    // devmem: 220 facts, 90 queries, 231 judgments (`dataset validate` above).
    let csv = hyde_eval(&[
        "dataset",
        "stats",
        "datasets/devmem",
        "-q",
        "--format",
        "csv",
    ]);
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(
        csv.starts_with("field,value\nname,devmem\nfacts,220\nqueries,90\njudgments,231\n"),
        "{csv}"
    );
    let markdown = hyde_eval(&[
        "dataset",
        "stats",
        "datasets/devmem",
        "-q",
        "--format",
        "markdown",
    ]);
    let markdown = String::from_utf8(markdown.stdout).unwrap();
    assert!(
        markdown.contains("| field | value |\n|---|---|\n| name | devmem |\n| facts | 220 |\n"),
        "{markdown}"
    );
    let json = hyde_eval(&[
        "dataset",
        "stats",
        "datasets/devmem",
        "-q",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["judgments"], 231);

    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let stats = |format: &str| {
        let output = hyde_eval(&[
            "cache",
            "stats",
            "--cache-dir",
            cache_dir,
            "--format",
            format,
        ]);
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8(output.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&stats("json")).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["namespaces"], serde_json::json!([]));
    assert_eq!(
        stats("csv"),
        "family,kind,model,endpoint,dims,entries,segments,size,damaged,unfinished,directory\n"
    );
    assert!(stats("table").contains("is empty"));
    assert!(stats("markdown").contains("is empty"));
}

#[test]
fn eval_markdown_holds_the_averages_of_each_run() {
    let work = tempfile::tempdir().unwrap();
    let path = |name: &str| work.path().join(name).to_str().unwrap().to_owned();
    std::fs::write(path("qrels"), "q1 0 d1 1\nq1 0 d2 0\n").unwrap();
    // first.run ranks d1 first: AP 1. second.run ranks d2 (not relevant) first, d1
    // second: AP 1/2, reciprocal rank 1/2.
    std::fs::write(path("first.run"), "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n").unwrap();
    std::fs::write(path("second.run"), "q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\n").unwrap();
    let output = hyde_eval(&[
        "eval",
        "-m",
        "map",
        "-m",
        "recip_rank",
        "--format",
        "markdown",
        &path("qrels"),
        &path("first.run"),
        &path("second.run"),
    ]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("| num_q | 1 | 1 |\n"), "{text}");
    assert!(text.contains("| map | 1.0000 | 0.5000 |\n"), "{text}");
    assert!(
        text.contains("| recip_rank | 1.0000 | 0.5000 |\n"),
        "{text}"
    );
}

#[test]
fn run_and_compare_print_their_documents_in_each_format() {
    let output_dir = tempfile::tempdir().unwrap();
    let output = output_dir.path().to_str().unwrap();
    let run = |format: &str| {
        let result = hyde_eval(&[
            "run",
            "-q",
            "--configurations",
            "keyword,bm25",
            "--output-dir",
            output,
            "--force",
            "--format",
            format,
        ]);
        assert_eq!(
            result.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&result.stderr)
        );
        String::from_utf8(result.stdout).unwrap()
    };
    // JSON is results.json, byte for byte.
    let json = run("json");
    let results_path = output_dir.path().join("devmem/results.json");
    assert_eq!(json, std::fs::read_to_string(&results_path).unwrap());
    let results: serde_json::Value = serde_json::from_str(&json).unwrap();
    let bm25_ndcg = results["configurations"][1]["macro"]["ndcg@10"]
        .as_f64()
        .unwrap();
    // CSV: the macro table, one row per configuration.
    let csv = run("csv");
    let bm25_row = csv.lines().find(|line| line.starts_with("bm25,")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|name| *name == "ndcg@10").unwrap();
    let value: f64 = bm25_row.split(',').nth(column).unwrap().parse().unwrap();
    assert_eq!(value, bm25_ndcg);

    // compare: the baseline against this run; the CSV row of each pairwise test carries
    // the values and delta of the JSON document's.
    let compare = |format: &str| {
        let result = hyde_eval(&[
            "compare",
            "-q",
            "reports/baseline.json",
            results_path.to_str().unwrap(),
            "--no-report",
            "--format",
            format,
        ]);
        assert_eq!(
            result.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&result.stderr)
        );
        String::from_utf8(result.stdout).unwrap()
    };
    let document: serde_json::Value = serde_json::from_str(&compare("json")).unwrap();
    assert_eq!(document["schema_version"], 2);
    let row = document["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["configuration"] == "bm25")
        .unwrap();
    let csv = compare("csv");
    let candidate = csv
        .lines()
        .find(|line| line.starts_with("bm25,ndcg@10,reports,devmem,"))
        .expect(&csv);
    let cells: Vec<&str> = candidate.split(',').collect();
    assert_eq!(cells[5].parse::<f64>().unwrap(), bm25_ndcg);
    assert_eq!(
        cells[6].parse::<f64>().unwrap(),
        row["comparisons"][0]["delta"].as_f64().unwrap()
    );
    assert!(compare("markdown").contains("| bm25 |"));
}
