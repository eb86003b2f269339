#!/usr/bin/env bash
# End to end: a `tracebench run` of several LTTng benchmarks starts one
# lttng-sessiond (none ran before), every benchmark uses that daemon, and the
# run stops it when it exits: nothing of it is left (scripts/leftovers.sh).
# The signal paths are covered by tests/integration/interrupt.sh.
# Usage: daemon_test.sh <path to tracebench> <source dir>
set -uo pipefail
TB=${1:?usage: $0 <tracebench binary> <source dir>}
SRC=${2:?usage: $0 <tracebench binary> <source dir>}
. "$SRC/tests/common/require.sh"
if [[ $(id -u) != 0 ]]; then tb_skip lttng "needs root (a root lttng-sessiond)"; fi
# Live daemons (an exited one stays a zombie until its new parent reaps it).
live_sessiond() { ps -C lttng-sessiond -o pid=,stat= | awk '$2 !~ /^Z/ { print $1 }'; }
# A daemon that runs before the test.  tracebench records the daemon it
# starts and its own pid in $MARKER (tracers/lttng/sessiond.h): while that
# owner lives, another run is using it (wait for it); an owner that is gone
# means the daemon leaked, and so does a daemon started the way tracebench
# starts one (--no-kernel / --extra-kmod-probes=tracebench) with no owner
# recorded: both fail, the leak is what this test is about.  A daemon
# tracebench did not start is not ours to stop: skip.
MARKER=${TB_LTTNG_MARKER:-/run/tracebench-lttng-sessiond}  # tracers/lttng/sessiond.h kMarkerFile
marker_owner() { local d o; { read -r d o < "$MARKER"; } 2>/dev/null && echo "$o"; }
for _ in $(seq 1 90); do
  [[ -z $(live_sessiond) ]] && break
  owner=$(marker_owner)
  [[ -n $owner ]] && kill -0 "$owner" 2>/dev/null || break
  sleep 2
done
if [[ -n $(live_sessiond) ]]; then
  owner=$(marker_owner)
  if [[ -n $owner ]]; then
    if ! kill -0 "$owner" 2>/dev/null; then
      echo "FAIL: lttng-sessiond $(live_sessiond) leaked: its owner, tracebench pid $owner, is gone ($MARKER)"; exit 1
    fi
    tb_skip lttng "lttng-sessiond $(live_sessiond) belongs to a tracebench run still in progress (pid $owner) after 3 minutes"
  fi
  for p in $(live_sessiond); do
    if tr '\0' ' ' < "/proc/$p/cmdline" | grep -Eq -- "--no-kernel|--extra-kmod-probes=tracebench"; then
      echo "FAIL: lttng-sessiond $p was started as tracebench starts one, and no run owns it: leaked"; exit 1
    fi
  done
  tb_skip lttng "an lttng-sessiond that tracebench did not start runs already (pid $(live_sessiond)), not ours to stop"
fi
OUT=$(mktemp -d /tmp/tb-daemon-test.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

"$TB" run -t lttng -w ust_hot ust_payload -p 0 -p 16 -r 2 -n 100 --no-samples --out "$OUT" > "$OUT/log" 2>&1
rc=$?
if [[ $rc != 0 ]]; then echo "FAIL: the run exited $rc"; tail -20 "$OUT/log"; exit 1; fi
/usr/bin/python3 - "$OUT"/*/result.json <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
pids, fail = set(), False
for b in r["benchmarks"]:
    d = b.get("tracer_details") or {}
    print(f'{b["name"]}: daemon {d.get("sessiond_pid")}, started by the run: {d.get("sessiond_started_by_adapter")}, '
          f'registered in {d.get("registration_ms", 0):.1f} ms, verification {b["events"]["verification"]}')
    pids.add(d.get("sessiond_pid"))
    if not d.get("sessiond_started_by_adapter") or b["events"]["verification"] != "passed":
        fail = True
if len(r["benchmarks"]) != 3 or len(pids) != 1 or None in pids:
    print(f"FAIL: expected 3 benchmarks on one daemon, got {len(r['benchmarks'])} on {sorted(map(str, pids))}")
    fail = True
sys.exit(1 if fail else 0)
PY
if [[ -n $(live_sessiond) ]]; then
  echo "FAIL: lttng-sessiond still runs after the run exited: pid $(live_sessiond)"; exit 1
fi
if ! left=$("$SRC/scripts/leftovers.sh"); then echo "FAIL: the run left: $left"; exit 1; fi
echo "ok: one daemon for every benchmark, stopped at exit, nothing left"
