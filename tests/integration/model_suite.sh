#!/bin/bash
# `tracebench model suite` end to end on one real tracer (perf: four
# scenarios, its handler sweep, the fit, four paced validations, one of them a
# profile probe whose events are its timer's firings): every step
# succeeds, Table 7 has a measured and predicted row per scenario, every
# validation is schema-valid, and nothing is left behind. Bad input is refused
# before anything runs; Ctrl-C stops the suite with 130 and leaves nothing.
set -euo pipefail
tb=$1
src=$2
out=$(mktemp -d /tmp/tracebench-suite-XXXXXX)
trap 'rm -rf "$out"' EXIT

set +e
"$tb" model suite -t nosuch --quick --out "$out/bad" > "$out/bad.txt" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "unknown tracer 'nosuch'" "$out/bad.txt" && [ ! -e "$out/bad" ] || {
  echo "unknown tracer: exit $rc"; cat "$out/bad.txt"; exit 1; }
mkdir -p "$out/full" && touch "$out/full/x"
set +e
"$tb" model suite -t perf --quick --out "$out/full" > "$out/bad2.txt" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "not empty" "$out/bad2.txt" && [ "$(ls "$out/full")" = x ] || {
  echo "non-empty --out: exit $rc"; cat "$out/bad2.txt"; exit 1; }

"$tb" model suite -t perf --quick --out "$out/s" > "$out/s.txt" 2>&1 || { echo "suite failed"; cat "$out/s.txt"; exit 1; }
for f in table7.md suite.json model.json model.md; do [ -s "$out/s/$f" ] || { echo "missing $f"; exit 1; }; done
for v in "$out"/s/validation/*.json; do /usr/bin/python3 "$src/scripts/validate_result.py" "$v"; done
/usr/bin/python3 - "$out/s" <<'PY'
import json, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "suite.json")))
assert s["steps"] and all(x["exit_code"] == 0 for x in s["steps"]), s["steps"]
assert any("model fit" in x["command"] for x in s["steps"])
names = sorted(os.listdir(os.path.join(d, "validation")))
assert names == ["perf-pid.json", "perf-profile.json", "perf-sys.json", "perf-sys10.json"], names
for n in names:
    v = json.load(open(os.path.join(d, "validation", n)))
    assert v["events"]["verification"] == "passed", v["events"]
    assert v["predicted"]["probe_cycles"] > 0 and v["measured"]["rate_hz"] > 0, v
prof = json.load(open(os.path.join(d, "validation", "perf-profile.json")))
assert prof["scenario"]["probe_kind"] == "profile" and prof["scenario"]["workload"] == "spin", prof["scenario"]
# Its events are the timer's firings: fewer a second than the paced ops.
assert 0 < prof["measured"]["timer_firings"] and prof["measured"]["rate_hz"] < prof["measured"]["ops_hz"], prof["measured"]
sys10 = json.load(open(os.path.join(d, "validation", "perf-sys10.json")))
assert sys10["scenario"]["handlers"] == 10 and sys10["scenario"]["predicate_true"] == 0, sys10["scenario"]
m = json.load(open(os.path.join(d, "model.json")))
e = {(x["tracer"], x["probe_kind"], x["action"]): x for x in m["entries"]}[("perf", "syscall", "count")]
assert e["parameters"]["false_predicate"]["cycles"] is not None, e["parameters"]["false_predicate"]
t = open(os.path.join(d, "table7.md")).read()
assert ("perf", "profile", "count") in {(x["tracer"], x["probe_kind"], x["action"]) for x in m["entries"]}
for sc in ("sys", "sys10", "pid", "profile"):
    assert f"| perf | {sc} |" in t, t
print("ok: perf Table 7 rows:", [l for l in t.splitlines() if l.startswith("| perf")])
PY

# Ctrl-C while the suite measures: the running step tears its tracer down,
# the suite stops with 130.
"$tb" model suite -t ftrace --quick --out "$out/int" > "$out/int.txt" 2>&1 &
pid=$!
sleep 6
kill -INT $pid
set +e
wait $pid; rc=$?
set -e
[ $rc -eq 130 ] || { echo "SIGINT during suite: exit $rc, not 130"; cat "$out/int.txt"; exit 1; }
"$src/scripts/leftovers.sh" > "$out/left.txt" 2>&1 || { echo "suite left objects behind:"; cat "$out/left.txt"; exit 1; }
echo "model suite: ok"
