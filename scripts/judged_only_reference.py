#!/usr/bin/env python3
"""trec_eval's -J (judged documents only), as trec_eval's C code computes it
(pytrec_eval-terrier's judged_docs_only_flag), for hyde-eval's `eval -J`.

Usage:
  judged_only_reference.py DIR
      writes DIR/qrels and DIR/run (a small seeded collection with graded, zero and
      negative judgments, results the qrels do not list, and tied scores) and
      DIR/reference.json: every per-query value of trec_eval's all_trec measures, with
      and without -J, at relevance levels 1 and 2 (tests/eval_command.rs holds `eval`
      to it)
  judged_only_reference.py DIR --check
      recomputes DIR/reference.json from DIR's qrels and run and fails unless the file
      holds exactly that
  judged_only_reference.py --compare QRELS RUN EVAL_JSON [--level N]
      checks every per-query value of hyde-eval's
      `eval -J -q -m all_trec -l N --format json QRELS RUN` (in EVAL_JSON) against
      trec_eval's -J, to 1e-9

Scores are multiples of 1/4, so that trec_eval's float and double readings of them
agree and ties are exact; trec_eval breaks them by docno, descending.
"""
import json
import random
import sys
from pathlib import Path

import pytrec_eval

# trec_eval prints these averaged only (geometric means), or as text.
SKIPPED = {"gm_map", "gm_bpref", "relstring", "runid", "num_q"}
# pytrec_eval-terrier's trec_eval predates the rounding fix of the recall levels that
# hyde-eval follows (docs/performance.md); -J does not touch it.
SKIPPED_PREFIXES = ("iprec_at_recall", "11pt_avg")
TOLERANCE = 1e-9


def read_qrels(path):
    qrels = {}
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        query, _, doc, grade = line.split()
        qrels.setdefault(query, {})[doc] = int(grade)
    return qrels


def read_run(path):
    run = {}
    for line in Path(path).read_text().splitlines():
        if not line.strip():
            continue
        query, _, doc, _, score, _ = line.split()
        run.setdefault(query, {})[doc] = float(score)
    return run


def evaluate(qrels, run, level, judged_only):
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"all_trec"}, relevance_level=level, judged_docs_only_flag=judged_only
    )
    return {
        query: {
            measure: value
            for measure, value in sorted(values.items())
            if measure not in SKIPPED and not measure.startswith(SKIPPED_PREFIXES)
        }
        for query, values in sorted(evaluator.evaluate(run).items())
    }


def write_collection(directory):
    """Five judged queries of 30 results each, one run query without judgments and one
    judged query without results."""
    rng = random.Random(41)
    qrels_lines, run_lines = [], []
    for query in range(1, 7):
        documents = [f"d{query}-{n:02d}" for n in range(60)]
        if query != 6:
            for document in rng.sample(documents, 24):
                grade = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3])
                qrels_lines.append(f"q{query} 0 {document} {grade}")
        if query != 5:
            for rank, document in enumerate(rng.sample(documents, 30), start=1):
                score = rng.randrange(0, 40) / 4
                run_lines.append(f"q{query} Q0 {document} {rank} {score} seeded")
    qrels_lines.append("q7 0 d7-00 1")
    (directory / "qrels").write_text("\n".join(sorted(qrels_lines)) + "\n")
    (directory / "run").write_text("\n".join(run_lines) + "\n")


def reference(directory):
    qrels = read_qrels(directory / "qrels")
    run = read_run(directory / "run")
    cases = []
    for level in (1, 2):
        for judged_only in (False, True):
            cases.append(
                {
                    "relevance_level": level,
                    "judged_only": judged_only,
                    "per_query": evaluate(qrels, run, level, judged_only),
                }
            )
    return {
        "generator": "scripts/judged_only_reference.py (pytrec_eval-terrier "
        + pytrec_eval.__version__
        + ")",
        "cases": cases,
    }


def compare(qrels_path, run_path, eval_json, level):
    expected = evaluate(read_qrels(qrels_path), read_run(run_path), level, True)
    document = json.loads(Path(eval_json).read_text())
    ours = document["runs"][0]["per_query"]
    compared = 0
    for query, values in expected.items():
        for measure, value in values.items():
            if measure not in ours[query]:
                continue
            if abs(ours[query][measure] - value) > TOLERANCE:
                sys.exit(
                    f"MISMATCH {run_path} query {query} {measure}: hyde-eval -J "
                    f"{ours[query][measure]}, trec_eval -J {value}"
                )
            compared += 1
    if compared == 0:
        sys.exit(f"{eval_json}: no value compared")
    print(f"trec_eval -J agrees with hyde-eval eval -J on {compared} per-query values of {run_path}")


def main(arguments):
    if arguments[:1] == ["--compare"]:
        level = int(arguments[5]) if arguments[4:5] == ["--level"] else 1
        compare(arguments[1], arguments[2], arguments[3], level)
        return
    directory = Path(arguments[0])
    if arguments[1:] == ["--check"]:
        computed = json.dumps(reference(directory), indent=1, sort_keys=True) + "\n"
        if computed != (directory / "reference.json").read_text():
            sys.exit(f"{directory}/reference.json is not what trec_eval -J computes; rerun {sys.argv[0]} {directory}")
        print(f"{directory}/reference.json: trec_eval -J computes it exactly")
        return
    directory.mkdir(parents=True, exist_ok=True)
    write_collection(directory)
    (directory / "reference.json").write_text(
        json.dumps(reference(directory), indent=1, sort_keys=True) + "\n"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
