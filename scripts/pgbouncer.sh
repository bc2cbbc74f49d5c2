#!/usr/bin/env bash
# Starts Debian's PgBouncer in transaction mode on 127.0.0.1:${PGBOUNCER_PORT:-6432}, in front of the
# local PostgreSQL (port 5432, trust auth; over its Unix socket when it has one, else 127.0.0.1),
# every database name passed through: what CI runs the PostgreSQL test pass through
# (docs/production.md, "Behind a connection pooler"). Idempotent.
# PGBOUNCER_BIN: another PgBouncer binary (scripts/pgbouncer-build.sh builds 1.24.1). From 1.21 on
# it keeps named statements across server connections: `max_prepared_statements` is set then.
set -euo pipefail
port="${PGBOUNCER_PORT:-6432}"
dir="${PGBOUNCER_DIR:-/tmp/guidegate-pgbouncer-$port}"
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "pgbouncer: already listening on $port"; exit 0; fi
bin="${PGBOUNCER_BIN:-}"
if [ -z "$bin" ]; then
  command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ] || { apt-get update -qq && apt-get install -y -qq pgbouncer >/dev/null; }
  bin="$(PATH="$PATH:/usr/sbin" command -v pgbouncer)"
fi
# "PgBouncer 1.24.1" -> 1 24
read -r major minor < <("$bin" --version | head -1 | sed -E 's/^PgBouncer ([0-9]+)\.([0-9]+).*/\1 \2/')
prepared=""
if [ "$major" -gt 1 ] || [ "$minor" -ge 21 ]; then prepared="max_prepared_statements = 200"; fi
# Beside the database, PgBouncer reaches it over its Unix socket (as Debian's own pgbouncer.ini
# does): cheaper than loopback TCP for every packet of every result.
server_host="${PGBOUNCER_SERVER_HOST:-}"
if [ -z "$server_host" ]; then
  server_host=127.0.0.1
  [ -S /var/run/postgresql/.s.PGSQL.5432 ] && server_host=/var/run/postgresql
fi
mkdir -p "$dir"
cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=$server_host port=5432

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 20
max_db_connections = 40
ignore_startup_parameters = extra_float_digits,options
; server_check_delay stays at its default (30 s): at 0 PgBouncer sends its check query before every
; transaction, a second round trip per statement (B16 through the pooler: 0.75-0.76 of direct with
; it, 0.86 without). A server connection that died while idle is noticed by its closed socket anyway.
; Larger packets (64 KiB, not 4): a 1,000-row page crosses the pooler in far fewer reads and writes.
pkt_buf = 65536
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
$prepared
INI
printf '"postgres" ""\n"root" ""\n' >"$dir/userlist.txt"
user_flag=()
[ "$(id -u)" = 0 ] && { chown -R postgres "$dir"; user_flag=(-u postgres); }
"$bin" -d "${user_flag[@]}" "$dir/pgbouncer.ini"
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && { echo "pgbouncer $major.$minor: listening on $port (transaction mode${prepared:+, named statements kept})"; exit 0; }; sleep 0.1; done
echo "pgbouncer did not start; see $dir/pgbouncer.log" >&2
exit 1
