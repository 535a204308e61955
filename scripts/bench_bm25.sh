#!/usr/bin/env bash
# BM25 on BEIR SciFact, end to end: hyde-eval vs bm25s, same machine, same run,
# alternating, best of REPEATS (default 5) process wall times, and both runs' nDCG@10
# scored by the same evaluator. bm25s is configured as hyde-eval's bm25 is by default
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
import json, subprocess, sys, time
binary, scifact, repeats, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
python = sys.executable

def timed(command):
    started = time.perf_counter()
    output = subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, output.stdout

hyde = [binary, "run", "--quiet", "--dataset", scifact, "--dataset-format", "beir",
        "--configurations", "bm25", "--depth", "1000", "--k", "10", "--metrics", "ndcg@10",
        "--output-dir", work, "--run-name", "hyde"]
bm25s = [python, "scripts/bench/bm25s_scifact.py", scifact, "src/text/stopwords.rs", f"{work}/bm25s.run"]
hyde_times, bm25s_times, stages = [], [], None
for _ in range(repeats):
    seconds, _ = timed(hyde)
    hyde_times.append(seconds)
    seconds, out = timed(bm25s)
    bm25s_times.append(seconds)
    stages = json.loads(out.strip().splitlines()[-1])

def ndcg(run):
    out = subprocess.run([binary, "eval", "--quiet", "-m", "ndcg_cut.10", "--format", "json",
                          f"{work}/hyde/qrels.trec", run], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["runs"][0]["all"]["ndcg_cut_10"]

hyde_ndcg = ndcg(f"{work}/hyde/runs/bm25.run")
bm25s_ndcg = ndcg(f"{work}/bm25s.run")
timings = json.load(open(f"{work}/hyde/timings.json"))["stages_ms"]
best_hyde, best_bm25s = min(hyde_times), min(bm25s_times)
print(f"BM25 on SciFact ({stages['documents']} documents, {stages['queries']} queries, top 1000), best of {repeats}:")
print(f"| tool | end to end (s) | index (s) | retrieve (s) | nDCG@10 |")
print(f"|---|---:|---:|---:|---:|")
print(f"| hyde-eval run | {best_hyde:.3f} | {timings['index_ms'] / 1000:.3f} | {timings['retrieve_ms'] / 1000:.3f} | {hyde_ndcg:.4f} |")
print(f"| bm25s {__import__('bm25s').__version__} | {best_bm25s:.3f} | {stages['index_s']:.3f} | {stages['retrieve_s']:.3f} | {bm25s_ndcg:.4f} |")
print(f"| **ratio bm25s / hyde-eval** | **{best_bm25s / best_hyde:.2f}x** | | | difference {hyde_ndcg - bm25s_ndcg:+.4f} |")
if abs(hyde_ndcg - bm25s_ndcg) > 0.005:
    sys.exit(f"nDCG@10 differs by more than 0.005: hyde-eval {hyde_ndcg:.4f}, bm25s {bm25s_ndcg:.4f}")
PY
