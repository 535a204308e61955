#!/usr/bin/env bash
# Exact dense top-1000 search: hyde-eval's FlatIndex::search_batch vs faiss-cpu's
# IndexFlatIP, on the same seeded random unit vectors, in one run: REPEATS (default 3)
# rounds, each a hyde-eval process searching 3 times and 3 faiss searches in the
# script's process, the best search of each tool counted (so both are timed warm);
# 300 queries x 5,183 facts (SciFact's shape) and 1,000 queries x 200,000 facts, 384
# dimensions. Prints seconds, queries/s and the throughput ratio,
# and how many of faiss's top-1000 ids hyde-eval also returns. faiss-cpu lives in a
# throwaway venv under ~/.cache/hyde-eval/bench-venv.
#
# Usage: scripts/bench_dense.sh [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-3}"
venv="${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}/bench-venv"
if ! "$venv/bin/python" -c "import bm25s, faiss, numpy" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check bm25s numpy faiss-cpu
fi
cargo bench --bench dense --no-run --quiet 2>/dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$venv/bin/python" - "$repeats" "$work" <<'PY'
import json, subprocess, sys, time
import faiss
import numpy as np

repeats, work = int(sys.argv[1]), sys.argv[2]
dimension, top_k = 384, 1000
print(f"| case | tool | search (s) | queries/s | ratio hyde-eval / faiss | top-{top_k} ids shared |")
print("|---|---|---:|---:|---:|---:|")
for queries_n, facts_n in [(300, 5183), (1000, 200_000)]:
    rng = np.random.default_rng(42)
    facts = rng.standard_normal((facts_n, dimension), dtype=np.float32)
    queries = rng.standard_normal((queries_n, dimension), dtype=np.float32)
    facts /= np.linalg.norm(facts, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    facts.tofile(f"{work}/facts.f32")
    queries.tofile(f"{work}/queries.f32")
    index = faiss.IndexFlatIP(dimension)
    index.add(facts)
    hyde_best, faiss_best = float("inf"), float("inf")
    for _ in range(repeats):
        out = subprocess.run(
            ["cargo", "bench", "--quiet", "--bench", "dense", "--", "--facts", f"{work}/facts.f32",
             "--queries", f"{work}/queries.f32", "--dimension", str(dimension), "--top-k", str(top_k),
             "--repeats", "3", "--ids", f"{work}/ids.u32"],
            check=True, capture_output=True, text=True).stdout
        hyde_best = min(hyde_best, json.loads(out.strip().splitlines()[-1])["search_s"])
        for _ in range(3):
            started = time.perf_counter()
            _, faiss_ids = index.search(queries, top_k)
            faiss_best = min(faiss_best, time.perf_counter() - started)
    hyde_ids = np.fromfile(f"{work}/ids.u32", dtype=np.int32).reshape(queries_n, top_k)
    shared = np.mean([len(set(a) & set(b)) / top_k for a, b in zip(hyde_ids, faiss_ids)])
    case = f"{queries_n:,} x {facts_n:,}"
    print(f"| {case} | hyde-eval | {hyde_best:.3f} | {queries_n / hyde_best:,.0f} | **{faiss_best / hyde_best:.2f}x** | {shared:.4f} |")
    print(f"| {case} | faiss {faiss.__version__} IndexFlatIP ({faiss.omp_get_max_threads()} threads) | {faiss_best:.3f} | {queries_n / faiss_best:,.0f} | | |")
PY
