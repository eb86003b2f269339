#!/usr/bin/env bash
# End to end: a `tracebench run` of several LTTng benchmarks starts one
# lttng-sessiond (none ran before), every benchmark uses that daemon, and the
# run stops it when it exits: nothing of it is left (scripts/leftovers.sh).
# The signal paths are covered by tests/integration/interrupt.sh.
# Usage: daemon_test.sh <path to tracebench> <source dir>
set -uo pipefail
TB=${1:?usage: $0 <tracebench binary> <source dir>}
SRC=${2:?usage: $0 <tracebench binary> <source dir>}
if [[ $(id -u) != 0 ]]; then echo "SKIP: needs root"; exit 77; fi
# Live daemons (an exited one stays a zombie until its new parent reaps it).
live_sessiond() { ps -C lttng-sessiond -o pid=,stat= | awk '$2 !~ /^Z/ { print $1 }'; }
if [[ -n $(live_sessiond) ]]; then echo "SKIP: an lttng-sessiond runs already (not ours)"; exit 77; fi
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
