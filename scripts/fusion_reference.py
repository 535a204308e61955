#!/usr/bin/env python3
"""Regenerate fixtures/fusion/: three small TREC runs and the fusions ranx computes for
them (reference.json), which tests/fusion_reference.rs compares `hyde-eval fuse` and
hyde_eval::fusion::runs against (scores to 1e-9, rankings with docno tie-break).

    python3 -m venv ~/.cache/hyde-eval/ranx-venv
    ~/.cache/hyde-eval/ranx-venv/bin/pip install ranx
    ~/.cache/hyde-eval/ranx-venv/bin/python scripts/fusion_reference.py fixtures/fusion

The runs hold ties within a run, documents missing from some runs, a run whose scores
for a query are constant, a one-document list (zero standard deviation), negative
scores, and seeded random queries.

ranx ranks a run's documents in the order its dictionary holds them (`rrf`, `bordafuse`
read positions) and sorts by value with an unstable sort. hyde-eval ranks by score
descending, then docno ascending, so the runs are handed to ranx already in that order
(a numba typed dict keeps insertion order and skips ranx's own sort). Fused rankings are
compared as score descending, then docno ascending, on both sides.
"""
import json
import random
from importlib.metadata import version
import sys
from pathlib import Path

from numba import types
from numba.typed import Dict
from ranx import Run, fuse

# (name, ranx norm, ranx method, ranx params, hyde-eval arguments)
CASES = [
    ("rrf", None, "rrf", {}, ["--method", "rrf"]),
    ("rrf-k10", None, "rrf", {"k": 10}, ["--method", "rrf", "--k", "10"]),
    ("combsum-min-max", "min-max", "sum", {}, ["--method", "combsum", "--norm", "min-max"]),
    ("combsum-none", None, "sum", {}, ["--method", "combsum", "--norm", "none"]),
    ("combsum-zmuv", "zmuv", "sum", {}, ["--method", "combsum", "--norm", "zmuv"]),
    ("combmnz-min-max", "min-max", "mnz", {}, ["--method", "combmnz"]),
    ("combmnz-max", "max", "mnz", {}, ["--method", "combmnz", "--norm", "max"]),
    ("combmnz-sum", "sum", "mnz", {}, ["--method", "combmnz", "--norm", "sum"]),
    (
        "wsum-min-max",
        "min-max",
        "wsum",
        {"weights": [0.5, 0.3, 0.2]},
        ["--method", "wsum", "--weights", "0.5,0.3,0.2"],
    ),
    (
        "wsum-zmuv",
        "zmuv",
        "wsum",
        {"weights": [0.2, 0.7, 0.1]},
        ["--method", "wsum", "--norm", "zmuv", "--weights", "0.2,0.7,0.1"],
    ),
    (
        "wsum-max",
        "max",
        "wsum",
        {"weights": [1.0, 2.0, 0.5]},
        ["--method", "wsum", "--norm", "max", "--weights", "1,2,0.5"],
    ),
    (
        "wsum-sum",
        "sum",
        "wsum",
        {"weights": [0.4, 0.4, 0.2]},
        ["--method", "wsum", "--norm", "sum", "--weights", "0.4,0.4,0.2"],
    ),
    ("borda", None, "bordafuse", {}, ["--method", "borda"]),
    ("max-min-max", "min-max", "max", {}, ["--method", "max"]),
    ("max-none", None, "max", {}, ["--method", "max", "--norm", "none"]),
    ("min-min-max", "min-max", "min", {}, ["--method", "min"]),
    ("min-zmuv", "zmuv", "min", {}, ["--method", "min", "--norm", "zmuv"]),
    ("med-min-max", "min-max", "med", {}, ["--method", "med"]),
    ("med-none", None, "med", {}, ["--method", "med", "--norm", "none"]),
    ("anz-min-max", "min-max", "anz", {}, ["--method", "anz"]),
    ("anz-sum", "sum", "anz", {}, ["--method", "anz", "--norm", "sum"]),
    (
        "gmnz-min-max",
        "min-max",
        "gmnz",
        {"gamma": 0.5},
        ["--method", "gmnz", "--gamma", "0.5"],
    ),
    (
        "gmnz-max",
        "max",
        "gmnz",
        {"gamma": 2.0},
        ["--method", "gmnz", "--norm", "max", "--gamma", "2"],
    ),
    ("combsum-rank", "rank", "sum", {}, ["--method", "combsum", "--norm", "rank"]),
    ("combmnz-borda", "borda", "mnz", {}, ["--method", "combmnz", "--norm", "borda"]),
    ("max-borda", "borda", "max", {}, ["--method", "max", "--norm", "borda"]),
    ("anz-rank", "rank", "anz", {}, ["--method", "anz", "--norm", "rank"]),
    ("isr", None, "isr", {}, ["--method", "isr"]),
    ("log_isr", None, "log_isr", {}, ["--method", "log_isr"]),
    ("logn_isr", None, "logn_isr", {}, ["--method", "logn_isr"]),
    (
        "logn_isr-sigma",
        None,
        "logn_isr",
        {"sigma": 0.5},
        ["--method", "logn_isr", "--sigma", "0.5"],
    ),
]

RUN_NAMES = ["a", "b", "c"]


def handmade():
    """Queries written to hit the edge cases, per run."""
    return {
        # Ties inside runs (d2 = d3 in a; d1 = d4 in b), documents missing from runs.
        "q1": (
            [("d1", 3.0), ("d2", 2.0), ("d3", 2.0), ("d5", 0.5)],
            [("d4", 7.0), ("d1", 7.0), ("d2", 1.0)],
            [("d6", 0.9), ("d3", 0.8)],
        ),
        # Constant scores in a; a one-document list in c; negative scores in b.
        "q2": (
            [("x", 0.4), ("y", 0.4), ("z", 0.4)],
            [("y", -1.5), ("w", -2.0), ("x", -3.25)],
            [("z", 12.0)],
        ),
        # Identical runs up to order; zero scores (CombMNZ still counts them).
        "q3": (
            [("m", 1.0), ("n", 0.0), ("o", 0.0)],
            [("o", 1.0), ("n", 0.5), ("m", 0.0)],
            [("n", 2.0), ("m", 2.0), ("o", 0.0)],
        ),
    }


def seeded(rng, query_count=5):
    queries = {}
    for number in range(query_count):
        pool = [f"doc{index:02d}" for index in range(30)]
        lists = []
        for _ in RUN_NAMES:
            size = rng.randint(1, 15)
            documents = rng.sample(pool, size)
            # Scores on a coarse grid so ties happen.
            lists.append([(doc, rng.randint(-20, 40) / 4) for doc in documents])
        queries[f"r{number}"] = tuple(lists)
    return queries


def write_runs(directory, queries):
    for position, name in enumerate(RUN_NAMES):
        lines = []
        for query in sorted(queries):
            # File order deliberately not the rank order: the reader must sort.
            for rank, (doc, score) in enumerate(reversed(queries[query][position]), 1):
                lines.append(f"{query} Q0 {doc} {rank} {score!r} run-{name}")
        (directory / f"{name}.run").write_text("\n".join(lines) + "\n")


def ranx_run(queries, position):
    inner_type = types.DictType(types.unicode_type, types.float64)
    outer = Dict.empty(key_type=types.unicode_type, value_type=inner_type)
    for query in sorted(queries):
        inner = Dict.empty(key_type=types.unicode_type, value_type=types.float64)
        for doc, score in sorted(queries[query][position], key=lambda d: (-d[1], d[0])):
            inner[doc] = score
        outer[query] = inner
    run = Run()
    run.run = outer
    run.sorted = True
    run.name = RUN_NAMES[position]
    return run


def main():
    directory = Path(sys.argv[1] if len(sys.argv) > 1 else "fixtures/fusion")
    directory.mkdir(parents=True, exist_ok=True)
    queries = handmade()
    queries.update(seeded(random.Random(20261126)))
    write_runs(directory, queries)
    cases = []
    for name, norm, method, params, arguments in CASES:
        runs = [ranx_run(queries, position) for position in range(len(RUN_NAMES))]
        fused = fuse(runs, norm=norm, method=method, params=params)
        rankings = {}
        for query in sorted(queries):
            scores = dict(fused.run[query])
            rankings[query] = [
                [doc, scores[doc]] for doc in sorted(scores, key=lambda d: (-scores[d], d))
            ]
        cases.append({"name": name, "arguments": arguments, "rankings": rankings})
    reference = {
        "generator": f"scripts/fusion_reference.py, ranx {version('ranx')}",
        "runs": [f"{name}.run" for name in RUN_NAMES],
        "cases": cases,
    }
    (directory / "reference.json").write_text(json.dumps(reference, indent=1) + "\n")


if __name__ == "__main__":
    main()
