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
    "$tb" run --tracer "$t" --repetitions 40 --ci-target 0 --no-samples --out "$out" >"$out/log" 2>&1 &
    pid=$!
    # At least 0.2 s in, so the signal finds the run's watcher installed
    # (a run of 40 repetitions of a tracer's suite does not end that soon).
    delay=$(printf '%d.%03d' $((RANDOM % 2)) $((200 + RANDOM % 800)))
    sleep "$delay"
    kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    # The promise: stop after the current block, tear down, exit 130.
    if [ "$rc" -ne 130 ]; then
      echo "FAIL: $t SIG$sig after ${delay}s: exit $rc (expected 130)"; tail -5 "$out/log"; fail=1
    fi
    if ! grep -q "received, stopping" "$out/log"; then
      echo "FAIL: $t SIG$sig after ${delay}s: the run did not say it was stopping"; tail -5 "$out/log"; fail=1
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
  "$tb" run --tracer "$t" --repetitions 40 --ci-target 0 --no-samples --out "$out" >"$out/log" 2>&1 &
  pid=$!
  sleep 0.$((RANDOM % 9 + 1))
  kill -KILL "$pid"; wait "$pid" 2>/dev/null
  "$tb" cleanup > "$out/cleanup.log"
  # The kernel frees a dead process's BPF programs and links after its file
  # descriptors are released (asynchronously): give it up to 3 s.
  for _ in $(seq 30); do "$src/scripts/leftovers.sh" >/dev/null && break; sleep 0.1; done
  if ! left=$("$src/scripts/leftovers.sh"); then
    echo "FAIL: $t SIGKILL: cleanup left: $left"; fail=1
  else
    echo "ok: $t SIGKILL: $(tail -1 "$out/cleanup.log")"
  fi
done
exit $fail
