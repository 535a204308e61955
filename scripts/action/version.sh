#!/usr/bin/env bash
# The action's version and a key that changes whenever its sources change, for the
# prebuilt download and the build cache (hashFiles cannot read the action's own files:
# it only reads the caller's workspace). Reads GITHUB_ACTION_PATH; writes `version` and
# `key` to GITHUB_OUTPUT.
set -euo pipefail
root="${GITHUB_ACTION_PATH:?}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
if [ -z "$version" ]; then
  echo "::error::no version in $root/Cargo.toml" >&2
  exit 1
fi
sources="$(
  cd "$root"
  # Paths the action may lack (.cargo) are left out.
  { find Cargo.toml Cargo.lock .cargo src -type f -print0 2>/dev/null || true; } |
    sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
)"
{
  echo "version=$version"
  echo "key=$version-$sources"
} >>"${GITHUB_OUTPUT:?}"
echo "hyde-eval $version (sources $sources)"
