#!/usr/bin/env bash
# A labeled set from facts alone, end to end against a live OpenAI-compatible chat
# server: `dataset draft-queries` on a handful of devmem's facts -> `run` -> a scripted
# `judge --assist` pass -> `judge --agreement` -> `dataset validate` -> `run` again ->
# `report`. Prints the drafted set's counts per style, what the overlap filter dropped,
# and judged@5 before and after judging. scripts/real-backend-check.sh runs it against
# its llama-cpp-python server; by hand:
#   scripts/label-check.sh http://127.0.0.1:PORT/v1 MODEL WORKDIR
# ($HYDE_EVAL_BIN names a built hyde-eval binary to use instead of `cargo run --release`.)
set -euo pipefail
cd "$(dirname "$0")/.."
base_url="$1"; model="$2"; work="$3"
label="$work/label"
mkdir -p "$label"
# Six facts, drafted one query each in four styles: 24 short requests on the CPU.
head -n 6 datasets/devmem/facts.jsonl > "$label/facts.jsonl"
cat > "$work/label.toml" <<TOML
[generators.drafter]
kind = "openai-chat"
base_url = "$base_url"
model = "$model"
temperature = 0.7
max_tokens = 40
max_in_flight = 2
TOML
hyde_label() {
  if [ -n "${HYDE_EVAL_BIN:-}" ]; then "$HYDE_EVAL_BIN" "$@"; else cargo run --release --quiet -- "$@"; fi
}
with_llm=(--config "$work/label.toml" --cache-dir "$work/cache")

echo "==> dataset draft-queries: 6 facts x 4 styles"
hyde_label dataset draft-queries "$label" --generator drafter --facts 6 --per-fact 1 --seed 1 "${with_llm[@]}"
hyde_label dataset validate "$label"
hyde_label run --dataset "$label" --configurations bm25,dense,hybrid --k 5 \
  --output-dir "$work/label-reports" --run-name before --quiet > /dev/null

echo "==> judge: scripted passes over the pool (keys 2 1 0 in turn): 12 pairs with LLM proposals, then the rest"
python3 -c "print(' '.join('210'[i % 3] for i in range(12)))" > "$work/keys-assisted.txt"
python3 -c "print(' '.join('210'[i % 3] for i in range(400)))" > "$work/keys.txt"
hyde_label judge --dataset "$label" --results "$work/label-reports/before/results.json" --depth 5 \
  --keys "$work/keys-assisted.txt" --assist drafter "${with_llm[@]}" | tail -1
hyde_label judge --dataset "$label" --results "$work/label-reports/before/results.json" --depth 5 \
  --keys "$work/keys.txt" | tail -1
hyde_label judge --dataset "$label" --agreement
hyde_label dataset validate "$label"
ls "$label"
hyde_label run --dataset "$label" --configurations bm25,dense,hybrid --k 5 \
  --output-dir "$work/label-reports" --run-name after
hyde_label report "$work/label-reports/after/results.json" --output-dir "$work/label-reports/after-html" > /dev/null
grep -q "judged@5" "$work/label-reports/after-html/report.html"
python3 - "$label/drafted.json" "$work/label-reports/before/results.json" "$work/label-reports/after/results.json" <<'PY'
import json, sys
drafted = json.load(open(sys.argv[1]))
before, after = (json.load(open(path)) for path in sys.argv[2:])
print("drafted set (model %s, prompt %s, %s):" % (drafted["model"], drafted["prompt"]["name"], drafted["date"]))
for style, counts in drafted["counts"].items():
    print("  %-13s asked %d, kept %d, copied wording %d, near-duplicates %d, empty/failed %d" % (
        style, counts["asked"], counts["kept"], counts["copied_wording"], counts["near_duplicates"], counts["empty_or_failed"]))
copied = sum(c["copied_wording"] for c in drafted["counts"].values())
asked = sum(c["asked"] for c in drafted["counts"].values())
print("  overlap filter (max %.2f): dropped %d of %d answers" % (drafted["max_overlap"], copied, asked))
for b, a in zip(before["configurations"], after["configurations"]):
    assert a["macro"]["judged@5"] >= b["macro"]["judged@5"], a["name"]
    print("  %-7s judged@5 %.3f -> %.3f, nDCG@5 %.3f -> %.3f, bpref %.3f -> %.3f" % (
        a["name"], b["macro"]["judged@5"], a["macro"]["judged@5"], b["macro"]["ndcg@5"], a["macro"]["ndcg@5"],
        b["macro"]["bpref"], a["macro"]["bpref"]))
# Every fact a configuration ranked in a query's top 5 is judged now; a query a
# configuration returned nothing for (BM25 with no matching term) has judged@5 = 0.
for configuration in after["configurations"]:
    for query in configuration["per_query"]:
        if query["returned"] > 0:
            assert query["metrics"]["judged@5"] == 1.0, (configuration["name"], query["query"])
PY
echo "labeled-set check passed"
