//! The HyDE figures of ctx-sys's spec per HyDE configuration (cache hit rate, generation
//! time, improvement over the counterpart without HyDE) and the adaptive floor's settled
//! floors, on tiny datasets whose numbers are known by construction: recorded
//! hypotheses with and without a generation time in their provenance, and a live
//! generator whose cache already holds two of three queries' hypotheses.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::http::{chat_completion, Reply, Server};
use serde_json::Value;

/// Six facts, three queries (one relevant fact each), and one recorded hypothesis per
/// query whose provenance carries `times[i]` as its generation time (none for `None`).
fn write_dataset(directory: &Path, queries: usize, times: &[Option<f64>]) -> PathBuf {
    std::fs::create_dir_all(directory).unwrap();
    let write = |name: &str, text: &str| std::fs::write(directory.join(name), text).unwrap();
    write("dataset.toml", "name = \"tiny\"\n");
    write(
        "facts.jsonl",
        "{\"id\": \"f1\", \"content\": \"deploys run from the release branch every friday\"}\n\
         {\"id\": \"f2\", \"content\": \"the cache keeps answers for thirty days\"}\n\
         {\"id\": \"f3\", \"content\": \"logs are shipped to the central collector\"}\n\
         {\"id\": \"f4\", \"content\": \"retries back off exponentially up to five times\"}\n\
         {\"id\": \"f5\", \"content\": \"the staging database is reset nightly\"}\n\
         {\"id\": \"f6\", \"content\": \"api keys rotate every ninety days\"}\n",
    );
    let texts = [
        (
            "q1",
            "how do deploys happen",
            "f1",
            "Deploys run from the release branch.",
        ),
        (
            "q2",
            "how long are answers cached",
            "f2",
            "The cache keeps answers for days.",
        ),
        (
            "q3",
            "how are failed requests retried",
            "f4",
            "Retries back off exponentially.",
        ),
    ];
    let mut queries_jsonl = String::new();
    let mut qrels = String::from("query_id\tfact_id\tgrade\n");
    let mut hypotheses = String::new();
    for (index, (id, text, fact, hypothesis)) in texts.iter().take(queries).enumerate() {
        queries_jsonl.push_str(&format!("{{\"id\": \"{id}\", \"text\": \"{text}\"}}\n"));
        qrels.push_str(&format!("{id}\t{fact}\t1\n"));
        let time = times
            .get(index)
            .copied()
            .flatten()
            .map_or(String::new(), |ms| {
                format!(", \"generation_time_ms\": {ms}")
            });
        hypotheses.push_str(&format!(
            "{{\"query_id\": \"{id}\", \"hypotheses\": [\"{hypothesis}\"], \
             \"source\": {{\"generator\": \"test\", \"model\": \"m\"{time}}}}}\n"
        ));
    }
    write("queries.jsonl", &queries_jsonl);
    write("qrels.tsv", &qrels);
    write("hypotheses.jsonl", &hypotheses);
    directory.to_path_buf()
}

fn run(dataset: &Path, output_dir: &Path, args: &[&str]) -> Output {
    let output = common::command()
        .arg("run")
        .arg("--dataset")
        .arg(dataset)
        .arg("--output-dir")
        .arg(output_dir)
        .args(["--embedder", "hash"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn read_results(output_dir: &Path) -> Value {
    let text = std::fs::read_to_string(output_dir.join("tiny/results.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn configuration<'a>(results: &'a Value, name: &str) -> &'a Value {
    results["configurations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|configuration| configuration["name"] == name)
        .unwrap_or_else(|| panic!("no configuration {name}"))
}

/// Each evaluated query's nDCG@10 under `configuration`, in record order.
fn ndcg_by_query(configuration: &Value) -> Vec<f64> {
    configuration["per_query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|query| query["metrics"]["ndcg@10"].as_f64().unwrap())
        .collect()
}

#[test]
fn recorded_hypotheses_report_their_times_reuse_and_improvement() {
    let directory = tempfile::tempdir().unwrap();
    // q1 took 800 ms, q2 400 ms, q3's provenance states no time.
    let dataset = write_dataset(
        &directory.path().join("tiny"),
        3,
        &[Some(800.0), Some(400.0), None],
    );
    let reports = directory.path().join("reports");
    let output = run(
        &dataset,
        &reports,
        &["--configurations", "hyde-3b-hyp,blend,hyde-dense,dense"],
    );
    let results = read_results(&reports);
    // The identity lists the provenance once, without the per-query times.
    assert_eq!(
        results["generator"]["sources"],
        serde_json::json!([{"generator": "test", "model": "m"}])
    );
    let hyp = configuration(&results, "hyde-3b-hyp");
    let hyde = &hyp["hyde"];
    // Three recorded hypotheses, none generated: every one reused.
    assert_eq!(hyde["hypotheses_recorded"], 3);
    assert_eq!(hyde["hypotheses_generated"], 0);
    assert_eq!(hyde["hypotheses_from_cache"], 0);
    assert_eq!(hyde["cache_hit_rate"], 1.0);
    // (800 + 400) / 2 queries whose time is known; q3's is not counted as 0.
    assert_eq!(
        hyde["generation_time"],
        serde_json::json!({"queries": 2, "total_ms": 1200.0, "mean_ms": 600.0})
    );

    // The delta is the mean of the per-query differences, worked from the records.
    let mut p_values = Vec::new();
    for (name, counterpart) in [("hyde-3b-hyp", "blend"), ("hyde-dense", "dense")] {
        let improvement = &configuration(&results, name)["hyde"]["improvement"];
        assert_eq!(improvement["counterpart"], counterpart, "{name}");
        assert_eq!(improvement["counterpart_preset"], counterpart, "{name}");
        assert_eq!(improvement["paired_queries"], 3, "{name}");
        let mine = ndcg_by_query(configuration(&results, name));
        let theirs = ndcg_by_query(configuration(&results, counterpart));
        let by_hand: f64 = mine.iter().zip(&theirs).map(|(a, b)| a - b).sum::<f64>() / 3.0;
        let delta = improvement["delta"].as_f64().unwrap();
        assert!(
            (delta - by_hand).abs() < 1e-12,
            "{name}: {delta} vs {by_hand}"
        );
        p_values.push((
            improvement["p_value"].as_f64().unwrap(),
            improvement["adjusted_p_value"].as_f64().unwrap(),
        ));
    }
    // Holm over the two: the smaller p doubled, the larger kept at least that.
    let (low, high) = if p_values[0].0 <= p_values[1].0 {
        (p_values[0], p_values[1])
    } else {
        (p_values[1], p_values[0])
    };
    assert_eq!(low.1, (2.0 * low.0).min(1.0));
    assert_eq!(high.1, high.0.min(1.0).max(low.1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("100.0% (3/3)"), "{stdout}");
    assert!(stdout.contains("600 (2 queries)"), "{stdout}");
    assert!(stdout.contains("vs blend (p adj."), "{stdout}");

    // Without its counterpart the figure says so; without times the time is unknown.
    let untimed = write_dataset(&directory.path().join("untimed/tiny"), 3, &[]);
    let alone = directory.path().join("alone");
    let summary_file = directory.path().join("summary.md");
    let output = run(
        &untimed,
        &alone,
        &[
            "--configurations",
            "hyde-3b",
            "--summary-file",
            summary_file.to_str().unwrap(),
        ],
    );
    let results = read_results(&alone);
    let hyde = &configuration(&results, "hyde-3b")["hyde"];
    assert_eq!(hyde["generation_time"], Value::Null);
    assert_eq!(hyde["improvement"]["counterpart"], Value::Null);
    assert_eq!(hyde["improvement"]["delta"], Value::Null);
    assert_eq!(
        hyde["improvement"]["not_measured"],
        "no blend configuration in this run"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("no blend configuration in this run"),
        "{stdout}"
    );
    assert!(stdout.contains("unknown"), "{stdout}");
    let summary = std::fs::read_to_string(&summary_file).unwrap();
    assert!(
        summary.contains("| hyde-3b | 100.0% (3/3) | 100.0% (3/3) | unknown | no blend configuration in this run |"),
        "{summary}"
    );
}

fn chat_config(base_url: &str) -> String {
    format!(
        "[generators.llm]\nkind = \"openai-chat\"\nbase_url = \"{base_url}\"\nmodel = \"test-chat\"\n\
         max_tokens = 60\ntemperature = 0.5\ninitial_backoff_seconds = 0.01\nmax_retries = 1\n"
    )
}

#[test]
fn two_of_three_queries_served_from_the_cache_is_a_hit_rate_of_two_thirds() {
    let server = Server::start(|request, _| Reply::json(chat_completion(request, 1)));
    let directory = tempfile::tempdir().unwrap();
    let config = directory.path().join("hyde-eval.toml");
    std::fs::write(&config, chat_config(&server.base_url)).unwrap();
    let cache = directory.path().join("cache");
    let live = |dataset: &Path, reports: &Path| {
        let config = config.to_str().unwrap();
        let cache = cache.to_str().unwrap();
        run(
            dataset,
            reports,
            &[
                "--config",
                config,
                "--cache-dir",
                cache,
                "--generator",
                "llm",
                "--configurations",
                "hyde-3b-hyp",
            ],
        )
    };
    // The first run generates q1's and q2's hypotheses (one each) into the cache.
    let two = write_dataset(&directory.path().join("two/tiny"), 2, &[]);
    live(&two, &directory.path().join("first"));
    assert_eq!(server.request_count(), 2);
    // The second run finds those two and generates q3's: 2 of 3 from the cache.
    let three = write_dataset(&directory.path().join("three/tiny"), 3, &[]);
    let reports = directory.path().join("second");
    live(&three, &reports);
    assert_eq!(server.request_count(), 3);
    let results = read_results(&reports);
    let hyde = &configuration(&results, "hyde-3b-hyp")["hyde"];
    assert_eq!(hyde["hypotheses_from_cache"], 2);
    assert_eq!(hyde["hypotheses_generated"], 1);
    assert_eq!(hyde["hypotheses_recorded"], 0);
    assert_eq!(hyde["cache_hit_rate"].as_f64().unwrap(), 2.0 / 3.0);
    // Only q3's generation was measured; the cached two have no time.
    assert_eq!(hyde["generation_time"]["queries"], 1);
    assert!(hyde["generation_time"]["mean_ms"].as_f64().unwrap() >= 0.0);
}

#[test]
fn each_query_records_the_floor_its_adaptive_floor_settled_on() {
    let directory = tempfile::tempdir().unwrap();
    let dataset = write_dataset(&directory.path().join("tiny"), 3, &[]);
    let reports = directory.path().join("reports");
    let output = run(
        &dataset,
        &reports,
        &[
            "--configurations",
            "multi-hyde,blend",
            "--set",
            "multi-hyde.adaptive_floor_start=0.75",
            "--set",
            "multi-hyde.adaptive_floor_step=0.125",
            "--set",
            "multi-hyde.min_cosine=0.25",
        ],
    );
    let results = read_results(&reports);
    let multi = configuration(&results, "multi-hyde");
    let floors: Vec<f64> = multi["per_query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|query| query["settled_floor"].as_f64().unwrap())
        .collect();
    assert_eq!(floors.len(), 3);
    // Steps of 1/8 from 0.75 are exact: each floor is 0.75, 0.625, 0.5, 0.375 or 0.25.
    for floor in &floors {
        assert!([0.75, 0.625, 0.5, 0.375, 0.25].contains(floor), "{floor}");
    }
    let summary = &multi["adaptive_floor"];
    assert_eq!(summary["start"], 0.75);
    assert_eq!(summary["step"], 0.125);
    assert_eq!(summary["minimum"], 0.25);
    assert_eq!(
        summary["mean"].as_f64().unwrap(),
        floors.iter().sum::<f64>() / 3.0
    );
    assert_eq!(
        summary["stepped_down"],
        floors.iter().filter(|&&floor| floor < 0.75).count()
    );
    let mut distinct = floors.clone();
    distinct.sort_by(|a, b| b.total_cmp(a));
    distinct.dedup();
    let expected: Vec<Value> = distinct
        .iter()
        .map(|floor| {
            let queries = floors.iter().filter(|&other| other == floor).count();
            serde_json::json!({"floor": floor, "queries": queries})
        })
        .collect();
    assert_eq!(summary["settled"], Value::Array(expected));
    // Without an adaptive floor there is neither a record nor a summary.
    let blend = configuration(&results, "blend");
    assert!(blend.get("adaptive_floor").is_none());
    assert!(blend["per_query"][0].get("settled_floor").is_none());
    // The CSV has the column, empty for blend.
    let csv = std::fs::read_to_string(reports.join("tiny/per_query.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header
        .iter()
        .position(|name| *name == "settled_floor")
        .unwrap();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let floor: Option<f64> = cells[column].parse().ok();
        match cells[0] {
            "multi-hyde" => assert!(floors.contains(&floor.unwrap()), "{line}"),
            _ => assert_eq!(floor, None, "{line}"),
        }
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("0.75/0.125/0.25"), "{stdout}");
}
