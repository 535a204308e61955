#!/usr/bin/env bash
# Installs PostgreSQL 16 with the pgvector extension for the pgvector engine's tests
# (tests/engine_pgvector.rs, tests/engine_run.rs), from PyPI's `pgserver` wheel, which
# bundles the server binaries (initdb, postgres, pg_ctl) and pgvector 0.6.2 (HNSW indexes). Debian bookworm
# has PostgreSQL 15 but no pgvector package, so the wheel is the route that works from
# the package registries alone.
#
# Installs into ${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}/pgvector:
#   venv/       a virtualenv holding the wheel (no Python dependencies are needed)
#   pginstall   a link to the wheel's PostgreSQL tree (bin/, lib/, share/)
# Idempotent: when the link resolves to a working server it only prints the paths.
#
# PostgreSQL refuses to run as root; the tests start it in a user namespace (`unshare
# --user --map-user=65534`) when they run as root, so no system user is needed.
set -euo pipefail

cache="${HYDE_EVAL_CACHE:-$HOME/.cache/hyde-eval}"
root="$cache/pgvector"
venv="$root/venv"
link="$root/pginstall"
version="0.1.4"

works() {
  [ -x "$link/bin/postgres" ] && [ -x "$link/bin/initdb" ] &&
    [ -f "$link/share/postgresql/extension/vector.control" ] &&
    "$link/bin/postgres" --version >/dev/null 2>&1
}

if ! works; then
  mkdir -p "$root"
  rm -rf "$venv" "$link"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps "pgserver==$version"
  # The package's own import needs psutil and more; only its files are used.
  tree="$(echo "$venv"/lib/python3*/site-packages/pgserver/pginstall)"
  ln -s "$tree" "$link"
  if ! works; then
    echo "install_pgvector.sh: pgserver $version installed but $link/bin/postgres does not run" >&2
    exit 1
  fi
fi

vector="$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$link/share/postgresql/extension/vector.control")"
echo "PostgreSQL: $("$link/bin/postgres" --version) (pgvector $vector)"
echo "initdb:     $link/bin/initdb"
echo "postgres:   $link/bin/postgres"
