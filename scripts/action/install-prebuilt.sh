#!/usr/bin/env bash
# Installs the prebuilt hyde-eval of the action's version from the release assets of the
# action's repository, when one exists for this platform (see package.sh for the names),
# checked against its .sha256 and run once; otherwise the build steps follow.
# INSTALL: auto (prebuilt when there is one, else build), prebuilt (fail without one) or
# build. Reads VERSION, REPOSITORY, RUNNER_TEMP (and GH_TOKEN for gh); writes
# `installed=true|false` to GITHUB_OUTPUT and the binary's directory to GITHUB_PATH.
set -euo pipefail
mode="${INSTALL:-auto}"
case "$mode" in
  auto | prebuilt | build) ;;
  *)
    echo "::error::install must be auto, prebuilt or build, not \"$mode\"" >&2
    exit 1
    ;;
esac
declined() {
  if [ "$mode" = prebuilt ]; then
    echo "::error::$1" >&2
    exit 1
  fi
  echo "::notice::$1; building hyde-eval from the action's sources"
  echo "installed=false" >>"${GITHUB_OUTPUT:?}"
  exit 0
}
if [ "$mode" = build ]; then
  echo "installed=false" >>"${GITHUB_OUTPUT:?}"
  exit 0
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
  *) declined "no prebuilt hyde-eval for $(uname -s) $(uname -m)" ;;
esac
asset="hyde-eval-v${VERSION:?}-$target.tar.gz"
download="${RUNNER_TEMP:?}/hyde-eval-download"
rm -rf "$download"
mkdir -p "$download"
if ! gh release download "v$VERSION" --repo "${REPOSITORY:?}" --pattern "$asset" \
  --pattern "$asset.sha256" --dir "$download" >"$download.log" 2>&1; then
  declined "no release asset $asset in $REPOSITORY ($(tail -n 1 "$download.log"))"
fi
if ! (cd "$download" && sha256sum --check --status "$asset.sha256"); then
  echo "::error::$asset does not match its .sha256: the download is corrupt" >&2
  exit 1
fi
bin="$RUNNER_TEMP/hyde-eval/bin"
mkdir -p "$bin"
tar -xzf "$download/$asset" -C "$bin" hyde-eval
# A build for x86-64-v3 refuses an older processor (exit 2): build from source there.
if ! "$bin/hyde-eval" --version >/dev/null 2>&1; then
  rm -f "$bin/hyde-eval"
  declined "the prebuilt $asset does not run here"
fi
echo "$bin" >>"${GITHUB_PATH:?}"
echo "installed=true" >>"$GITHUB_OUTPUT"
echo "installed $("$bin/hyde-eval" --version) from $REPOSITORY's release v$VERSION"
