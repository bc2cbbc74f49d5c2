#!/usr/bin/env bash
# Builds PgBouncer 1.24.1 (the version Debian 13 ships) from the Debian archive's source tarball into
# data/pgbouncer-1.24.1/ and prints the binary's path. Debian 12's package is 1.18, which cannot keep
# named statements in transaction mode; 1.21 and later can (`max_prepared_statements`), so the
# service keeps its named statements behind it (docs/production.md, "Behind a connection pooler").
# For the bench's pooler comparison and the CI pass that checks that mode:
#   PGBOUNCER_BIN="$(bash scripts/pgbouncer-build.sh)" PGBOUNCER_PORT=6433 bash scripts/pgbouncer.sh
# Idempotent: a built binary is reused. Needs a C compiler and libevent's headers (installed from
# Debian's packages when missing).
set -euo pipefail
version=1.24.1
sha256=da72a3aba13072876d055a3e58dd4aba4a5de4ed6148e73033185245598fd3e0
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${PGBOUNCER_PREFIX:-$root/data/pgbouncer-$version}"
bin="$prefix/bin/pgbouncer"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
dpkg -s libevent-dev libssl-dev pkg-config >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq libevent-dev libssl-dev pkg-config >/dev/null; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
curl -fsSL --retry 3 -o "$work/src.tar.gz" "http://deb.debian.org/debian/pool/main/p/pgbouncer/pgbouncer_${version}.orig.tar.gz"
echo "$sha256  $work/src.tar.gz" | sha256sum -c --quiet >&2
tar -xzf "$work/src.tar.gz" -C "$work"
if ! (cd "$work/pgbouncer-$version" && ./configure --prefix="$prefix" --without-cares --without-systemd && make -j"$(nproc)" && make install) >"$work/build.log" 2>&1; then
  tail -30 "$work/build.log" >&2
  echo "pgbouncer-build: building PgBouncer $version failed" >&2
  exit 1
fi
echo "$bin"
