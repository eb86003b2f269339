#!/bin/bash
# scripts/detector-power.sh end to end, small (pools of 10 and 5 runs, two
# trials per cell): both files written, every cell counted over the trials,
# the calibrated injections at 5% and 10% of the measured cost; a non-empty
# --out is refused.  (The tables under results/detector-power/ come from full-size runs.)
set -euo pipefail
tracebench=$1
src=$2
out=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$out"' EXIT
bash "$src/scripts/detector-power.sh" --tracebench "$tracebench" --out "$out/p" --pool-a 10 --pool-injected 5 \
  --trials 2 > "$out/log.txt" 2>&1 || { cat "$out/log.txt"; exit 1; }
/usr/bin/python3 - "$out/p/power.json" "$out/p/power.md" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read()
assert p["trials"] == 2 and p["pool_a"] == 10 and p["pool_injected"] == 5, p
c = p["cycles_per_event"]
assert abs(p["injected_cycles"]["5%"] - 0.05 * c) <= 1 and abs(p["injected_cycles"]["10%"] - 0.10 * c) <= 1, p
cells = {(r["runs_per_side"], r["detector"]) for r in p["rows"]}
assert cells == {(1, "compare"), (3, "compare"), (5, "compare"), (3, "changes"), (5, "changes")}, cells
for r in p["rows"]:
    for case in ("A/A", "5%", "10%"):
        assert 0 <= r[case] <= 2, r
assert md.count("\n| ") == 6, md  # header + five rows
print("detector power: ok")
PY
mkdir -p "$out/busy" && touch "$out/busy/x"
if bash "$src/scripts/detector-power.sh" --tracebench "$tracebench" --out "$out/busy" > /dev/null 2>&1; then
  echo "a non-empty --out was accepted"; exit 1
fi
