#!/usr/bin/env bash
# Memory with many queries on a small corpus: `hyde-eval run` with every configuration on
# a synthetic set of 5 facts and 100,000 queries (three hypotheses each), with and
# without the report, printing wall time and peak RSS (GNU time's maximum resident set).
#
# Usage: scripts/bench_memory.sh [QUERIES]   (default: 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
queries="${1:-100000}"
cargo build --release --quiet
binary="${CARGO_TARGET_DIR:-target}/release/hyde-eval"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$binary" dataset synth --facts 5 --queries "$queries" --topics 1 --output "$work/set" > /dev/null
echo "| facts | queries | report | wall (s) | peak RSS (MiB) | results.json (MB) |"
echo "|---:|---:|---|---:|---:|---:|"
for report in no yes; do
  flags=(--no-report)
  [ "$report" = yes ] && flags=(--output-dir "$work/reports")
  /usr/bin/time -f "%e %M" -o "$work/time" "$binary" run --quiet --dataset "$work/set" "${flags[@]}" > /dev/null
  read -r wall rss_kb < "$work/time"
  size=-
  [ "$report" = yes ] && size=$(python3 -c "import os; print(f'{os.path.getsize(\"$work/reports/synth-5/results.json\") / 1e6:.0f}')")
  python3 -c "print(f'| 5 | {$queries:,} | $report | {$wall} | {$rss_kb / 1024:,.0f} | $size |')"
  rm -rf "$work/reports"
done
