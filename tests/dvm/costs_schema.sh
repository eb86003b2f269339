#!/bin/bash
# The D-VM cost tables in quick mode (every cell, Table 7 with 0.2 s phases):
# result.json valid against the suite's results schema, and the tables'
# invariants: every timed cell "ok" with baseline, traced and overhead
# figures, finite, its interval around its median; the consumer's cells
# "skipped" with the reason, never given an invented baseline; every table
# cell and target in dvm_costs.json a finite number (no NaN under a filter);
# the Markdown lists every target.
set -euo pipefail
costs=$1
src=$2
out=$(mktemp -d /tmp/tracebench-dvm-costs-XXXXXX)
trap 'rm -rf "$out"' EXIT
"$costs" --dvm_out="$out" --dvm_validation_seconds=0.2 > "$out/stdout.txt"
results=("$out"/*/result.json)
[ ${#results[@]} -eq 1 ] || { echo "expected one result.json, got ${#results[@]}"; exit 1; }
/usr/bin/python3 "$src/scripts/validate_result.py" "${results[0]}"
/usr/bin/python3 - "${results[0]}" "$out/dvm_costs.json" "$out/dvm_costs.md" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
b = {x["action"]: x for x in r["benchmarks"]}
timed = [k for k, x in b.items() if not k.startswith("table3/")]
for cell in timed:
    x = b[cell]
    assert x["status"] == "ok", (cell, x["status"], x["error"])
    for v in ("baseline", "traced"):
        assert x[v]["cycles_per_event"]["n"] == x[v]["samples"] >= 2, (cell, v)
    o = x["overhead_cycles_per_event"]
    assert all(math.isfinite(o[k]) for k in ("median", "ci_low", "ci_high")), (cell, o)
    assert o["ci_low"] <= o["median"] <= o["ci_high"], (cell, o)
t3 = [x for k, x in b.items() if k.startswith("table3/")]
assert t3, "no Table 3 cell"
for x in t3:
    assert x["status"] == "skipped" and "paired baseline" in x["error"], x["action"]
    assert x["overhead_cycles_per_event"] is None and x["baseline"]["cycles_per_event"] is None
for need in ("table1/mixed", "table6/static/count_tid", "table4/action/llquantize", "table4/action/stddev",
             "table5/switch_one_cpu"):
    assert need in b, f"no cell {need}"

t = json.load(open(sys.argv[2]))
def numbers(v, path):
    if isinstance(v, dict):
        for k, w in v.items():
            yield from numbers(w, f"{path}.{k}")
    elif isinstance(v, list):
        for i, w in enumerate(v):
            yield from numbers(w, f"{path}[{i}]")
    elif v is None:
        yield path, None
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        yield path, v
skip = {"table6_flow.providers.profile.stage2_4_derived",  # the profile provider's is the signal round trip
        "table6_flow.providers.profile.flow_10ecb", "table6_flow.providers.profile.count",
        "table6_flow.providers.profile.count_tid"}
bad = [(p, v) for key in ("table1_instructions", "table2_builtins", "table3_consumer", "table4_actions",
                          "table5_context_switch", "table6_flow", "table7_validation", "targets")
       for p, v in numbers(t[key], key)
       if not any(p.startswith(s) for s in skip) and (v is None or not math.isfinite(v))]
assert not bad, f"cells not measured (null or NaN): {bad[:10]}"
assert set(t["targets"]) == {"site_disabled", "count_end_to_end", "count_tid_end_to_end", "ecb_prepare", "alu_add",
                             "mixed_per_insn"}, sorted(t["targets"])
# The paced check is in cycles per event; no CPU share is derived from them
# (the D-VM's Table 7 measures CPU: tracebench model suite -t dvm).
for v in t["table7_validation"]:
    assert {"predicted_probe_cycles", "measured_probe_cycles", "error_cycles"} <= set(v), sorted(v)
    assert not [k for k in v if "cpu" in k], f"a CPU share computed from cycles: {sorted(v)}"
md = open(sys.argv[3]).read()
assert "CPU %" not in md.split("checked bottom up")[-1].split("## Targets")[0], "the paced check prints a CPU share"
for row in ("| disabled site | <= 2 |", "| mixed instruction stream, per instruction | <= 5 |",
            "| one ECB with @[tid] = count(), end to end | <= 150 |"):
    assert row in md, f"no target row {row!r}"
print(f"ok: {len(b)} cells ({len(t3)} consumer cells skipped with the reason), every table cell and target measured")
PY
