#!/bin/bash
# One site, two tracers (bench/same_site.cc): the D-VM `record` action and an
# LTTng-UST tracepoint on the same 64-byte payload.  Checks that each tracer
# recorded the events fired (drops accounted) with every payload byte verified, that
# the untraced baseline is the same loop for both (same workload), and that
# the run refuses an action the tracers do not have without touching anything.
set -euo pipefail
tracebench=$1
src=$2
out=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$out"' EXIT

. "$src/tests/common/once_more_if_unsteady.sh"
same_site_run() {
  "$tracebench" run --tracer dvm lttng --workload same_site --action record --payload 64 --quick \
    --out "$out" > "$out/stdout.txt"
}
tb_once_more_if_unsteady "$src" "$out" same_site_run
run=$(echo "$out"/*/)
/usr/bin/python3 "$src/scripts/validate_result.py" --require-ok "$run/result.json"
/usr/bin/python3 - "$run/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = {x["tracer"]: x for x in r["benchmarks"]}
assert set(b) == {"dvm", "lttng"}, sorted(b)
for t, x in b.items():
    ev = x["events"]
    assert x["workload"] == "same_site" and x["payload_bytes"] == 64, x["name"]
    assert ev["verification"] == "passed", (t, ev)
    # Drops are allowed when the tracer accounts for them (a consumer thread
    # delayed by steal time on a 2-vCPU guest drops a few ms of records);
    # unaccounted ones fail verification above.  A run that drops more than
    # 5% measures dropping, not recording (the D-VM adapter's payload check
    # once cost ~200 cycles per record in the consumer and dropped 7-35%).
    assert ev["fired"] > 0 and ev["recorded"] + ev["lost"] == ev["fired"], (t, ev)
    assert ev["lost"] <= 0.05 * ev["fired"], (t, ev)
    assert ev["payload_verified_bytes"] == 64 * ev["recorded"], (t, ev)
print("same site: " + ", ".join(f"{t} {x['overhead_ns_per_event']['median']:.1f} ns" for t, x in sorted(b.items())))
PY
if "$tracebench" run --tracer dvm --workload same_site --action no-such-action --quick --out "$out/bad" \
     > "$out/bad.txt" 2>&1; then
  echo "an unknown action must fail"; exit 1
fi
[ ! -e "$out/bad" ] || [ -z "$(ls -A "$out/bad")" ] || { echo "a refused run wrote results"; exit 1; }
echo "same site: ok"
