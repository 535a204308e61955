//! `hyde-eval dataset import|stats|validate` and `run --dataset-format`: an imported dataset
//! loads back as the same dataset, `run` on the source format equals `run` on the
//! import, and the shared collections import with their published counts.

mod common;

use std::path::Path;

use common::hyde_eval;
use hyde_eval::dataset::import::{load, Format, ImportOptions};

fn ok_stdout(args: &[&str]) -> String {
    let output = hyde_eval(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn write_beir_fixture(root: &Path) {
    std::fs::create_dir_all(root.join("qrels")).unwrap();
    std::fs::write(
        root.join("corpus.jsonl"),
        concat!(
            "{\"_id\": \"d1\", \"title\": \"Vitamin D\", \"text\": \"Vitamin D supplements reduce fractures in elderly patients.\", \"metadata\": {}}\n",
            "{\"_id\": \"d2\", \"title\": \"Statins\", \"text\": \"Statins lower LDL cholesterol and cardiovascular risk.\", \"metadata\": {}}\n",
            "{\"_id\": \"d3\", \"title\": \"Sleep\", \"text\": \"Short sleep is associated with obesity in children.\", \"metadata\": {}}\n",
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("queries.jsonl"),
        concat!(
            "{\"_id\": \"1\", \"text\": \"Do vitamin D supplements prevent fractures?\"}\n",
            "{\"_id\": \"2\", \"text\": \"Statins reduce cholesterol\"}\n",
            "{\"_id\": \"3\", \"text\": \"sleep duration and childhood obesity\"}\n",
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\r\n1\td1\t1\r\n2\td2\t1\r\n3\td3\t1\r\n",
    )
    .unwrap();
}

#[test]
fn beir_import_round_trips_and_run_reads_beir_directly() {
    let directory = tempfile::tempdir().unwrap();
    let source = directory.path().join("mini-beir");
    let destination = directory.path().join("imported").join("mini-beir");
    write_beir_fixture(&source);
    let (source, destination) = (source.to_str().unwrap(), destination.to_str().unwrap());
    let imported = ok_stdout(&["dataset", "import", "--from", "beir", source, destination]);
    assert!(
        imported.contains("imported 3 facts, 3 queries and 3 judgments"),
        "{imported}"
    );
    let validated = ok_stdout(&["dataset", "validate", destination]);
    assert!(validated.contains("valid (3 facts, 3 queries, 3 judgments)"));
    let stats = ok_stdout(&["dataset", "stats", "--dataset-format", "beir", source]);
    assert!(stats.contains("grades            1: 3"), "{stats}");

    let run = |dataset: &str, format: &str| {
        ok_stdout(&[
            "run",
            "--quiet",
            "--no-report",
            "--dataset",
            dataset,
            "--dataset-format",
            format,
            "--configurations",
            "bm25,keyword",
            "--bm25-analyzer",
            "english",
            "--k",
            "1",
        ])
    };
    let direct = run(source, "beir");
    assert_eq!(direct, run(destination, "native"));
    // Every query's own document ranks first with BM25 on this fixture.
    let bm25_row = direct.lines().find(|line| line.contains("bm25")).unwrap();
    assert!(bm25_row.matches("1.0000").count() >= 3, "{direct}");

    let again = hyde_eval(&["dataset", "import", "--from", "beir", source, destination]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists"));
    let wrong = hyde_eval(&["dataset", "validate", "--dataset-format", "smart", source]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("no SMART collection found"));
}

/// Counts from ../shared/datasets/README.md (computed there by parsing the files):
/// every importer reads the whole collection, minus what it notes.
#[test]
#[ignore = "needs ../shared/datasets; .ci/run runs it by name"]
fn shared_collections_import_with_their_published_counts() {
    let datasets = common::shared_datasets("shared_collections_import_with_their_published_counts");
    let nfcorpus = ImportOptions {
        trec: hyde_eval::dataset::trec::TrecFiles {
            docs: "test.docs".into(),
            queries: "test.titles.queries".into(),
            qrels: "test.2-1-0.qrel".into(),
        },
        ..ImportOptions::default()
    };
    /// Facts, queries and judgments.
    type Counts = (usize, usize, usize);
    let cases: [(&str, Format, &ImportOptions, Counts); 6] = [
        // Cranfield: docs 471 and 995 are empty; 995 has one judgment.
        (
            "cranfield",
            Format::Smart,
            &ImportOptions::default(),
            (1398, 225, 1836),
        ),
        // CACM: 64 real queries (the empty `.I 0` is left out).
        (
            "cacm",
            Format::Smart,
            &ImportOptions::default(),
            (3204, 64, 796),
        ),
        (
            "adi",
            Format::Smart,
            &ImportOptions::default(),
            (82, 35, 170),
        ),
        (
            "npl",
            Format::Smart,
            &ImportOptions::default(),
            (11429, 93, 2083),
        ),
        // SciFact test split: 300 judged queries of 1,109.
        (
            "scifact",
            Format::Beir,
            &ImportOptions::default(),
            (5183, 300, 339),
        ),
        // NFCorpus test: 323 of 325 queries judged.
        ("nfcorpus", Format::Trec, &nfcorpus, (3162, 323, 12334)),
    ];
    for (name, format, options, expected) in cases {
        let dataset = load(format, &datasets.join(name), options).unwrap();
        let counts = (
            dataset.facts.len(),
            dataset.queries.len(),
            dataset.judgment_count(),
        );
        assert_eq!(counts, expected, "{name}");
    }
    let cranfield = load(
        Format::Smart,
        &datasets.join("cranfield"),
        &ImportOptions::default(),
    )
    .unwrap();
    let mut histogram = std::collections::BTreeMap::new();
    for judgment in cranfield.qrels.values().flatten() {
        *histogram.entry(judgment.grade).or_insert(0) += 1;
    }
    // Codes 1:128, 2:387, 3:734 (one of them for empty doc 995), 4:363, -1:225 become
    // grades 4, 3, 2, 1 and 0.
    let expected: std::collections::BTreeMap<i32, usize> =
        [(0, 225), (1, 363), (2, 733), (3, 387), (4, 128)]
            .into_iter()
            .collect();
    assert_eq!(histogram, expected);
}

/// The README's import examples read data a fresh clone has (fixtures/beir-sample, not
/// the developers' ../shared): each `hyde-eval` line of the code block after "load
/// directly with" runs, writing into a scratch directory. The sample holds 10 documents,
/// 4 queries and 8 judgments (counted in its files).
#[test]
fn the_readmes_import_examples_run_on_a_fresh_clone() {
    let readme = std::fs::read_to_string(common::repo_path("README.md")).unwrap();
    let section = &readme[readme.find("load directly with").unwrap()..];
    let block = &section[section.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("```").unwrap()];
    let work = tempfile::tempdir().unwrap();
    let mut commands = 0;
    for line in block.lines() {
        let line = line.split('#').next().unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"hyde-eval"), "{line}");
        assert!(!line.contains("../shared"), "{line}");
        let mut args: Vec<String> = words[1..].iter().map(|word| word.to_string()).collect();
        let stdout = if args[0] == "run" {
            args.extend(["--quiet".into(), "--output-dir".into()]);
            args.push(work.path().join("reports").to_str().unwrap().to_owned());
            ok_stdout(&args.iter().map(String::as_str).collect::<Vec<_>>())
        } else {
            let destination = work.path().join(args.pop().unwrap());
            args.push(destination.to_str().unwrap().to_owned());
            ok_stdout(&args.iter().map(String::as_str).collect::<Vec<_>>())
        };
        if args[1] == "import" {
            assert!(
                stdout.contains("imported 10 facts, 4 queries and 8 judgments"),
                "{stdout}"
            );
        } else {
            assert!(
                stdout.contains("beir-sample: 10 facts, 4 queries (4 evaluated"),
                "{stdout}"
            );
        }
        commands += 1;
    }
    assert_eq!(commands, 2);
}
