#!/usr/bin/env bash
# How the whole pipeline's cost grows: `hyde-eval run` with every configuration and the
# hash provider (384 dimensions) on seeded synthetic datasets (`hyde-eval dataset synth`),
# printing wall time, CPU time (user + system, steadier than wall time when other work
# shares the cores), peak RSS and the raw fact-vector bytes per size.
#
# Usage: scripts/bench_scale.sh [FACTS:QUERIES ...]   (default: 10000:1000 100000:1000)
# docs/performance.md's table runs 100000:1000 and 1000000:1000.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000:1000 100000:1000)
cargo build --release --quiet
binary="${CARGO_TARGET_DIR:-target}/release/hyde-eval"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "| facts | queries | wall (s) | CPU (s) | peak RSS (MiB) | fact vectors (MiB) | RSS / vectors |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for size in "${sizes[@]}"; do
  facts="${size%%:*}"
  queries="${size##*:}"
  "$binary" dataset synth --facts "$facts" --queries "$queries" --seed 1 --output "$work/synth" > /dev/null
  /usr/bin/time -f "%e %M %U %S" -o "$work/time" "$binary" run --quiet --dataset "$work/synth" \
    --output-dir "$work/reports" > /dev/null
  read -r wall rss_kb user system < "$work/time"
  # GNU time's %M is in KiB (1,024 bytes); the ratio compares bytes with bytes.
  python3 -c "print(f'| {$facts:,} | {$queries:,} | {$wall} | {$user + $system:.1f} | {$rss_kb / 1024:,.0f} | {$facts * 384 * 4 / 2**20:,.1f} | {$rss_kb * 1024 / ($facts * 384 * 4):.2f} |')"
  rm -rf "$work/synth" "$work/reports"
done
