#!/bin/bash
# tracebench export kcidb end to end on a real run of the none and ftrace
# tracers: the submission validates against kcidb/kcidb_submission.schema.json
# (KCIDB v5.3's rules for what the export writes, in this project's words),
# holds one checkout, one build and a
# test per benchmark whose status follows the verification (PASS for
# ftrace, DONE for the none tracer's measurement, FAIL, ERROR where the run
# says so) and whose number is the run's figure in ns; the kernel's commit
# and repository when given; without --origin, ids under `tracebench:`.  Test ids carry the run file's hash: two runs
# sharing a run id name different tests, one run exported again the same
# ones.  A run that came back from LAVA carries the job's page as each
# test's log_url.  Refused with exit 2 and nothing written: a
# truncated or unfinished run, two runs, an origin, commit or log URL KCIDB
# does not take, an --out that is the run's own file.
set -euo pipefail
tracebench=$1
schema=$(dirname "$0")/kcidb/kcidb_submission.schema.json
out=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$out"' EXIT

"$tracebench" run -t none -t ftrace -w getpid --quick --out "$out/runs" > /dev/null 2>&1
run=$(echo "$out"/runs/*/)

# validate SUBMISSION RESULT_JSON [EXPECTED_STATUS_BY_TRACER_JSON]: the schema, then what the run says.
validate() {
  /usr/bin/python3 - "$schema" "$@" <<'PY'
import hashlib, json, re, sys
from jsonschema import Draft202012Validator
schema, sub, res = (json.load(open(p)) for p in sys.argv[1:4])
want = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {"none": "DONE", "ftrace": "PASS"}
Draft202012Validator.check_schema(schema)
errors = sorted(Draft202012Validator(schema).iter_errors(sub), key=str)
assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
# The schema checks date-times by pattern too: formats need a module Debian lacks.
rfc3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
assert sub["version"] == {"major": 5, "minor": 3}, sub["version"]
co, = sub["checkouts"]; bu, = sub["builds"]
assert bu["checkout_id"] == co["id"] and co["git_commit_name"] == res["context"]["kernel"]["release"], (co, bu)
tests = sub["tests"]
assert len(tests) == len(res["benchmarks"]) == len({t["path"] for t in tests}) == len({t["id"] for t in tests}), tests
for t, b in zip(tests, res["benchmarks"]):
    run_hash = hashlib.sha256(open(sys.argv[3], "rb").read()).hexdigest()[:12]
    assert t["id"] == f'{co["origin"]}:{res["context"]["run_id"]}~{run_hash}/{b["name"]}', (t["id"], run_hash)
    assert t["build_id"] == bu["id"] and t["origin"] == co["origin"], t
    assert rfc3339.match(t["start_time"]), t["start_time"]
    assert t["path"] == "tracebench." + b["name"].replace("/", ".").replace(":", "_"), (t["path"], b["name"])
    assert t["status"] == want[b["tracer"]], (b["name"], t["status"], want)
    if b["status"] != "ok":
        assert "number" not in t, t
        continue
    fig = b["baseline"]["ns_per_event"]["p50"] if b["tracer"] == "none" else b["overhead_ns_per_event"]["median"]
    assert t["number"] == {"value": fig, "unit": "ns"}, (t["number"], fig)
print("kcidb: valid,", len(tests), "tests:", ", ".join(t["path"] + " " + t["status"] for t in tests))
PY
}

"$tracebench" export kcidb "$run" --origin tracebench_ci -o "$out/kcidb.json"
validate "$out/kcidb.json" "$run/result.json"
# The kernel's commit and repository, when the CI system gives them.
commit=0123456789abcdef0123456789abcdef01234567
"$tracebench" export kcidb "$run/result.json" --origin tracebench_ci --kernel-commit $commit \
  --kernel-repo https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git > "$out/kcidb-git.json"
validate "$out/kcidb-git.json" "$run/result.json"
/usr/bin/python3 -c '
import json, sys
co = json.load(open(sys.argv[1]))["checkouts"][0]
assert co["git_commit_hash"] == sys.argv[2] and co["id"] == "tracebench_ci:kernel-" + sys.argv[2], co
assert co["git_repository_url"].startswith("https://git.kernel.org/"), co' "$out/kcidb-git.json" $commit
# Without --origin: the tool's own name, every id under it.
"$tracebench" export kcidb "$run" > "$out/kcidb-default.json"
validate "$out/kcidb-default.json" "$run/result.json"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ids = [x["id"] for k in ("checkouts", "builds", "tests") for x in d[k]]
assert ids and all(i.startswith("tracebench:") for i in ids), ids' "$out/kcidb-default.json"

# A failed verification is FAIL; a benchmark that failed is ERROR, without a number.
for what in failed error; do
  mkdir -p "$out/$what" && cp "$run"/* "$out/$what/"
  /usr/bin/python3 - "$out/$what/result.json" "$what" <<'PY'
import json, sys
p, what = sys.argv[1:3]
r = json.load(open(p))
b = next(x for x in r["benchmarks"] if x["tracer"] == "ftrace")
if what == "failed":
    b["events"]["verification"] = "failed"
    b["events"]["verification_reason"] = "recorded fewer events than fired"
else:
    b["status"], b["error"] = "error", "the tracer could not attach"
json.dump(r, open(p, "w"))
PY
  want=$([ $what = failed ] && echo '{"none": "DONE", "ftrace": "FAIL"}' || echo '{"none": "DONE", "ftrace": "ERROR"}')
  "$tracebench" export kcidb "$out/$what" --origin tracebench_ci > "$out/kcidb-$what.json"
  validate "$out/kcidb-$what.json" "$out/$what/result.json" "$want"
done

# The failed and error copies keep the run's id: their tests still have ids of
# their own; the run exported twice names the same tests.
/usr/bin/python3 - "$out"/kcidb.json "$out"/kcidb-git.json "$out"/kcidb-failed.json "$out"/kcidb-error.json <<'PY'
import json, sys
ids = [[t["id"] for t in json.load(open(p))["tests"]] for p in sys.argv[1:]]
assert ids[0] == ids[1], ids[:2]
assert not set(ids[0]) & set(ids[2]) and not set(ids[0]) & set(ids[3]) and not set(ids[2]) & set(ids[3]), ids
print("kcidb: runs sharing a run id keep distinct test ids, e.g.", ids[0][0], ids[2][0])
PY

# A run that came back from LAVA (`lava fetch` writes lava.json beside its
# files): every test's log_url is the job's page, --log-url names another
# log, and a run that did not come from LAVA has none.
mkdir -p "$out/lava/runs" && cp -r "$run" "$out/lava/runs/"
lrun=$(echo "$out"/lava/runs/*/)
job=https://lava.example.org/scheduler/job/42
printf '{"source": "server", "job_id": 42, "job_url": "%s"}\n' $job > "$out/lava/lava.json"
"$tracebench" export kcidb "$lrun" --origin tracebench_ci -o "$out/kcidb-lava.json" 2> "$out/lava.err"
validate "$out/kcidb-lava.json" "$lrun/result.json"
grep -q "log_url $job (the LAVA job, $out/lava/lava.json)" "$out/lava.err" || { cat "$out/lava.err"; exit 1; }
"$tracebench" export kcidb "$lrun" --origin tracebench_ci --log-url https://ci.example.org/log/7 > "$out/kcidb-log.json"
validate "$out/kcidb-log.json" "$lrun/result.json"
/usr/bin/python3 - "$out" $job <<'PY'
import json, sys
out, job = sys.argv[1:3]
urls = lambda f: {t.get("log_url") for t in json.load(open(f"{out}/{f}"))["tests"]}
assert urls("kcidb-lava.json") == {job}, urls("kcidb-lava.json")
assert urls("kcidb-log.json") == {"https://ci.example.org/log/7"}, urls("kcidb-log.json")
assert urls("kcidb.json") == {None}, urls("kcidb.json")
print("kcidb: log_url from the LAVA job, from --log-url, none otherwise")
PY

# Refused, exit 2, nothing written.
mkdir -p "$out/bad" "$out/partial" && cp "$run"/* "$out/bad/" && cp "$run"/* "$out/partial/"
head -c 300 "$run/result.json" > "$out/bad/result.json"
/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); r["context"]["complete"] = False; json.dump(r, open(sys.argv[1], "w"))' "$out/partial/result.json"
cp -r "$run" "$out/runs/second"
for args in "$out/bad --origin tracebench_ci" "$out/partial --origin tracebench_ci" "$out/runs --origin tracebench_ci" \
            "$run --origin Tracebench-CI" "$run --origin tracebench_ci --kernel-commit 0123abc" \
            "$run --origin tracebench_ci --kernel-repo git://example.org/linux" \
            "$run --origin tracebench_ci --log-url ftp://example.org/log" \
            "$run --origin tracebench_ci -o $run/result.json"; do
  sha=$(sha256sum "$run/result.json")
  set +e; "$tracebench" export kcidb $args -o "$out/refused.json" > "$out/refused.txt" 2>&1; rc=$?; set -e
  case $args in *"-o $run/result.json") set +e; "$tracebench" export kcidb $args > "$out/refused.txt" 2>&1; rc=$?; set -e ;; esac
  [ $rc -eq 2 ] && [ ! -e "$out/refused.json" ] && [ "$(sha256sum "$run/result.json")" = "$sha" ] ||
    { cat "$out/refused.txt"; echo "export kcidb $args: exit $rc, expected 2 and nothing written"; exit 1; }
  echo "refused: $(head -1 "$out/refused.txt" | cut -c1-150)"
done
echo "export_kcidb: ok"
