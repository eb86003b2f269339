#!/bin/bash
# `tracebench ab` on this machine, end to end with the none tracer on getpid:
# a regression planted on side B (none.inject_cycles at 30% of the
# workload's cost per event, calibrated by a first run as
# scripts/detector-power.sh does) is called a regression; an A/A (two
# builds: a copy of the binary as side A, this one as B) is called same or
# inconclusive, never a regression.
# Each pair's runs are kept so `compare` re-reads them as pairs; bad specs
# are refused with exit 2.
set -euo pipefail
tracebench=$1
out=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$out"' EXIT
run_args=(-t none -w getpid --quick)

# Another measuring command may hold the machine lock: wait for it a while.
"$tracebench" run "${run_args[@]}" --wait-lock=60 --no-samples --out "$out/cal" > /dev/null 2>&1
inject=$(/usr/bin/python3 - "$out"/cal/*/result.json <<'PY'
import json, sys
cost = json.load(open(sys.argv[1]))["benchmarks"][0]["baseline"]["cycles_per_event"]["p50"]
print(max(1, round(0.30 * cost)))
PY
)
echo "planting $inject cycles per event on B"

"$tracebench" ab . ":-o none.inject_cycles=$inject" --out "$out/reg" --max-pairs 20 --wait-lock=60 -- "${run_args[@]}" \
  > "$out/reg.txt" 2> "$out/reg.err" || { cat "$out/reg.txt" "$out/reg.err"; exit 1; }
cat "$out/reg.txt"
cp "$tracebench" "$out/tracebench-copy"
"$tracebench" ab "$out/tracebench-copy" . --out "$out/aa" --max-pairs 8 --wait-lock=60 --json -- "${run_args[@]}" > "$out/aa.json" 2> "$out/aa.err" \
  || { cat "$out/aa.err"; exit 1; }
"$tracebench" compare "$out/reg/A" "$out/reg/B" --json > "$out/compare.json"

/usr/bin/python3 - "$out/reg/ab.json" "$out/aa.json" "$out/compare.json" "$out/reg" <<'PY'
import json, os, sys
reg, aa, cmp = (json.load(open(p)) for p in sys.argv[1:4])
row = reg["rows"][0]
print(f"planted: {row['verdict']} after {row['pairs']} pairs, B/A {row['ratio']:.3f}, "
      f"interval [{row['change_low']}, {row['change_high']}]")
assert row["verdict"] == "regression", row
assert row["change_low"] > 0 and row["ratio"] > 1.1, row
assert reg["stopped"] == "decided", reg["stopped"]
# ABBA: A first in odd-numbered pairs, B first in even ones.
assert [p["order"] for p in reg["pairs"][:4]] == ["AB", "BA", "AB", "BA"][:len(reg["pairs"])], reg["pairs"]
n = len(reg["pairs"])
for side in ("A", "B"):
    pairs = sorted(os.listdir(os.path.join(sys.argv[4], side)))
    assert pairs == [f"pair-{i:04d}" for i in range(1, n + 1)], pairs
assert aa["a"]["binary"].endswith("/tracebench-copy") and aa["b"]["binary"] != aa["a"]["binary"], aa["a"]
row = aa["rows"][0]
print(f"A/A: {row['verdict']} after {row['pairs']} pairs, B/A {row['ratio']:.3f}, MDE80 {row['mde_80']}")
assert row["verdict"] in ("same", "inconclusive"), row
if row["verdict"] == "inconclusive":
    assert aa["stopped"].startswith("budget"), aa["stopped"]
c = cmp["rows"][0]
assert c["method"] == "pairs" and c["verdict"] == "regression" and c["mde_80"] is not None, c
PY

# Refusals: exit 2, nothing run.
for bad in "/nonexistent/tracebench" ".:--out x"; do
  rc=0
  "$tracebench" ab . "$bad" --out "$out/bad" -- "${run_args[@]}" > /dev/null 2>&1 || rc=$?
  [ "$rc" = 2 ] || { echo "spec '$bad' gave exit $rc, not 2"; exit 1; }
done
rc=0
"$tracebench" ab . . --out "$out/reg" -- "${run_args[@]}" > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "a non-empty --out gave exit $rc, not 2"; exit 1; }
echo "ab: ok"
