#!/usr/bin/env bash
# Fidelity cross-check for the perf adapter (optional companion of
# crosscheck_ftrace.sh).
#
# 1. The suite: `tracebench run --tracer perf --workload getpid` (tracepoint
#    syscalls:sys_enter_getpid, period 1, RAW|TID|TIME, mmap rings drained by a
#    consumer thread), overhead read from its result.json.
# 2. The standard tool: `perf record -e syscalls:sys_enter_getpid -c 1` around
#    a plain C loop of syscall(SYS_getpid) pinned to the same CPU, against the
#    same loop without perf.  perf record samples more fields (IP, PERIOD, ...)
#    and runs its consumer as another process, so this is a sanity check of the
#    order of magnitude first; agreement within the tolerance is reported, not
#    assumed.
# Output: results/crosscheck/perf.json.  Exit: 0 agree, 1 disagree, 2 could not measure.
# Environment: BUILD, N (calls per run, default 4000), RUNS (pairs per round,
# default 15), REPS (suite repetitions, default 10), ROUNDS (default 3),
# MMAP_PAGES (both sides, default 64).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TB=$BUILD/bench/tracebench
OUT=${OUT:-$ROOT/results/crosscheck}
N=${N:-4000}
RUNS=${RUNS:-15}
REPS=${REPS:-10}
ROUNDS=${ROUNDS:-3}
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

cat > "$WORK/getpid_loop.c" <<'EOF'
// N getpid syscalls timed in chunks; JSON with the median chunk per call.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 4000, chunk = 50, warm = 1000;
  long chunks = n / chunk;
  double *per = malloc(sizeof(double) * (chunks ? chunks : 1));
  if (!per) return 1;
  for (long i = 0; i < warm; ++i) syscall(SYS_getpid);
  for (long c = 0; c < chunks; ++c) {
    double a = now_ns();
    for (long i = 0; i < chunk; ++i) syscall(SYS_getpid);
    per[c] = (now_ns() - a) / chunk;
  }
  double median = 0;
  if (chunks) {
    qsort(per, chunks, sizeof(double), cmp);
    median = chunks % 2 ? per[chunks / 2] : (per[chunks / 2 - 1] + per[chunks / 2]) / 2;
  }
  printf("{\"calls\": %ld, \"warmup_calls\": %ld, \"chunk\": %ld, \"ns_per_call_median_chunk\": %.4f}\n",
         chunks * chunk, warm, chunk, median);
  return 0;
}
EOF
cc -O2 -o "$WORK/getpid_loop" "$WORK/getpid_loop.c"

: > "$WORK/suite_paths"
run_suite() {
  local dir="$OUT/perf-suite/round$1" json
  "$TB" run --tracer perf --workload getpid --repetitions "$REPS" --cpu "$CPU" \
    --option "perf.mmap_pages=$MMAP_PAGES" --no-samples --out "$dir" > "$WORK/suite.log" 2>&1 ||
    { cat "$WORK/suite.log" >&2; die "tracebench run failed"; }
  json=$(ls -1d "$dir"/*/result.json 2>/dev/null | tail -n 1)
  [[ -n $json ]] || die "tracebench wrote no result.json under $dir"
  echo "$json" >> "$WORK/suite_paths"
}

samples_of() {  # sample count of a perf.data (perf script, one line per sample)
  perf script -i "$1" -F tid 2>/dev/null | wc -l
}

: > "$WORK/ref.jsonl"
run_reference() {
  local i variant line samples
  for ((i = 0; i < RUNS; ++i)); do
    for variant in untraced traced; do
      if (( i % 2 == 1 )); then variant=$([[ $variant == untraced ]] && echo traced || echo untraced); fi
      if [[ $variant == traced ]]; then
        perf record -q -e syscalls:sys_enter_getpid -c 1 -m "$MMAP_PAGES" -o "$WORK/perf.data" \
          -- taskset -c "$CPU" "$WORK/getpid_loop" "$N" > "$WORK/loop.out" 2> "$WORK/perf.err" ||
          { cat "$WORK/perf.err" >&2; die "perf record failed"; }
        line=$(cat "$WORK/loop.out")
        samples=$(samples_of "$WORK/perf.data")
      else
        line=$(taskset -c "$CPU" "$WORK/getpid_loop" "$N")
        samples=0
      fi
      echo "{\"round\": $1, \"variant\": \"$variant\", \"run\": $i, \"samples\": $samples, \"loop\": $line}" >> "$WORK/ref.jsonl"
    done
  done
}

rm -rf "$OUT/perf-suite"
for ((round = 0; round < ROUNDS; ++round)); do
  run_suite "$round"
  run_reference "$round"
done

python3 - "$WORK/suite_paths" "$WORK/ref.jsonl" "$OUT/perf.json" "$TOLERANCE" "$CPU" "$MMAP_PAGES" "$(perf --version)" <<'EOF'
import json, statistics, sys, datetime, platform
suite_list, ref_path, out_path, tol, cpu, pages, perf_version = sys.argv[1:8]
tol = float(tol)
suites = []
for path in open(suite_list).read().split():
    doc = json.load(open(path))
    b = [x for x in doc["benchmarks"] if x["tracer"] == "perf" and x["workload"] == "getpid"]
    if not b:
        sys.exit("crosscheck_perf: no perf/getpid benchmark in " + path)
    suites.append((path, b[0]))
runs = [json.loads(l) for l in open(ref_path)]
by = {"untraced": {}, "traced": {}}
for r in runs:
    by[r["variant"]][(r["round"], r["run"])] = r
pairs = sorted(set(by["untraced"]) & set(by["traced"]))
key = "ns_per_call_median_chunk"
diffs = [by["traced"][p]["loop"][key] - by["untraced"][p]["loop"][key] for p in pairs]
minimum = runs[0]["loop"]["calls"] + runs[0]["loop"]["warmup_calls"]
samples = [by["traced"][p]["samples"] for p in pairs]
ref = {
    "method": "perf record -e syscalls:sys_enter_getpid -c 1 -m " + pages + " around a C loop of "
              "syscall(SYS_getpid) pinned with taskset, timed in chunks (median chunk per run), "
              "against the same loop without perf",
    "perf_version": perf_version,
    "run_pairs": len(pairs),
    "cpu": int(cpu),
    "untraced_ns_per_call_median": statistics.median(by["untraced"][p]["loop"][key] for p in pairs),
    "traced_ns_per_call_median": statistics.median(by["traced"][p]["loop"][key] for p in pairs),
    "overhead_ns_per_call": statistics.median(diffs),
    "estimator": "median over all run pairs of (traced - untraced) median-chunk ns per call",
    "overhead_ns_per_pair": diffs,
    "loop_calls_per_traced_run": minimum,
    "samples_per_traced_run": samples,
    # perf record also sees the process's startup getpid calls, so >=.
    "samples_verified": all(s >= minimum for s in samples),
}
ok = [b for _, b in suites if b["status"] == "ok" and b.get("overhead_ns_per_event") is not None]
status_ok = bool(suites) and len(ok) == len(suites)
verified = status_ok and all(b["events"]["verification"] == "passed" for b in ok)
rounds = [b["overhead_ns_per_event"]["median"] for b in ok]
suite_ns = statistics.median(rounds) if status_ok else None
result = {
    "schema": "tracebench.crosscheck",
    "schema_version": 1,
    "tracer": "perf",
    "event": "syscalls:sys_enter_getpid",
    "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "kernel": platform.release(),
    "suite": {
        "overhead_ns_per_event": suite_ns,
        "estimator": "median over rounds of each run's overhead_ns_per_event.median",
        "round_overheads_ns": rounds,
        "events_verified": verified,
        "rounds": [{"result_json": p, "status": b["status"], "error": b.get("error", ""),
                    "options": b.get("options", {}), "overhead_ns_per_event": b.get("overhead_ns_per_event"),
                    "events": b["events"], "tracer_details": b.get("tracer_details", {})} for p, b in suites],
    },
    "reference": ref,
    "tolerance": tol,
}
if status_ok and ref["overhead_ns_per_call"] > 0:
    rel = (suite_ns - ref["overhead_ns_per_call"]) / ref["overhead_ns_per_call"]
    result["relative_difference"] = rel
    result["agree"] = abs(rel) <= tol and verified and ref["samples_verified"]
else:
    result["relative_difference"] = None
    result["agree"] = False
json.dump(result, open(out_path, "w"), indent=2)
print(json.dumps({"suite_overhead_ns": suite_ns, "reference_overhead_ns": ref["overhead_ns_per_call"],
                  "relative_difference": result["relative_difference"], "agree": result["agree"],
                  "out": out_path}))
sys.exit(0 if result["agree"] else 1)
EOF
