//! Runs of any system as first-class inputs: `compare --qrels` and `eval --baseline`
//! give the statistics and gate verdicts of the built-in paths on the same rankings;
//! `-` (stdin) and gzip for runs, qrels and dataset files; BEIR TSV qrels, ranx JSON and
//! ir_measures records.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use common::{command, hyde_eval};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn code(output: &Output) -> i32 {
    output.status.code().expect("exited")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// `hyde-eval ARGS` with `stdin` on standard input.
fn with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// A devmem run of BM25 and dense into `output/name` with `extra` options.
fn devmem_run(output: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let output_dir = output.display().to_string();
    let mut args = vec![
        "run",
        "--quiet",
        "--configurations",
        "bm25,dense",
        "--output-dir",
        &output_dir,
        "--run-name",
        name,
    ];
    args.extend_from_slice(extra);
    let result = hyde_eval(&args);
    assert_eq!(code(&result), 0, "{}", text(&result.stderr));
    output.join(name)
}

fn compare_json(directory: &Path, args: &[&str]) -> serde_json::Value {
    let output_dir = directory.display().to_string();
    let mut all = vec!["compare", "--quiet", "--output-dir", &output_dir];
    all.extend_from_slice(args);
    let result = hyde_eval(&all);
    assert_eq!(code(&result), 0, "{}", text(&result.stderr));
    let name = args
        .iter()
        .position(|arg| *arg == "--run-name")
        .map(|i| args[i + 1])
        .unwrap();
    serde_json::from_slice(&std::fs::read(directory.join(name).join("compare.json")).unwrap())
        .unwrap()
}

#[test]
fn compare_qrels_gives_the_built_in_statistics_on_the_run_files_a_run_wrote() {
    let directory = tempfile::tempdir().unwrap();
    let a = devmem_run(directory.path(), "a", &[]);
    let b = devmem_run(
        directory.path(),
        "b",
        &["--bm25-k1", "0.2", "--bm25-b", "0.1"],
    );
    let path = |p: PathBuf| p.display().to_string();

    // Built-in: two stored runs, the bm25 row.
    let built_in = compare_json(
        directory.path(),
        &[
            &path(a.join("results.json")),
            &path(b.join("results.json")),
            "--metric",
            "ndcg@10",
            "--configurations",
            "bm25",
            "--run-name",
            "built-in",
        ],
    );
    assert_eq!(built_in["rows"].as_array().unwrap().len(), 1, "{built_in}");
    let built_in_cell = &built_in["rows"][0]["comparisons"][0];
    // External: the run files those runs wrote, against the qrels they wrote.
    let external = compare_json(
        directory.path(),
        &[
            "--qrels",
            &path(a.join("qrels.trec")),
            &path(a.join("runs/bm25.run")),
            &path(b.join("runs/bm25.run")),
            "--metric",
            "ndcg@10",
            "--run-name",
            "external",
        ],
    );
    let external_cell = &external["rows"][0]["comparisons"][0];
    assert!(
        built_in_cell["delta"].as_f64().unwrap().abs() > 1e-9,
        "the k1/b change must move ndcg@10 for the test to mean something: {built_in_cell}"
    );
    for field in [
        "p_value",
        "adjusted_p_value",
        "delta",
        "reference",
        "candidate",
        "paired_queries",
        "wins",
        "ties",
        "losses",
        "difference_interval",
    ] {
        assert_eq!(
            built_in_cell[field], external_cell[field],
            "{field}: built-in {built_in_cell} external {external_cell}"
        );
    }

    // Within one results.json: BM25 against dense with the library's paired test,
    // and compare --qrels on their two run files.
    let stored = hyde_eval::results::stored::StoredResults::load(&a.join("results.json")).unwrap();
    let settings = hyde_eval::compare::paired::SignificanceSettings::default();
    let paired = hyde_eval::compare::paired::compare(
        stored.configuration("bm25").unwrap(),
        stored.configuration("dense").unwrap(),
        "mrr",
        &settings,
    )
    .unwrap();
    let external = compare_json(
        directory.path(),
        &[
            "--qrels",
            &path(a.join("qrels.trec")),
            &path(a.join("runs/bm25.run")),
            &path(a.join("runs/dense.run")),
            "--metric",
            "mrr",
            "--run-name",
            "bm25-dense",
        ],
    );
    let cell = &external["rows"][0]["comparisons"][0];
    assert_eq!(cell["p_value"].as_f64().unwrap(), paired.p_value);
    assert_eq!(cell["delta"].as_f64().unwrap(), paired.delta);
    assert_eq!(cell["paired_queries"], paired.paired_queries);
    // Labelled by file name, without extension; the path is the source.
    assert_eq!(external["runs"][0]["label"], "bm25");
    assert_eq!(external["runs"][1]["label"], "dense");
    assert_eq!(external["runs"][0]["source"], path(a.join("runs/bm25.run")));

    // eval --baseline gates like run --baseline, in both directions.
    let qrels = path(a.join("qrels.trec"));
    let mut codes = Vec::new();
    for (current, baseline) in [(&b, &a), (&a, &b)] {
        let baseline_results = path(baseline.join("results.json"));
        let mut args = vec![
            "run",
            "--quiet",
            "--configurations",
            "bm25",
            "--no-report",
            "--baseline",
            &baseline_results,
            "--max-drop",
            "ndcg@10=0",
        ];
        if current == &b {
            args.extend(["--bm25-k1", "0.2", "--bm25-b", "0.1"]);
        }
        let built_in = hyde_eval(&args);
        let external = hyde_eval(&[
            "eval",
            &qrels,
            &path(current.join("runs/bm25.run")),
            "--baseline",
            &path(baseline.join("runs/bm25.run")),
            "--max-drop",
            "ndcg@10=0",
        ]);
        assert_eq!(
            code(&built_in),
            code(&external),
            "built-in: {} external: {}",
            text(&built_in.stderr),
            text(&external.stderr)
        );
        codes.push(code(&external));
    }
    // ndcg@10 moved, so one direction regressed (exit 1) and the other did not.
    codes.sort_unstable();
    assert_eq!(codes, vec![0, 1]);
}

const QRELS: &str = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\n";
/// q1: d2 (not relevant), d1, d3; q2: d4 at rank 1.
const RUN: &str =
    "q1 Q0 d1 1 0.5 sys\nq1 Q0 d2 2 0.9 sys\nq1 Q0 d3 3 0.25 sys\nq2 Q0 d4 1 1.0 sys\n";
/// q1: d4 is not judged for q1, so q1 finds nothing relevant at rank 1; q2 nothing.
const WEAK_RUN: &str = "q1 Q0 d2 1 0.9 weak\nq1 Q0 d3 2 0.5 weak\nq2 Q0 d9 1 1.0 weak\n";

fn write(directory: &Path, name: &str, bytes: &[u8]) -> String {
    let path = directory.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

#[test]
fn eval_reads_stdin_gzip_beir_qrels_ranx_and_ir_measures_alike() {
    let directory = tempfile::tempdir().unwrap();
    let d = directory.path();
    let qrels = write(d, "qrels", QRELS.as_bytes());
    let run = write(d, "run", RUN.as_bytes());
    let reference = hyde_eval(&["eval", "-m", "map", "-m", "P.1", "-q", &qrels, &run]);
    assert_eq!(code(&reference), 0, "{}", text(&reference.stderr));
    let reference = text(&reference.stdout);
    // By hand: q1 ranks d2 (0), d1 (1), d3 (2): AP = (1/2 + 2/3) / 2 = 0.5833; q2 AP 1.
    assert!(
        reference.contains("map                   \tq1\t0.5833"),
        "{reference}"
    );
    assert!(
        reference.contains("map                   \tall\t0.7917"),
        "{reference}"
    );

    let same = |output: Output, what: &str| {
        assert_eq!(code(&output), 0, "{what}: {}", text(&output.stderr));
        assert_eq!(text(&output.stdout), reference, "{what}");
    };
    let eval =
        |qrels: &str, run: &str| hyde_eval(&["eval", "-m", "map", "-m", "P.1", "-q", qrels, run]);
    same(
        with_stdin(
            &["eval", "-m", "map", "-m", "P.1", "-q", &qrels, "-"],
            RUN.as_bytes(),
        ),
        "run on stdin",
    );
    same(
        with_stdin(
            &["eval", "-m", "map", "-m", "P.1", "-q", "-", &run],
            QRELS.as_bytes(),
        ),
        "qrels on stdin",
    );
    same(
        eval(&write(d, "qrels.gz", &gzip(QRELS.as_bytes())), &run),
        "gzip qrels",
    );
    same(
        eval(&qrels, &write(d, "run.gz", &gzip(RUN.as_bytes()))),
        "gzip run",
    );
    same(
        eval(
            &qrels,
            &write(d, "run-gzipped-unnamed", &gzip(RUN.as_bytes())),
        ),
        "gzip run without .gz",
    );
    same(
        eval(
            &write(
                d,
                "beir/qrels/test.tsv",
                b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq1\td3\t2\nq2\td4\t1\n",
            ),
            &run,
        ),
        "BEIR TSV qrels",
    );
    // ranx: the run id is the file's stem, so name it as the TREC run's tag.
    same(
        eval(
            &qrels,
            &write(
                d,
                "sys.json",
                br#"{"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.25}, "q2": {"d4": 1.0}}"#,
            ),
        ),
        "ranx JSON run",
    );
    same(
        eval(
            &write(
                d,
                "qrels.json",
                br#"{"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d4": 1}}"#,
            ),
            &run,
        ),
        "ranx JSON qrels",
    );
    let ir_measures_run = "{\"query_id\": \"q1\", \"doc_id\": \"d1\", \"score\": 0.5}\n{\"query_id\": \"q1\", \"doc_id\": \"d2\", \"score\": 0.9}\n{\"query_id\": \"q1\", \"doc_id\": \"d3\", \"score\": 0.25}\n{\"query_id\": \"q2\", \"doc_id\": \"d4\", \"score\": 1}\n";
    same(
        eval(&qrels, &write(d, "sys.jsonl", ir_measures_run.as_bytes())),
        "ir_measures run",
    );
    let ir_measures_qrels = "{\"query_id\": \"q1\", \"doc_id\": \"d1\", \"relevance\": 1}\n{\"query_id\": \"q1\", \"doc_id\": \"d2\", \"relevance\": 0}\n{\"query_id\": \"q1\", \"doc_id\": \"d3\", \"relevance\": 2}\n{\"query_id\": \"q2\", \"doc_id\": \"d4\", \"relevance\": 1}\n";
    same(
        eval(&write(d, "qrels.jsonl", ir_measures_qrels.as_bytes()), &run),
        "ir_measures qrels",
    );

    // A truncated gzip run: exit 2 and the file named.
    let whole = gzip(RUN.repeat(50).as_bytes());
    let broken = write(d, "broken.run.gz", &whole[..whole.len() / 2]);
    let output = eval(&qrels, &broken);
    assert_eq!(code(&output), 2);
    assert!(
        text(&output.stderr).contains(&format!("{broken}: corrupt gzip data")),
        "{}",
        text(&output.stderr)
    );
    // stdin is read once.
    let output = with_stdin(&["eval", "-", "-"], QRELS.as_bytes());
    assert_eq!(code(&output), 2, "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("can be read only once"),
        "{}",
        text(&output.stderr)
    );

    // Two runs: each block names its run.
    let weak = write(d, "weak", WEAK_RUN.as_bytes());
    let output = hyde_eval(&["eval", "-m", "map", &qrels, &run, &weak]);
    let stdout = text(&output.stdout);
    assert!(
        stdout.starts_with(&format!("run                   \tall\t{run}\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("run                   \tall\t{weak}\n")),
        "{stdout}"
    );
}

#[test]
fn eval_gate_exit_codes_and_compare_flag_hygiene() {
    let directory = tempfile::tempdir().unwrap();
    let d = directory.path();
    let qrels = write(d, "qrels", QRELS.as_bytes());
    let run = write(d, "run", RUN.as_bytes());
    let weak = write(d, "weak", WEAK_RUN.as_bytes());
    let summary = d.join("summary.md").display().to_string();
    // weak against run: mrr drops from (1/2 + 1) / 2 = 0.75 to (1/2 + 0) / 2 = 0.25.
    let gate = |current: &str, baseline: &str, extra: &[&str]| {
        let mut args = vec!["eval", "-m", "map", &qrels, current, "--baseline", baseline];
        args.extend_from_slice(extra);
        hyde_eval(&args)
    };
    let failed = gate(
        &weak,
        &run,
        &["--max-drop", "mrr=0.4", "--summary-file", &summary],
    );
    assert_eq!(code(&failed), 1, "{}", text(&failed.stderr));
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(markdown.contains("| MRR |"), "{markdown}");
    assert!(markdown.contains("-0.5000"), "{markdown}");
    // A drop of 0.5 within a tolerance of 0.5 passes; the better run passes at 0.
    assert_eq!(code(&gate(&weak, &run, &["--max-drop", "mrr=0.5"])), 0);
    assert_eq!(code(&gate(&run, &weak, &["--max-drop", "mrr=0"])), 0);
    // Two queries cannot make a drop significant: --require-significant passes it.
    assert_eq!(
        code(&gate(
            &weak,
            &run,
            &["--max-drop", "mrr=0", "--require-significant"]
        )),
        0
    );
    // Absolute targets without a baseline: mrr 0.25 < 0.3.
    let output = hyde_eval(&["eval", &qrels, &weak, "--min", "mrr=0.3"]);
    assert_eq!(code(&output), 1, "{}", text(&output.stderr));
    // Usage errors, as the built-in gate's: exit 2 before anything is scored.
    let output = gate(&weak, &run, &["--max-drop", "ndgc@10=0"]);
    assert_eq!(code(&output), 2);
    assert!(
        text(&output.stderr).contains("unknown metric \"ndgc@10\" (did you mean \"ndcg@10\"?)"),
        "{}",
        text(&output.stderr)
    );
    let output = hyde_eval(&["eval", &qrels, &weak, "--max-drop", "mrr=0"]);
    assert_eq!(code(&output), 2);
    assert!(
        text(&output.stderr).contains("need --baseline"),
        "{}",
        text(&output.stderr)
    );

    // compare --qrels: the gzip run on stdin, the weak run as a file.
    let output_dir = d.display().to_string();
    let output = with_stdin(
        &[
            "compare",
            "--quiet",
            "--qrels",
            &qrels,
            "-",
            &weak,
            "--metric",
            "mrr",
            "--output-dir",
            &output_dir,
            "--run-name",
            "c",
        ],
        &gzip(RUN.as_bytes()),
    );
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("c/compare.json")).unwrap()).unwrap();
    assert_eq!(report["runs"][0]["label"], "stdin");
    assert_eq!(report["rows"][0]["cells"][0]["value"], 0.75);
    assert_eq!(report["rows"][0]["cells"][1]["value"], 0.25);
    assert_eq!(report["rows"][0]["comparisons"][0]["losses"], 1);
    assert_eq!(report["rows"][0]["comparisons"][0]["ties"], 1);
    // Flags compare cannot honour are refused up front.
    for (flag, says) in [
        (
            vec!["--metric", "mrr", "--metrics", "map"],
            "--metric names one metric and --metrics several",
        ),
        (vec!["--html", "--no-report"], "--no-report turns off"),
        (
            vec!["--configurations", "keyword"],
            "--configurations does not apply: compare --qrels scores the run files given",
        ),
    ] {
        let mut args = vec!["compare", "--qrels", &qrels, &run, &weak];
        args.extend(flag);
        let output = hyde_eval(&args);
        assert_eq!(code(&output), 2, "{}", text(&output.stderr));
        assert!(
            text(&output.stderr).contains(says),
            "{}",
            text(&output.stderr)
        );
    }
}

#[test]
fn dataset_files_are_read_gzipped() {
    let directory = tempfile::tempdir().unwrap();
    // Native: facts.jsonl.gz in place of facts.jsonl gives the same dataset (and hash).
    let plain = common::tiny_copy(directory.path(), "plain");
    let gzipped = common::tiny_copy(directory.path(), "gzipped");
    let facts = std::fs::read(gzipped.join("facts.jsonl")).unwrap();
    std::fs::write(gzipped.join("facts.jsonl.gz"), gzip(&facts)).unwrap();
    std::fs::remove_file(gzipped.join("facts.jsonl")).unwrap();
    let stats = |dir: &Path, format: &str| {
        hyde_eval(&[
            "dataset",
            "stats",
            "--json",
            "--dataset-format",
            format,
            &dir.display().to_string(),
        ])
    };
    let (a, b) = (stats(&plain, "native"), stats(&gzipped, "native"));
    assert_eq!(code(&b), 0, "{}", text(&b.stderr));
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&a.stdout).unwrap(),
        serde_json::from_slice(&b.stdout).unwrap(),
    );
    assert_eq!(b["facts"], 2, "{b}");
    assert_eq!(a["facts"], b["facts"]);
    assert_eq!(a["fact_words"], b["fact_words"], "{a} {b}");

    // BEIR: corpus.jsonl.gz.
    let beir = directory.path().join("beir");
    write(
        &beir,
        "queries.jsonl",
        b"{\"_id\": \"1\", \"text\": \"what is hyde\"}\n",
    );
    write(
        &beir,
        "qrels/test.tsv",
        b"query-id\tcorpus-id\tscore\n1\td1\t1\n",
    );
    write(
        &beir,
        "corpus.jsonl.gz",
        &gzip(b"{\"_id\": \"d1\", \"title\": \"HyDE\", \"text\": \"hypothetical documents\"}\n{\"_id\": \"d2\", \"title\": \"\", \"text\": \"bm25\"}\n"),
    );
    let output = stats(&beir, "beir");
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    let stats: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(stats["facts"], 2, "{stats}");
    // A corrupt corpus.jsonl.gz is named.
    write(&beir, "corpus.jsonl.gz", &gzip(b"{}\n")[..10]);
    let output = hyde_eval(&[
        "dataset",
        "validate",
        "--dataset-format",
        "beir",
        &beir.display().to_string(),
    ]);
    assert_eq!(code(&output), 2);
    assert!(
        text(&output.stderr).contains("corpus.jsonl.gz: corrupt gzip data"),
        "{}",
        text(&output.stderr)
    );
}

/// The text of the first element after `marker` in `page` (up to the next `<`).
fn cell_after<'p>(page: &'p str, marker: &str) -> &'p str {
    let at = page
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} not in {page}"));
    let rest = &page[at + marker.len()..];
    let start = rest.find('>').unwrap() + 1;
    let end = start + rest[start..].find('<').unwrap();
    &rest[start..end]
}

#[test]
fn compare_qrels_html_reports_each_run_its_metrics_diagnostics_and_p_value() {
    let directory = tempfile::tempdir().unwrap();
    let d = directory.path();
    let qrels = write(d, "qrels", QRELS.as_bytes());
    let run = write(d, "sys.run", RUN.as_bytes());
    let weak = write(d, "weak.run", WEAK_RUN.as_bytes());
    let output_dir = d.join("out").display().to_string();
    let output = hyde_eval(&[
        "compare",
        "--quiet",
        "--qrels",
        &qrels,
        &run,
        &weak,
        "--metric",
        "ndcg@10",
        "--html",
        "--output-dir",
        &output_dir,
        "--run-name",
        "c",
    ]);
    assert_eq!(code(&output), 0, "{}", text(&output.stderr));
    // Run files record no embedder and no cost: no table of dashes for them.
    let markdown = std::fs::read_to_string(d.join("out/c/compare.md")).unwrap();
    for printed in [text(&output.stdout), markdown] {
        assert!(printed.contains("nDCG@10"), "{printed}");
        assert!(!printed.contains("texts embedded"), "{printed}");
    }
    let page = std::fs::read_to_string(d.join("out/c/report.html")).unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("out/c/compare.json")).unwrap()).unwrap();
    // By hand (trec_eval's gain = grade): sys ranks d2 (0), d1 (1), d3 (2) for q1:
    // (1/log2 3 + 2/2) / (2 + 1/log2 3) = 0.6199, q2 1: mean 0.8100. weak ranks d3 at 2:
    // (2/log2 3) / 2.6309 = 0.4796, q2 0: mean 0.2398.
    // Each run is labelled by its file name without extension.
    for (path, label, by_hand) in [(&run, "sys", "0.8100"), (&weak, "weak", "0.2398")] {
        let row = &page[page
            .find(&format!("<tr data-run=\"{label}\">"))
            .unwrap_or_else(|| panic!("no row for {label}: {page}"))..];
        let shown = cell_after(row, "data-metric=\"ndcg@10\"");
        let eval = hyde_eval(&["eval", "-m", "ndcg_cut.10", &qrels, path]);
        assert_eq!(code(&eval), 0, "{}", text(&eval.stderr));
        let eval = text(&eval.stdout);
        let computed = eval
            .lines()
            .find(|line| line.starts_with("ndcg_cut_10"))
            .and_then(|line| line.split('\t').nth(2))
            .unwrap_or_else(|| panic!("{eval}"));
        assert_eq!(shown, computed, "{label}");
        assert_eq!(shown, by_hand, "{label}");
    }
    // The runs are described as external, never with parameters.
    assert!(page.contains("external run file"), "{page}");
    // The built-in report's charts, inline: metric bars, curves over the cut-offs, and
    // one per-query difference plot (weak against the reference sys), each a PNG at
    // twice its layout size.
    for alt in [
        "bar chart of the headline metrics per run",
        "metrics over the cut-offs per run",
        "per-query differences, sorted",
    ] {
        let image = &page[..page
            .find(&format!("alt=\"{alt}\""))
            .unwrap_or_else(|| panic!("no chart {alt:?}: {page}"))];
        let image = &image[image.rfind("<img").unwrap()..];
        let encoded = &image[image.find("base64,").unwrap() + "base64,".len()..];
        let encoded = &encoded[..encoded.find('"').unwrap()];
        use base64::Engine;
        let png = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(&png[1..4], b"PNG", "{alt}");
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let shown: u32 = image[image.find("width=\"").unwrap() + 7..]
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(width, 2 * shown, "{alt}");
    }
    assert_eq!(page.matches("<img").count(), 3, "{page}");
    // Per-query diagnostics: both queries worse, q2 (-1) the largest loss, then q1.
    assert!(page.contains("id=\"diagnostics\""), "{page}");
    let diagnostics = &page[page.find("id=\"diagnostics\"").unwrap()..];
    assert!(diagnostics.contains("0 better"), "{diagnostics}");
    assert!(diagnostics.contains("2 worse"), "{diagnostics}");
    let q2 = diagnostics.find(">q2<").unwrap();
    let q1 = diagnostics.find(">q1<").unwrap();
    assert!(q2 < q1, "{diagnostics}");
    assert!(diagnostics.contains("-0.1403"), "{diagnostics}");
    // The p-value is compare.json's.
    let p_value = &page[page.find("data-p-value=\"").unwrap() + "data-p-value=\"".len()..];
    let p_value: f64 = p_value[..p_value.find('"').unwrap()].parse().unwrap();
    assert_eq!(
        p_value,
        report["rows"][0]["comparisons"][0]["p_value"]
            .as_f64()
            .unwrap()
    );
    // Stored results have their own report (`report`): compare refuses --html for them.
    let output = hyde_eval(&["compare", "a/results.json", "b/results.json", "--html"]);
    assert_eq!(code(&output), 2, "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("hyde-eval report RESULTS"),
        "{}",
        text(&output.stderr)
    );
}

/// A gated `eval` says its verdict in every format, `--quiet` or not, and never prints
/// raw Markdown beside trec_eval's layout: the terminal summary there (on stderr, so
/// that stdout stays trec_eval's), one line in the other formats, the gate's document in
/// the JSON, the Markdown summary on stdout with `--format markdown`.
#[test]
fn a_gated_eval_says_its_verdict_in_every_format() {
    let directory = tempfile::tempdir().unwrap();
    let d = directory.path();
    let qrels = write(d, "qrels", QRELS.as_bytes());
    let run = write(d, "run", RUN.as_bytes());
    let weak = write(d, "weak", WEAK_RUN.as_bytes());
    // weak against run: MRR drops from (1/2 + 1) / 2 = 0.75 to (1/2 + 0) / 2 = 0.25.
    let gated = |format: &str| {
        hyde_eval(&[
            "eval",
            "--quiet",
            "-m",
            "map",
            &qrels,
            &weak,
            "--baseline",
            &run,
            "--max-drop",
            "mrr=0.4",
            "--format",
            format,
        ])
    };
    let verdict =
        format!("gate: REGRESSION (1 of 1 checks dropped beyond their threshold; baseline {run})");
    let line = format!("{verdict}: {weak} MRR 0.7500 -> 0.2500 (-0.5000, max drop 0.4000)\n");

    // trec_eval's layout on stdout (weak's AP: q1 finds d3, grade 2, at rank 2 of 2
    // relevant: 0.25; q2 nothing); the terminal summary on stderr.
    let output = gated("trec");
    assert_eq!(code(&output), 1, "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        "map                   \tall\t0.1250\n"
    );
    let stderr = text(&output.stderr);
    assert!(stderr.starts_with(&format!("{verdict}\n")), "{stderr}");
    assert!(stderr.contains("-0.5000"), "{stderr}");
    assert!(
        !stderr.contains("##") && !stderr.contains("|---"),
        "raw Markdown on the terminal: {stderr}"
    );
    assert_eq!(
        text(&gated("table").stderr),
        stderr,
        "table is trec's alias"
    );

    let output = gated("json");
    assert_eq!(code(&output), 1);
    assert_eq!(text(&output.stderr), line);
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["runs"][0]["all"]["map"], 0.125);
    assert_eq!(document["gate"]["passed"], false);
    assert_eq!(document["gate"]["checks"][0]["metric"], "mrr");
    assert_eq!(document["gate"]["checks"][0]["delta"], -0.5);

    let output = gated("csv");
    assert_eq!(code(&output), 1);
    assert_eq!(text(&output.stderr), line);
    assert_eq!(
        text(&output.stdout),
        format!("run,runid,query,measure,value\n{weak},weak,all,map,0.125\n")
    );

    let output = gated("markdown");
    assert_eq!(code(&output), 1);
    assert_eq!(text(&output.stderr), line);
    let markdown = text(&output.stdout);
    assert!(
        markdown.starts_with("## ❌ hyde-eval gate: REGRESSION"),
        "{markdown}"
    );
    assert!(markdown.contains("| map | 0.1250 |"), "{markdown}");

    // A summary file that cannot be written fails the command, and the verdict is still
    // said (it used to be lost behind the write error).
    let output = hyde_eval(&[
        "eval",
        "--quiet",
        "-m",
        "map",
        &qrels,
        &weak,
        "--baseline",
        &run,
        "--max-drop",
        "mrr=0.4",
        "--format",
        "csv",
        "--summary-file",
        d.to_str().unwrap(),
    ]);
    let stderr = text(&output.stderr);
    assert!(!matches!(code(&output), 0 | 1), "{stderr}");
    assert!(stderr.starts_with(&line), "{stderr}");

    // A gate that passes says so too; without a gate, --quiet keeps stderr empty.
    let output = hyde_eval(&[
        "eval", "--quiet", "--format", "csv", &qrels, &weak, "--min", "mrr=0.2",
    ]);
    assert_eq!(code(&output), 0);
    assert_eq!(text(&output.stderr), "gate: PASS (1 targets met)\n");
    let output = hyde_eval(&["eval", "--quiet", "--format", "csv", &qrels, &weak]);
    assert_eq!(code(&output), 0);
    assert_eq!(text(&output.stderr), "");
}
