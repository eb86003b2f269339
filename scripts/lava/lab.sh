#!/bin/bash
# A single-node LAVA lab started by hand (no systemd): its own PostgreSQL
# cluster, the server (gunicorn), the event publisher, the scheduler and N
# lava-workers, each with one qemu device, all under one state directory.
# The publisher is what lets the scheduler act on a submitted job or a device
# gone idle at once: without its events the scheduler looks every 20 s, and a
# job waited ~10 s on average before it reached a device; between events the
# lab's scheduler looks every 2 s (lava-scheduler.py: an event can come
# before the change it announces is committed).
#
#   scripts/lava/lab.sh start [--dir DIR] [--workers N] [--port PORT] [--kvm]
#   scripts/lava/lab.sh status [--dir DIR]
#   scripts/lava/lab.sh stop [--dir DIR]
#
# DIR (default /var/tmp/tracebench-lava) holds everything: the database, the
# settings, logs, job output, the worker directories and DIR/lavacli.yaml, an
# identity file as lavacli keeps them (identity `tracebench-lab`, a superuser
# `tracebench` and its API token).  Use it with
#   XDG_CONFIG_HOME=DIR lavacli -i tracebench-lab jobs list
#   tracebench lava submit --identity-file DIR/lavacli.yaml --identity tracebench-lab JOB.yaml
# Nothing under /etc is written: LAVA's settings come from LAVA_JSON_SETTINGS
# (read after /etc/lava-server/settings.d, so it wins).  Every process the lab
# starts leads its own session; stop (and a failed start) ends those sessions
# by their ids, including lava-run and qemu of jobs in flight.
# Exit: 0 done (status: the lab is up), 1 failed (status: down), 2 bad usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

dir=/var/tmp/tracebench-lava
workers=2
port=
kvm=0
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

usage() { sed -n '5,8p' "$0" | sed 's/^# //' >&2; exit 2; }
die() { echo "lab: $*" >&2; exit 1; }
log() { echo "lab: $*" >&2; }

cmd=${1:-}
[ $# -gt 0 ] && shift
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=${2:?}; shift 2 ;;
    --workers) workers=${2:?}; shift 2 ;;
    --port) port=${2:?}; shift 2 ;;
    --kvm) kvm=1; shift ;;
    -h|--help) usage ;;
    *) echo "lab: unknown argument '$1'" >&2; usage ;;
  esac
done
case "$cmd" in start|stop|status) ;; *) usage ;; esac
[[ "$workers" =~ ^[1-9][0-9]?$ ]] || { echo "lab: --workers takes 1..99" >&2; exit 2; }
[ -z "$port" ] || [[ "$port" =~ ^[0-9]+$ ]] || { echo "lab: --port takes a number" >&2; exit 2; }
dir=$(realpath -m "$dir")

# --- the settings every LAVA process of this lab reads ----------------------
lava_env() {
  LAVA_JSON_SETTINGS=$(base64 -w0 "$dir/settings.json")
  export LAVA_JSON_SETTINGS DJANGO_SETTINGS_MODULE=lava_server.settings.prod
}
manage() { (lava_env; cd "$dir" && lava-server manage "$@"); }

write_settings() {
  local secret
  secret=$(head -c 36 /dev/urandom | base64 | tr -d '/+=')
  umask 077
  cat >"$dir/settings.json" <<EOF
{"DATABASES": {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "lavaserver",
   "USER": "lavaserver", "HOST": "$dir/run", "PORT": 5432}},
 "SECRET_KEY": "$secret",
 "DEVICES_PATH": "$dir/etc/devices",
 "DEVICE_TYPES_PATHS": ["$dir/etc/device-types", "/usr/share/lava-server/device-types"],
 "HEALTH_CHECKS_PATH": "$dir/etc/health-checks",
 "MEDIA_ROOT": "$dir/media/",
 "DJANGO_LOGFILE": "$dir/log/django.log",
 "ALLOWED_HOSTS": ["127.0.0.1", "localhost"],
 "EVENT_NOTIFICATION": true,
 "INTERNAL_EVENT_SOCKET": "ipc://$dir/events/internal",
 "EVENT_SOCKET": "tcp://127.0.0.1:$event_port",
 "DEBUG": false}
EOF
  umask 022
}

# --- processes: each started with setsid, its session id kept in DIR/pids ----
# (postgres daemonizes itself; its postmaster pid is in its data directory)
spawn() {  # spawn NAME LOGFILE CMD...: runs CMD as the leader of a new session
  local name=$1 logf=$2
  shift 2
  (lava_env; cd "$dir" && exec setsid "$@" >>"$logf" 2>&1 </dev/null) &
  echo $! >"$dir/pids/$name"
}

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

session_procs() { ps -eo pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'; }

# sessions_left TENTHS SID...: waits up to TENTHS tenths of a second for the
# sessions to have no process (a zombie counts until init reaps it); prints
# those that still have one.
sessions_left() {
  local tenths=$1 sid i left
  shift
  for i in $(seq 0 "$tenths"); do
    left=""
    for sid in "$@"; do [ -z "$(session_procs "$sid")" ] || left+=" $sid"; done
    [ -n "$left" ] && [ "$i" -lt "$tenths" ] || break
    sleep 0.1
  done
  echo "$left"
}

# end_sessions TENTHS SID...: TERM their processes, all at once, and KILL
# what is left of them after TENTHS tenths of a second.  Each part of the lab
# takes a second or more to go on TERM: waited for one after the other,
# their times added up.  A killed process with many threads takes a moment
# to go, and its zombie another until init reaps it: up to 5 s.
end_sessions() {
  local tenths=$1 sid left
  shift
  for sid in "$@"; do pkill -TERM --session "$sid" 2>/dev/null || true; done
  left=$(sessions_left "$tenths" "$@")
  [ -n "$left" ] || return 0
  for sid in $left; do pkill -KILL --session "$sid" 2>/dev/null || true; done
  sessions_left 50 $left >/dev/null
}

# stop_parts TENTHS PIDFILE...: ends the sessions the existing files name
# (end_sessions), removes the files.
stop_parts() {
  local tenths=$1 f sids=() files=()
  shift
  for f in "$@"; do
    [ -f "$f" ] || continue
    sids+=("$(cat "$f")")
    files+=("$f")
  done
  [ ${#sids[@]} -eq 0 ] || end_sessions "$tenths" "${sids[@]}"
  [ ${#files[@]} -eq 0 ] || rm -f "${files[@]}"
}

pg_ctl() { runuser -u postgres -- "$pgbin/pg_ctl" -D "$dir/pg/data" "$@"; }

stop_lab() {
  local f
  # The workers first (they end their jobs' lava-run), then the scheduler
  # and server, each group's sessions together, 10 s each at most; the
  # event publisher last.  On TERM it forwards what is queued until its
  # queue has been quiet for 5 s (LAVA's own drain); with every part that
  # sends events gone, nothing is left to forward: a second, then KILL.
  stop_parts 100 "$dir"/pids/worker-*
  stop_parts 100 "$dir/pids/scheduler" "$dir/pids/gunicorn"
  stop_parts 10 "$dir/pids/publisher"
  if [ -f "$dir/pg/data/postmaster.pid" ]; then
    pg_ctl -m fast -w stop >/dev/null 2>&1 || true
    f=$(head -n 1 "$dir/pg/data/postmaster.pid" 2>/dev/null || true)
    if alive "$f"; then kill -KILL "$f" 2>/dev/null || true; fi
    rm -f "$dir/pg/data/postmaster.pid"
  fi
  rm -f "$dir/url"
}

# --- status -----------------------------------------------------------------
# One line per part; exit 0 only when every part is up and the API answers.
status_lab() {
  local up=0 down=0 f name pid url
  report() { printf '%-12s %s\n' "$1" "$2"; if [ "$3" = up ]; then up=$((up + 1)); else down=$((down + 1)); fi; }
  if [ ! -d "$dir/pids" ]; then echo "lab: no lab in $dir"; return 1; fi
  pid=$(head -n 1 "$dir/pg/data/postmaster.pid" 2>/dev/null || true)
  if alive "$pid"; then report postgres "up (pid $pid, socket $dir/run)" up; else report postgres down down; fi
  for f in "$dir/pids/gunicorn" "$dir/pids/publisher" "$dir/pids/scheduler" "$dir"/pids/worker-*; do
    [ -f "$f" ] || continue
    name=$(basename "$f"); pid=$(cat "$f")
    if alive "$pid"; then report "$name" "up (session $pid)" up; else report "$name" down down; fi
  done
  url=$(cat "$dir/url" 2>/dev/null || true)
  if [ -n "$url" ] && curl -fsS -o /dev/null --max-time 5 "$url/api/v0.2/system/version/"; then
    report api "$url/api/v0.2/" up
  else
    report api "not answering" down
  fi
  [ "$down" -eq 0 ] && [ "$up" -gt 0 ]
}

# --- start ------------------------------------------------------------------
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The database as LAVA's migrations leave it, before anything of a lab is in
# it (no user, token, worker or device), is the same for every lab of this
# LAVA, this PostgreSQL and this script: the first start keeps the stopped
# cluster in the cache, later starts unpack it instead of initdb and the
# migrations (most of a start's time).  TRACEBENCH_LAB_DB_CACHE=0: no cache.
db_cache="" db_migrated=0
set_db_cache() {
  local lava_version
  [ "${TRACEBENCH_LAB_DB_CACHE:-1}" != 0 ] || return 0
  lava_version=$(dpkg-query -W -f '${Version}' lava-server 2>/dev/null) && [ -n "$lava_version" ] || return 0
  db_cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracebench/lava-lab-db-$(
    { echo "$lava_version"; "$pgbin/postgres" --version; cat "$0"; } | sha256sum | cut -c1-16).tar
}

pg_try_start() {
  # No TCP listener at all: the lab's clients come through the socket in DIR/run.
  pg_ctl -l "$dir/pg/postgres.log" -w -o "-c listen_addresses='' -k $dir/run" start >/dev/null
}
pg_start() { pg_try_start || die "PostgreSQL did not start: see $dir/pg/postgres.log"; }

start_postgres() {
  mkdir -p "$dir/pg" "$dir/run"
  runuser -u postgres -- test -x "$dir" ||
    die "the postgres user cannot reach $dir (a parent directory is not searchable by others): choose a --dir such as /var/tmp/NAME"
  chown postgres: "$dir/pg" "$dir/run"
  set_db_cache
  if [ -n "$db_cache" ] && [ -f "$db_cache" ] && tar -C "$dir/pg" -xpf "$db_cache" 2>/dev/null &&
    [ -f "$dir/pg/data/PG_VERSION" ] && pg_try_start; then
    db_migrated=1
    return 0
  fi
  # No cache, or one that does not start: made afresh (and kept again).
  [ ! -f "$dir/pg/data/postmaster.pid" ] || pg_ctl -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir/pg/data"
  runuser -u postgres -- "$pgbin/initdb" -D "$dir/pg/data" -A trust -U postgres >"$dir/log/initdb.log" 2>&1 ||
    die "initdb failed: see $dir/log/initdb.log"
  pg_start
  runuser -u postgres -- psql -q -h "$dir/run" -c "CREATE USER lavaserver" &&
    runuser -u postgres -- psql -q -h "$dir/run" -c "CREATE DATABASE lavaserver OWNER lavaserver" ||
    die "could not create the lavaserver database"
}

# The migrated database into the cache: a copy of the stopped cluster.  A
# failure here costs the next start its migrations, nothing else.
keep_db() {
  local f
  [ -n "$db_cache" ] || return 0
  pg_ctl -m fast -w stop >/dev/null 2>&1 || die "PostgreSQL did not stop: see $dir/pg/postgres.log"
  if mkdir -p "$(dirname "$db_cache")" && tar -C "$dir/pg" -cf "$db_cache.$$" data 2>/dev/null; then
    mv "$db_cache.$$" "$db_cache"
    # One cache: those of another LAVA, PostgreSQL or script go.
    for f in "$(dirname "$db_cache")"/lava-lab-db-*.tar; do [ "$f" = "$db_cache" ] || rm -f "$f"; done
  else
    rm -f "$db_cache.$$"
  fi
  pg_start
}

# One Django shell for everything the database needs (each `manage` call costs
# a Django start-up): user, token, device type, workers, devices.  It prints
# `user-token T` and `worker NAME T` lines.
populate() {
  local py=$dir/populate.py
  cat >"$py" <<EOF
from io import StringIO
from django.core.management import call_command
from lava_scheduler_app.models import Device, Worker

def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip()

run("users", "add", "tracebench", "--superuser", "--staff")
print("user-token", run("tokens", "add", "--user", "tracebench", "--description", "tracebench lab").split()[-1])
run("device-types", "add", "qemu")
for i in range(1, $workers + 1):
    run("workers", "add", f"worker-{i}")
    print("worker", f"worker-{i}", Worker.objects.get(hostname=f"worker-{i}").token)
    run("devices", "add", f"qemu-{i}", "--device-type", "qemu", "--worker", f"worker-{i}")
    Device.objects.filter(hostname=f"qemu-{i}").update(health=Device.HEALTH_GOOD)
EOF
  manage shell --command "$(cat "$py")" >"$dir/populate.out" 2>"$dir/log/populate.log" ||
    die "could not create the lab's user, workers and devices: see $dir/log/populate.log"
}

write_devices() {
  local i
  mkdir -p "$dir/etc/devices" "$dir/etc/device-types" "$dir/etc/health-checks" "$dir/media"
  for i in $(seq 1 "$workers"); do
    {
      echo "{% extends 'qemu.jinja2' %}"
      echo "{% set arch = 'amd64' %}"
      printf "{%% set mac_addr = '52:54:00:12:%02x:%02x' %%}\n" $((i / 256)) $((i % 256))
      echo "{% set memory = 1024 %}"
      [ "$kvm" = 1 ] || echo "{% set no_kvm = True %}"  # TCG: KVM guests do not boot on every host
    } >"$dir/etc/devices/qemu-$i.jinja2"
  done
}

write_identity() {
  local token=$1
  umask 077
  cat >"$dir/lavacli.yaml" <<EOF
tracebench-lab:
  uri: $url/RPC2
  username: tracebench
  token: $token
EOF
  umask 022
}

start_workers() {
  local i name token
  for i in $(seq 1 "$workers"); do
    name=worker-$i
    token=$(awk -v n="$name" '$1 == "worker" && $2 == n { print $3 }' "$dir/populate.out")
    [ -n "$token" ] || die "no token for $name"
    mkdir -p "$dir/workers/$name"
    (umask 077; printf '%s' "$token" >"$dir/workers/$name/token")
    spawn "$name" "$dir/log/$name.out" lava-worker --name "$name" --url "$url/" \
      --token-file "$dir/workers/$name/token" --worker-dir "$dir/workers/$name" \
      --ping-interval 2 --log-file "$dir/log/$name.log" --level INFO
  done
}

# Dies, naming its log, when a process of the lab has already exited (a
# port in use, a bad setting): no need to wait for a timeout.
check_alive() {
  local f name
  for f in "$dir/pids/gunicorn" "$dir/pids/publisher" "$dir/pids/scheduler" "$dir"/pids/worker-*; do
    name=$(basename "$f")
    alive "$(cat "$f")" || die "$name exited at start: see $dir/log/$name.log$( [ "$name" = gunicorn ] || echo " and $dir/log/$name.out")"
  done
}

# Waits until URL answers and every worker of the lab is Online (the
# scheduler only gives jobs to devices of online workers).
wait_ready() {
  local token=$1 i body
  for i in $(seq 1 120); do
    check_alive
    if curl -fsS -o /dev/null --max-time 2 "$url/api/v0.2/system/version/" 2>/dev/null; then break; fi
    [ "$i" -lt 120 ] || die "the server did not answer at $url in 60 s: see $dir/log/gunicorn.log"
    sleep 0.5
  done
  for i in $(seq 1 120); do
    check_alive
    body=$(curl -fsS --max-time 5 -H "Authorization: Token $token" "$url/api/v0.2/workers/?limit=1000" 2>/dev/null || true)
    if [ -n "$body" ] && /usr/bin/python3 -c '
import json, sys
w = [x for x in json.loads(sys.argv[1])["results"] if x["hostname"].startswith("worker-")]
sys.exit(0 if len(w) == int(sys.argv[2]) and all(x["state"] == "Online" for x in w) else 1)' "$body" "$workers"; then
      return 0
    fi
    sleep 0.5
  done
  die "the workers did not come online in 60 s: see $dir/log/worker-*.log"
}

start_lab() {
  local token
  if [ -d "$dir/pids" ] && status_lab >/dev/null 2>&1; then
    log "already running in $dir ($(cat "$dir/url"))"
    return 0
  fi
  [ -n "$pgbin" ] || die "no PostgreSQL server binaries: \`scripts/setup.sh --area lava\` installs the lab's software (postgresql)"
  command -v lava-server >/dev/null && command -v lava-worker >/dev/null ||
    die "LAVA is not installed: \`scripts/setup.sh --area lava\` installs it (lava-server lava-dispatcher)"
  command -v gunicorn3 >/dev/null || die "gunicorn3 is missing: \`scripts/setup.sh --area lava\` installs it (gunicorn)"
  # A half-started or crashed lab: tear down what is left, start afresh.
  # Only a lab's own directory (or an empty one) is ever removed.
  if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    if [ ! -f "$dir/settings.json" ] && [ ! -d "$dir/pids" ]; then
      log "$dir exists and is not a lab's directory (no settings.json, no pids/): choose another --dir"
      exit 2
    fi
    stop_lab
    rm -rf "$dir"
  fi
  mkdir -p "$dir/pids" "$dir/log"
  chmod 755 "$dir"
  trap 'trap "" INT TERM HUP; log "start failed: tearing down"; stop_lab' EXIT  # uncut by a second signal
  trap 'exit 1' INT TERM HUP  # through the EXIT trap: an interrupted start tears down too
  [ -n "$port" ] || port=$(free_port)
  url=http://127.0.0.1:$port
  event_port=$(free_port)
  while [ "$event_port" = "$port" ]; do event_port=$(free_port); done
  publisher_port=$(free_port)
  while [ "$publisher_port" = "$port" ] || [ "$publisher_port" = "$event_port" ]; do publisher_port=$(free_port); done
  mkdir -p "$dir/events" && chown lavaserver: "$dir/events"  # the publisher drops to lavaserver
  write_settings
  write_devices
  start_postgres
  if [ $db_migrated -eq 0 ]; then
    manage migrate --noinput >"$dir/log/migrate.log" 2>&1 || die "database migration failed: see $dir/log/migrate.log"
    keep_db
  fi
  populate
  token=$(awk '$1 == "user-token" { print $2 }' "$dir/populate.out")
  [ -n "$token" ] || die "no API token was created: see $dir/log/populate.log"
  write_identity "$token"
  spawn gunicorn "$dir/log/gunicorn.log" gunicorn3 lava_server.wsgi --bind "127.0.0.1:$port" \
    --workers 4 --timeout 60 --graceful-timeout 2 --log-level warning
  spawn publisher "$dir/log/publisher.log" lava-server manage lava-publisher --host 127.0.0.1 \
    --port "$publisher_port" --log-file "$dir/log/publisher.log"
  # LAVA's scheduler, looking every 2 s between events (lava-scheduler.py says why).
  spawn scheduler "$dir/log/scheduler.log" /usr/bin/python3 "$here/lava-scheduler.py" \
    --log-file "$dir/log/scheduler.log" --event-url "tcp://127.0.0.1:$event_port"
  echo "$url" >"$dir/url"
  start_workers
  wait_ready "$token"
  rm -f "$dir/populate.out" "$dir/populate.py"
  trap - EXIT INT TERM HUP
  log "up: $url, $workers worker(s), identity tracebench-lab in $dir/lavacli.yaml"
}

[ "$(id -u)" -eq 0 ] || die "needs root (PostgreSQL runs as postgres, workers run qemu)"
case "$cmd" in
  start) start_lab ;;
  status) status_lab ;;
  stop)
    if [ -d "$dir/pids" ]; then stop_lab; log "stopped ($dir)"; else log "no lab in $dir"; fi ;;
esac
