#!/usr/bin/env bash
# Runs the regression gate in the working directory: the Markdown summary goes to the
# job's step summary and to $RUNNER_TEMP/hyde-eval-gate.md (for the comment), and
# hyde-eval's exit code to GITHUB_OUTPUT as `exit-code` (the last step fails with it).
# Reads BASELINE, MAX_DROP, DATASET (may be empty), EXTRA_ARGS (split into words).
set -euo pipefail
dataset=()
if [ -n "${DATASET:-}" ]; then dataset=(--dataset "$DATASET"); fi
set +e
# Word splitting of EXTRA_ARGS is intended: it holds several arguments.
# shellcheck disable=SC2086
hyde-eval run --quiet --no-report "${dataset[@]}" --baseline "${BASELINE:?}" \
  --max-drop "${MAX_DROP:?}" --format markdown --summary-file "${GITHUB_STEP_SUMMARY:?}" \
  ${EXTRA_ARGS:-} >"${RUNNER_TEMP:?}/hyde-eval-gate.md"
code=$?
set -e
cat "$RUNNER_TEMP/hyde-eval-gate.md"
echo "exit-code=$code" >>"${GITHUB_OUTPUT:?}"
