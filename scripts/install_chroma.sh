#!/usr/bin/env bash
# Installs the Chroma server (PyPI's chromadb, pinned) into a venv that
# tests/engine_chroma.rs and tests/engine_run.rs start `chroma run` from:
#   ${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}/chroma-venv/bin/chroma
# Idempotent: a venv whose chroma imports at the pinned version is kept (a second run
# takes about a second); a missing or broken one is rebuilt.
set -euo pipefail

version="1.5.9"
cache="${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}"
venv="$cache/chroma-venv"

installed() {
  [ -x "$venv/bin/chroma" ] &&
    "$venv/bin/python" -c "import chromadb, sys; sys.exit(chromadb.__version__ != '$version')" 2>/dev/null
}

if installed; then
  echo "chroma $version already installed in $venv"
  exit 0
fi
rm -rf "$venv"
mkdir -p "$cache"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "chromadb==$version"
if ! installed; then
  echo "chromadb $version did not install a working chroma in $venv" >&2
  exit 1
fi
"$venv/bin/chroma" --help >/dev/null
echo "chroma $version installed in $venv"
