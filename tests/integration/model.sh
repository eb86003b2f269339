#!/bin/bash
# `tracebench model fit` and `model predict` end to end on a real tracer: a
# quick payload sweep of ftrace's trace_marker, the model fitted from it
# (schema-valid, fixed and per-byte costs with intervals, the consumer's cost
# per record and per byte from the measured reads of ftrace's buffer), a
# prediction that is eqs. 4-8 of that model, and bad input refused with
# nothing written.
set -euo pipefail
tb=$1
src=$2
out=$(mktemp -d /tmp/tracebench-model-XXXXXX)
trap 'rm -rf "$out"' EXIT

# 100 samples per block: a traced block's records (4000 bytes each at most)
# fit ftrace's default buffer, so no event is lost (a benchmark that lost
# more than 5% is partial, and the fit leaves it out).
# (Once more where the host changed speed under a benchmark: no figure to fit.)
. "$src/tests/common/once_more_if_unsteady.sh"
sweep() { "$tb" run -t ftrace -w marker -a payload -p 0 -p 1024 -p 4000 --quick -n 100 --out "$out/runs" > "$out/run.txt"; }
tb_once_more_if_unsteady "$src" "$out/runs" sweep
# A consumer that is only reads on the caller (no consumer task): schema-valid.
/usr/bin/python3 "$src/scripts/validate_result.py" --require-ok "$out"/runs/*/result.json
"$tb" model fit "$out/runs" --out "$out/model.json" > "$out/fit.txt"
for f in model.json model.md model.csv; do [ -s "$out/$f" ] || { echo "missing $f"; exit 1; }; done
/usr/bin/python3 "$src/scripts/validate_result.py" "$out/model.json"
grep -q '^## ftrace' "$out/model.md" || { echo "model.md has no ftrace section"; cat "$out/model.md"; exit 1; }

cat > "$out/scenario.json" <<'JSON'
{"probes": [{"tracer": "ftrace", "probe_kind": "marker", "action": "payload", "payload_bytes": 2048,
             "rate_hz": 10000}]}
JSON
"$tb" model predict --model "$out/model.json" "$out/scenario.json" --json --out "$out/prediction.json" > /dev/null
/usr/bin/python3 - "$out/model.json" "$out/prediction.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
e = {(x["tracer"], x["probe_kind"], x["action"]): x for x in m["entries"]}[("ftrace", "marker", "payload")]
fixed, per_byte = e["parameters"]["fixed"], e["parameters"]["per_byte"]
for name, q in (("fixed", fixed), ("per_byte", per_byte)):
    assert q["cycles"] is not None, (name, q)
    assert q["ci_low"] <= q["cycles"] <= q["ci_high"], (name, q)
assert fixed["cycles"] > 0 and per_byte["cycles"] > 0, (fixed, per_byte)
assert len(e["fit"]["points"]) == 3 and e["fit"]["r2"] is not None
want = fixed["cycles"] + 2048 * per_byte["cycles"]
got = p["probes"][0]["cycles"]
assert abs(got - want) < 1e-6 * want, (got, want)
cpu = 100 * 10000 * want / m["context"]["tsc_hz"]
assert abs(p["cpu_percent"]["total"] - cpu) < 1e-9 * max(cpu, 1), (p["cpu_percent"], cpu)
print(f"ok: ftrace marker fixed {fixed['cycles']:.0f} cycles, {per_byte['cycles']:.3f} cycles/byte, "
      f"R2 {e['fit']['r2']:.3f}; 2048 B at 10 kHz: {p['cpu_percent']['total']:.2f} % CPU")
# The consumer: every benchmark's reads measured, fitted per record and per byte.
c_rec, c_byte = e["parameters"]["consumer_per_record"], e["parameters"]["consumer_per_record_byte"]
assert e["fit"]["consumer"]["points"] == 3, e["fit"]["consumer"]
for name, q in (("consumer_per_record", c_rec), ("consumer_per_record_byte", c_byte)):
    assert q["cycles"] is not None and q["ci_low"] <= q["cycles"] <= q["ci_high"], (name, q)
assert c_byte["cycles"] > 0, c_byte
assert e["parameters"]["consumer_per_wakeup"]["cycles"] is None  # ftrace's reads are not woken
print(f"ok: ftrace marker consumer {c_rec['cycles']:.0f} cycles/record + {c_byte['cycles']:.3f} cycles/byte")
PY

# "What the runs did not measure" names, per term, the command that would
# measure it: each must be one `run` accepts (its plan), and none the runs
# already made (running them again measures nothing more).
sed -n '/^## What the runs did not measure/,$p' "$out/model.md" | grep -o '`[^`]*tracebench run[^`]*`' | tr -d '`' |
  sort -u > "$out/commands.txt"
[ -s "$out/commands.txt" ] || { echo "the did-not-measure list names no command"; exit 1; }
while read -r cmd; do
  # A sweep is a loop over one run command: check the run with one value.
  one=$(sed -e 's/^for n in [0-9 ]*; do //' -e 's/; done$//' -e 's/=\$n/=2/g' <<< "$cmd")
  [ "$one" != "tracebench run -t ftrace -w marker -a payload -p 0 -p 1024 -p 4000" ] ||
    { echo "the list names the command that made the runs: $cmd"; exit 1; }
  # shellcheck disable=SC2086
  "$tb" ${one#tracebench } --plan > /dev/null 2> "$out/plan.txt" ||
    { cat "$out/plan.txt"; echo "the list names a command run refuses: $cmd"; exit 1; }
done < "$out/commands.txt"
echo "ok: $(wc -l < "$out/commands.txt") commands in the did-not-measure list, each accepted by run --plan"

# The example scenario the repository ships (results/examples/scenario.json)
# runs against this model: both its probes predicted from fixed + bytes * per_byte.
"$tb" model predict --model "$out/model.json" "$src/results/examples/scenario.json" > "$out/example.txt"
grep -q 'CPU % is of one CPU' "$out/example.txt" || { cat "$out/example.txt"; echo "predict does not say CPU % is of one CPU"; exit 1; }
"$tb" model predict --model "$out/model.json" "$src/results/examples/scenario.json" --json --out "$out/example.json" > /dev/null
/usr/bin/python3 - "$out/model.json" "$out/example.json" "$src/results/examples/scenario.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
s = json.load(open(sys.argv[3]))
e = {(x["tracer"], x["probe_kind"], x["action"]): x for x in m["entries"]}[("ftrace", "marker", "payload")]
fixed, per_byte = e["parameters"]["fixed"]["cycles"], e["parameters"]["per_byte"]["cycles"]
assert len(p["probes"]) == len(s["probes"]) == 2, p
for got, want in zip(p["probes"], s["probes"]):
    c = fixed + want["payload_bytes"] * per_byte
    assert abs(got["cycles"] - c) < 1e-6 * c, (got, c)
print(f"ok: results/examples/scenario.json predicts {p['cpu_percent']['total']:.3f} % of one CPU")
PY

# A consumer in the scenario: eqs. 5-8 with the fitted split, or, when the
# runs were too short to have one, the consumer's total unsplit, said.
cat > "$out/scenario2.json" <<'JSON'
{"probes": [{"tracer": "ftrace", "probe_kind": "marker", "action": "payload", "payload_bytes": 2048, "rate_hz": 10000}],
 "consumers": [{"tracer": "ftrace", "probe_kind": "marker", "action": "payload", "payload_bytes": 2048,
                "records_hz": 10000}]}
JSON
set +e
"$tb" model predict --model "$out/model.json" "$out/scenario2.json" --json --out "$out/prediction2.json" > "$out/p2.txt" 2>&1
rc=$?
set -e
/usr/bin/python3 - "$out/model.json" "$out/prediction2.json" "$rc" "$out/p2.txt" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
e = {(x["tracer"], x["probe_kind"], x["action"]): x for x in m["entries"]}[("ftrace", "marker", "payload")]
u = e["fit"]["consumer"]["user_fraction"]
assert sys.argv[3] == "0", open(sys.argv[4]).read()
p = json.load(open(sys.argv[2]))
q = e["parameters"]
d = 10000 * (q["consumer_per_record"]["cycles"] + 2048 * q["consumer_per_record_byte"]["cycles"])
if u is None:
    assert "user/kernel split" in p["split_missing"], p
    assert abs(p["cost_ac_unsplit_cycles_per_s"] - d) < 1e-6 * d and p["cost_a_cycles_per_s"] == 0, (p, d)
    print(f"ok: consumer {d:.0f} cycles/s, no split in short runs, and predict says so")
    sys.exit(0)
assert abs(p["cost_a_cycles_per_s"] - u * d) < 1e-6 * d and abs(p["cost_c_cycles_per_s"] - (1 - u) * d) < 1e-6 * d, (p, d, u)
print(f"ok: consumer {d:.0f} cycles/s, user share {u:.2f}")
PY

# model validate on the same tracer: a paced run, untraced and traced
# segments, every fired event recorded and checked, a schema-valid Table 7
# row whose measured side is what its segments add up to (recomputed here
# from the raw segment sums: CPU per event untraced and traced, probe cycles
# and CPU share, consumer share with the drain, their sum), whose predicted
# side is the fitted entry's, and whose error is measured minus predicted.
# The figures themselves are the host's, not asserted: a paced trace_marker
# write costs less than the untraced segments spread on a busy machine.
"$tb" model validate --model "$out/model.json" -t ftrace -w marker -a payload -p 64 --rate 5000 --quick \
  --out "$out/validation.json" > "$out/validate.txt"
/usr/bin/python3 "$src/scripts/validate_result.py" "$out/validation.json"
/usr/bin/python3 - "$out/validation.json" "$out/model.json" <<'PY'
import json, math, sys
v = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
ev = v["events"]
assert ev["verification"] == "passed" and ev["fired"] == ev["recorded"] + ev["lost"] and ev["fired"] > 0, ev
segs = v["measured"]["segments"]
assert [s["traced"] for s in segs] == [False, True, True, False] * 2, segs
assert sum(s["events"] for s in segs if s["traced"]) == ev["fired"], (segs, ev)
assert abs(v["measured"]["rate_hz"] - 5000) < 250, v["measured"]["rate_hz"]
e = {(x["tracer"], x["probe_kind"], x["action"]): x for x in m["entries"]}[("ftrace", "marker", "payload")]["parameters"]
want = e["fixed"]["cycles"] + 64 * e["per_byte"]["cycles"]
assert abs(v["predicted"]["probe_cycles"] - want) < 1e-6 * want, (v["predicted"], want)
for k in ("probe_cycles", "probe_cpu_percent", "consumer_cpu_percent", "cpu_percent"):
    assert math.isfinite(v["measured"][k]), (k, v["measured"])
me, pr, er = v["measured"], v["predicted"], v["error"]
def close(a, b, what):
    assert abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-9), (what, a, b)
tsc_hz = v["model"]["tsc_hz"]
side = {t: [s for s in segs if s["traced"] == t] for t in (False, True)}
cpu = {t: sum(s["thread_cpu_ns"] for s in side[t]) / sum(s["events"] for s in side[t]) for t in side}
wall_traced = sum(s["wall_ns"] for s in side[True])
ops_hz = sum(s["events"] for s in side[True]) / (wall_traced / 1e9)
close(me["untraced_ns_per_event"], cpu[False], "untraced ns per event")
close(me["traced_ns_per_event"], cpu[True], "traced ns per event")
close(me["probe_cycles"], (cpu[True] - cpu[False]) * tsc_hz / 1e9, "probe cycles")
close(me["probe_cpu_percent"], 100 * ops_hz * (cpu[True] - cpu[False]) / 1e9, "probe CPU %")
consumer_ns = me["drain_consumer_cpu_ns"] + sum(s["consumer_cpu_ns"] for s in side[True])  # the drain's too
close(me["consumer_cpu_percent"], 100 * consumer_ns / wall_traced, "consumer CPU %")
close(me["cpu_percent"], me["probe_cpu_percent"] + me["consumer_cpu_percent"], "CPU % = probe + consumer")
close(er["probe_cycles"], me["probe_cycles"] - pr["probe_cycles"], "error = measured - predicted (cycles)")
if pr.get("cpu_percent") is not None:
    close(er["cpu_percent"], me["cpu_percent"] - pr["cpu_percent"], "error = measured - predicted (CPU %)")
print(f"ok: validate ftrace marker 64 B at 5 kHz: probe {v['measured']['probe_cycles']:.0f} cycles measured, "
      f"{v['predicted']['probe_cycles']:.0f} predicted")
PY
grep -q "cycles per probe" "$out/validate.txt" || { echo "no Table 7 row"; cat "$out/validate.txt"; exit 1; }

# Bad input: a clear error, exit 2, nothing written.
expect_refusal() {
  local want=$1; shift
  set +e
  msg=$("$@" 2>&1); rc=$?
  set -e
  [ $rc -eq 2 ] || { echo "exit $rc, not 2: $*: $msg"; exit 1; }
  echo "$msg" | grep -q -- "$want" || { echo "unclear error for $*: $msg"; exit 1; }
}
expect_refusal "nothing-here" "$tb" model fit "$out/nothing-here" --out "$out/m2.json"
expect_refusal "ending in .json" "$tb" model fit "$out/runs" --out "$out/m2.txt"
echo '{"probes": [{"tracer": "ftrace", "probe_kind": "marker", "action": "payload"}]}' > "$out/bad.json"
expect_refusal "rate_hz" "$tb" model predict --model "$out/model.json" "$out/bad.json"
echo '{"probes": [{"tracer": "lttng", "probe_kind": "syscall", "action": "x", "rate_hz": 1}]}' > "$out/other.json"
expect_refusal "no entry for lttng" "$tb" model predict --model "$out/model.json" "$out/other.json"
expect_refusal "not a tracebench model" "$tb" model predict --model "$out/runs/"*/result.json "$out/scenario.json"
expect_refusal "no entry for perf" "$tb" model validate --model "$out/model.json" -t perf -w getpid -a count --quick --out "$out/v2.json"
expect_refusal "(getpid) takes a payload" "$tb" model validate --model "$out/model.json" -t ftrace -w getpid -a count -p 8 --out "$out/v2.json"
expect_refusal "mode=sometimes" "$tb" model validate --model "$out/model.json" -t ftrace -w marker -a payload -o ftrace.mode=sometimes --out "$out/v2.json"
expect_refusal "rate" "$tb" model validate --model "$out/model.json" -t ftrace -w marker -a payload --rate 10 --out "$out/v2.json"
[ ! -e "$out/m2.json" ] && [ ! -e "$out/m2.md" ] && [ ! -e "$out/m2.txt" ] && [ ! -e "$out/v2.json" ] || { echo "a refused command wrote files"; exit 1; }
# Ctrl-C during the paced run: exit 130, no validation written, the tracer
# torn down (the leftovers check below).
"$tb" model validate --model "$out/model.json" -t ftrace -w marker -a payload -p 64 --rate 5000 --seconds 30 \
  --out "$out/v3.json" > "$out/v3.txt" 2>&1 &
pid=$!
sleep 2
kill -INT $pid
set +e
wait $pid
rc=$?
set -e
[ $rc -eq 130 ] || { echo "SIGINT during validate: exit $rc, not 130"; cat "$out/v3.txt"; exit 1; }
[ ! -e "$out/v3.json" ] || { echo "SIGINT during validate: a validation was written"; exit 1; }
"$src/scripts/leftovers.sh" > "$out/left.txt" 2>&1 || { echo "validate left objects behind:"; cat "$out/left.txt"; exit 1; }
echo "model fit/predict: ok"
