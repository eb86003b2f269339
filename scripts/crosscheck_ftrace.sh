#!/usr/bin/env bash
# Fidelity cross-check for the ftrace adapter.
#
# 1. The suite: `tracebench run --tracer ftrace --workload getpid` (event
#    syscalls:sys_enter_getpid in a private instance, pid-filtered), overhead
#    read from its result.json.
# 2. The standard tools: a plain C loop of syscall(SYS_getpid), pinned to the
#    same CPU, timed without and with the same event enabled by `echo` into a
#    private instance tracebench-<this shell's pid> (set_event_pid + event-fork,
#    same buffer size and clock), which this script creates and removes.
# The two overheads must agree within 15 %.  Output: results/crosscheck/ftrace.json
# (and the suite's run directory under results/crosscheck/ftrace-suite/).
# Exit status: 0 agree, 1 disagree, 2 could not measure.
#
# Environment: BUILD (build dir, default <repo>/build), N (getpid calls per
# reference run, default 4000: about what the suite fires per traced block, so
# the ring buffer's working set is alike), RUNS (reference run pairs per round,
# default 21), REPS (suite repetitions per round, default 10), ROUNDS (suite +
# reference rounds, default 9: the host here alternates between a fast and a
# slow mode for seconds at a time, and three rounds could land the two sides
# in different modes), BUFFER_KB (per-CPU buffer, default 8192).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TB=$BUILD/bench/tracebench
OUT=${OUT:-$ROOT/results/crosscheck}
N=${N:-4000}
RUNS=${RUNS:-21}
REPS=${REPS:-10}
ROUNDS=${ROUNDS:-9}
BUFFER_KB=${BUFFER_KB:-8192}
TOLERANCE=0.15
CPU=$(( $(nproc) - 1 ))
TRACING=/sys/kernel/tracing
INST_NAME=tracebench-$$
INST=$TRACING/instances/$INST_NAME
EVENT=events/syscalls/sys_enter_getpid
WORK=$(mktemp -d /tmp/tracebench-xcheck.XXXXXX)

die() { echo "crosscheck_ftrace: $*" >&2; exit 2; }

cleanup() {
  if [[ -d $INST ]]; then
    echo 0 > "$INST/$EVENT/enable" 2>/dev/null || true
    echo 0 > "$INST/tracing_on" 2>/dev/null || true
    rmdir "$INST" 2>/dev/null || echo "crosscheck_ftrace: could not remove $INST" >&2
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ $(id -u) == 0 ]] || die "needs root (tracefs)"
[[ -x $TB ]] || die "$TB not found; build it first (cmake --build $BUILD --target tracebench) or set BUILD"
command -v python3 >/dev/null || die "python3 not found"
command -v cc >/dev/null || die "a C compiler (cc) is needed"
if [[ ! -e $TRACING/instances ]]; then
  mount -t tracefs nodev "$TRACING" || die "tracefs is not mounted and mounting it failed"
fi
mkdir -p "$OUT"

# ---------------------------------------------------------------- the suite
rm -rf "$OUT/ftrace-suite"
: > "$WORK/suite_paths"
run_suite() {  # $1 = round
  local dir="$OUT/ftrace-suite/round$1"
  "$TB" run --tracer ftrace --workload getpid --repetitions "$REPS" --cpu "$CPU" \
    --option "ftrace.buffer_kb=$BUFFER_KB" --option ftrace.clock=local --no-samples \
    --out "$dir" > "$WORK/suite.log" 2>&1 || { cat "$WORK/suite.log" >&2; die "tracebench run failed"; }
  local json
  json=$(ls -1d "$dir"/*/result.json 2>/dev/null | tail -n 1)
  [[ -n $json ]] || die "tracebench wrote no result.json under $dir"
  echo "$json" >> "$WORK/suite_paths"
}

# ---------------------------------------------------------------- the reference
cc -O2 -o "$WORK/getpid_loop" "$ROOT/scripts/crosscheck_getpid_loop.c"

[[ -e $INST ]] && die "$INST already exists"
mkdir "$INST"
echo "$BUFFER_KB" > "$INST/buffer_size_kb"
echo local > "$INST/trace_clock"
echo 1 > "$INST/options/overwrite"
echo $$ > "$INST/set_event_pid"        # this shell; event-fork adds the loop it forks
echo 1 > "$INST/options/event-fork"
echo 1 > "$INST/tracing_on"

stats_total() {  # entries + overrun + dropped over all CPUs of the instance
  python3 - "$INST" <<'EOF'
import glob, sys
total = 0
for f in glob.glob(sys.argv[1] + "/per_cpu/cpu*/stats"):
    for line in open(f):
        k, _, v = line.partition(":")
        if k.strip() in ("entries", "overrun", "dropped events"):
            total += int(v.split()[0])
print(total)
EOF
}

# getpid calls the loop process makes outside its loop (startup), counted once
# with the event on and N=0, so each traced run must show N + warm-up + this.
echo > "$INST/trace"
echo 1 > "$INST/$EVENT/enable"
taskset -c "$CPU" "$WORK/getpid_loop" 0 > /dev/null
echo 0 > "$INST/$EVENT/enable"
STARTUP_EVENTS=$(( $(stats_total) - 1000 ))

: > "$WORK/ref.jsonl"
run_reference() {  # $1 = round
  local i variant line events
  for ((i = 0; i < RUNS; ++i)); do
    for variant in untraced traced; do
      # Alternate the order so drift does not favour one variant.
      if (( i % 2 == 1 )); then variant=$([[ $variant == untraced ]] && echo traced || echo untraced); fi
      echo > "$INST/trace"                 # empty buffer, counters reset
      [[ $variant == traced ]] && echo 1 > "$INST/$EVENT/enable"
      line=$(taskset -c "$CPU" "$WORK/getpid_loop" "$N")
      [[ $variant == traced ]] && echo 0 > "$INST/$EVENT/enable"
      events=$(stats_total)
      echo "{\"round\": $1, \"variant\": \"$variant\", \"run\": $i, \"events\": $events, \"loop\": $line}" >> "$WORK/ref.jsonl"
    done
  done
}

# Rounds alternate the suite and the reference so slow drift of this shared,
# virtualised machine hits both alike.
for ((round = 0; round < ROUNDS; ++round)); do
  run_suite "$round"
  run_reference "$round"
done

# ---------------------------------------------------------------- compare
python3 - "$ROOT/scripts" "$WORK/suite_paths" "$WORK/ref.jsonl" "$OUT/ftrace.json" "$TOLERANCE" "$CPU" "$BUFFER_KB" "$INST_NAME" "$STARTUP_EVENTS" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import crosscheck_common as cc
suite_list, ref_path, out_path, tol, cpu, buffer_kb, inst, startup = sys.argv[2:10]
tol, startup = float(tol), int(startup)
suites = cc.load_suites(suite_list, "ftrace", "getpid")
by, pairs, diffs = cc.pair_reference(ref_path)
first = by["traced"][pairs[0]]["loop"]
expected = first["calls"] + first["warmup_calls"] + startup
traced_events = [by["traced"][i]["events"] for i in pairs]
untraced_events = [by["untraced"][i]["events"] for i in pairs]
ref = {
    "method": "C loop of syscall(SYS_getpid) pinned with taskset, timed in chunks (median chunk per "
              "run); event enabled with echo into private instance " + inst + " (set_event_pid=script "
              "pid + event-fork, trace_clock local, overwrite, buffer_size_kb " + buffer_kb + "); "
              "buffer emptied before every run",
    "calls_per_run": first["calls"],
    "chunk_calls": first["chunk"],
    "startup_events_per_process": startup,
    "cpu": int(cpu),
    **cc.reference_summary(by, pairs, diffs),
    "events_expected_per_traced_run": expected,
    "events_seen_per_traced_run": traced_events,
    "events_seen_per_untraced_run": untraced_events,
}
ref["events_verified"] = all(e == expected for e in traced_events) and all(e == 0 for e in untraced_events)
suite, suite_ns, verified = cc.suite_summary(suites, lambda b: {
    "baseline_ns_per_event_p50": b["baseline"]["ns_per_event"]["p50"],
    "traced_ns_per_event_p50": b["traced"]["ns_per_event"]["p50"]})
sys.exit(cc.verdict("ftrace", "syscalls:sys_enter_getpid", suite, suite_ns, verified, ref,
                    ref["events_verified"], tol, out_path))
EOF
