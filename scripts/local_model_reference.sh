#!/usr/bin/env bash
# Regenerates fixtures/local-model/reference.json (sentence-transformers' vectors that
# tests/local_model.rs compares the local provider against).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/st_venv.sh
"$ST_PYTHON" scripts/local_model_reference.py "$MODEL_DIR" > fixtures/local-model/reference.json
echo "wrote fixtures/local-model/reference.json" >&2
