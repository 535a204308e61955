#!/usr/bin/env python3
"""Regenerate fixtures/compare/: qrels and three TREC runs of 20 queries, and what ranx's
`compare` and an exact enumeration make of them (reference.json), which
tests/compare_reference.rs holds `hyde-eval compare --qrels` to.

    python3 -m venv ~/.cache/hyde-eval/ranx-venv
    ~/.cache/hyde-eval/ranx-venv/bin/pip install ranx==0.3.21 numba==0.68.1 numpy==2.4.6
    ~/.cache/hyde-eval/ranx-venv/bin/python scripts/compare_reference.py fixtures/compare

What is recorded, and where ranx is right:
- ranx's macro scores and its paired Student t-test p-values (scipy's `ttest_rel`) for
  every pair of runs and metric, and the superscripts of ranx's table at max_p = ALPHA
  (no correction). Where the two runs' per-query values are identical scipy returns NaN
  (recorded as null): the right p is 1 there, and no run beats the other.
- The superscripts after a Holm correction over all the table's tests, computed here from
  ranx's p-values (ranx corrects nothing).
- For the randomization test, ranx's `fisher` is a Monte Carlo estimate (n_permutations
  random permutations in numba threads, p = hits / n, which can be 0) and not
  reproducible across thread counts, so it is not the reference: the exact p, from all
  2^m sign patterns of the m non-zero per-query differences, is.

The runs: `a` good, `c` a copy of `a` reranked on a few queries (close to it), `b`
weaker. Scores are distinct within a query, so every ranking is unambiguous.
"""
import itertools
import json
import random
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
from ranx import Qrels, Run, compare

ALPHA = 0.05
RUN_NAMES = ["a", "b", "c"]
QUERIES = [f"q{number:02d}" for number in range(1, 21)]
DOCUMENTS = [f"d{number:02d}" for number in range(1, 41)]
# hyde-eval's metric name -> ranx's.
METRICS = {
    "ndcg@10": "ndcg@10",
    "map": "map",
    "mrr": "mrr",
    "precision@5": "precision@5",
    "recall@10": "recall@10",
}
SUPERSCRIPTS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ"


def judgments(rng):
    """Per query: 3 to 7 relevant documents graded 1 or 2, and 5 judged non-relevant."""
    qrels = {}
    for query in QUERIES:
        documents = rng.sample(DOCUMENTS, 12)
        relevant = rng.randint(3, 7)
        qrels[query] = {
            doc: (rng.choice([1, 2]) if index < relevant else 0)
            for index, doc in enumerate(documents)
        }
    return qrels


def ranking(rng, grades, skill):
    """30 documents scored by grade x skill plus noise, distinct scores."""
    documents = rng.sample(DOCUMENTS, 30)
    for doc, grade in grades.items():
        if grade > 0 and doc not in documents and rng.random() < 0.8:
            documents[rng.randrange(30)] = doc
    documents = list(dict.fromkeys(documents))
    scored = {}
    for position, doc in enumerate(documents):
        signal = skill * grades.get(doc, 0)
        scored[doc] = round(signal + rng.random() * 2.0, 4) + position * 1e-6
    return scored


def runs_for(rng, qrels):
    a = {query: ranking(rng, qrels[query], 1.6) for query in QUERIES}
    b = {query: ranking(rng, qrels[query], 0.6) for query in QUERIES}
    # c: a, with the scores of a few queries' top documents shuffled.
    c = {}
    for query in QUERIES:
        scores = dict(a[query])
        if rng.random() < 0.45:
            top = sorted(scores, key=lambda d: -scores[d])[:6]
            values = [scores[d] for d in top]
            rng.shuffle(values)
            scores.update(zip(top, values))
        c[query] = scores
    return {"a": a, "b": b, "c": c}


def write(directory, qrels, runs):
    lines = [f"{q} 0 {doc} {grade}" for q in QUERIES for doc, grade in sorted(qrels[q].items())]
    (directory / "qrels.trec").write_text("\n".join(lines) + "\n")
    for name, run in runs.items():
        lines = []
        for query in QUERIES:
            ranked = sorted(run[query].items(), key=lambda item: (-item[1], item[0]))
            for rank, (doc, score) in enumerate(ranked, 1):
                lines.append(f"{query} Q0 {doc} {rank} {score:.6f} {name}")
        (directory / f"{name}.run").write_text("\n".join(lines) + "\n")


def exact_randomization(differences):
    """Two-sided exact p of the sign-flip test on the sum, over the non-zero differences."""
    non_zero = np.array([d for d in differences if d != 0.0])
    observed = abs(float(np.sum(differences)))
    m = len(non_zero)
    if m == 0:
        return 1.0, 0
    signs = 1 - 2 * ((np.arange(2**m)[:, None] >> np.arange(m)) & 1)
    totals = np.abs(signs @ non_zero)
    return float(np.mean(totals >= observed - 1e-9)), m


def holm(p_values):
    order = sorted(range(len(p_values)), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def main():
    directory = Path(sys.argv[1] if len(sys.argv) > 1 else "fixtures/compare")
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261203)
    qrels = judgments(rng)
    runs = runs_for(rng, qrels)
    write(directory, qrels, runs)

    ranx_qrels = Qrels.from_file(str(directory / "qrels.trec"), kind="trec")
    ranx_runs = []
    for name in RUN_NAMES:
        run = Run.from_file(str(directory / f"{name}.run"), kind="trec")
        run.name = name
        ranx_runs.append(run)
    report = compare(
        ranx_qrels,
        ranx_runs,
        metrics=list(METRICS.values()),
        stat_test="student",
        max_p=ALPHA,
    )
    ours = {ranx: ours for ours, ranx in METRICS.items()}
    scores = {
        name: {ours[m]: report.results[name][m] for m in METRICS.values()} for name in RUN_NAMES
    }
    per_query = {}
    for run in ranx_runs:
        from ranx import evaluate

        values = evaluate(ranx_qrels, run, list(METRICS.values()), return_mean=False)
        per_query[run.name] = {ours[m]: np.asarray(values[m]) for m in METRICS.values()}

    pairs = []
    for first, second in itertools.combinations(RUN_NAMES, 2):
        for metric in METRICS:
            p_value = float(report.comparisons[first, second][METRICS[metric]]["p_value"])
            differences = per_query[second][metric] - per_query[first][metric]
            exact, non_zero = exact_randomization(list(differences))
            pairs.append(
                {
                    "reference_run": first,
                    "candidate_run": second,
                    "metric": metric,
                    "t_test_p_value": None if np.isnan(p_value) else p_value,
                    "exact_randomization_p_value": exact,
                    "non_zero_differences": non_zero,
                }
            )
    # The level is never within rounding of a p-value: ranx's `p <= max_p` and
    # hyde-eval's `p < alpha` then agree.
    t_p = [1.0 if pair["t_test_p_value"] is None else pair["t_test_p_value"] for pair in pairs]
    for p in t_p + holm(t_p):
        assert abs(p - ALPHA) > 1e-6, p

    def superscripts(adjusted):
        table = {name: {metric: "" for metric in METRICS} for name in RUN_NAMES}
        for pair, p in zip(pairs, adjusted):
            if p >= ALPHA:
                continue
            first, second, metric = pair["reference_run"], pair["candidate_run"], pair["metric"]
            delta = scores[second][metric] - scores[first][metric]
            winner, loser = (second, first) if delta > 0 else (first, second)
            table[winner][metric] += loser
        return {
            name: {metric: "".join(sorted(keys)) for metric, keys in row.items()}
            for name, row in table.items()
        }

    ranx_superscripts = {
        name: {
            ours[m]: "".join(
                RUN_NAMES[SUPERSCRIPTS.index(character)]
                for character in report.get_superscript_for_table(name, m)
            )
            for m in METRICS.values()
        }
        for name in RUN_NAMES
    }
    # ranx's own table and the same rule applied here agree.
    assert ranx_superscripts == superscripts(t_p), (ranx_superscripts, superscripts(t_p))
    reference = {
        "generator": f"scripts/compare_reference.py, ranx {version('ranx')}, "
        f"scipy {version('scipy')}, numpy {version('numpy')}",
        "alpha": ALPHA,
        "runs": RUN_NAMES,
        "metrics": list(METRICS),
        "scores": scores,
        "pairs": pairs,
        "superscripts": {"none": ranx_superscripts, "holm": superscripts(holm(t_p))},
        "ranx_table": report.to_table(),
    }
    (directory / "reference.json").write_text(
        json.dumps(reference, indent=1, ensure_ascii=False) + "\n"
    )


if __name__ == "__main__":
    main()
