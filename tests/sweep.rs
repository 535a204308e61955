//! `hyde-eval sweep`: the grid, agreement with `run`, parameter sweeps checked against
//! runs with `--set`, the configurations a parameter affects, and the CLI outputs.

mod common;

use common::hyde_eval;

use hyde_eval::commands::execute_sweep;
use hyde_eval::dataset::Dataset;
use hyde_eval::pipeline::run::{execute, Execution, RankingOutputs};
use hyde_eval::settings::RunOptions;
use hyde_eval::settings::{resolve, ConfigFile, RunSettings};
use hyde_eval::sweep::grid::ParamRange;
use hyde_eval::sweep::{SweepKind, SweepResults, SweepSettings};

fn devmem() -> Dataset {
    Dataset::load(&common::repo_path("datasets/devmem")).unwrap()
}

fn settings(dataset: &Dataset, args: RunOptions) -> RunSettings {
    resolve(
        &RunOptions {
            quiet: true,
            ..args
        },
        &ConfigFile::default(),
        &dataset.manifest,
    )
    .unwrap()
}

fn sweep(
    dataset: &Dataset,
    settings: &RunSettings,
    kind: SweepKind,
    metrics: &[&str],
) -> SweepResults {
    execute_sweep(
        dataset,
        settings,
        &SweepSettings {
            kind,
            metrics: metrics.iter().map(|m| m.to_string()).collect(),
            folds: 5,
            seed: 42,
        },
    )
    .unwrap()
}

fn run_value(execution: &Execution, configuration: &str, metric: &str) -> f64 {
    execution
        .results
        .configurations
        .iter()
        .find(|c| c.name == configuration)
        .unwrap()
        .macro_metrics[metric]
        .as_f64()
        .unwrap()
}

const METRICS: [&str; 4] = ["ndcg@10", "mrr", "recall@5", "precision@1"];

/// The grid has exactly C(m + 2, 2) blend points (m + 1 hybrid points), and the value
/// at a configuration's own weights, both the `own` point and the grid point that
/// equals it, is exactly `run`'s value, for every blending configuration and metric.
#[test]
fn grid_size_and_agreement_with_run() {
    let mut dataset = devmem();
    let settings = settings(&dataset, RunOptions::default());
    let results = sweep(
        &dataset,
        &settings,
        SweepKind::Weights { steps: 20 },
        &METRICS,
    );
    let run = execute(&mut dataset, &settings.run, RankingOutputs::default()).unwrap();
    let names: Vec<&str> = results
        .configurations
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "blend",
            "hyde-3b",
            "hyde-3b-hyp",
            "hyde-mean",
            "multi-hyde",
            "hybrid"
        ]
    );
    for configuration in &results.configurations {
        let expected_points = if configuration.name == "hybrid" {
            21
        } else {
            231
        };
        assert_eq!(
            configuration.points.len(),
            expected_points,
            "{}",
            configuration.name
        );
        // chatcli's 0.55 / 0.30 / 0.15 (and the hybrid's 0.7 / 0.3) are grid points.
        let own_on_grid = configuration
            .points
            .iter()
            .find(|point| point.at == configuration.default.at)
            .unwrap_or_else(|| panic!("{}: own weights not on the grid", configuration.name));
        for metric in METRICS {
            let expected = run_value(&run, &configuration.name, metric);
            assert_eq!(
                configuration.default.value(metric),
                expected,
                "{} {metric}",
                configuration.name
            );
            assert_eq!(
                own_on_grid.value(metric),
                expected,
                "{} {metric}",
                configuration.name
            );
            let summary = configuration
                .summaries
                .iter()
                .find(|s| s.metric == metric)
                .unwrap();
            assert_eq!(summary.default, expected);
            let best = configuration
                .points
                .iter()
                .map(|p| p.value(metric))
                .fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(summary.best, best);
            assert!(summary.best >= expected);
            // Every listed best point scores the best value, and no other point does.
            let tied = configuration
                .points
                .iter()
                .filter(|p| p.value(metric) >= best - 1e-12)
                .count();
            assert_eq!(summary.best_points.len(), tied);
        }
    }

    let small = sweep(
        &dataset,
        &settings,
        SweepKind::Weights { steps: 7 },
        &["mrr"],
    );
    assert_eq!(small.configurations[0].points.len(), 36, "C(9, 2)");
    assert_eq!(small.configurations[5].points.len(), 8);
}

/// A weight point equals a run with those weights set on the command line, including
/// a point that is not the default (checks the re-fusion, not just the default path).
#[test]
fn grid_points_equal_runs_with_those_weights() {
    let mut dataset = devmem();
    let base = settings(
        &dataset,
        RunOptions {
            configurations: vec!["multi-hyde".into()],
            ..RunOptions::default()
        },
    );
    let results = sweep(
        &dataset,
        &base,
        SweepKind::Weights { steps: 20 },
        &["ndcg@10", "map"],
    );
    let configuration = &results.configurations[0];
    for at in [[0.2, 0.7, 0.1], [1.0, 0.0, 0.0], [0.0, 0.05, 0.95]] {
        let point = configuration.points.iter().find(|p| p.at == at).unwrap();
        let run_settings = settings(
            &dataset,
            RunOptions {
                configurations: vec!["multi-hyde".into()],
                weights: at.to_vec(),
                ..RunOptions::default()
            },
        );
        let run = execute(&mut dataset, &run_settings.run, RankingOutputs::default()).unwrap();
        for metric in ["ndcg@10", "map"] {
            assert_eq!(
                point.value(metric),
                run_value(&run, "multi-hyde", metric),
                "{at:?} {metric}"
            );
        }
    }
}

/// A parameter sweep's value at each step equals `run --set CONFIG.NAME=VALUE`.
#[test]
fn param_sweep_values_equal_runs_with_set() {
    let mut dataset = devmem();
    let base = settings(
        &dataset,
        RunOptions {
            configurations: vec!["hyde-3b".into(), "bm25".into(), "keyword".into()],
            ..RunOptions::default()
        },
    );
    for (argument, configurations) in [
        ("min_cosine=0.1:0.4:0.15", vec!["hyde-3b"]),
        ("bm25_k1=0.5:1.5:0.5", vec!["bm25"]),
        ("half_life_days=7:28:21", vec!["keyword", "hyde-3b"]),
    ] {
        let range = ParamRange::parse(argument).unwrap();
        let results = sweep(
            &dataset,
            &base,
            SweepKind::Param(range.clone()),
            &["ndcg@10"],
        );
        let swept: Vec<&str> = results
            .configurations
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let mut expected_names = configurations.clone();
        expected_names.sort_by_key(|name| {
            ["hyde-3b", "bm25", "keyword"]
                .iter()
                .position(|n| n == name)
        });
        assert_eq!(swept, expected_names, "{argument}");
        for configuration in &results.configurations {
            assert_eq!(configuration.points.len(), range.values.len());
            for (point, value) in configuration.points.iter().zip(&range.values) {
                let run_settings = settings(
                    &dataset,
                    RunOptions {
                        configurations: vec![configuration.name.clone()],
                        set: vec![format!("{}={}", range.name, value.text)],
                        ..RunOptions::default()
                    },
                );
                let run =
                    execute(&mut dataset, &run_settings.run, RankingOutputs::default()).unwrap();
                assert_eq!(
                    point.value("ndcg@10"),
                    run_value(&run, &configuration.name, "ndcg@10"),
                    "{} {}={}",
                    configuration.name,
                    range.name,
                    value.text
                );
            }
        }
    }
}

/// The list fusions' parameters sweep like any other: each value of RRF's k, and each
/// point of the weighted sum's (vector, text) weights, equals a run with `--set`.
#[test]
fn list_fusion_sweeps_equal_runs_with_set() {
    let mut dataset = devmem();
    let names = ["bm25-dense-rrf", "bm25-dense-wsum"];
    let base = settings(
        &dataset,
        RunOptions {
            configurations: names.iter().map(|name| name.to_string()).collect(),
            ..RunOptions::default()
        },
    );
    let run_with = |dataset: &mut Dataset, name: &str, set: Vec<String>| {
        let run_settings = settings(
            dataset,
            RunOptions {
                configurations: vec![name.to_owned()],
                set,
                ..RunOptions::default()
            },
        );
        let run = execute(dataset, &run_settings.run, RankingOutputs::default()).unwrap();
        run_value(&run, name, "ndcg@10")
    };
    let range = ParamRange::parse("rrf_k=1:61:30").unwrap();
    let results = sweep(
        &dataset,
        &base,
        SweepKind::Param(range.clone()),
        &["ndcg@10"],
    );
    let rrf = &results.configurations[0];
    assert_eq!(rrf.name, "bm25-dense-rrf");
    assert_eq!(rrf.points.len(), 3);
    let mut values = Vec::new();
    for (point, value) in rrf.points.iter().zip(&range.values) {
        let set = vec![format!("rrf_k={}", value.text)];
        assert_eq!(
            point.value("ndcg@10"),
            run_with(&mut dataset, "bm25-dense-rrf", set),
            "rrf_k={}",
            value.text
        );
        values.push(point.value("ndcg@10"));
    }
    assert!(
        values.windows(2).any(|pair| pair[0] != pair[1]),
        "k moves rankings: {values:?}"
    );

    let results = sweep(
        &dataset,
        &base,
        SweepKind::Weights { steps: 4 },
        &["ndcg@10"],
    );
    let wsum = results
        .configurations
        .iter()
        .find(|configuration| configuration.name == "bm25-dense-wsum")
        .unwrap();
    assert_eq!(wsum.points.len(), 5);
    for point in &wsum.points {
        let set = vec![
            format!("fusion_vector_weight={}", point.at[0]),
            format!("fusion_text_weight={}", point.at[1]),
        ];
        assert_eq!(
            point.value("ndcg@10"),
            run_with(&mut dataset, "bm25-dense-wsum", set),
            "{:?}",
            point.at
        );
    }
}

/// The command on datasets/devmem prints the best weights and writes sweep.json,
/// sweep.csv (one row per point) and a heatmap per blend configuration; the CSV's best
/// rows agree with the JSON; the JSON is identical at 1 and 4 threads.
#[test]
fn sweep_command_writes_csv_json_and_heatmaps() {
    let output_dir = tempfile::tempdir().unwrap();
    let directory = output_dir.path().to_str().unwrap();
    let run = |threads: &str| {
        let output = hyde_eval(&[
            "sweep",
            "--quiet",
            "--threads",
            threads,
            "--output-dir",
            directory,
        ]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        let json = std::fs::read(output_dir.path().join("devmem-sweep/sweep.json")).unwrap();
        (stdout, json)
    };
    let (stdout, json) = run("1");
    for expected in ["best at", "cross-validated", "hyde-3b-hyp"] {
        assert!(
            stdout.contains(expected),
            "{expected} missing from\n{stdout}"
        );
    }
    let (_, json_four_threads) = run("4");
    assert!(
        json == json_four_threads,
        "sweep.json differs between 1 and 4 threads"
    );

    let results: SweepResults = serde_json::from_slice(&json).unwrap();
    assert_eq!(results.schema_version, 1);
    let directory = output_dir.path().join("devmem-sweep");
    let csv = std::fs::read_to_string(directory.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "configuration,point,semantic,lexical,temporal,hybrid_vector_weight,hybrid_text_weight,ndcg@10"
    );
    let rows: Vec<Vec<&str>> = lines.map(|line| line.split(',').collect()).collect();
    assert_eq!(rows.len(), 5 * (231 + 1) + (21 + 1));
    for configuration in &results.configurations {
        let summary = &configuration.summaries[0];
        // The best value from the CSV's grid rows, and the JSON's best.
        let csv_best = rows
            .iter()
            .filter(|row| row[0] == configuration.name && row[1] == "grid")
            .map(|row| row[7].parse::<f64>().unwrap())
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(csv_best, summary.best, "{}", configuration.name);
        // The printed best weights are the first best point.
        let printed = hyde_eval::report::sweep::point_label(configuration, &summary.best_points[0]);
        assert!(
            stdout.contains(&printed),
            "{printed} missing from\n{stdout}"
        );
        let chart = if configuration.name == "hybrid" {
            directory.join("line-hybrid-ndcg-10.png")
        } else {
            directory.join(format!("heatmap-{}-ndcg-10.png", configuration.name))
        };
        let png = std::fs::read(&chart).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{}", chart.display());
    }
}

#[test]
fn bad_sweep_arguments_exit_2_with_a_hint() {
    let output_dir = tempfile::tempdir().unwrap();
    let directory = output_dir.path().to_str().unwrap();
    for (args, expected) in [
        (
            vec!["sweep", "--param", "min_cosin=0:1:0.1"],
            "did you mean \"min_cosine\"",
        ),
        (
            vec!["sweep", "--steps", "0"],
            "--steps must be between 1 and 200",
        ),
        (
            vec!["sweep", "--configurations", "bm25"],
            "none of the selected configurations blends",
        ),
        // A parameter no selected configuration reads at its parameters: the blend's
        // adaptive floor is off, so its step changes nothing.
        (
            vec![
                "sweep",
                "--configurations",
                "blend,hyde-dense",
                "--param",
                "adaptive_floor_step=0.1:0.3:0.1",
            ],
            "none of the selected configurations reads adaptive_floor_step (\"blend\": the step is read only while the adaptive floor is on",
        ),
        (
            vec![
                "sweep",
                "--configurations",
                "hyde-dense",
                "--param",
                "min_cosine=0.1:0.3:0.1",
            ],
            "\"hyde-dense\": preset hyde-dense (cosine of the first hypothesis' embedding alone (no blend)) reads only",
        ),
        // RRF reads no weights: a weight sweep would give the same point everywhere.
        (
            vec!["sweep", "--configurations", "bm25-dense-rrf"],
            "none of the selected configurations blends",
        ),
        (
            vec!["sweep", "--param", "min_cosine=0.5:1.0:0.25"],
            "min_cosine must be in [0, 1), got 1",
        ),
        (
            vec!["sweep", "--metrics", "ndcg@7"],
            "\"ndcg@7\" is ndcg@7, which this run does not compute",
        ),
        (vec!["sweep", "--folds", "1"], "--folds must be at least 2"),
    ] {
        let mut full = args.clone();
        full.extend(["--output-dir", directory]);
        let output = hyde_eval(&full);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// Splits a printed command line into words: plain words and '...' single-quoted ones
/// (the two forms the sweep prints).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('\'') {
            let end = quoted.find('\'').unwrap();
            words.push(quoted[..end].to_owned());
            rest = quoted[end + 1..].trim_start();
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            words.push(rest[..end].to_owned());
            rest = rest[end..].trim_start();
        }
    }
    words
}

/// The printed block of `configuration`: its `--set` words and its config-file table.
fn printed_best_point(stdout: &str, configuration: &str) -> (Vec<String>, String) {
    let mut lines = stdout
        .lines()
        .skip_while(|line| !line.starts_with(&format!("{configuration}: best ")));
    lines.next().expect("a best point is printed");
    let flags = lines.next().unwrap().strip_prefix("  run flags:").unwrap();
    assert_eq!(lines.next().unwrap(), "  config file:");
    let table: Vec<&str> = lines
        .take_while(|line| line.starts_with("    "))
        .map(str::trim)
        .collect();
    (shell_words(flags), table.join("\n") + "\n")
}

/// `run --configurations NAME` with `extra` arguments into a fresh directory: the
/// macro value of `metric` in its results.json.
fn run_metric(configuration: &str, extra: &[String], metric: &str) -> f64 {
    let output_dir = tempfile::tempdir().unwrap();
    let output = common::command()
        .args(["run", "--quiet", "--configurations", configuration])
        .args(extra)
        .arg("--output-dir")
        .arg(output_dir.path())
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{extra:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: serde_json::Value = serde_json::from_slice(
        &std::fs::read(output_dir.path().join("devmem/results.json")).unwrap(),
    )
    .unwrap();
    results["configurations"][0]["macro"][metric]
        .as_f64()
        .unwrap()
}

/// What the sweep prints to apply its best point, given to `run` (as `--set` flags, and
/// as a config file), reproduces the best point's value exactly: for the blend weights
/// (a point away from the configuration's own weights) and for a parameter sweep.
#[test]
fn printed_best_point_settings_reproduce_the_best_value_in_run() {
    let output_dir = tempfile::tempdir().unwrap();
    let sweep = |args: &[&str]| {
        let output = common::command()
            .arg("sweep")
            .args(args)
            .args(["--quiet", "--output-dir"])
            .arg(output_dir.path())
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let cases = [
        (
            "hyde-3b-hyp",
            "map",
            vec!["--configurations", "hyde-3b-hyp", "--metrics", "map"],
            "devmem-sweep",
        ),
        (
            "bm25",
            "mrr",
            vec![
                "--configurations",
                "bm25",
                "--metrics",
                "mrr",
                "--param",
                "bm25_k1=0.3:2.1:0.3",
            ],
            "devmem-sweep-bm25_k1",
        ),
    ];
    for (configuration, metric, args, directory) in cases {
        let stdout = sweep(&args);
        let results: SweepResults = serde_json::from_slice(
            &std::fs::read(output_dir.path().join(directory).join("sweep.json")).unwrap(),
        )
        .unwrap();
        let swept = &results.configurations[0];
        let summary = &swept.summaries[0];
        assert_ne!(
            summary.best_points[0], swept.default.at,
            "{configuration}: the best point should not be the configuration's own"
        );
        let (flags, table) = printed_best_point(&stdout, configuration);
        assert!(
            flags.iter().step_by(2).all(|flag| flag == "--set"),
            "{flags:?}"
        );
        assert_eq!(
            run_metric(configuration, &flags, metric),
            summary.best,
            "{configuration} with {flags:?}"
        );
        let config = output_dir.path().join(format!("{configuration}.toml"));
        std::fs::write(&config, &table).unwrap();
        assert_eq!(
            run_metric(
                configuration,
                &["--config".into(), config.to_str().unwrap().into()],
                metric
            ),
            summary.best,
            "{configuration} with\n{table}"
        );
    }
}
