#!/usr/bin/env python3
"""Times `hyde-eval eval` and trec_eval (optionally pytrec_eval) end to end on one
synthetic run (5,000 queries x 1,000 results) and prints a Markdown table with the ratios.

Usage: bench_eval.py WORKDIR HYDE_EVAL TREC_EVAL [REPEATS]
Run through scripts/bench_eval.sh, which provides the binaries and the venv.

End to end means from the files on disk to the printed averages: each tool reads the
qrels and the run, sorts, scores and prints. Two workloads: five common measures (map,
ndcg_cut.10, P.5, recall.100, recip_rank), and hyde-eval's whole all_trec set given as
-m flags (trec_eval is also timed with its own -m all_trec, which computes a few more
measures). The run lists each query's results in no particular order; a third workload
times the five measures on the same run ranked (each query's results listed by score
descending, docno descending on ties: trec_eval's order, as retrieval systems write
runs). Each tool's numbers are checked against trec_eval's first. Then every command
runs once to warm the page cache, and REPEATS times (default 5) in alternation, one
command after the other; each timing is the median of its runs. Wall-clock and CPU time
(user + system of the whole process) are both reported, since a busy machine stretches
wall-clock times. Set BENCH_PYTREC=1 to also time pytrec_eval (same measures, files read
in Python as its users do).
"""
import itertools
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES, RESULTS, JUDGED = 5000, 1000, 100
# Five common measures: the workload of the headline figure.
FIVE = ["map", "ndcg_cut.10", "P.5", "recall.100", "recip_rank"]
# hyde-eval's all_trec set.
MEASURES = ["num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "map",
            "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "recall", "11pt_avg",
            "ndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
            "set_relative_P", "set_recall", "set_map", "set_F"]


def generate(workdir):
    """Deterministic synthetic qrels and run; 10% of judged docs are not retrieved."""
    run, qrels = workdir / "run", workdir / "qrels"
    if run.is_file() and qrels.is_file():
        return qrels, run
    rng = random.Random(7)
    with open(run, "w") as run_file, open(qrels, "w") as qrels_file:
        for query in range(QUERIES):
            qid = f"q{query:04d}"
            docs = rng.sample(range(200_000), RESULTS + RESULTS // 10)
            for rank, doc in enumerate(docs[:RESULTS]):
                run_file.write(f"{qid} Q0 doc{doc:06d} {rank + 1} {rng.random() * 20:.6f} synthetic\n")
            for doc in docs[::11][:JUDGED]:
                qrels_file.write(f"{qid} 0 doc{doc:06d} {rng.choice((0, 0, 1, 1, 2, 3))}\n")
    return qrels, run


def ranked(workdir, run):
    """The run with each query's results in trec_eval's order, ranks renumbered; read
    and written a query at a time."""
    ranked_run = workdir / "run.ranked"
    if ranked_run.is_file():
        return ranked_run
    partial = ranked_run.with_suffix(".partial")
    with open(run) as lines, open(partial, "w") as out:
        fields = (line.split() for line in lines)
        for _, results in itertools.groupby(fields, key=lambda result: result[0]):
            results = sorted(results, key=lambda result: result[2], reverse=True)
            results.sort(key=lambda result: float(result[4]), reverse=True)
            for rank, (query, _, doc, _, score, tag) in enumerate(results):
                out.write(f"{query} Q0 {doc} {rank + 1} {score} {tag}\n")
    partial.rename(ranked_run)
    return ranked_run


def pytrec_eval_end_to_end(qrels_path, run_path, measures):
    import pytrec_eval
    qrels, run = {}, {}
    with open(qrels_path) as lines:
        for line in lines:
            query, _, doc, grade = line.split()
            qrels.setdefault(query, {})[doc] = int(grade)
    with open(run_path) as lines:
        for line in lines:
            query, _, doc, _, score, _ = line.split()[:6]
            run.setdefault(query, {})[doc] = float(score)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures) - {"num_q"})
    per_query = evaluator.evaluate(run)
    names = sorted(next(iter(per_query.values())))
    return {name: statistics.fmean(values[name] for values in per_query.values()) for name in names}


def run_once(command):
    """Wall-clock seconds and CPU seconds (user + system) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def timed_alternating(commands, repeats):
    """Median wall-clock and CPU seconds of each command, run in alternation after one
    warm-up run each."""
    for command in commands:
        run_once(command)
    times = [[] for _ in commands]
    for _ in range(repeats):
        for command, runs in zip(commands, times):
            runs.append(run_once(command))
    return [(statistics.median(wall for wall, _ in runs), statistics.median(cpu for _, cpu in runs))
            for runs in times]


def check_agreement(hyde_eval, trec_eval, flags, qrels, run):
    """Exits unless hyde-eval prints trec_eval's lines; returns how many."""
    ours = subprocess.run([hyde_eval, "eval", *flags, str(qrels), str(run)],
                          check=True, capture_output=True, text=True).stdout.splitlines()
    theirs = subprocess.run([trec_eval, *flags, str(qrels), str(run)],
                            check=True, capture_output=True, text=True).stdout.splitlines()
    # trec_eval before 9.0.8 (such as the 9.0.4 binary that Anserini ships) rounded the
    # recall levels of iprec_at_recall and 11pt_avg differently (cast after + 0.9
    # instead of lround); hyde-eval follows current trec_eval, whose own test outputs
    # tests/eval_command.rs reproduces. Those two measures are timed, not compared.
    version_dependent = ("iprec_at_recall", "11pt_avg")
    disagreements = [line for line in ours
                     if line not in set(theirs) and not line.startswith(version_dependent)]
    if len(ours) != len(theirs):
        disagreements.append(f"{len(ours)} lines vs trec_eval's {len(theirs)}")
    if disagreements:
        sys.exit(f"hyde-eval and trec_eval disagree: {disagreements[:5]}")
    return len(ours)


def main():
    workdir, hyde_eval, trec_eval = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    workdir.mkdir(parents=True, exist_ok=True)
    qrels, run = generate(workdir)
    files = [str(qrels), str(run)]
    ranked_files = [str(qrels), str(ranked(workdir, run))]
    workloads = []
    for label, measures, files in (("5 measures", FIVE, files), ("all_trec", MEASURES, files),
                                   ("5 measures, ranked run", FIVE, ranked_files)):
        flags = [flag for name in measures for flag in ("-m", name)]
        lines = check_agreement(hyde_eval, trec_eval, flags, *files)
        rows = [
            (f"hyde-eval eval ({os.cpu_count()} threads)", [hyde_eval, "eval", *flags, *files]),
            ("hyde-eval eval -j 1", [hyde_eval, "eval", "-j", "1", *flags, *files]),
            ("trec_eval (same measures)", [trec_eval, *flags, *files]),
        ]
        if measures is MEASURES:
            rows.append(("trec_eval -m all_trec", [trec_eval, "-m", "all_trec", *files]))
        if os.environ.get("BENCH_PYTREC") == "1":
            rows.append(("pytrec_eval (same measures, parsing in Python)",
                         [sys.executable, __file__, "--pytrec", *files, *measures]))
        workloads.append((label, lines, rows))
    loads = [os.getloadavg()[0]]
    results = []
    for label, lines, rows in workloads:
        times = timed_alternating([command for _, command in rows], repeats)
        loads.append(os.getloadavg()[0])
        results.append((label, lines, [(name, time) for (name, _), time in zip(rows, times)]))
    size = run.stat().st_size / 1e6
    print(f"synthetic run: {QUERIES} queries x {RESULTS} results ({size:.0f} MB), "
          f"qrels: {QUERIES * JUDGED} judgments; median of {repeats}, tools alternating")
    print()
    print(f"machine: {os.cpu_count()} cores, load average (1 min) "
          f"{min(loads):.1f} to {max(loads):.1f} during the runs")
    print()
    print("| measures | tool | wall s | CPU s | wall / hyde-eval's | CPU / hyde-eval's |")
    print("|---|---|---:|---:|---:|---:|")
    for label, lines, rows in results:
        base_wall, base_cpu = rows[0][1]
        for name, (wall, cpu) in rows:
            print(f"| {label} ({lines} lines agree) | {name} | {wall:.2f} | {cpu:.2f} | "
                  f"{wall / base_wall:.1f}x | {cpu / base_cpu:.1f}x |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--pytrec":
        pytrec_eval_end_to_end(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        main()
