#!/usr/bin/env bash
# SciFact (BEIR, 5,183 abstracts, 300 test queries) with the local model
# (all-MiniLM-L6-v2) loaded into each search engine, and `dense` run against it beside
# the exact in-process index: nDCG@10 on the engine and in-process, ANN recall@10, load
# throughput (facts/s, embedding cached) and query throughput (queries/s of the engine
# run's retrieve stage, the engine's searches included).
#
#   scripts/bench_engines.sh [SCIFACT_DIR]     default ../shared/datasets/scifact
#
# Starts its own servers on the loopback (PostgreSQL + pgvector from
# scripts/install_pgvector.sh, Chroma from scripts/install_chroma.sh) and stops them at
# the end. The first run embeds the corpus with the local model (a few minutes on two
# cores); later runs read the vectors from hyde-eval's cache.
set -euo pipefail
cd "$(dirname "$0")/.."
scifact="${1:-../shared/datasets/scifact}"
cache="${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}"
[ -f "$scifact/corpus.jsonl" ] || { echo "no BEIR SciFact at $scifact" >&2; exit 2; }
HYDE_EVAL_CACHE="$cache" scripts/install_pgvector.sh >/dev/null
HYDE_EVAL_CACHE="$cache" scripts/install_chroma.sh >/dev/null
cargo build --release --quiet
hyde_eval="${CARGO_TARGET_DIR:-target}/release/hyde-eval"
"$hyde_eval" models fetch all-minilm-l6-v2 >/dev/null

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# PostgreSQL refuses to run as root: as root, it runs in a user namespace as nobody.
pg="$cache/pgvector/pginstall/bin"
as_server() { if [ "$(id -u)" = 0 ]; then unshare --user --map-user=65534 --map-group=65534 -- "$@"; else "$@"; fi; }
as_server "$pg/initdb" -D "$work/pg" -U hyde --auth=trust -E UTF8 --locale=C -N >/dev/null
pg_port="$(free_port)"
as_server "$pg/postgres" -D "$work/pg" -h 127.0.0.1 -p "$pg_port" -k "$work" \
  >"$work/postgres.log" 2>&1 &
pids+=($!)
chroma_port="$(free_port)"
ANONYMIZED_TELEMETRY=False "$cache/chroma-venv/bin/chroma" run --path "$work/chroma" \
  --host 127.0.0.1 --port "$chroma_port" >"$work/chroma.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
  if curl -sf "http://127.0.0.1:$chroma_port/api/v2/heartbeat" >/dev/null &&
    "$pg/pg_isready" -h 127.0.0.1 -p "$pg_port" >/dev/null 2>&1; then
    break
  fi
  sleep 0.1
done

pg_url="postgresql://hyde@127.0.0.1:$pg_port/postgres"
cat >"$work/engines.toml" <<TOML
embedder = "local"
[engines.pgvector-exact]
kind = "pgvector"
url = "$pg_url"
collection = "scifact_exact"
index = "exact"
[engines.pgvector-hnsw]
kind = "pgvector"
url = "$pg_url"
collection = "scifact_hnsw"
index = "hnsw"
ef_search = 40
[engines.chroma]
kind = "chroma"
url = "http://127.0.0.1:$chroma_port"
collection = "scifact"
TOML
common=(--config "$work/engines.toml" --dataset "$scifact" --dataset-format beir)

# The corpus' vectors into the cache once, so the loads below time loading alone.
"$hyde_eval" run --quiet --no-report "${common[@]}" --configurations dense --k 10 >/dev/null

printf '%-16s %9s %10s %10s %10s %10s %9s\n' engine "load s" "facts/s" "nDCG@10" "in-proc" "ANN R@10" "queries/s"
for engine in pgvector-exact pgvector-hnsw chroma; do
  started=$(date +%s.%N)
  "$hyde_eval" engine load --engine "$engine" -q "${common[@]}" >/dev/null
  load_seconds=$(echo "$(date +%s.%N) - $started" | bc)
  "$hyde_eval" run --quiet "${common[@]}" --engine "$engine" --configurations dense --k 10 \
    --output-dir "$work/reports" --run-name "$engine" >/dev/null
  python3 - "$work/reports/$engine" "$engine" "$load_seconds" <<'PY'
import json, sys
directory, engine, load_seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
results = json.load(open(f"{directory}/results.json"))
timings = json.load(open(f"{directory}/timings.json"))
served = results["engine"]["configurations"][0]
ndcg = results["configurations"][0]["macro"]["ndcg@10"]
exact = served["exact_macro"]["ndcg@10"]
recall = served["ann_recall"]["ann_recall@10"]
retrieve_ms = timings["stages_ms"]["retrieve_ms"]
queries = results["dataset"]["queries"]
facts = results["dataset"]["facts"]
print(f"{engine:<16} {load_seconds:9.1f} {facts / load_seconds:10.0f} {ndcg:10.4f} {exact:10.4f} {recall:10.4f} {queries / (retrieve_ms / 1000):9.0f}")
PY
done
