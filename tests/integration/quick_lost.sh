#!/bin/bash
# The quick suite of ftrace, LTTng-UST and perf loses no events with the adapters'
# default buffers: every benchmark recorded what it fired (lost under 1% of
# it) and passed verification.  Default sizes that overflow (ftrace's
# per-CPU buffer under a block of 1 KiB marker writes, an LTTng channel
# under 1 KiB records, a perf ring its consumer thread cannot empty in time)
# show as lost events here.  Skips (77) when none
# of them is available.
set -euo pipefail
tracebench=$1
src=$2
out=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$out"' EXIT

tracers=()
for t in $("$tracebench" env --json | /usr/bin/python3 -c '
import json, sys
for t in json.load(sys.stdin)["tracers"]:
    if t["name"] in ("ftrace", "lttng", "perf") and t["available"]:
        print(t["name"])'); do
  tracers+=(-t "$t")
done
[ ${#tracers[@]} -gt 0 ] || { echo "skip: none of ftrace, lttng, perf is available here"; exit 77; }

"$tracebench" run --quick "${tracers[@]}" --no-samples --wait-lock --out "$out" > "$out/stdout.txt" 2> "$out/stderr.txt" ||
  { cat "$out/stderr.txt"; exit 1; }
/usr/bin/python3 - "$out"/*/result.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
for b in r["benchmarks"]:
    e = b["events"]
    lost, recorded = e.get("lost") or 0, e.get("recorded") or 0
    share = lost / (lost + recorded) if lost + recorded else 0.0
    line = f'{b["name"]}: recorded {recorded}, lost {lost} ({100 * share:.2f}%), {e["verification"]}'
    print(line)
    if share >= 0.01 or e["verification"] != "passed":
        bad.append(line)
assert r["benchmarks"], "no benchmark ran"
assert not bad, "lost events or failed verification with the default buffers:\n  " + "\n  ".join(bad)
PY
