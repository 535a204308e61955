#!/usr/bin/env bash
# Fuzzes every parser hyde-eval reads user files with (fuzz/fuzz_targets/), each for
# SECONDS (default 30), with libFuzzer through cargo-fuzz.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 3600 native_dataset
#
# Each target starts from its committed seeds (fuzz/seeds/TARGET, stable) plus the corpus
# it grew on earlier runs (~/.cache/hyde-eval/fuzz-corpus/TARGET), with a fixed libFuzzer
# seed. A crash stops the script with exit 1 and leaves the input under
# fuzz/artifacts/TARGET/; `cargo fuzz run --fuzz-dir fuzz TARGET ARTIFACT` replays it.
# cargo-fuzz needs nightly-only compiler flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain
# accept them. cargo-fuzz itself is installed once under ~/.cache/hyde-eval/cargo-fuzz.
# The parsers are safe Rust, so what fuzzing can find is a panic, which libFuzzer catches
# without a sanitizer: targets build with `--sanitizer none` (a faster build and about
# twice the inputs per second); FUZZ_SANITIZER=address brings AddressSanitizer back.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}"
tools="$cache/cargo-fuzz"
if ! "$tools/bin/cargo-fuzz" --version >/dev/null 2>&1; then
  cargo install --quiet --locked cargo-fuzz --root "$tools"
fi
export PATH="$tools/bin:$PATH"
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$cache/fuzz-target"
sanitizer="${FUZZ_SANITIZER:-none}"

seconds="${1:-30}"
shift || true
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list --fuzz-dir fuzz)
fi

cargo fuzz build --fuzz-dir fuzz -O --sanitizer "$sanitizer"
# The targets write their inputs under the temp dir; this run's go, whatever happens.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for target in "${targets[@]}"; do
  corpus="$cache/fuzz-corpus/$target"
  mkdir -p "$corpus"
  printf '%-16s ' "$target"
  log="$(mktemp)"
  if TMPDIR="$scratch" cargo fuzz run --fuzz-dir fuzz -O --sanitizer "$sanitizer" "$target" "$corpus" "fuzz/seeds/$target" -- \
    -max_total_time="$seconds" -seed=1 -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
    >"$log" 2>&1; then
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
    echo "ok: $runs inputs in ${seconds}s, no crash"
    rm -f "$log"
  else
    echo "CRASH (log: $log)"
    grep -E 'panicked|SUMMARY|Test unit written' "$log" >&2 || tail -20 "$log" >&2
    exit 1
  fi
done
