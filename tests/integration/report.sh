#!/bin/bash
# tracebench report end to end: real quick runs of the none tracer (two
# workloads, a thread sweep) and, where the kernel has it, an eBPF payload
# sweep and single 64-byte payloads; the page is built with --vs against another run and --history of
# both, then Debian's headless Chromium loads it: every figure's SVG is in the
# DOM after load, no script error, and a screenshot is kept in the build tree.  Bad input is
# refused with exit 2 and writes nothing.
set -euo pipefail
tracebench=$1
keep=$2   # where the page and its screenshot stay for a person to look at
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/tracebench-it-XXXXXX)
trap 'rm -rf "$work"' EXIT
rm -rf "$keep"

# A run whose every benchmark has a figure, kept in DIR; one marked
# unsteady (its overhead on no one level: a noisy host's, not the report's
# concern) is dropped and run again, three times at most.
run_into() {  # DIR, then the run's arguments
  local dir=$1 try; shift
  for try in 1 2 3; do
    rm -rf "$work/try"
    "$tracebench" run "$@" --out "$work/try" > /dev/null 2>&1 || true
    if /usr/bin/python3 "$src/scripts/validate_result.py" --require-ok "$work"/try/*/result.json > /dev/null 2>&1; then
      mkdir -p "$dir" && mv "$work"/try/* "$dir"/ && return 0
    fi
    echo "report test: a run had a benchmark without a figure (attempt $try): tracebench run $*"
  done
  return 1
}
run_into "$work/a" -t none -w getpid -w call --quick
run_into "$work/b" -t none -w getpid -w call --quick
run_into "$work/b" -t none -w getpid -j 1 -j 2 --quick
# One payload size alone (64 B, the question "what does a 64-byte record cost
# in each tracer?"): ftrace's trace_marker here, eBPF's too where it runs.
run_into "$work/b" -t ftrace -w marker -a payload -p 64 --quick
ebpf=0
# (env's output whole first: `grep -q` stops reading at the match, and under
# pipefail the writer's SIGPIPE would fail the test of a tracer that is there.)
"$tracebench" env > "$work/env.txt" 2>/dev/null || true
if grep -q '^ebpf *available' "$work/env.txt"; then
  ebpf=1
  # The cost model's part: a fit of the eBPF sweep, and one paced validation
  # at 256 B.  A sweep whose sizes disagree (on a noisy host its per-byte
  # slope can come out negative: the fit leaves the term out, and no payload
  # can be predicted) is measured again, three times at most.
  for try in 1 2 3; do
    rm -rf "$work/sweep" "$work/model" "$work/val" "$work/fit.txt" "$work/validate.txt"
    run_into "$work/sweep" -t ebpf -w write_null -a ringbuf -p 0 -p 256 -p 1024 --quick
    if "$tracebench" model fit "$work/sweep" --out "$work/model/model.json" > "$work/fit.txt" 2>&1 &&
      "$tracebench" model validate --model "$work/model/model.json" -t ebpf -w write_null -a ringbuf -p 256 \
        --rate 5000 --quick --out "$work/val/ebpf-payload.json" > "$work/validate.txt" 2>&1; then
      break
    fi
    echo "report test: the sweep's model could not validate 256 B (attempt $try): $(tail -1 "$work/validate.txt" 2>/dev/null)"
    [ "$try" -lt 3 ] || { cat "$work/fit.txt" "$work/validate.txt"; exit 1; }
  done
  mv "$work"/sweep/* "$work/b"/
  run_into "$work/b" -t ebpf -w write_null -a ringbuf -p 64 --quick
  # The same configuration after an idle gap: another figure, another label.
  run_into "$work/b" -t ebpf -w write_null -a ringbuf -p 256 --gap-us 100 --quick
fi
model_args=()
[ $ebpf = 0 ] || model_args=(--model "$work/model/model.json" --validation "$work/val")
# The history of these runs: a series per benchmark drawn under History.
"$tracebench" history add "$work/a" "$work/b" --db "$work/history.sqlite" > /dev/null
"$tracebench" report "$work/b" --vs "$work/a" "${model_args[@]}" --history "$work/history.sqlite" --out "$keep"
for f in index.html report.md report-input.json; do
  [ -s "$keep/$f" ] || { echo "report wrote no $f"; exit 1; }
done
expected=$(grep -o 'data-expected-figures="[0-9]*"' "$keep/index.html" | grep -o '[0-9]*')
# overhead per workload (2-3), thread scaling, distributions, B/A; with eBPF its
# payload sweep, the model's residuals and predicted vs measured CPU
grep -q 'Thread scaling' "$keep/index.html" || { echo "no thread-scaling section"; exit 1; }
grep -q 'Comparison (B/A)' "$keep/index.html" || { echo "no comparison section"; exit 1; }
grep -q "<h2>History</h2>" "$keep/index.html" && grep -q "id='history-0'><svg" "$keep/index.html" ||
  { echo "no history section with a figure"; exit 1; }
if [ ${#model_args[@]} -gt 0 ]; then
  grep -q 'payload fits' "$keep/index.html" || { echo "no model section"; exit 1; }
  grep -q 'predicted vs measured CPU' "$keep/index.html" || { echo "no validation section"; exit 1; }
  expect_min=7
else
  expect_min=5
fi
[ "$expected" -ge "$expect_min" ] || { echo "only $expected figures"; exit 1; }
[ "$(ls "$keep"/figures/*.svg | wc -l)" -eq "$expected" ] || { echo "figures/ does not hold the page's figures"; exit 1; }

# Repeated runs are one point: none/getpid at one thread ran twice in b (with
# call, and in the thread sweep), pooled over both runs' repetitions.
n_getpid=$(/usr/bin/python3 "$src/tests/common/repetition_medians.py" none/getpid/none/payload:0/threads:1 \
  "$work"/b/*/result.json)
/usr/bin/python3 - "$keep/report-input.json" "$n_getpid" <<'PY'
import json, sys
cs = json.load(open(sys.argv[1]))["configurations"]
g = [c for c in cs if (c["tracer"], c["workload"], c["payload_bytes"], c["threads"]) == ("none", "getpid", 0, 1)]
assert len(g) == 1 and g[0]["runs"] == 2 and len(g[0]["names"]) == 2, g
n = int(sys.argv[2])  # 6 quick repetitions a run, more where steady state extended one
assert n >= 12 and g[0]["overhead_ns"]["n"] == n, (n, g[0]["overhead_ns"])
keys = [(c["tracer"], c["workload"], c["action"], c["payload_bytes"], c["threads"], json.dumps(c["options"]),
         c["gap_us"], c["samples_per_block"]) for c in cs]
assert len(keys) == len(set(keys)), "a configuration is drawn twice"
print(f"ok: none/getpid pooled from 2 runs, {g[0]['overhead_ns']['n']} repetitions")
PY
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "chromium is not installed (scripts/setup.sh installs it)"; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run --disable-component-update
       --disable-sync --hide-scrollbars --user-data-dir="$work/profile")
timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=3000 --dump-dom "file://$keep/index.html" \
  > "$work/dom.html" 2> "$work/chromium.log"
body=$(grep -o '<body[^>]*>' "$work/dom.html" || true)
echo "$body"
echo "$body" | grep -q "data-figures=\"$expected\"" || { echo "the browser rendered other than $expected figures"; cat "$work/chromium.log"; exit 1; }
echo "$body" | grep -q 'data-errors="0"' || { echo "script errors in the page"; exit 1; }
if grep -E 'CONSOLE|Uncaught' "$work/chromium.log"; then echo "console messages"; exit 1; fi
# The page's text as the browser has it: the charts each question needs, by id
# and by what they say.
/usr/bin/python3 - "$work/dom.html" "$ebpf" <<'PY'
import re, sys
dom, ebpf = open(sys.argv[1]).read(), sys.argv[2] == "1"
ids = re.findall(r'<figure id="([^"]+)"', dom)

def text(name):
    m = re.search(r'<figure id="' + re.escape(name) + r'">(.*?)</figure>', dom, re.S)
    assert m, f"no chart {name} (charts: {ids})"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", m.group(1)))

want = ["cost-p0-getpid", "cost-p0-call", "cost-p64", "threads-getpid", "threads-events-per-second-getpid",
        "distributions", "compare"]
if ebpf:
    want += ["cost-p0-write_null", "cost-p256", "cost-p1024", "payload_bytes-write_null"]
missing = [w for w in want if w not in ids]
assert not missing, f"charts missing: {missing} (the page has {ids})"
assert "marker: ftrace payload" in text("cost-p64"), text("cost-p64")
assert "What a 64-byte record costs" in text("cost-p64")
if ebpf:
    assert "write_null: ebpf ringbuf" in text("cost-p64"), text("cost-p64")
    assert "ebpf ringbuf (gap 100 µs)" in text("cost-p256"), text("cost-p256")
    for tick in ("0", "256", "1024"):
        assert re.search(r">\s*" + tick + r"\s*<", re.search(r'<figure id="payload_bytes-write_null">(.*?)</figure>',
                                                            dom, re.S).group(1)), f"no tick at {tick}"
page = re.sub(r"<[^>]+>", " ", dom)
for bad in ("none none", "dvm default"):
    assert bad not in page, bad
assert "Colours:" in page
print(f"ok: {len(ids)} charts, among them {', '.join(want)}")
PY
timeout 120 "$browser" "${flags[@]}" --window-size=1200,8000 --screenshot="$keep/screenshot.png" \
  "file://$keep/index.html" > /dev/null 2>&1
[ -s "$keep/screenshot.png" ] || { echo "no screenshot"; exit 1; }
echo "screenshot: $keep/screenshot.png"

# Refusals: exit 2, nothing written.
expect_refused() {
  local what=$1; shift
  set +e; "$@" > "$work/refused.txt" 2>&1; rc=$?; set -e
  [ $rc -eq 2 ] || { cat "$work/refused.txt"; echo "$what: exit $rc, expected 2"; exit 1; }
}
expect_refused "out not empty" "$tracebench" report "$work/b" --out "$keep"
expect_refused "no such run" "$tracebench" report "$work/nowhere" --out "$work/r1"
expect_refused "not a model" "$tracebench" report "$work/b" --model "$keep/report-input.json" --out "$work/r3"
expect_refused "not a validation" "$tracebench" report "$work/b" --validation "$keep/report-input.json" --out "$work/r4"
[ ! -e "$work/r3" ] && [ ! -e "$work/r4" ] || { echo "a refused report wrote its directory"; exit 1; }
[ ! -e "$work/r1" ] || { echo "a refused report wrote $work/r1"; exit 1; }
mkdir "$work/trunc" && cp -r "$work/a"/* "$work/trunc/" && t=$(echo "$work"/trunc/*/result.json) && head -c 200 "$t" > "$t.x" && mv "$t.x" "$t"
expect_refused "truncated result.json" "$tracebench" report "$work/trunc" --out "$work/r2"
[ ! -e "$work/r2" ] || { echo "a refused report wrote $work/r2"; exit 1; }
echo "report: ok"
