#!/bin/bash
# tracebench history end to end: three real quick runs of the none tracer
# added (and added again: nothing changes; nested as `ab` leaves them, beside
# a folder of notes), listed, shown (a mistyped name
# gets a suggestion); an injected and a concurrent run kept out of the plain
# series; a truncated run refused
# with the database unchanged byte for byte; then a series of 16 runs made
# from a real one with a known +20% step at the 9th (the figure edited in
# copies of result.json) in which `changes` finds the step where it is, and
# --fail-on-change fails on it; and a flat series where it finds none; the
# report draws the stepped series with its change point.
set -euo pipefail
tracebench=$1
work=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$work"' EXIT
db=$work/h.sqlite
name=none/getpid/none/payload:0/threads:1

for i in 1 2 3; do "$tracebench" run -t none -w getpid --quick --out "$work/runs" > /dev/null 2>&1; done
"$tracebench" history add "$work/runs" --db "$db" | tee "$work/add1.txt"
grep -q '3 run(s) added, 0 already there' "$work/add1.txt"
sha=$(sha256sum "$db" | cut -d' ' -f1)
"$tracebench" history add "$work/runs" --db "$db" | grep -q '0 run(s) added, 3 already there'
[ "$(sha256sum "$db" | cut -d' ' -f1)" = "$sha" ] || { echo "adding the same runs again changed the database"; exit 1; }
# As `history add results/*/` names them: runs nested as `ab` leaves them
# (ab-*/pair-*/<run>/) are found, a folder with no run in it is passed over
# and said so; folders with no run at all add nothing and create nothing.
mkdir -p "$work/glob/ab-1/pair-0001" "$work/glob/notes"
cp -r "$(dirname "$(ls "$work"/runs/*/result.json | head -n 1)")" "$work/glob/ab-1/pair-0001/"
"$tracebench" history add "$work/glob/ab-1/" "$work/glob/notes/" --db "$work/g.sqlite" > "$work/glob.txt" 2>&1
grep -q '1 run(s) added' "$work/glob.txt" || { cat "$work/glob.txt"; echo "the nested run was not added"; exit 1; }
grep -q "no run in $work/glob/notes/: passed over" "$work/glob.txt" || { cat "$work/glob.txt"; exit 1; }
set +e; "$tracebench" history add "$work/glob/notes/" --db "$work/none.sqlite" > "$work/none.txt" 2>&1; rc=$?; set -e
[ "$rc" = 2 ] && grep -q 'nothing was added' "$work/none.txt" && [ ! -e "$work/none.sqlite" ] ||
  { cat "$work/none.txt"; echo "a folder with no run: exit $rc, want 2 and no database"; exit 1; }
"$tracebench" history show "$name" --db "$db" | tee "$work/show.txt"
[ "$(grep -c '6\.18\|[0-9]T[0-9]' "$work/show.txt")" -ge 3 ] || { echo "show lacks the three runs"; exit 1; }
"$tracebench" history show "$name" --db "$db" --json | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
assert len(s) == 1 and len(s[0]["points"]) == 3, s
assert all(p["low_ns"] <= p["value_ns"] <= p["high_ns"] for p in s[0]["points"]), s'

# The series, with their run counts; a wrong name gets the nearest ones.
"$tracebench" history list --db "$db" | tee "$work/list.txt"
grep -Eq "^none/getpid/none/payload:0/threads:1 +default +\S+ +3 +3 " "$work/list.txt" || { echo "list lacks getpid's series of 3 runs"; exit 1; }
"$tracebench" history list --db "$db" --json | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s and all(x["runs"] == 3 for x in s), s'
set +e; "$tracebench" history show none/getpid/none/payload:0/threads:2 --db "$db" > "$work/typo.txt" 2>&1; rc=$?; set -e
[ $rc -eq 2 ] && grep -q "did you mean: none/getpid/none/payload:0/threads:1" "$work/typo.txt" ||
  { cat "$work/typo.txt"; echo "a mistyped series name: exit $rc, or no suggestion"; exit 1; }

# Configurations never mix: a run with an injected cost and one measured
# beside another command (context.concurrent) are series of their own.
"$tracebench" run -t none -w getpid --quick -o none.inject_cycles=30 --out "$work/cfg" > /dev/null 2>&1
first=$(ls "$work"/runs/*/result.json | head -n 1)
mkdir -p "$work/cfg/concurrent"
/usr/bin/python3 - "$first" "$work/cfg/concurrent/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["context"]["run_id"] += "-beside"
r["context"]["concurrent"] = True
json.dump(r, open(sys.argv[2], "w"))
PY
"$tracebench" history add "$work/runs" "$work/cfg" --db "$work/cfg.sqlite" > /dev/null
"$tracebench" history list --db "$work/cfg.sqlite" --json | /usr/bin/python3 -c '
import json, sys
s = {x["configuration"]: x["runs"] for x in json.load(sys.stdin)}
assert s == {"": 3, "inject_cycles=30": 1, "concurrent": 1}, s'
"$tracebench" history show "$name" --db "$work/cfg.sqlite" > "$work/cfg.txt"
grep -q "^$name (inject_cycles=30) on " "$work/cfg.txt" && grep -q "^$name (default) on .*(3 runs)" "$work/cfg.txt" ||
  { cat "$work/cfg.txt"; echo "show does not keep the configurations apart"; exit 1; }

# A truncated run among good ones: refused, exit 2, the database unchanged.
mkdir -p "$work/bad"
good=$(ls -d "$work"/runs/*/ | head -1)
cp -r "$good" "$work/bad/x" && head -c 300 "$good/result.json" > "$work/bad/x/result.json"
set +e; "$tracebench" history add "$work/bad" --db "$db" > "$work/bad.txt" 2>&1; rc=$?; set -e
[ $rc -eq 2 ] || { cat "$work/bad.txt"; echo "a truncated run: exit $rc, expected 2"; exit 1; }
grep -q 'nothing was added' "$work/bad.txt"
[ "$(sha256sum "$db" | cut -d' ' -f1)" = "$sha" ] || { echo "a refused add changed the database"; exit 1; }
set +e; "$tracebench" history show "$name" --db "$work/none.sqlite" > /dev/null 2>&1; rc=$?; set -e
[ $rc -eq 2 ] && [ ! -e "$work/none.sqlite" ] || { echo "show on a missing database: exit $rc, or it created one"; exit 1; }

# A series with a known step: 16 copies of a real run, +20% from the 9th on.
/usr/bin/python3 - "$good/result.json" "$work/series" "$work/flat" <<'PY'
import json, os, random, sys
src, out, flat = sys.argv[1:4]
base = json.load(open(src))
rng = random.Random(7)
for d, step in ((out, 1.2), (flat, 1.0)):
    for i in range(16):
        r = json.loads(json.dumps(base))
        r["context"]["run_id"] = f"{os.path.basename(d)}-{i:02d}"
        r["context"]["date_utc"] = f"2026-11-{10 + i:02d}T00:00:00Z"
        b = next(x for x in r["benchmarks"] if x["workload"] == "getpid")
        level = 1000.0 * (step if i >= 8 else 1.0) * (1 + rng.gauss(0, 0.01))
        # The whole distribution scaled, cycles and ns alike: readers refuse
        # a result whose figures do not fit together.
        f = level / b["baseline"]["ns_per_event"]["p50"]
        for k in ("cycles_per_event", "ns_per_event"):
            for s in ("min", "p10", "p50", "p90", "p99", "max", "mean", "stddev", "mad"):
                b["baseline"][k][s] *= f
        b["baseline"]["repetition_medians_cycles"] = [x * f for x in b["baseline"]["repetition_medians_cycles"]]
        os.makedirs(f"{d}/{i:02d}")
        json.dump(r, open(f"{d}/{i:02d}/result.json", "w"))
PY
"$tracebench" history add "$work/series" --db "$work/s.sqlite" > /dev/null
"$tracebench" history changes --db "$work/s.sqlite" --min-change 0.05 | tee "$work/changes.txt"
grep -q "slower at 2026-11-18T00:00:00Z (run series-08" "$work/changes.txt" || { echo "the step was not found at run 8"; exit 1; }
grep -q '1 change(s) in 1 benchmark(s), 1 slower' "$work/changes.txt"
set +e; "$tracebench" history changes --db "$work/s.sqlite" --min-change 0.05 --fail-on-change > /dev/null 2>&1; rc=$?; set -e
[ $rc -eq 1 ] || { echo "--fail-on-change: exit $rc, expected 1"; exit 1; }
"$tracebench" history add "$work/flat" --db "$work/f.sqlite" > /dev/null
"$tracebench" history changes --db "$work/f.sqlite" --min-change 0.05 --fail-on-change | grep -q '0 change(s)'

# The report draws the series with its change point (no runs needed).
"$tracebench" report --history "$work/s.sqlite" --out "$work/report" > /dev/null
grep -q '<h2>History</h2>' "$work/report/index.html" || { echo "report: no History section"; exit 1; }
grep -q "id='history-0'><svg" "$work/report/index.html" || { echo "report: no history figure"; exit 1; }
/usr/bin/python3 - "$work/report/report-input.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["history"]
assert len(h["series"]) == 1 and len(h["series"][0]["points"]) == 16, h
c = h["series"][0]["changes"]
assert len(c) == 1 and c[0]["run_id"] == "series-08" and 0.15 < c[0]["relative_change"] < 0.25, c
PY
grep -q '| series-08 | 2026-11-18T00:00:00Z' "$work/report/report.md" || { echo "report: the change is not in the table"; exit 1; }
# Refused, nothing written: a history that is not there, a benchmark it lacks,
# history options without --history.
for args in "--history $work/none.sqlite" "--history $work/s.sqlite --history-benchmark no/such" \
            "$good --history-benchmark $name"; do
  set +e; "$tracebench" report $args --out "$work/r-refused" > "$work/refused.txt" 2>&1; rc=$?; set -e
  [ $rc -eq 2 ] && [ ! -e "$work/r-refused" ] || { cat "$work/refused.txt"; echo "report $args: exit $rc, expected 2 and nothing written"; exit 1; }
done
echo "history: ok"
