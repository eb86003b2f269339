#!/bin/bash
# `tracebench model fit` and `model predict` end to end on a real tracer: a
# quick payload sweep of ftrace's trace_marker, the model fitted from it
# (schema-valid, fixed and per-byte costs with intervals), a prediction that
# is eq. 4 of that model, and bad input refused with nothing written.
set -euo pipefail
tb=$1
src=$2
out=$(mktemp -d /tmp/tracebench-model-XXXXXX)
trap 'rm -rf "$out"' EXIT

"$tb" run -t ftrace -w marker -a payload -p 0 -p 1024 -p 4000 --quick --out "$out/runs" > "$out/run.txt"
"$tb" model fit "$out/runs" --out "$out/model.json" > "$out/fit.txt"
for f in model.json model.md model.csv; do [ -s "$out/$f" ] || { echo "missing $f"; exit 1; }; done
/usr/bin/python3 "$src/scripts/validate_result.py" "$out/model.json"
grep -q '^## ftrace' "$out/model.md" || { echo "model.md has no ftrace section"; cat "$out/model.md"; exit 1; }

cat > "$out/scenario.json" <<'JSON'
{"probes": [{"tracer": "ftrace", "probe_kind": "marker", "action": "payload", "payload_bytes": 2048,
             "rate_hz": 10000}]}
JSON
"$tb" model predict --model "$out/model.json" "$out/scenario.json" --json --out "$out/prediction.json" > /dev/null
/usr/bin/python3 - "$out/model.json" "$out/prediction.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
e = {(x["tracer"], x["probe_kind"], x["action"]): x for x in m["entries"]}[("ftrace", "marker", "payload")]
fixed, per_byte = e["parameters"]["fixed"], e["parameters"]["per_byte"]
for name, q in (("fixed", fixed), ("per_byte", per_byte)):
    assert q["cycles"] is not None, (name, q)
    assert q["ci_low"] <= q["cycles"] <= q["ci_high"], (name, q)
assert fixed["cycles"] > 0 and per_byte["cycles"] > 0, (fixed, per_byte)
assert len(e["fit"]["points"]) == 3 and e["fit"]["r2"] is not None
want = fixed["cycles"] + 2048 * per_byte["cycles"]
got = p["probes"][0]["cycles"]
assert abs(got - want) < 1e-6 * want, (got, want)
cpu = 100 * 10000 * want / m["context"]["tsc_hz"]
assert abs(p["cpu_percent"]["total"] - cpu) < 1e-9 * max(cpu, 1), (p["cpu_percent"], cpu)
print(f"ok: ftrace marker fixed {fixed['cycles']:.0f} cycles, {per_byte['cycles']:.3f} cycles/byte, "
      f"R2 {e['fit']['r2']:.3f}; 2048 B at 10 kHz: {p['cpu_percent']['total']:.2f} % CPU")
PY

# Bad input: a clear error, exit 2, nothing written.
expect_refusal() {
  local want=$1; shift
  set +e
  msg=$("$@" 2>&1); rc=$?
  set -e
  [ $rc -eq 2 ] || { echo "exit $rc, not 2: $*: $msg"; exit 1; }
  echo "$msg" | grep -q -- "$want" || { echo "unclear error for $*: $msg"; exit 1; }
}
expect_refusal "nothing-here" "$tb" model fit "$out/nothing-here" --out "$out/m2.json"
expect_refusal "ending in .json" "$tb" model fit "$out/runs" --out "$out/m2.txt"
echo '{"probes": [{"tracer": "ftrace", "probe_kind": "marker", "action": "payload"}]}' > "$out/bad.json"
expect_refusal "rate_hz" "$tb" model predict --model "$out/model.json" "$out/bad.json"
echo '{"probes": [{"tracer": "lttng", "probe_kind": "syscall", "action": "x", "rate_hz": 1}]}' > "$out/other.json"
expect_refusal "no entry for lttng" "$tb" model predict --model "$out/model.json" "$out/other.json"
expect_refusal "not a tracebench model" "$tb" model predict --model "$out/runs/"*/result.json "$out/scenario.json"
[ ! -e "$out/m2.json" ] && [ ! -e "$out/m2.md" ] && [ ! -e "$out/m2.txt" ] || { echo "a refused fit wrote files"; exit 1; }
echo "model fit/predict: ok"
