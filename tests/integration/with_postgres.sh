#!/bin/bash
# with_postgres.sh CMD [ARG...]: runs CMD with a throw-away PostgreSQL
# cluster of its own, made in a temporary directory as the postgres user and
# reached on a Unix socket only (no TCP, so the system cluster on 5432 is
# neither used nor disturbed), then stops it and removes it on every exit
# path (CMD's failure, a signal, a failed start).  CMD gets:
#   TB_PG_URI     a libpq URI of an empty database `tbhist` in it
#   TB_PG_SOCKET  the socket directory, TB_PG_PORT the port
#   TB_PG_BIN     the server's bin directory (psql-less tools: createdb...)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: with_postgres.sh CMD [ARG...]" >&2; exit 2; }
bin=${TB_PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$bin/initdb" ] || { echo "with_postgres.sh: no $bin/initdb (apt-get install postgresql)" >&2; exit 2; }
id postgres > /dev/null 2>&1 || { echo "with_postgres.sh: no postgres user (apt-get install postgresql)" >&2; exit 2; }
as_postgres() { runuser -u postgres -- "$@"; }

dir=$(mktemp -d /tmp/tracebench-pg-XXXXXX)
started=
cleanup() {
  trap '' INT TERM  # a second signal would cut the teardown short
  if [ -n "$started" ]; then as_postgres "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop > /dev/null 2>&1 || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
chown postgres: "$dir"
chmod 700 "$dir"
as_postgres mkdir "$dir/sock"
# The port only names the socket file in our own directory.
port=$((20000 + RANDOM % 20000))
as_postgres "$bin/initdb" -D "$dir/data" -A trust -U postgres --locale=C.UTF-8 -E UTF8 > "$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
started=1
as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-k $dir/sock -p $port -c listen_addresses='' -c fsync=off" start > /dev/null ||
  { cat "$dir/server.log" >&2; exit 1; }
as_postgres "$bin/createdb" -h "$dir/sock" -p "$port" tbhist
export TB_PG_SOCKET=$dir/sock TB_PG_PORT=$port TB_PG_BIN=$bin
export TB_PG_URI="postgresql://postgres@/tbhist?host=$dir/sock&port=$port"
set +e
"$@"
rc=$?
set -e
exit $rc
