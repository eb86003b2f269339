#!/bin/bash
# The calibrated regression injector (none.inject_cycles): a run with 500
# cycles injected per event measures the workload ~500 cycles slower than a
# run without, in both blocks (the overhead stays ~0), and says so in its
# details; a bad value is refused.
set -euo pipefail
tracebench=$1
out=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$out"' EXIT
"$tracebench" run -t none -w call --quick --out "$out/plain" > /dev/null 2>&1
"$tracebench" run -t none -w call -o none.inject_cycles=500 --quick --out "$out/inj" > /dev/null 2>&1
/usr/bin/python3 - "$out"/plain/*/result.json "$out"/inj/*/result.json <<'PY'
import json, sys
plain = json.load(open(sys.argv[1]))["benchmarks"][0]
inj = json.load(open(sys.argv[2]))["benchmarks"][0]
d = inj["baseline"]["cycles_per_event"]["p50"] - plain["baseline"]["cycles_per_event"]["p50"]
t = inj["traced"]["cycles_per_event"]["p50"] - plain["traced"]["cycles_per_event"]["p50"]
print(f"injected 500 cycles: baseline +{d:.1f}, traced +{t:.1f}, overhead {inj['overhead_cycles_per_event']['median']:.1f}")
assert 400 <= d <= 650 and 400 <= t <= 650, (d, t)
assert abs(inj["overhead_cycles_per_event"]["median"]) < 50, inj["overhead_cycles_per_event"]
assert inj["tracer_details"] == {"inject_cycles": 500}, inj["tracer_details"]
assert plain["tracer_details"] == {}, plain["tracer_details"]
PY
if "$tracebench" run -t none -w call -o none.inject_cycles=2000000 --quick --out "$out/bad" > "$out/bad.txt" 2>&1; then
  echo "an out-of-range injection was accepted"; exit 1
fi
grep -q 'inject_cycles' "$out/bad.txt"
echo "inject: ok"
