#!/usr/bin/env bash
# Regenerates the pictures the README and docs/sweeps-and-reports.md show, from the
# tool's own outputs on the bundled devmem (nothing is drawn by hand):
#   docs/report.png                     the HTML report of `run` with the sweep, as
#                                       scripts/html_check.sh screenshots it in headless
#                                       Chromium (the top of the page, 1280 px wide)
#   docs/report-800.png                 the same at 800 px
#   docs/sweep-heatmap-hyde-3b-hyp.png  `hyde-eval sweep`'s nDCG@10 heatmap of hyde-3b-hyp
#
#   scripts/readme_pictures.sh [HYDE_EVAL_BINARY]   # default: cargo build --release
#
# The page must pass the check (no console messages, no network requests, no sideways
# overflow at 1280 or 800 px), or no picture is replaced. Exit codes: 0 written,
# 1 the check failed, 77 no chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

binary="${1:-}"
if [ -z "$binary" ]; then
  cargo build --release --quiet
  binary="${CARGO_TARGET_DIR:-target}/release/hyde-eval"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$binary" sweep --quiet --output-dir "$work" > /dev/null
"$binary" run --quiet --output-dir "$work" > /dev/null
"$binary" report --quiet "$work/devmem/results.json" \
  --sweep "$work/devmem-sweep/sweep.json" > /dev/null

status=0
scripts/html_check.sh "$work/devmem/report.html" "$work/report.png" || status=$?
if [ "$status" -ne 0 ]; then
  echo "the report failed the headless-Chromium check; no picture replaced" >&2
  exit "$status"
fi
cp "$work/report.png" docs/report.png
cp "$work/report-800.png" docs/report-800.png
cp "$work/devmem-sweep/heatmap-hyde-3b-hyp-ndcg-10.png" docs/sweep-heatmap-hyde-3b-hyp.png
echo "wrote docs/report.png, docs/report-800.png and docs/sweep-heatmap-hyde-3b-hyp.png"
