#!/bin/bash
# Runs the quick suite several times and reports how far the medians of
# repeated runs stray from each other: for every benchmark, the spread
# (max - min) / median over the runs of the baseline median (tracer none) or
# of the median overhead (other tracers).  Writes
# results/crosscheck/repeatability-<tracers>.json.  Arguments after -- go to
# every `tracebench run` (e.g. -- -r 12 -n 500 to try other block sizes).
#   scripts/repeatability.sh [build-dir] [rounds] [tracer ...] [-- run-args ...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-5}
shift 2 || true
tracers=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do tracers+=("$1"); shift; done
[ $# -gt 0 ] && shift
[ ${#tracers[@]} -gt 0 ] || tracers=(none)
args=()
for t in "${tracers[@]}"; do args+=(--tracer "$t"); done
extra=("$@")
work=$(mktemp -d /tmp/tracebench-repeat-XXXXXX)
trap 'rm -rf "$work"' EXIT

start=$(date +%s.%N)
for i in $(seq "$rounds"); do
  "$build/bench/tracebench" run "${args[@]}" --quick --no-samples --out "$work" "${extra[@]}" > /dev/null 2>&1 || true
done
end=$(date +%s.%N)

name=$(IFS=-; echo "${tracers[*]}")
mkdir -p results/crosscheck
/usr/bin/python3 - "$work" "$start" "$end" "${extra[*]}" <<'PY' > "results/crosscheck/repeatability-$name.json.tmp"
import glob, json, statistics, sys
work, start, end, extra = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
runs = [json.load(open(p)) for p in sorted(glob.glob(f"{work}/*/result.json"))]
series = {}
for r in runs:
    for b in r["benchmarks"]:
        if b["status"] != "ok":
            continue
        if b["tracer"] == "none":
            v = b["baseline"]["ns_per_event"]["p50"]
            what = "baseline_p50_ns"
        else:
            v = b["overhead_ns_per_event"]["median"]
            what = "overhead_median_ns"
        series.setdefault(b["name"], {"what": what, "values": []})["values"].append(v)
rows = []
for name, s in sorted(series.items()):
    vals = s["values"]
    med = statistics.median(vals)
    spread = (max(vals) - min(vals)) / med if med > 0 else None
    rows.append({"benchmark": name, "what": s["what"], "values": vals, "median": med, "spread": spread})
ctx = runs[0]["context"] if runs else {}
out = {
    "what": "spread (max-min)/median of per-run medians over repeated quick runs",
    "run_args": ("--quick " + extra).strip(),
    "runs": len(runs), "seconds_per_run": (end - start) / max(len(runs), 1),
    "kernel": ctx.get("kernel", {}).get("release"), "git_sha": ctx.get("git_sha"), "date_utc": ctx.get("date_utc"),
    "benchmarks": rows,
    "within_5_percent": [r["benchmark"] for r in rows if r["spread"] is not None and r["spread"] <= 0.05],
    "beyond_5_percent": [r["benchmark"] for r in rows if r["spread"] is None or r["spread"] > 0.05],
}
print(json.dumps(out, indent=2))
PY
mv "results/crosscheck/repeatability-$name.json.tmp" "results/crosscheck/repeatability-$name.json"
/usr/bin/python3 -c "
import json,sys; r=json.load(open(sys.argv[1]))
print(f\"{r['runs']} runs, {r['seconds_per_run']:.1f} s per run\")
for b in r['benchmarks']:
    s = b['spread']
    print(f\"  {b['benchmark']:<55} median {b['median']:10.2f}  spread {'n/a' if s is None else f'{100*s:.1f}%'}\")
" "results/crosscheck/repeatability-$name.json"
