#!/usr/bin/env bash
# Fidelity cross-check for the perf adapter (optional companion of
# crosscheck_ftrace.sh).
#
# 1. The suite: `tracebench run --tracer perf --workload getpid` (tracepoint
#    syscalls:sys_enter_getpid, period 1, RAW|TID|TIME, mmap rings drained by a
#    consumer thread), overhead read from its result.json.
# 2. The standard tool: `perf record -e syscalls:sys_enter_getpid -c 1` around
#    a plain C loop of syscall(SYS_getpid) pinned to the same CPU, against the
#    same loop without perf.  The suite asks for the same sample layout as
#    perf record (perf.sample=record: IP|TID|TIME|CPU|PERIOD|RAW); perf record
#    still runs its consumer as another process writing perf.data, so
#    agreement within the tolerance is reported, not assumed.
# Output: results/crosscheck/perf.json.  Exit: 0 agree, 1 disagree, 2 could not measure.
# Environment: BUILD, N (calls per run, default 4000), RUNS (pairs per round,
# default 15), REPS (suite repetitions, default 10), ROUNDS (default 7),
# MMAP_PAGES (both sides, default 64).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TB=$BUILD/bench/tracebench
OUT=${OUT:-$ROOT/results/crosscheck}
N=${N:-4000}
RUNS=${RUNS:-15}
REPS=${REPS:-10}
ROUNDS=${ROUNDS:-7}
MMAP_PAGES=${MMAP_PAGES:-64}
TOLERANCE=0.15
CPU=$(( $(nproc) - 1 ))
WORK=$(mktemp -d /tmp/tracebench-xcheck-perf.XXXXXX)

die() { echo "crosscheck_perf: $*" >&2; exit 2; }
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

[[ $(id -u) == 0 ]] || die "needs root (tracepoint samples)"
[[ -x $TB ]] || die "$TB not found; build it first or set BUILD"
command -v perf >/dev/null || die "perf not found (Debian package linux-perf)"
perf --version >/dev/null 2>&1 || die "perf does not run: $(perf --version 2>&1 | head -1)"
command -v python3 >/dev/null || die "python3 not found"
command -v cc >/dev/null || die "a C compiler (cc) is needed"
mkdir -p "$OUT"

cc -O2 -o "$WORK/getpid_loop" "$ROOT/scripts/crosscheck_getpid_loop.c"

: > "$WORK/suite_paths"
run_suite() {
  local dir="$OUT/perf-suite/round$1" json
  "$TB" run --tracer perf --workload getpid --repetitions "$REPS" --cpu "$CPU" \
    --option "perf.mmap_pages=$MMAP_PAGES" --option perf.sample=record --no-samples --out "$dir" > "$WORK/suite.log" 2>&1 ||
    { cat "$WORK/suite.log" >&2; die "tracebench run failed"; }
  json=$(ls -1d "$dir"/*/result.json 2>/dev/null | tail -n 1)
  [[ -n $json ]] || die "tracebench wrote no result.json under $dir"
  echo "$json" >> "$WORK/suite_paths"
}

samples_of() {  # sample count of a perf.data (perf script, one line per sample)
  perf script -i "$1" -F tid 2>/dev/null | wc -l
}
lost_of() {  # samples perf record lost (ring full): the summed LOST_SAMPLES line of --stats
  perf report -i "$1" --stats 2>/dev/null | awk '/LOST_SAMPLES events:/ {n = $3} END {print n + 0}'
}

: > "$WORK/ref.jsonl"
run_reference() {
  local i variant line samples lost
  for ((i = 0; i < RUNS; ++i)); do
    for variant in untraced traced; do
      if (( i % 2 == 1 )); then variant=$([[ $variant == untraced ]] && echo traced || echo untraced); fi
      if [[ $variant == traced ]]; then
        perf record -q -e syscalls:sys_enter_getpid -c 1 -m "$MMAP_PAGES" -o "$WORK/perf.data" \
          -- taskset -c "$CPU" "$WORK/getpid_loop" "$N" > "$WORK/loop.out" 2> "$WORK/perf.err" ||
          { cat "$WORK/perf.err" >&2; die "perf record failed"; }
        line=$(cat "$WORK/loop.out")
        samples=$(samples_of "$WORK/perf.data")
        lost=$(lost_of "$WORK/perf.data")
      else
        line=$(taskset -c "$CPU" "$WORK/getpid_loop" "$N")
        samples=0 lost=0
      fi
      echo "{\"round\": $1, \"variant\": \"$variant\", \"run\": $i, \"samples\": $samples, \"lost\": $lost, \"loop\": $line}" >> "$WORK/ref.jsonl"
    done
  done
}

rm -rf "$OUT/perf-suite"
for ((round = 0; round < ROUNDS; ++round)); do
  run_suite "$round"
  run_reference "$round"
done

python3 - "$ROOT/scripts" "$WORK/suite_paths" "$WORK/ref.jsonl" "$OUT/perf.json" "$TOLERANCE" "$CPU" "$MMAP_PAGES" "$(perf --version)" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import crosscheck_common as cc
suite_list, ref_path, out_path, tol, cpu, pages, perf_version = sys.argv[2:9]
tol = float(tol)
suites = cc.load_suites(suite_list, "perf", "getpid")
by, pairs, diffs = cc.pair_reference(ref_path)
first = by["traced"][pairs[0]]["loop"]
minimum = first["calls"] + first["warmup_calls"]
samples = [by["traced"][p]["samples"] for p in pairs]
lost = [by["traced"][p]["lost"] for p in pairs]
ref = {
    "method": "perf record -e syscalls:sys_enter_getpid -c 1 -m " + pages + " around a C loop of "
              "syscall(SYS_getpid) pinned with taskset, timed in chunks (median chunk per run), "
              "against the same loop without perf",
    "perf_version": perf_version,
    "cpu": int(cpu),
    **cc.reference_summary(by, pairs, diffs),
    "loop_calls_per_traced_run": minimum,
    "samples_per_traced_run": samples,
    "lost_samples_per_traced_run": lost,
    # perf record also sees the process's startup getpid calls, so >=.
    "samples_verified": all(s + l >= minimum for s, l in zip(samples, lost)),
}
suite, suite_ns, verified = cc.suite_summary(suites, lambda b: {"tracer_details": b.get("tracer_details", {})})
sys.exit(cc.verdict("perf", "syscalls:sys_enter_getpid", suite, suite_ns, verified, ref,
                    ref["samples_verified"], tol, out_path))
EOF
