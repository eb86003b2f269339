#!/bin/bash
# scripts/detector-power.sh at full size with --check --asserted-only: the
# detectors' known answer asserted, not just counted.  Pools of 30 plain runs
# and 15 at +50% (none.inject_cycles), 40 trials per cell: false alarms at
# most 6/40 where the run is the unit (3x3, 5x5), +50% caught at least 30/40
# by compare at 1x1, 3x3, 5x5 and by history changes at 5x5 (the script
# prints what each bound means in binomial terms).  The +5% and +10% pools
# are the machine's figures, measured, not asserted: documented runs
# (results/detector-power/), not this test's.  Also: both files written, the
# injection at its share of the measured cost, every cell counted over the
# trials; a non-empty --out, --check with too few trials and
# --asserted-only without --check are refused.
# A few minutes: label `slow`.
set -euo pipefail
tracebench=$1
src=$2
out=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$out"' EXIT
rc=0
bash "$src/scripts/detector-power.sh" --tracebench "$tracebench" --out "$out/p" --check --asserted-only > "$out/log.txt" 2>&1 || rc=$?
cat "$out/log.txt"
[ -f "$out/p/power.json" ] || { echo "no power.json (exit $rc)"; exit 1; }
/usr/bin/python3 - "$out/p/power.json" "$out/p/power.md" "$rc" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read()
rc = int(sys.argv[3])
assert p["trials"] == 40 and p["pool_a"] == 30 and p["pool_injected"] == 15, p
c = p["cycles_per_event"]
assert list(p["injected_cycles"]) == ["50%"], p["injected_cycles"]
assert abs(p["injected_cycles"]["50%"] - 0.50 * c) <= 1, p
cells = {(r["runs_per_side"], r["detector"]) for r in p["rows"]}
assert cells == {(1, "compare"), (3, "compare"), (5, "compare"), (3, "changes"), (5, "changes")}, cells
for r in p["rows"]:
    for case in ("A/A", "50%"):
        assert 0 <= r[case] <= 40, r
checks = p["checks"]
assert len(checks) == 8, checks
assert md.count("\n| ") == 6 + 9, md  # rows (header + five), checks (header + eight)
bad = [x for x in checks if not x["ok"]]
for x in bad:
    print(f"FAIL: {x['runs_per_side']}x{x['runs_per_side']} {x['detector']} {x['case']}: "
          f"{x['measured']}/{x['trials']}, bound {x['bound']} ({x['meaning']})")
# A catch cell on the runs' medians is asserted only where the runs' spread
# lets that many runs a side see the level; the others say why.
spread = p["run_spread"]
assert spread > 0, p["run_spread"]
for x in checks:
    if x["bound"] == "not asserted":
        assert x["runs_per_side"] >= 2 and x["ok"] and "spread here" in x["meaning"], x
unasserted = ["%dx%d %s" % (x["runs_per_side"], x["runs_per_side"], x["detector"]) for x in checks
              if x["bound"] == "not asserted"]
print(f"run-to-run spread: {spread:.1%}; catch cells not asserted: {unasserted or 'none'}")
assert (rc != 0) == bool(bad), f"exit {rc} with {len(bad)} failed check(s)"
if bad:
    sys.exit(1)
print("detector power: every checked cell within its bound")
PY
# The rule itself on a made-up table: 3x3 compare caught +50% in 26/40 trials
# fails where the spread lets three runs see it (5%) and is not asserted
# where it does not (20%); 1x1 (the repetitions' test) is asserted at any spread.
PYTHONPATH="$src/scripts" /usr/bin/python3 - <<'PY'
import detector_power as d
table = [{"runs_per_side": k, "detector": det, "A/A": 0, "50%": caught}
         for k, det, caught in ((1, "compare", 40), (3, "compare", 26), (5, "compare", 40), (3, "changes", 10),
                                (5, "changes", 40))]
for spread, want in ((0.05, False), (0.20, True)):
    cells = {(c["runs_per_side"], c["detector"], c["case"]): c for c in d.check_cells(table, 40, 0.15, 0.75, "50%", spread, 0.5)}
    c = cells[(3, "compare", "50%")]
    assert (c["bound"] == "not asserted") == want and c["ok"] == want, (spread, c)
    assert cells[(1, "compare", "50%")]["bound"] == ">= 30", cells[(1, "compare", "50%")]
print("detector power: the catch bounds follow the runs' spread (3x3 at 26/40: fails at 5%, not asserted at 20%)")
PY
mkdir -p "$out/busy" && touch "$out/busy/x"
if bash "$src/scripts/detector-power.sh" --tracebench "$tracebench" --out "$out/busy" > /dev/null 2>&1; then
  echo "a non-empty --out was accepted"; exit 1
fi
if bash "$src/scripts/detector-power.sh" --tracebench "$tracebench" --out "$out/few" --check --trials 5 > /dev/null 2>&1; then
  echo "--check with 5 trials was accepted"; exit 1
fi
if bash "$src/scripts/detector-power.sh" --tracebench "$tracebench" --out "$out/lone" --asserted-only > /dev/null 2>&1; then
  echo "--asserted-only without --check was accepted"; exit 1
fi
