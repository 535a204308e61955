#!/usr/bin/env bash
# BM25 on BEIR SciFact, end to end: hyde-eval vs bm25s, same machine, same run,
# alternating, the median of REPEATS (default 5) whole-process wall times and CPU times
# (user + system), each tool's own stage times, and both runs' nDCG@10 scored by the
# same evaluator. bm25s is configured as hyde-eval's bm25 is by default
# (k1 0.9, b 0.4, Lucene idf, chatcli tokens and stop words, no stemming; see
# scripts/bench/bm25s_scifact.py) and lives in a throwaway venv under
# ~/.cache/hyde-eval/bench-venv.
#
# Usage: scripts/bench_bm25.sh [REPEATS]   (needs ../shared/datasets/scifact)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-5}"
scifact="${HYDE_EVAL_SHARED:-$(cd .. && pwd)/shared}/datasets/scifact"
[ -d "$scifact" ] || { echo "SKIPPED: $scifact not found" >&2; exit 0; }
venv="${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}/bench-venv"
if ! "$venv/bin/python" -c "import bm25s, faiss, numpy" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check bm25s numpy faiss-cpu
fi
cargo build --release --quiet
target="${CARGO_TARGET_DIR:-target}"
binary="$target/release/hyde-eval"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$venv/bin/python" - "$binary" "$scifact" "$repeats" "$work" <<'PY'
import json, os, resource, statistics, subprocess, sys, time
binary, scifact, repeats, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
python = sys.executable

def timed(command):
    """Runs `command`; returns its wall seconds, CPU seconds (user + system) and stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    output = subprocess.run(command, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, output.stdout

hyde = [binary, "run", "--quiet", "--dataset", scifact, "--dataset-format", "beir",
        "--configurations", "bm25", "--depth", "1000", "--k", "10", "--metrics", "ndcg@10",
        "--output-dir", work, "--run-name", "hyde"]
bm25s = [python, "scripts/bench/bm25s_scifact.py", scifact, "src/text/stopwords.rs", f"{work}/bm25s.run"]
hyde_runs, bm25s_runs, hyde_stages, bm25s_stages = [], [], [], []
for _ in range(repeats):
    wall, cpu, _ = timed(hyde)
    hyde_runs.append((wall, cpu))
    hyde_stages.append(json.load(open(f"{work}/hyde/timings.json"))["stages_ms"])
    wall, cpu, out = timed(bm25s)
    bm25s_runs.append((wall, cpu))
    bm25s_stages.append(json.loads(out.strip().splitlines()[-1]))

def ndcg(run):
    out = subprocess.run([binary, "eval", "--quiet", "-m", "ndcg_cut.10", "--format", "json",
                          f"{work}/hyde/qrels.trec", run], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["runs"][0]["all"]["ndcg_cut_10"]

hyde_ndcg = ndcg(f"{work}/hyde/runs/bm25.run")
bm25s_ndcg = ndcg(f"{work}/bm25s.run")
median = statistics.median
hyde_wall, hyde_cpu = (median(run[i] for run in hyde_runs) for i in (0, 1))
bm25s_wall, bm25s_cpu = (median(run[i] for run in bm25s_runs) for i in (0, 1))
hyde_index = median(stage["index_ms"] for stage in hyde_stages) / 1000
hyde_retrieve = median(stage["retrieve_ms"] for stage in hyde_stages) / 1000
bm25s_index = median(stage["index_s"] for stage in bm25s_stages)
bm25s_retrieve = median(stage["retrieve_s"] for stage in bm25s_stages)
documents, queries = bm25s_stages[-1]["documents"], bm25s_stages[-1]["queries"]
load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
print(f"BM25 on SciFact ({documents} documents, {queries} queries, top 1000), median of {repeats}, "
      f"load average {load} at the end:")
print("| tool | end to end wall (s) | end to end CPU (s) | index (s) | retrieve (s) | nDCG@10 |")
print("|---|---:|---:|---:|---:|---:|")
print(f"| hyde-eval run | {hyde_wall:.3f} | {hyde_cpu:.3f} | {hyde_index:.3f} | {hyde_retrieve:.3f} | {hyde_ndcg:.4f} |")
print(f"| bm25s {__import__('bm25s').__version__} | {bm25s_wall:.3f} | {bm25s_cpu:.3f} | {bm25s_index:.3f} | {bm25s_retrieve:.3f} | {bm25s_ndcg:.4f} |")
print(f"| **ratio bm25s / hyde-eval** | **{bm25s_wall / hyde_wall:.2f}x** | **{bm25s_cpu / hyde_cpu:.2f}x** "
      f"| {bm25s_index / hyde_index:.2f}x | {bm25s_retrieve / hyde_retrieve:.2f}x | difference {hyde_ndcg - bm25s_ndcg:+.4f} |")
if abs(hyde_ndcg - bm25s_ndcg) > 0.005:
    sys.exit(f"nDCG@10 differs by more than 0.005: hyde-eval {hyde_ndcg:.4f}, bm25s {bm25s_ndcg:.4f}")
PY
