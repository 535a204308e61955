//! No option is accepted and then ignored: an option the command would not read, in the
//! mode its other options chose, is refused with exit code 2 and the reason, before any
//! work. Each row below was accepted and changed nothing (but `compare --qrels
//! --configurations`, refused already, kept as a row of its mode), on inputs the command
//! would otherwise have run on. (The parameters of presets are walked in
//! `tests/parameter_effects.rs`.)

mod common;

use std::path::Path;

use common::hyde_eval;

/// Runs each command line and asserts exit code 2 with `says` on stderr.
fn assert_refused(rows: &[(Vec<&str>, &str)]) {
    for (args, says) in rows {
        let output = hyde_eval(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// Inputs the command lines below would run on, were their option not refused: each row
/// would otherwise exit 0 (or fail later, at a backend) having ignored it.
struct Work {
    directory: tempfile::TempDir,
}

impl Work {
    fn new() -> Work {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path();
        common::tiny_copy(path, "tiny");
        std::fs::create_dir(path.join("csv")).unwrap();
        for (name, text) in [
            ("qrels", "q1 0 f1 2\nq2 0 f2 1\n"),
            ("a.run", "q1 Q0 f1 1 2.0 a\nq2 Q0 f1 1 2.0 a\n"),
            ("b.run", "q1 Q0 f2 1 2.0 b\nq2 Q0 f2 1 2.0 b\n"),
            ("keys", ""),
            ("csv/facts.csv", "id,content\nf1,Redis eviction relies on ttl\n"),
            ("csv/queries.csv", "id,text\nq1,how does redis evict keys\n"),
            ("csv/qrels.csv", "query_id,fact_id,grade\nq1,f1,2\n"),
            (
                "hyde-eval.toml",
                "[generators.llm]\nkind = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9\"\nmodel = \"m\"\n\n\
                 [engines.chroma]\nkind = \"chroma\"\nurl = \"http://127.0.0.1:9\"\ncollection = \"tiny\"\ntimeout_seconds = 1\n",
            ),
        ] {
            std::fs::write(path.join(name), text).unwrap();
        }
        for name in ["a", "b"] {
            let output = hyde_eval(&[
                "run",
                "--quiet",
                "--dataset",
                &Work::at(path, "tiny"),
                "--configurations",
                "keyword",
                "--output-dir",
                &Work::at(path, "reports"),
                "--run-name",
                name,
            ]);
            assert_eq!(output.status.code(), Some(0));
        }
        Work { directory }
    }

    fn at(directory: &Path, name: &str) -> String {
        directory.join(name).to_str().unwrap().to_owned()
    }

    /// The path of `name` in the work directory.
    fn path(&self, name: &str) -> String {
        Work::at(self.directory.path(), name)
    }
}

/// `compare --qrels` scores run files and `compare RESULTS...` reads stored results:
/// neither runs anything, so the options that shape a run were silently dropped.
#[test]
fn compare_refuses_run_options_it_does_not_run_with() {
    let work = Work::new();
    let (qrels, a, b) = (work.path("qrels"), work.path("a.run"), work.path("b.run"));
    let (results_a, results_b) = (
        work.path("reports/a/results.json"),
        work.path("reports/b/results.json"),
    );
    let output = work.path("compared");
    let external = [
        "compare",
        "--qrels",
        &qrels,
        &a,
        &b,
        "--output-dir",
        &output,
    ];
    let stored = ["compare", &results_a, &results_b, "--output-dir", &output];
    assert_refused(&[
        (
            [&external[..], &["--weights", "0.6,0.3,0.1"]].concat(),
            "--weights does not apply: compare --qrels scores the run files given against the qrels (each is one column) and runs nothing",
        ),
        (
            [&external[..], &["--configurations", "keyword"]].concat(),
            "--configurations does not apply: compare --qrels",
        ),
        (
            [&external[..], &["--set", "depth=5"]].concat(),
            "--set does not apply: compare --qrels",
        ),
        (
            [&external[..], &["--dataset-format", "beir"]].concat(),
            "--dataset-format does not apply: compare --qrels",
        ),
        (
            [&stored[..], &["--k", "5"]].concat(),
            "--k does not apply: compare RESULTS... reads stored results, each with its own runs and metric settings",
        ),
        (
            [&stored[..], &["--embedder", "hash"]].concat(),
            "--embedder does not apply: compare RESULTS...",
        ),
        (
            [&stored[..], &["--no-report"]].concat(),
            "--output-dir is where the comparison goes, which --no-report does not write",
        ),
        // Of several embedders, one must read an embedder's own option.
        (
            vec![
                "compare",
                "--no-report",
                "--dataset",
                "datasets/chatcli-ab",
                "--embedder",
                "concept",
                "--embedder",
                "concept",
                "--dimension",
                "64",
            ],
            "--dimension: none of the compared embedders (concept, concept) reads it",
        ),
    ]);
    assert!(!Path::new(&output).exists());
}

/// `--split` picks a BEIR qrels file and `--docs`, `--queries`, `--qrels` name TREC
/// files: given with another format, they were ignored and the dataset read as usual.
#[test]
fn dataset_options_of_another_format_are_refused() {
    let work = Work::new();
    let (tiny, csv, destination) = (work.path("tiny"), work.path("csv"), work.path("imported"));
    assert_refused(&[
        (
            vec!["run", "--no-report", "--dataset", &tiny, "--split", "dev"],
            "--split is an option of the beir format, and ",
        ),
        (
            vec![
                "run",
                "--no-report",
                "--dataset",
                &tiny,
                "--docs",
                "documents.tsv",
            ],
            "--docs is an option of the trec format, and ",
        ),
        (
            vec!["dataset", "validate", &tiny, "--qrels", "qrels.txt"],
            "tiny is read as native, which has no use for it",
        ),
        (
            vec![
                "dataset",
                "import",
                "--from",
                "csv",
                &csv,
                &destination,
                "--queries",
                "topics.tsv",
            ],
            "--queries is an option of the trec format",
        ),
    ]);
    assert!(!Path::new(&destination).exists());
}

/// The significance options set the paired tests against a baseline; without one
/// (absolute `--min` targets test nothing) they were ignored.
#[test]
fn significance_options_without_a_baseline_are_refused() {
    let work = Work::new();
    let (qrels, a, tiny) = (work.path("qrels"), work.path("a.run"), work.path("tiny"));
    let (reports, summary) = (work.path("shards"), work.path("summary.md"));
    let says = "sets the paired tests against a baseline; with no baseline (--baseline FILE) nothing is tested";
    let shard = [
        "run",
        "--dataset",
        &tiny,
        "--shard",
        "1/2",
        "--output-dir",
        &reports,
    ];
    assert_refused(&[
        (
            vec!["eval", &qrels, &a, "--alpha", "0.01"],
            &format!("--alpha {says}"),
        ),
        (
            vec!["eval", &qrels, &a, "--min", "ndcg@10=0.1", "--seed", "7"],
            &format!("--seed {says}"),
        ),
        (
            vec![
                "run",
                "--no-report",
                "--dataset",
                &tiny,
                "--iterations",
                "100",
            ],
            &format!("--iterations {says}"),
        ),
        (
            [&shard[..], &["--test", "t-test"]].concat(),
            "--shard 1/2 evaluates part of the queries, so it is not gated",
        ),
        (
            [&shard[..], &["--summary-file", &summary]].concat(),
            "--shard 1/2 prints no summary",
        ),
    ]);
    assert!(!Path::new(&reports).exists());
}

/// A parameter set for configurations that do not read it (the vector-only HyDE
/// presets read no floor) ran, byte for byte, as without it.
#[test]
fn parameters_no_configuration_reads_are_refused() {
    let work = Work::new();
    let tiny = work.path("tiny");
    let write = |name: &str, text: &str| {
        std::fs::write(work.path(name), text).unwrap();
        work.path(name)
    };
    let floor = write(
        "floor.toml",
        "[configuration.hyde-dense]\nadaptive_floor_start = 0.5\n",
    );
    let params = write("params.toml", "[params]\nmin_cosine = 0.3\n");
    let step = write(
        "step.toml",
        "[configuration.wide]\npreset = \"blend\"\nadaptive_floor_step = 0.1\n",
    );
    let run = ["run", "--no-report", "--dataset", &tiny];
    assert_refused(&[
        (
            [&run[..], &["--configurations", "hyde-dense", "--set", "hyde-dense.min_cosine=0.3"]].concat(),
            "--set hyde-dense.min_cosine=0.3: configuration \"hyde-dense\" ignores min_cosine: preset hyde-dense (cosine of the first hypothesis' embedding alone (no blend)) reads only skip_short_queries, skip_code_mentions, min_query_chars, intent_gate, depth",
        ),
        (
            [&run[..], &["--config", &floor, "--configurations", "hyde-dense"]].concat(),
            "floor.toml: [configuration.hyde-dense]: adaptive_floor_start does not apply: preset hyde-dense",
        ),
        (
            [&run[..], &["--config", &params, "--configurations", "dense,hyde-mean-dense"]].concat(),
            "params.toml: [params]: no configuration of this run reads min_cosine: \"dense\": preset dense",
        ),
        (
            [&run[..], &["--config", &step, "--configurations", "wide"]].concat(),
            "step.toml: [configuration.wide]: configuration \"wide\" ignores adaptive_floor_step: the step is read only while the adaptive floor is on, with adaptive_floor_start above min_cosine (here 0 and 0.25)",
        ),
        // --weights for configurations that blend nothing.
        (
            [&run[..], &["--configurations", "dense,bm25", "--weights", "0.6,0.3,0.1"]].concat(),
            "--weights: no configuration of this run reads weights",
        ),
        (
            [&run[..], &["--configurations", "keyword", "--top-k", "20"]].concat(),
            "--top-k: no configuration of this run reads vector_top_k",
        ),
        (
            [&run[..], &["--configurations", "blend", "--set", "recency_decay_days=90", "--half-life", "7"]].concat(),
            "--half-life: no configuration of this run reads half_life_days: \"blend\": recency_decay_days = 90 puts Gimli's recency in place of the temporal score",
        ),
        (
            [&run[..], &["--configurations", "bm25-dense-rrf", "--set", "normalization=\"zmuv\""]].concat(),
            "fusion rrf reads ranks only, so no normalization applies",
        ),
        (
            [&run[..], &["--configurations", "bm25-dense-wsum", "--set", "bm25-dense-wsum.rrf_k=10"]].concat(),
            "configuration \"bm25-dense-wsum\" ignores rrf_k: only fusion rrf reads it; this configuration fuses with wsum",
        ),
    ]);
}

/// Options of another mode of the same command, or of files the command does not write.
#[test]
fn options_of_another_mode_are_refused() {
    let work = Work::new();
    let (qrels, a, b) = (work.path("qrels"), work.path("a.run"), work.path("b.run"));
    let (tiny, config, keys) = (
        work.path("tiny"),
        work.path("hyde-eval.toml"),
        work.path("keys"),
    );
    let (results, baseline) = (
        work.path("reports/a/results.json"),
        work.path("baseline.json"),
    );
    let elsewhere = work.path("elsewhere");
    assert_refused(&[
        (
            vec![
                "run",
                "--no-report",
                "--dataset",
                &tiny,
                "--output-dir",
                &elsewhere,
            ],
            "--output-dir applies to the files written, and --no-report writes none",
        ),
        (
            vec!["run", "--no-report", "--dataset", &tiny, "--force"],
            "--force applies to the files written, and --no-report writes none",
        ),
        (
            vec![
                "baseline", "update", "--output", &baseline, "--from", &results, "--k", "5",
            ],
            "--k does not apply: --from stores ",
        ),
        (
            vec![
                "baseline",
                "update",
                "--output",
                &baseline,
                "--dataset",
                &tiny,
                "--output-dir",
                &elsewhere,
            ],
            "--output-dir does not apply: baseline update writes the baseline to --output (",
        ),
        (
            vec![
                "sweep",
                "--no-report",
                "--dataset",
                &tiny,
                "--folds",
                "2",
                "--param",
                "min_cosine=0.1:0.3:0.1",
                "--steps",
                "10",
            ],
            "--steps sets the grid of a weight sweep",
        ),
        (
            vec!["fuse", "--method", "combsum", "--k", "10", &a, &b],
            "--k: only rrf reads k, not combsum",
        ),
        (
            vec!["eval", &qrels, &a, "-q", "--format", "markdown"],
            "-q adds per-query values, and the Markdown summary holds the averages only",
        ),
        (
            vec!["eval", "-N", "1000", &qrels, &a],
            "-N sets the number of documents in the collection, which only utility reads",
        ),
        (
            vec!["eval", "-J", &qrels, &a, "--min", "ndcg@10=0.1"],
            "-J removes unjudged results before trec_eval's measures, and the gate scores whole rankings",
        ),
        (
            vec![
                "record",
                "--dataset",
                &tiny,
                "--config",
                &config,
                "--generator",
                "llm",
                "--offline",
                "--n",
                "2",
                "--output",
                &elsewhere,
                "--configurations",
                "multi-hyde",
            ],
            "--configurations sets the default of --n",
        ),
        (
            vec!["judge", "--dataset", &tiny, "--agreement", "--depth", "5"],
            "--depth does not apply: --agreement reads the grades already logged",
        ),
        (
            vec![
                "judge",
                "--dataset",
                &tiny,
                "--run",
                &a,
                "--keys",
                &keys,
                "--offline",
            ],
            "--offline configures the --assist generator, and none is asked",
        ),
        (
            vec![
                "engine",
                "status",
                "--engine",
                "chroma",
                "--config",
                &config,
                "--dataset",
                &tiny,
                "--batch-size",
                "64",
            ],
            "--batch-size sets the upserts of `engine load`; status loads nothing",
        ),
    ]);
    assert!(!Path::new(&baseline).exists() && !Path::new(&elsewhere).exists());
}

/// An embedder or generator no configuration of the run uses, or an embedder's option
/// that the run's embedder does not have, changed nothing.
#[test]
fn embedder_and_generator_options_nothing_reads_are_refused() {
    let work = Work::new();
    let tiny = work.path("tiny");
    let run = ["run", "--no-report", "--dataset", &tiny];
    assert_refused(&[
        (
            [&run[..], &["--configurations", "bm25,keyword", "--embedder", "local"]].concat(),
            "--embedder: no configuration of this run (bm25, keyword) searches vectors, so nothing is embedded",
        ),
        (
            [&run[..], &["--configurations", "bm25", "--chunk", "400,80"]].concat(),
            "--chunk: no configuration of this run (bm25) searches vectors",
        ),
        (
            [&run[..], &["--configurations", "dense,bm25", "--generator", "recorded"]].concat(),
            "--generator: no configuration of this run (dense, bm25) uses hypotheses",
        ),
        (
            vec!["run", "--no-report", "--dataset", "datasets/chatcli-ab", "--dimension", "64"],
            "--dimension is an option of the hash embedder, and this run embeds with \"concept\"",
        ),
        (
            [&run[..], &["--lexicon", "datasets/chatcli-ab/concepts.toml"]].concat(),
            "--lexicon is an option of the concept embedder, and this run embeds with \"hash\"",
        ),
    ]);
}
