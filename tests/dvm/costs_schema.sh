#!/bin/bash
# The D-VM cost tables write a result.json valid against the suite's results
# schema: a few cells of each kind (timed with a baseline, timed against the
# floor, counted by the consumer), quickly.  Every timed cell is "ok" with
# baseline, traced and overhead figures; the consumer's cells are "skipped"
# with the reason, never given an invented baseline.
set -euo pipefail
costs=$1
src=$2
out=$(mktemp -d /tmp/tracebench-dvm-costs-XXXXXX)
trap 'rm -rf "$out"' EXIT
"$costs" --benchmark_filter='^table1/(add|mul)/|^table6/site_disabled/|^table3/' --dvm_out="$out" \
  --dvm_validation_seconds=0.1 > "$out/stdout.txt"
results=("$out"/*/result.json)
[ ${#results[@]} -eq 1 ] || { echo "expected one result.json, got ${#results[@]}"; exit 1; }
/usr/bin/python3 "$src/scripts/validate_result.py" "${results[0]}"
/usr/bin/python3 - "${results[0]}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = {x["action"]: x for x in r["benchmarks"]}
for cell in ("table1/add", "table1/mul", "table6/site_disabled"):
    x = b[cell]
    assert x["status"] == "ok", (cell, x["status"], x["error"])
    for v in ("baseline", "traced"):
        assert x[v]["cycles_per_event"]["n"] == x[v]["samples"] >= 2, (cell, v)
    o = x["overhead_cycles_per_event"]
    assert o["ci_low"] <= o["median"] <= o["ci_high"], (cell, o)
    assert abs(o["median"] - x["tracer_details"]["cycles_median"]) < 0.5 + 0.1 * abs(o["median"]), (cell, o)
t3 = [x for k, x in b.items() if k.startswith("table3/")]
assert t3, "no Table 3 cell"
for x in t3:
    assert x["status"] == "skipped" and "paired baseline" in x["error"], x["action"]
    assert x["overhead_cycles_per_event"] is None and x["baseline"]["cycles_per_event"] is None
print(f"ok: {len(b)} cells, {len(t3)} consumer cells skipped with the reason")
PY
