#!/usr/bin/env bash
# Embedding throughput on BEIR SciFact: hyde-eval's local provider (release build)
# against sentence-transformers (torch CPU), same model and machine, in one run.
# Usage: scripts/local_model_bench.sh [REPEATS]   (needs ../shared/datasets/scifact)
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${HYDE_EVAL_SHARED:-$(cd .. && pwd)/shared}"
scifact="$shared/datasets/scifact"
[ -d "$scifact" ] || { echo "no $scifact (set HYDE_EVAL_SHARED to the shared/ folder)" >&2; exit 2; }
cargo build --release --quiet
source scripts/st_venv.sh
binary="${CARGO_TARGET_DIR:-target}/release/hyde-eval"
"$ST_PYTHON" scripts/local_model_bench.py "$binary" "$MODEL_DIR" "$scifact" "${1:-1}"
