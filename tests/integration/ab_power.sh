#!/bin/bash
# scripts/ab-power.sh end to end, small: two sessions of `tracebench ab` a
# cell, A/A and B at +50% of the measured cost, with --check: no false
# alarm, every +50% caught (a working sequential test never misses +50% on
# getpid and calls an A/A "same" or leaves it undecided); both files
# written, the injection at its share of the cost and measured so (B's
# cycles over A's within 20% of the injected cycles and A's own spread),
# every session counted; a non-empty --out and a bad
# --levels refused before anything runs.  About 20 s.
set -euo pipefail
tracebench=$1
src=$2
out=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$out"' EXIT
rc=0
bash "$src/scripts/ab-power.sh" --tracebench "$tracebench" --out "$out/p" --trials 2 --levels 0.5 --check \
  --max-false-alarms 0 --min-caught 1 > "$out/log.txt" 2>&1 || rc=$?
cat "$out/log.txt"
[ $rc -eq 0 ] || { echo "ab-power --check exited $rc"; exit 1; }
/usr/bin/python3 - "$out/p/ab-power.json" "$out/p/ab-power.md" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read()
assert p["trials"] == 2 and list(p["injected_cycles"]) == ["+50%"], p["injected_cycles"]
assert abs(p["injected_cycles"]["+50%"] - 0.5 * p["cycles_per_event"]) <= 1, p
cells = {c["case"]: c for c in p["cells"]}
assert set(cells) == {"A/A", "+50%"}, cells
for c in cells.values():
    n = c["regression"] + c["improvement"] + c["same"] + c["inconclusive"]
    assert n == c["trials"] == 2, c
assert cells["+50%"]["regression"] == 2 and cells["A/A"]["regression"] + cells["A/A"]["improvement"] == 0, cells
# B adds what was injected, as its runs measured it (B/A itself moves with
# getpid's own cost, which drifts with the host between calibration and
# trials), within 20% and what A's own runs spread (a busy host's getpid
# moves between levels tens of ns apart from one run to the next).
injected = p["injected_cycles"]["+50%"]
added, spread = cells["+50%"]["median_added_cycles"], cells["+50%"]["median_a_spread_cycles"]
assert added is not None and abs(added - injected) <= 0.2 * injected + spread, (added, injected, spread, cells["+50%"])
assert all(c["ok"] for c in p["checks"]) and len(p["checks"]) == 2, p["checks"]
assert "| A/A | 2 |" in md and "| +50% | 2 |" in md, md
print("ok: ab-power: A/A 0 alarms, +50% caught 2/2 at B/A", round(cells["+50%"]["median_ratio"], 3),
      "adding", round(added), "of", injected, "cycles injected (A's runs spread", round(spread), "cycles)")
PY
mkdir -p "$out/full" && echo x > "$out/full/f"
if bash "$src/scripts/ab-power.sh" --tracebench "$tracebench" --out "$out/full" --trials 1 > "$out/e1.txt" 2>&1; then
  echo "a non-empty --out was accepted"; exit 1
fi
grep -q "is not empty" "$out/e1.txt"
if bash "$src/scripts/ab-power.sh" --tracebench "$tracebench" --out "$out/q" --levels abc > "$out/e2.txt" 2>&1; then
  echo "a bad --levels was accepted"; exit 1
fi
grep -q "shares such as" "$out/e2.txt" && [ ! -e "$out/q" ]
echo "ab-power: ok"
