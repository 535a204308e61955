#!/usr/bin/env python3
"""Regenerate fixtures/stats/reference.json: per-query score pairs with the statistics
scipy computes for them, which tests/statistics_reference.rs compares hyde-eval against.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install scipy numpy
    /tmp/venv/bin/python scripts/stats_reference.py > fixtures/stats/reference.json

Pairs: per-query nDCG@10 of two configuration pairs on datasets/devmem (copied from a
results.json so the fixture is self-contained), plus seeded synthetic pairs (small n,
ties, a large shift). Reference values:
- scipy.stats.ttest_rel (two-sided): statistic and p-value (exact; hyde-eval must match
  to 1e-6);
- scipy.stats.permutation_test, paired ("samples"), statistic = mean difference,
  two-sided, 100,000 resamples: a Monte Carlo p-value (hyde-eval must agree within
  Monte Carlo error);
- scipy.stats.bootstrap, percentile method, 95%, 100,000 resamples: intervals of the
  mean of `a` and of the mean difference b - a (within Monte Carlo error).
"""
import json
import sys

import numpy as np
import scipy
from scipy import stats

RESAMPLES = 100_000


def devmem_pairs(path):
    results = json.load(open(path))
    by_name = {c["name"]: c for c in results["configurations"]}

    def scores(name):
        return [q["metrics"]["ndcg@10"] for q in by_name[name]["per_query"]]

    return [
        ("devmem keyword vs blend ndcg@10", scores("keyword"), scores("blend")),
        ("devmem hyde-3b vs hyde-3b-hyp ndcg@10", scores("hyde-3b"), scores("hyde-3b-hyp")),
    ]


def synthetic_pairs():
    rng = np.random.default_rng(20261122)
    a = rng.uniform(0, 1, 15)
    b = np.clip(a + rng.normal(0.05, 0.15, 15), 0, 1)
    ties_a = np.round(rng.uniform(0, 1, 30), 1)
    ties_b = ties_a.copy()
    ties_b[:8] = np.round(np.clip(ties_b[:8] + 0.2, 0, 1), 1)
    shift_a = rng.uniform(0.2, 0.6, 40)
    shift_b = shift_a + rng.uniform(0.1, 0.3, 40)
    return [
        ("synthetic n=15 small shift", a.tolist(), b.tolist()),
        ("synthetic n=30 with ties", ties_a.tolist(), ties_b.tolist()),
        ("synthetic n=40 large shift", shift_a.tolist(), shift_b.tolist()),
    ]


def reference(name, a, b):
    a, b = np.asarray(a), np.asarray(b)
    t = stats.ttest_rel(b, a)
    permutation = stats.permutation_test(
        (b, a), lambda x, y: np.mean(x - y), permutation_type="samples",
        n_resamples=RESAMPLES, alternative="two-sided", random_state=1)
    mean_a = stats.bootstrap((a,), np.mean, method="percentile", n_resamples=RESAMPLES,
                             confidence_level=0.95, random_state=2).confidence_interval
    difference = stats.bootstrap((b - a,), np.mean, method="percentile", n_resamples=RESAMPLES,
                                 confidence_level=0.95, random_state=3).confidence_interval
    return {
        "name": name,
        "a": a.tolist(),
        "b": b.tolist(),
        "t_statistic": float(t.statistic),
        "t_p_value": float(t.pvalue),
        "permutation_p_value": float(permutation.pvalue),
        "bootstrap_mean_a": [float(mean_a.low), float(mean_a.high)],
        "bootstrap_difference": [float(difference.low), float(difference.high)],
    }


def main():
    pairs = devmem_pairs(sys.argv[1] if len(sys.argv) > 1 else "reports/devmem/results.json") + synthetic_pairs()
    document = {
        "generator": f"scripts/stats_reference.py with scipy {scipy.__version__}, numpy {np.__version__}",
        "resamples": RESAMPLES,
        "confidence": 0.95,
        "cases": [reference(*pair) for pair in pairs],
    }
    json.dump(document, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
