#!/bin/bash
# Cross-checks the harness's untraced syscall cost against an independent
# tool: `perf bench syscall basic` (Debian linux-perf), which times a loop of
# getppid(2).  Runs are interleaved (tracebench, perf, tracebench, ...) on the
# same CPU, and the medians compared.  Writes results/crosscheck/baseline.json.
#   scripts/crosscheck_baseline.sh [build-dir] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-5}
tb=$build/bench/tracebench
cpu=$(( $(nproc) - 1 ))
loops=1000000
work=$(mktemp -d /tmp/tracebench-xcheck-XXXXXX)
trap 'rm -rf "$work"' EXIT

command -v perf >/dev/null || { echo "perf not installed (Debian package linux-perf)" >&2; exit 2; }
for i in $(seq "$rounds"); do
  "$tb" run --tracer none --workload getppid --workload getpid --quick --no-samples --cpu "$cpu" \
    --out "$work/tb" > /dev/null
  # -f simple prints the total seconds for $loops calls.
  taskset -c "$cpu" perf bench -f simple syscall basic -l "$loops" >> "$work/perf.txt"
done

mkdir -p results/crosscheck
/usr/bin/python3 - "$work" "$loops" <<'PY' > results/crosscheck/baseline.json.tmp
import glob, json, statistics, sys
work, loops = sys.argv[1], int(sys.argv[2])
tb = {"getpid": [], "getppid": []}
tb_mean = {"getpid": [], "getppid": []}
ctx = None
for path in sorted(glob.glob(f"{work}/tb/*/result.json")):
    r = json.load(open(path))
    ctx = r["context"]
    for b in r["benchmarks"]:
        tb[b["workload"]].append(b["baseline"]["ns_per_event"]["p50"])
        tb_mean[b["workload"]].append(b["baseline"]["ns_per_event"]["mean"])
perf_ns = [float(x) * 1e9 / loops for x in open(f"{work}/perf.txt").read().split()]
perf_med = statistics.median(perf_ns)
out = {
    "what": "untraced syscall cost: tracebench none baseline vs `perf bench syscall basic` (getppid loop)",
    "kernel": ctx["kernel"]["release"], "cpu_model": ctx["cpu_model"], "date_utc": ctx["date_utc"],
    "git_sha": ctx["git_sha"], "rounds": len(perf_ns),
    "perf_bench_ns_per_call": perf_ns, "perf_bench_median_ns": perf_med,
    "tracebench_getppid_p50_ns": tb["getppid"], "tracebench_getpid_p50_ns": tb["getpid"],
    "tracebench_getppid_mean_ns": tb_mean["getppid"],
    "ratio_getppid_median": statistics.median(tb["getppid"]) / perf_med,
    "ratio_getpid_median": statistics.median(tb["getpid"]) / perf_med,
    "ratio_getppid_mean": statistics.median(tb_mean["getppid"]) / perf_med,
}
out["within_15_percent"] = abs(out["ratio_getppid_median"] - 1) <= 0.15
print(json.dumps(out, indent=2))
PY
mv results/crosscheck/baseline.json.tmp results/crosscheck/baseline.json
/usr/bin/python3 -c "
import json; r=json.load(open('results/crosscheck/baseline.json'))
print(f\"perf bench {r['perf_bench_median_ns']:.1f} ns/call; tracebench getppid p50 ratio {r['ratio_getppid_median']:.3f}, getpid {r['ratio_getpid_median']:.3f}, mean ratio {r['ratio_getppid_mean']:.3f}; within 15%: {r['within_15_percent']}\")"
