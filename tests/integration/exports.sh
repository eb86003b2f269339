#!/bin/bash
# The exports for CI systems, end to end on real runs of the none tracer:
# `compare --junit` (one test case per benchmark; a regression, made here by
# adding 1000 cycles per event to one benchmark's repetitions in B's
# result.json (the none tracer is compared on its baseline), is the one
# failure) and `export bencher` (Bencher Metric Format:
# every benchmark with its measures, intervals around the value).  Bad input
# is refused with exit 2 and writes nothing.
set -euo pipefail
tracebench=$1
out=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$out"' EXIT

for side in a b; do
  "$tracebench" run -t none -w getpid -w call --quick --out "$out/$side" > /dev/null 2>&1
done
a=$(echo "$out"/a/*/)
b=$(echo "$out"/b/*/)
/usr/bin/python3 - "$b/result.json" <<'PY'
import json, sys
p = sys.argv[1]
r = json.load(open(p))
x = next(b for b in r["benchmarks"] if b["workload"] == "getpid")
x["baseline"]["repetition_medians_cycles"] = [v + 1000 for v in x["baseline"]["repetition_medians_cycles"]]
json.dump(r, open(p, "w"))
PY

"$tracebench" compare "$a" "$b" --junit "$out/junit.xml" > "$out/compare.txt"
"$tracebench" compare "$a" "$b" --json > "$out/compare.json"
/usr/bin/python3 - "$out/junit.xml" "$out/compare.json" <<'PY'
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
verdicts = {r["benchmark"]: r["verdict"] for r in json.load(open(sys.argv[2]))["rows"]}
assert root.tag == "testsuites", root.tag
suite = root.find("testsuite")
cases = suite.findall("testcase")
assert len(cases) == 2 == int(suite.get("tests")) == int(root.get("tests")), len(cases)
failed = [c for c in cases if c.find("failure") is not None]
# The JUnit failures are exactly compare's regressions (the untouched
# benchmark may be one too: pooled compare raises false alarms on A/A runs,
# results/detector-power/); the injected one is.
assert {c.get("name") for c in failed} == {b for b, v in verdicts.items() if v == "regression"}, (verdicts, failed)
assert int(suite.get("failures")) == len(failed)
g = next(c for c in cases if "getpid" in c.get("name"))
assert g.find("failure") is not None, "the injected regression is not a failure"
msg = g.find("failure").get("message")
assert msg.startswith("regression:") and "B/A" in msg and "p " in msg, msg
props = {p.get("name"): p.get("value") for p in g.find("properties")}
assert float(props["ratio"]) > 1 and props["verdict"] == "regression", props
for c in cases:
    if c.find("failure") is None:
        assert c.find("system-out") is not None and c.find("system-out").text.startswith(verdicts[c.get("name")])
print("junit: ok,", len(cases), "cases,", len(failed), "failure(s)")
PY
# The same comparison fails --fail-on-regression: JUnit and the exit status agree.
if "$tracebench" compare "$a" "$b" --fail-on-regression > /dev/null 2>&1; then
  echo "compare --fail-on-regression passed a regression"; exit 1
fi

"$tracebench" export bencher "$a" --out "$out/bmf.json"
"$tracebench" export bencher "$a/result.json" > "$out/bmf-stdout.json"
cmp "$out/bmf.json" "$out/bmf-stdout.json"
/usr/bin/python3 - "$out/bmf.json" "$a/result.json" <<'PY'
import json, sys
bmf = json.load(open(sys.argv[1]))
run = json.load(open(sys.argv[2]))
names = {b["name"] for b in run["benchmarks"] if b["status"] == "ok"}
assert set(bmf) == names, (sorted(bmf), sorted(names))
for name, measures in bmf.items():
    for m in ("overhead-ns", "overhead-cycles", "traced-ns", "baseline-ns"):
        assert m in measures, (name, m)
    b = next(x for x in run["benchmarks"] if x["name"] == name)
    for m, v in measures.items():
        # An overhead interval that covers less than 95% (a repetition
        # dropped) goes out as the value alone.
        if m.startswith("overhead") and b["overhead_ns_per_event"]["ci_confidence"] < 0.95:
            assert set(v) == {"value"}, (name, m, v)
            continue
        assert v["lower_value"] <= v["value"] <= v["upper_value"], (name, m, v)
    assert measures["overhead-ns"]["value"] == b["overhead_ns_per_event"]["median"], (name, measures)
print("bencher: ok,", len(bmf), "benchmarks")
PY

# Refusals: exit 2, nothing written.
expect_refused() {
  local what=$1; shift
  set +e; "$@" > "$out/refused.txt" 2>&1; rc=$?; set -e
  [ $rc -eq 2 ] || { cat "$out/refused.txt"; echo "$what: exit $rc, expected 2"; exit 1; }
}
expect_refused "two runs" "$tracebench" export bencher "$out" --out "$out/two.json"
[ ! -e "$out/two.json" ] || { echo "a refused export wrote its file"; exit 1; }
expect_refused "no such run" "$tracebench" export bencher "$out/nowhere"
expect_refused "junit in a missing directory" "$tracebench" compare "$a" "$b" --junit "$out/no/such/dir/junit.xml"
echo "exports: ok"
