//! hyde-eval's `judged@k` against ir_measures' `Judged@k`: fixtures/judged/reference.json
//! holds ir_measures' values for the run files of `bm25`, `dense` and `hybrid` on
//! datasets/devmem (partial judgments: most retrieved facts are unjudged), written by
//! scripts/judged_reference.py; this test runs the same configurations and compares every
//! per-query value and mean.

mod common;

use serde_json::Value;

#[test]
fn judged_at_k_equals_ir_measures_on_devmem() {
    let work = tempfile::tempdir().unwrap();
    let output = common::hyde_eval(&[
        "run",
        "--configurations",
        "bm25,dense,hybrid",
        "--output-dir",
        work.path().to_str().unwrap(),
        "--run-name",
        "devmem",
        "--quiet",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Value =
        serde_json::from_slice(&std::fs::read(work.path().join("devmem/results.json")).unwrap())
            .unwrap();
    let reference: Value = serde_json::from_slice(
        &std::fs::read(common::repo_path("fixtures/judged/reference.json")).unwrap(),
    )
    .unwrap();
    let mut compared = 0;
    let mut below_one = 0;
    for configuration in results["configurations"].as_array().unwrap() {
        let name = configuration["name"].as_str().unwrap();
        let expected = &reference["configurations"][name];
        for record in configuration["per_query"].as_array().unwrap() {
            let query = record["query"].as_str().unwrap();
            for k in [1, 5, 10] {
                let metric = format!("judged@{k}");
                let want = expected["per_query"][query][&metric].as_f64().unwrap();
                let got = record["metrics"][&metric].as_f64().unwrap();
                assert!(
                    (got - want).abs() < 1e-12,
                    "{name} {query} {metric}: {got} vs ir_measures {want}"
                );
                compared += 1;
                below_one += usize::from(want < 1.0);
            }
        }
        for k in [1, 5, 10] {
            let metric = format!("judged@{k}");
            let want = expected["mean"][&metric].as_f64().unwrap();
            let got = configuration["macro"][&metric].as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-12,
                "{name} mean {metric}: {got} vs {want}"
            );
        }
    }
    assert_eq!(compared, 3 * 90 * 3);
    // The judgments are partial: most values are below 1, so the comparison has teeth.
    assert!(below_one > compared / 2, "{below_one} of {compared}");
}
