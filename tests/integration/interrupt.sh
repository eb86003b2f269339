#!/bin/bash
# Interrupts runs of every available tracer at random points (SIGINT and
# SIGTERM) and checks that the run exits 130 and leaves nothing of ours in
# the kernel; then SIGKILLs one and checks that `tracebench cleanup` removes
# what it left, and only that.
set -uo pipefail
tb=$1
src=$2
out=$(mktemp -d /tmp/tracebench-int-XXXXXX)
trap 'rm -rf "$out"' EXIT
fail=0
"$src/scripts/leftovers.sh" >/dev/null || { echo "state of ours is present before the test:"; "$src/scripts/leftovers.sh"; exit 1; }

mapfile -t tracers < <("$tb" env --json | /usr/bin/python3 -c '
import json, sys
for t in json.load(sys.stdin)["tracers"]:
    if t["available"] and t["name"] not in ("none",):
        print(t["name"])')
echo "available tracers: ${tracers[*]:-(none besides the baseline)}"
RANDOM=$$
for t in "${tracers[@]}"; do
  for sig in INT TERM INT; do
    "$tb" run --tracer "$t" --repetitions 40 --no-samples --out "$out" >"$out/log" 2>&1 &
    pid=$!
    delay=$(printf '0.%03d' $((RANDOM % 1000)))
    sleep "$delay"
    kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    if [ "$rc" -ne 130 ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
      echo "FAIL: $t SIG$sig after ${delay}s: exit $rc"; tail -5 "$out/log"; fail=1
    fi
    if ! left=$("$src/scripts/leftovers.sh"); then
      echo "FAIL: $t SIG$sig after ${delay}s left: $left"; fail=1
      "$tb" cleanup >/dev/null
    else
      echo "ok: $t SIG$sig after ${delay}s: exit $rc, nothing left"
    fi
  done
done

# SIGKILL cannot be caught: cleanup must find what the dead run left.
for t in "${tracers[@]}"; do
  "$tb" run --tracer "$t" --repetitions 40 --no-samples --out "$out" >"$out/log" 2>&1 &
  pid=$!
  sleep 0.$((RANDOM % 9 + 1))
  kill -KILL "$pid"; wait "$pid" 2>/dev/null
  "$tb" cleanup > "$out/cleanup.log"
  if ! left=$("$src/scripts/leftovers.sh"); then
    echo "FAIL: $t SIGKILL: cleanup left: $left"; fail=1
  else
    echo "ok: $t SIGKILL: $(tail -1 "$out/cleanup.log")"
  fi
done
exit $fail
