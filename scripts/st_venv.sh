# Sourced by the local-model scripts: makes (once) a throwaway venv with
# sentence-transformers and torch from PyPI, pinned to the versions that produced
# fixtures/local-model/reference.json, and fetches the model hyde-eval uses.
# Sets ST_PYTHON (the venv's python) and MODEL_DIR (the unpacked model).
cache="${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}"
st_venv="$cache/st-venv"
ST_PYTHON="$st_venv/bin/python"
if ! "$ST_PYTHON" -c "import sentence_transformers, torch" 2>/dev/null; then
  rm -rf "$st_venv"
  python3 -m venv "$st_venv"
  "$st_venv/bin/pip" install --quiet --disable-pip-version-check \
    sentence-transformers==6.2.0 transformers==5.23.0 torch==2.15.0
fi
MODEL_DIR="$cache/models/all-minilm-l6-v2"
cargo run --release --quiet -- models fetch all-minilm-l6-v2 >&2
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
