#!/usr/bin/env bash
# Packs a built hyde-eval as the release asset the action installs:
# hyde-eval-vVERSION-TARGET.tar.gz (the binary alone) and its .sha256, in OUT_DIR.
# Usage: scripts/action/package.sh BINARY VERSION TARGET OUT_DIR
set -euo pipefail
binary=$1 version=$2 target=$3 out=$4
asset="hyde-eval-v$version-$target.tar.gz"
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
cp "$binary" "$staging/hyde-eval"
mkdir -p "$out"
tar -czf "$out/$asset" -C "$staging" hyde-eval
(cd "$out" && sha256sum "$asset" >"$asset.sha256")
echo "$out/$asset"
