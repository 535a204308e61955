#!/usr/bin/env python3
"""Score a hyde-eval report's run files with trec_eval (via pytrec_eval-terrier, which
wraps trec_eval's C code) and check every number equals what `hyde-eval run` wrote to
results.json, to 4 decimals (trec_eval's printed precision).

Usage: trec_eval_check.py reports/devmem

trec_eval -c semantics: queries in qrels.trec but absent from a run score 0 (hyde-eval
writes no lines for a query whose ranking is empty). qrels.trec holds only queries with
at least one relevant fact, the ones hyde-eval averages over.
"""
import json
import sys
from pathlib import Path

import pytrec_eval


def read_qrels(path):
    qrels = {}
    for line in path.read_text().splitlines():
        query, _, doc, grade = line.split()
        qrels.setdefault(query, {})[doc] = int(grade)
    return qrels


def read_run(path):
    run = {}
    for line in path.read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        run.setdefault(query, {})[doc] = float(score)
    return run


def main(report):
    report = Path(report)
    results = json.loads((report / "results.json").read_text())
    settings = results["evaluation"]
    if settings["semantics"] != "trec":
        sys.exit("only trec semantics can be checked against trec_eval")
    level = settings["relevance_level"]
    cutoffs = ",".join(str(k) for k in settings["cutoffs"])
    qrels = read_qrels(report / "qrels.trec")
    measures = {f"P.{cutoffs}", f"recall.{cutoffs}", f"ndcg_cut.{cutoffs}", f"success.{cutoffs}", "recip_rank", "map", "bpref"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level)
    names = {"precision": "P", "recall": "recall", "ndcg": "ndcg_cut", "hit": "success"}
    compared = 0
    for configuration in results["configurations"]:
        run = read_run(report / "runs" / f"{configuration['name']}.run")
        per_query = evaluator.evaluate(run)
        for metric, value in configuration["macro"].items():
            if "@" in metric:
                name, k = metric.split("@")
                if name not in names:
                    continue
                trec_measure = f"{names[name]}_{k}"
            elif metric == "mrr":
                trec_measure = "recip_rank"
            else:
                trec_measure = metric
            total = sum(per_query.get(query, {}).get(trec_measure, 0.0) for query in qrels)
            trec_value = total / len(qrels)
            if f"{trec_value:.4f}" != f"{value:.4f}":
                sys.exit(f"MISMATCH {configuration['name']} {metric}: hyde-eval {value:.4f}, trec_eval {trec_value:.4f}")
            compared += 1
    print(f"trec_eval agrees with hyde-eval on {compared} macro values "
          f"({len(results['configurations'])} configurations, {len(qrels)} queries)")


if __name__ == "__main__":
    main(sys.argv[1])
