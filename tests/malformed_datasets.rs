//! Every fixture under `fixtures/malformed/` is a small dataset with one defect; loading
//! it through the binary must fail with the input-error exit code (2) and an error that
//! names the file, the line and the problem (listed in `fixtures/malformed/EXPECTED.tsv`).

mod common;

#[test]
fn each_defect_gives_a_clear_error_and_exit_code_2() {
    let expected =
        std::fs::read_to_string(common::repo_path("fixtures/malformed/EXPECTED.tsv")).unwrap();
    let mut checked = 0;
    for line in expected.lines().filter(|line| !line.starts_with('#')) {
        let (kind, message) = line.split_once('\t').unwrap();
        let directory = common::repo_path("fixtures/malformed").join(kind);
        let output = common::command()
            .args(["run", "--no-report", "--quiet", "--dataset"])
            .arg(&directory)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{kind}: {stderr}");
        let located = format!("{}/{message}", directory.display());
        assert!(
            stderr.contains(&located),
            "{kind}: expected {located:?} in\n{stderr}"
        );
        assert!(output.stdout.is_empty(), "{kind}: no table on failure");
        checked += 1;
    }
    let fixtures = std::fs::read_dir(common::repo_path("fixtures/malformed"))
        .unwrap()
        .filter(|entry| entry.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(
        checked, fixtures,
        "every fixture directory has an expectation"
    );
    assert!(checked >= 20);
}

#[test]
fn chatcli_memory_index_loads_in_place_of_facts_jsonl() {
    let dataset =
        hyde_eval::dataset::Dataset::load(&common::repo_path("fixtures/datasets/tiny-chatcli"))
            .unwrap();
    assert_eq!(dataset.facts.len(), 2);
    assert_eq!(
        dataset.facts[1].last_accessed, None,
        "Go's zero time is unset"
    );
    assert_eq!(
        dataset.facts[1].confidence, None,
        "confidence 0 is unset (0.6)"
    );
    assert_eq!(
        dataset.files,
        vec![
            "dataset.toml",
            "memory_index.json",
            "queries.jsonl",
            "qrels.tsv"
        ]
    );
}
