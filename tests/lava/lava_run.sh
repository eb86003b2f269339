#!/bin/bash
# vm.lava_run: tracebench as a LAVA job, run by LAVA's dispatcher alone
# (lava-run, qemu under TCG), three jobs:
#  1. a quick kprobes run on the module's kmod_target: the job passes, the
#     result.json that comes back has the sha256 the guest printed, every
#     benchmark verified with every event exact, and each benchmark is a LAVA
#     test case with its overhead as the measurement in LAVA's results;
#  2. a broken kernel image: the boot fails, reported as such, exit non-zero;
#  3. a test timeout mid-run (16 benchmarks of several seconds each under
#     TCG, every repetition run, 40 s for the test action): the job fails, the benchmarks that finished
#     came back (the journal), exit non-zero;
#  4. the board dies mid-run (its qemu killed after a benchmark finished):
#     the same.
# Jobs 3 and 4 run side by side, as on two boards: job 4 is over while job 3
# waits for its timeout.  Jobs 1 and 2, one after the other, run beside them
# as on a third board (nothing of theirs is timed; job 3's first benchmark
# ends within its timeout on a loaded host, below).
#   lava_run.sh TRACEBENCH SOURCE_DIR WORKDIR
set -uo pipefail
tb=$1 src=$2 work=$3
lava=$src/scripts/lava
py=/usr/bin/python3
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || fail "no kernel for the job"
command -v lava-run >/dev/null || fail "lava-run missing: apt-get install lava-dispatcher lava-server"
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
export TRACEBENCH=$tb

# The jobs' files first (each `lava job` writes its initramfs here).
"$tb" lava job --kernel "$kernel" --out good.yaml --boot-timeout 5m --test-timeout 10m --job-timeout 20m \
  -- run --quick -t kprobes -w kmod_target || fail "lava job"
initramfs=$(ls tracebench-initramfs-*.cpio)
head -c 4194304 /dev/urandom > vmlinuz-broken
"$tb" lava job --kernel vmlinuz-broken --initramfs "$initramfs" --out broken.yaml --boot-timeout 90s \
  --test-timeout 2m --job-timeout 5m -- run --quick -t kprobes -w kmod_target || fail "lava job (broken kernel)"
# Every repetition (-r 20 --ci-target 0: no early stop when the interval is
# tight), so that 16 benchmarks outlast 40 s on an idle host too, while the
# first finishes within it on a loaded one.
"$tb" lava job --kernel "$kernel" --out slow.yaml --boot-timeout 5m --test-timeout 40s --job-timeout 15m \
  -- run --quick -r 20 --ci-target 0 -t kprobes -w kmod_target \
  -p 0 -p 1 -p 2 -p 3 -p 4 -p 5 -p 6 -p 7 -p 8 -p 16 -p 32 -p 64 -p 128 -p 256 -p 512 -p 1024 || fail "lava job (slow)"
# Jobs of their own ids: 3 and 4 below, 1 and 2 here (lava-run's directories
# are named by them).
job_id=$((100000 + $$ % 100000))

# 1 and 2 in the background, one after the other, beside 3 and 4 (each
# runner ends with the subshell, its lava-run with it).
(
  start=$(date +%s)
  setpriv --pdeathsig TERM "$lava/lava-run.sh" --job-id $((job_id + 200000)) good.yaml good > good.out 2>&1
  echo $? > good.rc
  echo "job 1: $(( $(date +%s) - start )) s" > good.time
  setpriv --pdeathsig TERM "$lava/lava-run.sh" --job-id $((job_id + 300000)) broken.yaml broken > broken.out 2>&1
  echo $? > broken.rc
) &
first_runner=$!
trap 'kill "$first_runner" 2>/dev/null' EXIT

# 3. A test that times out after some benchmarks finished.
# In the background: job 4 runs beside it (the runner is stopped with this
# script); the two jobs' ids differ, and job 4's names its qemu.
"$lava/lava-run.sh" --job-id $((job_id + 100000)) slow.yaml slow > slow.out 2>&1 &
slow_runner=$!
trap 'kill "$slow_runner" "$first_runner" 2>/dev/null' EXIT
# 4. The board dies mid-run: qemu killed once a revision of result.json
# with a benchmark in it is whole in the log.
"$lava/lava-run.sh" --job-id $job_id slow.yaml dead > dead.out 2>&1 &
runner=$!
qemu=""
for _ in $(seq 600); do
  # The run writes result.json first with no benchmark, then after each one.
  revisions=$(grep -c 'TBLAVA END [0-9]* results/[^ ]*/result.json' dead/job.log.yaml 2>/dev/null)
  if [ "${revisions:-0}" -ge 2 ]; then
    qemu=$(pgrep -f "qemu-system-x86_64.*/dispatcher/tmp/$job_id/" | head -1)
    break
  fi
  kill -0 $runner 2>/dev/null || break
  sleep 0.5
done
[ -n "$qemu" ] || { kill $runner 2>/dev/null; wait $runner; fail "job 4: no qemu of job $job_id found running with a benchmark done"; }
kill -KILL "$qemu"
wait $runner && fail "a job whose board died exited 0"
"$py" - dead <<'PY' || fail "job 4's report"
import glob, json, sys
out = sys.argv[1]
o = json.load(open(out + "/run/lava.json"))
assert o["job_result"] == "fail" and not o["complete"] and o["guest_status"] is None, o
files = glob.glob(out + "/run/results/*/result.json")
assert len(files) == 1, f"no result.json kept from the journal: {o}"
run = json.load(open(files[0]))
n = len(run["benchmarks"])
assert 1 <= n < 16 and not run["context"]["complete"], n
for b in run["benchmarks"]:
    assert b["events"]["verification"] == "passed" and b["events"]["exact"], b["name"]
print(f"job 4: the board died ({o['failed_action']}: {o['error_type']} - {o['error_msg']}); {n} benchmarks kept, verified")
PY
wait $slow_runner && fail "a job whose test timed out exited 0"
"$py" - slow <<'PY' || fail "job 3's report"
import glob, json, sys
out = sys.argv[1]
o = json.load(open(out + "/run/lava.json"))
assert o["job_result"] == "fail" and "timed out" in o["error_msg"] and not o["complete"], o
assert o["guest_status"] is None, o
files = glob.glob(out + "/run/results/*/result.json")
assert len(files) == 1, f"no result.json kept from the journal: {o}"
run = json.load(open(files[0]))
n = len(run["benchmarks"])
assert 1 <= n < 16 and not run["context"]["complete"], f"{n} benchmarks kept, complete={run['context']['complete']}"
for b in run["benchmarks"]:
    assert b["events"]["verification"] == "passed" and b["events"]["exact"], b["name"]
print(f"job 3: timed out ({o['error_msg']}); {n} of 16 benchmarks kept from the journal, each verified")
PY

# 1. The quick kprobes run, done beside jobs 3 and 4.
wait $first_runner
trap - EXIT
[ "$(cat good.rc)" = 0 ] || { tail -20 good.out; tail -5 good/job.log.yaml; fail "the kprobes job did not pass"; }
cat good.time
"$py" - good <<'PY' || fail "job 1's results"
import glob, hashlib, json, os, sys, yaml
out = sys.argv[1]
files = glob.glob(os.path.join(out, "run", "results", "*", "result.json"))
assert len(files) == 1, f"expected one result.json, got {files}"
path = files[0]
name = os.path.relpath(path, os.path.join(out, "run"))
# The sha256 the guest printed for the last revision it sent of this file.
printed = None
for line in open(os.path.join(out, "job.log.yaml"), encoding="utf-8"):
    rec = yaml.safe_load(line) if '"lvl": "target"' in line and "TBLAVA FILE" in line else None
    if rec:
        f = rec["msg"].split()
        if f[3] == name:
            printed = f[5]
got = hashlib.sha256(open(path, "rb").read()).hexdigest()
assert printed == got, f"{name}: sha256 {got} here, the guest printed {printed}"
run = json.load(open(path))
assert run["context"]["complete"], "the run is not complete"
assert run["benchmarks"], "no benchmarks"
# A benchmark whose overhead changed level under TCG now and then is
# unsteady (no figure): its events are still checked; one at least has a figure.
for b in run["benchmarks"]:
    e = b["events"]
    assert b["status"] in ("ok", "unsteady") and e["verification"] == "passed" and e["exact"], f"{b['name']}: {e}"
    assert e["recorded"] + e["lost"] == e["fired"] and e["lost"] == 0, f"{b['name']}: events {e}"
# LAVA's own results: each benchmark a test case with its measurement.
cases = {}
for line in open(os.path.join(out, "results.yaml"), encoding="utf-8"):
    m = yaml.safe_load(line)["msg"]
    if m.get("definition") == "lava" and m.get("case") == "job":
        assert m["result"] == "pass", m
    elif m.get("definition") != "lava":
        cases[m["case"]] = m
assert any(b["status"] == "ok" for b in run["benchmarks"]), "no benchmark with a figure"
for b in run["benchmarks"]:
    case = b["name"].replace("/", ".").replace(":", "_")
    assert case in cases, f"{case} is not a LAVA test case ({sorted(cases)})"
    c = cases[case]
    if b["status"] == "unsteady":
        assert c["result"] == "unknown" and "measurement" not in c, c
        continue
    want = round(b["overhead_ns_per_event"]["median"], 3)
    assert c["result"] == "pass" and c["units"] == "ns" and abs(float(c["measurement"]) - want) < 0.0015, (c, want)
assert cases["tracebench-exit"]["result"] == "pass"
print(f"job 1: {len(run['benchmarks'])} benchmarks, result.json sha256 {got[:16]}... as printed, events exact, "
      f"{len(cases)} LAVA test cases")
PY

# 2. A kernel image that does not boot.
[ "$(cat broken.rc)" != 0 ] || fail "a job whose kernel does not boot exited 0"
"$py" - broken <<'PY' || fail "job 2's report"
import json, sys
o = json.load(open(sys.argv[1] + "/run/lava.json"))
assert o["job_result"] == "fail" and o["error_msg"] and not o["complete"], o
assert o["guest_status"] is None and not o["files"] and not o["test_cases"], o
# It failed before the test: in the boot (waiting for the kernel or the prompt).
assert o["failed_action"] and "test" not in o["failed_action"], o
print(f"job 2: the boot failed in {o['failed_action']}:", o["error_type"], "-", o["error_msg"])
PY
echo "PASS: LAVA jobs: results back byte for byte as LAVA test cases; boot failure, timeout and dead board reported, finished benchmarks kept"
