#!/bin/bash
# The cost model on a simulated slow host (host_simulation.h): the bhyve
# set's 21-cycle TSC steps, no RDTSCP and 875 ns more per syscall, less its
# stolen slices (they add microseconds to every paced event, which would
# hide whether the syscall's cost is there).  ftrace's syscall count is run,
# fitted and validated at a paced 50 kHz there, as `model suite` does it:
# the runs and the paced validation alike get the slow syscalls.  Checks:
# the model and the validation say they are of the simulation; the paced
# getpid's untraced events cost at least what the runs' untraced getpid did
# (875 ns of it simulated: a paced run that left it out reads several
# hundred ns less); the tracer recorded every event.  A simulated model is
# not validated on the machine as it is, and a fit refuses to mix simulated
# runs with plain ones.
set -euo pipefail
tb=$1
src=$2
out=$(mktemp -d /tmp/tracebench-model-slow-XXXXXX)
trap 'rm -rf "$out"' EXIT
sim=tsc_step=21,no_rdtscp,syscall_ns=875
export TRACEBENCH_SIMULATE_HOST=$sim
"$tb" run -t ftrace -w getpid -a count -p 0 --quick --out "$out/runs" > "$out/run.txt" 2>&1 \
  || { echo "run failed on the simulated host"; cat "$out/run.txt"; exit 1; }
"$tb" model fit "$out/runs" --out "$out/model.json" > "$out/fit.txt" 2>&1 \
  || { echo "fit failed"; cat "$out/fit.txt"; exit 1; }
"$tb" model validate --model "$out/model.json" -t ftrace -w getpid -a count --rate 50000 --quick \
  --out "$out/v.json" > "$out/v.txt" 2>&1 || { echo "validate failed"; cat "$out/v.txt"; exit 1; }
/usr/bin/python3 "$src/scripts/validate_result.py" "$out/model.json" "$out/v.json"
/usr/bin/python3 - "$out" "$sim" <<'PY'
import glob, json, os, sys
d, sim = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "model.json")))
assert m["context"]["simulated_host"] == sim, m["context"]
hot = [b["baseline"]["ns_per_event"]["p50"] for f in glob.glob(os.path.join(d, "runs", "*", "result.json"))
       for b in json.load(open(f))["benchmarks"] if b["status"] == "ok"]
assert hot and min(hot) > 875, hot
v = json.load(open(os.path.join(d, "v.json")))
assert any(w.startswith("SIMULATED host") for w in v["warnings"]), v["warnings"]
assert v["events"]["verification"] == "passed", v["events"]
paced = v["measured"]["untraced_ns_per_event"]
assert paced >= max(hot), (paced, hot)
print(f"ok: untraced getpid {max(hot):.0f} ns in the runs' blocks, {paced:.0f} ns paced; probe "
      f"{v['predicted']['probe_cycles']:.0f} cycles predicted, {v['measured']['probe_cycles']:.0f} measured")
PY

unset TRACEBENCH_SIMULATE_HOST
set +e
"$tb" model validate --model "$out/model.json" -t ftrace -w getpid -a count --rate 50000 --quick \
  > "$out/plain.txt" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "validated on the same simulation only" "$out/plain.txt" \
  || { echo "a simulated model validated on the plain machine: exit $rc"; cat "$out/plain.txt"; exit 1; }
"$tb" run -t ftrace -w getpid -a count -p 0 --quick -r 2 --out "$out/plain" > /dev/null 2>&1
set +e
"$tb" model fit "$out/runs" "$out/plain" --out "$out/mixed.json" > "$out/mixed.txt" 2>&1; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "refusing to mix runs of a simulated host" "$out/mixed.txt" && [ ! -e "$out/mixed.json" ] \
  || { echo "a fit mixed simulated and plain runs: exit $rc"; cat "$out/mixed.txt"; exit 1; }
echo "the cost model on the simulated slow host: ok"
