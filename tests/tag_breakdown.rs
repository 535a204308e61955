//! The breakdown of the macro metrics by query tag, end to end on a four-query dataset
//! whose rankings are worked out by hand: results.json, the terminal table and the HTML
//! report.

mod common;

use std::path::Path;

/// Three facts on unrelated topics; each query names words of its relevant fact except
/// q3, which shares no word with any fact (BM25 returns nothing: every metric 0).
fn write_dataset(directory: &Path) {
    std::fs::create_dir_all(directory).unwrap();
    let files = [
        (
            "dataset.toml",
            "name = \"tags\"\nnow = \"2026-03-01T00:00:00Z\"\nk = [1, 2]\n",
        ),
        (
            "facts.jsonl",
            concat!(
                "{\"id\": \"f1\", \"content\": \"Redis eviction relies on ttl\"}\n",
                "{\"id\": \"f2\", \"content\": \"Postgres stores user rows in tables\"}\n",
                "{\"id\": \"f3\", \"content\": \"Kafka topics keep messages for seven days\"}\n",
            ),
        ),
        (
            "queries.jsonl",
            concat!(
                "{\"id\": \"q1\", \"text\": \"redis eviction\", \"tags\": [\"cache\", \"exact\"]}\n",
                "{\"id\": \"q2\", \"text\": \"postgres user rows\", \"tags\": [\"exact\"]}\n",
                "{\"id\": \"q3\", \"text\": \"zebra giraffe\", \"tags\": [\"cache\"]}\n",
                "{\"id\": \"q4\", \"text\": \"kafka topics messages\"}\n",
            ),
        ),
        ("qrels.tsv", "q1\tf1\t1\nq2\tf2\t1\nq3\tf3\t1\nq4\tf3\t1\n"),
    ];
    for (name, content) in files {
        std::fs::write(directory.join(name), content).unwrap();
    }
}

#[test]
fn tag_metrics_match_the_hand_computation() {
    let work = tempfile::tempdir().unwrap();
    let dataset = work.path().join("tags");
    write_dataset(&dataset);
    let output = common::hyde_eval(&[
        "run",
        "--quiet",
        "--dataset",
        dataset.to_str().unwrap(),
        "--configurations",
        "bm25",
        "--html",
        "--output-dir",
        work.path().join("reports").to_str().unwrap(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = work.path().join("reports/tags");
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("results.json")).unwrap()).unwrap();
    let bm25 = &results["configurations"][0];
    // The rankings the hand computation rests on: q1, q2 and q4 find their fact first,
    // q3 nothing.
    let mrr: Vec<f64> = bm25["per_query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|query| query["metrics"]["mrr"].as_f64().unwrap())
        .collect();
    assert_eq!(mrr, [1.0, 1.0, 0.0, 1.0]);
    assert_eq!(bm25["macro"]["mrr"], 0.75);
    // cache = q1, q3: (1 + 0) / 2 for every metric; exact = q1, q2: 1 for every metric;
    // q4 has no tag and counts in none.
    let by_tag = bm25["by_tag"].as_array().unwrap();
    assert_eq!(by_tag.len(), 2, "{by_tag:#?}");
    assert_eq!(by_tag[0]["tag"], "cache");
    assert_eq!(by_tag[0]["queries"], 2);
    assert_eq!(by_tag[1]["tag"], "exact");
    assert_eq!(by_tag[1]["queries"], 2);
    for metric in ["mrr", "precision@1", "recall@2", "ndcg@2", "map"] {
        assert_eq!(by_tag[0]["macro"][metric], 0.5, "cache {metric}");
        assert_eq!(by_tag[1]["macro"][metric], 1.0, "exact {metric}");
    }

    let stdout = String::from_utf8_lossy(&output.stdout);
    let section = stdout
        .lines()
        .skip_while(|line| !line.contains("nDCG@2 by query tag"))
        .take(5)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        section.contains("cache (2)") && section.contains("exact (2)"),
        "{stdout}"
    );
    let row = section.lines().find(|line| line.contains("bm25")).unwrap();
    let cells: Vec<&str> = row
        .split(['│', '┆'])
        .map(str::trim)
        .filter(|cell| !cell.is_empty())
        .collect();
    assert_eq!(cells, ["bm25", "0.5000", "1.0000"], "{section}");

    // The Markdown summary carries the same breakdown (one configuration: nothing bold).
    let markdown = common::hyde_eval(&[
        "report",
        "-q",
        report.join("results.json").to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    assert_eq!(markdown.status.code(), Some(0));
    assert!(markdown.stderr.is_empty());
    let markdown = String::from_utf8(markdown.stdout).unwrap();
    assert!(
        markdown.contains(
            "### nDCG@2 by query tag\n\n| configuration | cache (2) | exact (2) |\n|---|---:|---:|\n| bm25 | 0.5000 | 1.0000 |\n"
        ),
        "{markdown}"
    );

    let page = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(page.contains("<h2 id=\"tags\">By query tag</h2>"), "{page}");
    assert!(page.contains("<th>cache (2)</th><th>exact (2)</th>"));
}

#[test]
fn devmem_tags_count_their_queries_and_average_their_per_query_values() {
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(common::repo_path("reports/baseline.json")).unwrap())
            .unwrap();
    // Counted by hand in datasets/devmem/queries.jsonl: nine queries carry a second
    // tag, `pt`, besides their kind.
    let expected_counts = [
        ("exact", 20),
        ("general", 10),
        ("multi-concept", 16),
        ("pt", 9),
        ("synonym", 28),
        ("temporal", 16),
    ];
    let tags_of = |query: &str| -> Vec<String> {
        results["queries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|detail| detail["id"] == query)
            .map(|detail| serde_json::from_value(detail["tags"].clone()).unwrap())
            .unwrap()
    };
    for configuration in results["configurations"].as_array().unwrap() {
        let by_tag = configuration["by_tag"].as_array().unwrap();
        let counts: Vec<(&str, u64)> = by_tag
            .iter()
            .map(|entry| {
                (
                    entry["tag"].as_str().unwrap(),
                    entry["queries"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(counts, expected_counts);
        for entry in by_tag {
            let tag = entry["tag"].as_str().unwrap();
            let values: Vec<f64> = configuration["per_query"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|record| {
                    tags_of(record["query"].as_str().unwrap())
                        .iter()
                        .any(|t| t == tag)
                })
                .map(|record| record["metrics"]["ndcg@10"].as_f64().unwrap())
                .collect();
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let stored = entry["macro"]["ndcg@10"].as_f64().unwrap();
            assert!((mean - stored).abs() < 1e-12, "{tag}: {mean} vs {stored}");
        }
    }
}
