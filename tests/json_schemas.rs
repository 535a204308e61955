//! Every JSON document hyde-eval writes (`results.json`, `gate.json`, `sweep.json`,
//! `compare.json`, and a gated run's `--format json`) validates against its JSON Schema
//! under `schemas/`, on devmem; the
//! schemas refuse what they describe as invalid; a reader refuses a results.json
//! without `schema_version` with a message naming it.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The schema of each document, by file name.
const SCHEMAS: [(&str, &str); 4] = [
    ("results.json", "schemas/results.schema.json"),
    ("gate.json", "schemas/gate.schema.json"),
    ("sweep.json", "schemas/sweep.schema.json"),
    ("compare.json", "schemas/compare.schema.json"),
];

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Every violation of `schema` by `document`, one line each.
fn violations(schema: &str, document: &Value) -> Vec<String> {
    common::schemas::validator(schema)
        .iter_errors(document)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect()
}

fn succeed(args: &[&str]) -> String {
    let output = common::hyde_eval(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "hyde-eval {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Every `*.json` file under `directory`.
fn json_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(directory).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(json_files(&path));
        } else if path
            .extension()
            .is_some_and(|extension| extension == "json")
        {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
fn every_document_written_on_devmem_validates_against_its_schema() {
    let directory = tempfile::tempdir().unwrap();
    let output = directory.path().to_str().unwrap();
    succeed(&[
        "run",
        "--quiet",
        "--baseline",
        "reports/baseline.json",
        "--max-drop",
        "ndcg@10=0,mrr=0",
        "--output-dir",
        output,
    ]);
    // `--format json` prints the document it writes.
    let sweep = succeed(&[
        "sweep",
        "--quiet",
        "--configurations",
        "blend,hybrid",
        "--steps",
        "4",
        "--folds",
        "2",
        "--output-dir",
        output,
        "--format",
        "json",
    ]);
    let compare = succeed(&[
        "compare",
        "--quiet",
        "reports/baseline.json",
        &format!("{output}/devmem/results.json"),
        "--output-dir",
        output,
        "--format",
        "json",
    ]);
    assert_eq!(
        sweep,
        std::fs::read_to_string(directory.path().join("devmem-sweep/sweep.json")).unwrap()
    );
    assert_eq!(
        compare,
        std::fs::read_to_string(directory.path().join("compare/compare.json")).unwrap()
    );

    let mut validated = Vec::new();
    for path in json_files(directory.path()) {
        let name = path.file_name().unwrap().to_str().unwrap();
        let Some((_, schema)) = SCHEMAS.iter().find(|(file, _)| *file == name) else {
            continue;
        };
        let document = read_json(&path);
        let version =
            &read_json(&common::repo_path(schema))["properties"]["schema_version"]["const"];
        assert_eq!(&document["schema_version"], version, "{}", path.display());
        let violations = violations(schema, &document);
        assert!(
            violations.is_empty(),
            "{} against {schema}:\n{}",
            path.display(),
            violations.join("\n")
        );
        validated.push(name.to_owned());
    }
    validated.sort();
    assert_eq!(
        validated,
        ["compare.json", "gate.json", "results.json", "sweep.json"],
        "each document written once"
    );
    // The committed baseline is a results.json too.
    let baseline = read_json(&common::repo_path("reports/baseline.json"));
    assert_eq!(
        violations("schemas/results.schema.json", &baseline),
        Vec::<String>::new()
    );
}

/// A gated run's `--format json` is results.json with the gate's document as `gate`
/// (valid against results.schema.json, which refers to gate.schema.json), and a gated
/// `eval --format json` carries the same `gate`.
#[test]
fn a_gated_run_prints_results_json_with_its_gate() {
    let directory = tempfile::tempdir().unwrap();
    let output = directory.path().to_str().unwrap();
    let printed = succeed(&[
        "run",
        "--quiet",
        "--configurations",
        "keyword,bm25",
        "--baseline",
        "reports/baseline.json",
        "--max-drop",
        "ndcg@10=0,mrr=0",
        "--format",
        "json",
        "--output-dir",
        output,
    ]);
    let mut printed: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(
        violations("schemas/results.schema.json", &printed),
        Vec::<String>::new()
    );
    let report = directory.path().join("devmem");
    let gate = printed.as_object_mut().unwrap().remove("gate").unwrap();
    assert_eq!(gate, read_json(&report.join("gate.json")));
    assert_eq!(gate["checks"].as_array().unwrap().len(), 4);
    assert_eq!(printed, read_json(&report.join("results.json")));
    // A results.json holding a gate that is not gate.json's document is refused.
    let mut edited = read_json(&report.join("results.json"));
    edited["gate"] = serde_json::json!({"passed": "yes"});
    assert!(!violations("schemas/results.schema.json", &edited).is_empty());

    let eval = succeed(&[
        "eval",
        "--quiet",
        "--format",
        "json",
        report.join("qrels.trec").to_str().unwrap(),
        report.join("runs/bm25.run").to_str().unwrap(),
        "--min",
        "ndcg@10=0.1",
    ]);
    let eval: Value = serde_json::from_str(&eval).unwrap();
    assert_eq!(eval["gate"]["passed"], true);
    assert_eq!(
        violations("schemas/gate.schema.json", &eval["gate"]),
        Vec::<String>::new()
    );
}

#[test]
fn the_schemas_refuse_malformed_documents() {
    let mut results = read_json(&common::repo_path("reports/baseline.json"));
    assert!(violations("schemas/results.schema.json", &results).is_empty());
    results["schema_version"] = Value::from(2);
    results["configurations"][0]["by_tag"][0]
        .as_object_mut()
        .unwrap()
        .remove("queries");
    results["configurations"][1]["macro"]["ndcg@10"] = Value::from("0.5");
    let mut found = violations("schemas/results.schema.json", &results);
    found.sort();
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0].starts_with("/configurations/0/by_tag/0:"),
        "{found:#?}"
    );
    assert!(
        found[1].starts_with("/configurations/1/macro/ndcg@10:"),
        "{found:#?}"
    );
    assert!(found[2].starts_with("/schema_version:"), "{found:#?}");
}

/// `compare --qrels` (run files, several metrics, the LaTeX-free JSON) validates too, and
/// the schema refuses a cell without its beaten runs and an unknown correction.
#[test]
fn a_comparison_of_run_files_validates_and_the_schema_refuses_a_malformed_one() {
    let fixture = |name: &str| {
        common::repo_path(&format!("fixtures/compare/{name}"))
            .display()
            .to_string()
    };
    let printed = succeed(&[
        "compare",
        "--quiet",
        "--no-report",
        "--format",
        "json",
        "--qrels",
        &fixture("qrels.trec"),
        &fixture("a.run"),
        &fixture("b.run"),
        &fixture("c.run"),
        "--metrics",
        "ndcg@10,map",
    ]);
    let mut document: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(document["kind"], "run-files");
    assert_eq!(
        violations("schemas/compare.schema.json", &document),
        Vec::<String>::new()
    );
    document["rows"][0]["cells"][0]
        .as_object_mut()
        .unwrap()
        .remove("beats");
    document["significance"]["correction"] = Value::from("sidak");
    let mut found = violations("schemas/compare.schema.json", &document);
    found.sort();
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("/rows/0/cells/0:"), "{found:#?}");
    assert!(
        found[1].starts_with("/significance/correction:"),
        "{found:#?}"
    );
}

#[test]
fn a_results_file_without_schema_version_is_refused_by_name() {
    let directory = tempfile::tempdir().unwrap();
    let mut results = read_json(&common::repo_path("reports/baseline.json"));
    results.as_object_mut().unwrap().remove("schema_version");
    let old = directory.path().join("old.json");
    std::fs::write(&old, serde_json::to_vec_pretty(&results).unwrap()).unwrap();
    let output = common::hyde_eval(&[
        "compare",
        "--quiet",
        "reports/baseline.json",
        old.to_str().unwrap(),
        "--output-dir",
        directory.path().to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("old.json") && stderr.contains("schema_version"),
        "{stderr}"
    );
}
