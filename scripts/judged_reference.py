#!/usr/bin/env python3
"""Regenerate fixtures/judged/reference.json: ir_measures' Judged@k of hyde-eval's run
files on datasets/devmem, whose judgments are partial (most retrieved facts are
unjudged), for tests/judged_reference.rs to compare hyde-eval's judged@k with.

    python3 -m venv ~/.cache/hyde-eval/irm-venv
    ~/.cache/hyde-eval/irm-venv/bin/pip install ir-measures
    cargo run --release -- run --configurations bm25,dense,hybrid --output-dir /tmp/judged --run-name devmem
    ~/.cache/hyde-eval/irm-venv/bin/python scripts/judged_reference.py /tmp/judged/devmem \
        > fixtures/judged/reference.json

With --check, it instead compares the report's results.json with ir_measures and fails
on any difference above 1e-12 (a cross-check for CI).

ir_measures' Judged@k divides by min(k, returned) and reads the run file's scores
(ties by document id); queries are those of the run that have judgments.
"""
import json
import sys
from pathlib import Path

import ir_measures
from ir_measures import Judged

CUTOFFS = (1, 5, 10)


def reference(report):
    qrels = list(ir_measures.read_trec_qrels(str(report / "qrels.trec")))
    measures = [Judged @ k for k in CUTOFFS]
    configurations = {}
    for run_file in sorted((report / "runs").glob("*.run")):
        run = list(ir_measures.read_trec_run(str(run_file)))
        per_query = {}
        for metric in ir_measures.iter_calc(measures, qrels, run):
            per_query.setdefault(metric.query_id, {})[f"judged@{metric.measure['cutoff']}"] = metric.value
        aggregate = ir_measures.calc_aggregate(measures, qrels, run)
        configurations[run_file.stem] = {
            "mean": {f"judged@{m['cutoff']}": value for m, value in aggregate.items()},
            "per_query": dict(sorted(per_query.items())),
        }
    return {
        "tool": f"ir_measures {ir_measures.__version__}",
        "measure": "Judged@k",
        "dataset": "datasets/devmem",
        "configurations": configurations,
    }


def check(report, expected):
    results = json.load(open(report / "results.json"))
    failures = 0
    for configuration in results["configurations"]:
        wanted = expected["configurations"][configuration["name"]]
        for record in configuration["per_query"]:
            for name, value in wanted["per_query"][record["query"]].items():
                got = record["metrics"][name]
                if abs(got - value) > 1e-12:
                    failures += 1
                    print(f"{configuration['name']} {record['query']} {name}: hyde-eval {got}, ir_measures {value}")
        for name, value in wanted["mean"].items():
            got = configuration["macro"][name]
            if abs(got - value) > 1e-12:
                failures += 1
                print(f"{configuration['name']} mean {name}: hyde-eval {got}, ir_measures {value}")
    if failures:
        sys.exit(f"{failures} judged@k values differ from ir_measures")
    print(f"judged@k equals ir_measures' Judged@k for {len(results['configurations'])} configurations")


if __name__ == "__main__":
    report = Path(sys.argv[1])
    expected = reference(report)
    if "--check" in sys.argv[2:]:
        check(report, expected)
    else:
        json.dump(expected, sys.stdout, indent=1)
        print()
