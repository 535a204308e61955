#!/usr/bin/env bash
# Posts the gate's summary on the pull request, or updates the comment an earlier push
# posted (found by its first line, the marker). A comment that cannot be posted never
# fails the job: a pull request from a fork gets a read-only token, so there the step
# says so and the summary stays in the job's step summary.
# Reads PR, REPOSITORY (the base repository), HEAD_REPOSITORY (the pull request's head
# repository), RUNNER_TEMP and GH_TOKEN for gh.
set -euo pipefail
if [ -n "${HEAD_REPOSITORY:-}" ] && [ "$HEAD_REPOSITORY" != "${REPOSITORY:?}" ]; then
  echo "::notice::pull request from the fork $HEAD_REPOSITORY: its token cannot comment; the summary is in the job's step summary"
  exit 0
fi
marker='<!-- hyde-eval regression gate -->'
body="${RUNNER_TEMP:?}/hyde-eval-comment.md"
{
  echo "$marker"
  cat "$RUNNER_TEMP/hyde-eval-gate.md"
} >"$body"
post() {
  local existing
  existing="$(gh api "repos/$REPOSITORY/issues/${PR:?}/comments" --paginate \
    --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)" || return 1
  if [ -n "$existing" ]; then
    gh api --method PATCH "repos/$REPOSITORY/issues/comments/$existing" \
      -F "body=@$body" >/dev/null
  else
    gh api --method POST "repos/$REPOSITORY/issues/$PR/comments" \
      -F "body=@$body" >/dev/null
  fi
}
if ! post 2>"$RUNNER_TEMP/hyde-eval-comment.log"; then
  echo "::warning::could not post the summary on pull request $PR ($(tail -n 1 "$RUNNER_TEMP/hyde-eval-comment.log")); it is in the job's step summary"
fi
