#!/usr/bin/env bash
# End-to-end: a `tracebench run` of the ftrace and perf adapters interrupted by
# SIGINT/SIGTERM at several points leaves nothing in tracefs; one killed with
# SIGKILL leaves its instance/uprobe, which `tracebench cleanup` then removes
# (and nothing that belongs to a live process).
# Usage: signal_cleanup_test.sh <path to tracebench>
set -uo pipefail
TB=${1:?usage: $0 <tracebench binary>}
T=/sys/kernel/tracing
. "$(dirname "$0")/../common/require.sh"
if [[ $(id -u) != 0 ]]; then tb_skip ftrace "needs root"; fi
[[ -d $T/instances ]] || mount -t tracefs nodev "$T" 2>/dev/null || tb_skip ftrace "no tracefs at $T"
OUT=$(mktemp -d /tmp/tracebench-sigtest.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
fail=0

check_rc() {  # $1 = status, $2 = expected, $3 = what
  if [[ $1 != "$2" ]]; then echo "FAIL: $3 exited $1, expected $2"; fail=1; fi
}
# SIGINT/SIGTERM: the run stops after the current block, tears down and
# exits 130 (README, "Interruptions").  A run that finished its benchmarks
# before the signal came (its result says it is complete: context.complete)
# exits 0, or 130, or dies of the signal if it came as the process exited;
# any other status, or one of those for a run that did not finish, fails.
check_interrupted() {  # $1 = status, $2 = the run's --out, $3 = what, $4 = the signal
  if [[ $1 == 0 || $1 == 130 || $1 == $((128 + $(kill -l "$4"))) ]] &&
     /usr/bin/python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["context"]["complete"] else 1)' \
       "$2"/*/result.json 2> /dev/null; then
    return
  fi
  check_rc "$1" 130 "$3"
}

leftovers() {  # $1 = pid
  local left=""
  ls "$T/instances" | grep -E "^tracebench-$1(-|$)" && left=1
  grep -E "^[pr]:tracebench/tb$1_" "$T/dynamic_events" && left=1
  [[ -z $left ]]
}

for sig in INT TERM; do
  for delay in 0.3 1 2.5; do
    for wl in call marker getpid; do
      for tracer in ftrace perf; do
        [[ $tracer == perf && $wl == marker ]] && continue
        out="$OUT/$sig-$delay-$wl-$tracer"
        "$TB" run --tracer "$tracer" --workload "$wl" --quick --no-samples --out "$out" > /dev/null 2>&1 &
        pid=$!
        sleep "$delay"
        kill -s "$sig" "$pid" 2>/dev/null
        wait "$pid"
        rc=$?
        check_interrupted "$rc" "$out" "SIG$sig after ${delay}s ($tracer/$wl)" "$sig"
        if ! leftovers "$pid" > /dev/null; then
          echo "FAIL: SIG$sig after ${delay}s ($tracer/$wl, rc $rc) left:"; leftovers "$pid"; fail=1
        else
          echo "ok: SIG$sig after ${delay}s ($tracer/$wl, rc $rc)"
        fi
      done
    done
  done
done

# The handler-count sweep's extra instances / events go with the rest.
for tracer in ftrace perf; do
  out="$OUT/ecbs-$tracer"
  "$TB" run --tracer "$tracer" --workload getpid --quick --no-samples -o "$tracer.ecbs=4" --out "$out" > /dev/null 2>&1 &
  pid=$!
  sleep 1
  kill -s INT "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  check_interrupted "$rc" "$out" "SIGINT after 1s ($tracer/getpid ecbs=4)" INT
  if ! leftovers "$pid" > /dev/null; then
    echo "FAIL: SIGINT after 1s ($tracer/getpid ecbs=4, rc $rc) left:"; leftovers "$pid"; fail=1
  else
    echo "ok: SIGINT after 1s ($tracer/getpid ecbs=4, rc $rc)"
  fi
done

# SIGKILL cannot be caught: the instances (with ecbs=3 the extra ones too)
# and the uprobe stay until `cleanup`.
"$TB" run --tracer ftrace --workload call --repetitions 40 --no-samples -o ftrace.ecbs=3 --out "$OUT" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  ls "$T/instances" | grep -qE "^tracebench-${pid}-([0-9]+-)?h3$" && break
  sleep 0.05
done
kill -KILL "$pid"; wait "$pid" 2>/dev/null
check_rc $? 137 "the SIGKILLed run"
if leftovers "$pid" > /dev/null; then
  echo "FAIL: expected SIGKILL to leave the instance and uprobe of $pid behind"; fail=1
else
  echo "ok: SIGKILL left $(leftovers "$pid" | tr '\n' ' ')"
fi
# A live owner's instance must survive the cleanup.
live=$T/instances/tracebench-$$
mkdir "$live"
"$TB" cleanup > /dev/null 2>&1
check_rc $? 0 "tracebench cleanup"
if ! leftovers "$pid" > /dev/null; then echo "FAIL: cleanup left:"; leftovers "$pid"; fail=1; else echo "ok: cleanup after SIGKILL"; fi
if [[ -d $live ]]; then echo "ok: live instance kept"; else echo "FAIL: cleanup removed the live tracebench-$$"; fail=1; fi
rmdir "$live" 2>/dev/null
exit $fail
