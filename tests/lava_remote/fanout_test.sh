#!/bin/bash
# compare-kernels.sh --lava on a real lab (scripts/lava/lab.sh), end to end:
#  1. a two-worker lab; the same kernel as A and B (two links), --rounds 2:
#     4 LAVA jobs, every one passed, fetched whole (lava.json figures_valid)
#     and collected, both workers used, the rounds compared as pairs;
#  2. on that lab, a B kernel that does not boot: compare-kernels exits 1,
#     says LAVA's error, and nothing of B's job is collected (no figure);
#  2b. on that lab still (one lab start for both), bisect-kernels.sh --lava
#     over two candidates with a planted regression: the answer, k = 1 (two
#     devices: a pair takes both), the step's pairs on both devices at once
#     (bisect_on_lab below);
#  3. the jobs of 1 ran side by side: from the first job's start to the
#     last one's end, at least 1.5 ran at once on average (their seconds on
#     the devices over that span; one after the other is at most 1, however
#     slow a job is beside another on shared CPUs), kept in
#     OUT_DIR/times.json.  The lab is stopped with nothing left (no process
#     naming its directory, none in its sessions, `lab.sh status` says down).
#     (A one-worker lab was run for a wall-time ratio until 2026-11-29: the
#     same figure at twice the cost, ~150 s.)
#   fanout_test.sh TRACEBENCH SOURCE_DIR OUT_DIR (OUT_DIR/times.json: the figures)
set -uo pipefail
tb=$1 src=$2 out=$3
. "$src/tests/common/require.sh"
lab=$src/scripts/lava/lab.sh
compare=$src/scripts/vm/compare-kernels.sh

[ "$(id -u)" -eq 0 ] || tb_skip lava "needs root (the lab runs PostgreSQL as postgres and qemu)"
for c in lava-server lava-worker lava-run gunicorn3 qemu-system-x86_64 cpio; do
  command -v "$c" >/dev/null || tb_skip lava "$c is missing: bash scripts/setup.sh installs the lab's packages"
done
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
[ -n "$kernel" ] || tb_skip lava "no kernel image in /boot: apt-get install linux-image-amd64"
rel=${kernel##*/vmlinuz-}
[ -f "/usr/src/linux-headers-$rel/Makefile" ] || tb_skip lava "no headers for $rel: apt-get install linux-headers-$rel"

work=$(mktemp -d /var/tmp/tracebench-fanout-test.XXXXXX)
chmod 755 "$work"  # the lab's PostgreSQL runs as postgres, under it
mkdir -p "$out"
labs=()
cleanup() {
  local d
  for d in "${labs[@]}"; do "$lab" stop --dir "$d" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The same kernel as A and B: two links named as the release (`lava job`
# builds the companion module for the release its name says).
for side in a b; do mkdir -p "$work/$side" && ln -s "$kernel" "$work/$side/vmlinuz-$rel"; done
# A kernel that does not boot, of the same name.
mkdir -p "$work/bad" && head -c 4194304 /dev/urandom >"$work/bad/vmlinuz-$rel"
# --no-samples: a run's samples.csv would cross LAVA's serial console as
# base64 in every job, most of a job's time; nothing here reads it (compare
# takes result.json; vm.lava_run checks that a run's files, samples.csv
# included, come back whole through LAVA).  One traced benchmark (its events
# verified in the guest, its overhead compared as pairs) of 300 samples a
# block: the untraced none beside it and 1000 samples a block made each job
# longer and no check here stronger.
run_args=(run --quick -t ftrace -w getpid -n 300 --no-samples)
# The comparison with a kernel that does not boot checks B's failure only:
# A's job runs the cheapest run (none, as the bisection's below; ftrace's
# set-up takes longer in the guest than the run itself).
bad_run_args=(run --quick -t none -w getpid -n 300 --no-samples)
# The sequential test as bisect-kernels uses it by default, its first look at
# five pairs (it decides nothing before): a batch of 10 jobs for each of the
# two steps when each decides at five.  Three pairs
# with --fixed (18 jobs) were tried: one outlier pair under TCG (one boot 7x
# the other) left `same` inconclusive (MDE 3133%), where the sequential test
# takes more pairs.
bisect_design=(--rounds 5 --max-rounds 10)
job_opts=(--lava-job-option=--smp=1 --lava-job-option=--boot-timeout=120s)

start_lab() {  # start_lab DIR WORKERS
  labs+=("$1")
  "$lab" start --dir "$1" --workers "$2" >"$1.start.txt" 2>&1 || { cat "$1.start.txt"; fail "lab start ($2 workers) failed"; }
  echo "ok: a lab with $2 worker(s) up at $(cat "$1/url")"
}

stop_lab() {  # stop_lab DIR: lab.sh's own stop, then nothing of it left
  local d=$1 sids sid port
  sids=$(cat "$d"/pids/*)
  port=$(sed 's/.*://' "$d/url")
  "$lab" stop --dir "$d" >"$d.stop.txt" 2>&1 || { cat "$d.stop.txt"; fail "lab stop failed"; }
  "$lab" status --dir "$d" >/dev/null 2>&1 && fail "status says the stopped lab $d is up"
  pgrep -af -- "$d/" && fail "processes naming $d are still running"
  for sid in $sids; do
    [ -z "$(ps -eo sid= | awk -v s="$sid" '$1 == s')" ] || fail "session $sid of the lab $d still has processes"
  done
  if ss -ltnH "sport = :$port" | grep -q .; then fail "port $port of the lab $d is still listened on"; fi
  echo "ok: lab $d stopped, nothing left"
}

# compare_on DIR NAME A B ROUNDS [more compare-kernels options]: runs the
# comparison (of the runs in ${cmp_run[@]}) on the lab in DIR; its output in
# $work/NAME.txt, rc in $rc, wall time in $wall.
compare_on() {
  local d=$1 name=$2 a=$3 b=$4 rounds=$5
  shift 5
  local t0
  t0=$(date +%s.%N)
  "$compare" --tracebench "$tb" --outdir "$work/$name" --rounds "$rounds" --timeout 900 \
    --lava tracebench-lab --lava-identity-file "$d/lavacli.yaml" "${job_opts[@]}" "$@" \
    "$a" "$b" -- "${cmp_run[@]}" >"$work/$name.txt" 2>&1
  rc=$?
  local t1
  t1=$(date +%s.%N)
  echo "$t0 $t1" >"$work/$name.span"
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

# Every job of a comparison passed, came back whole and was collected; the
# rounds were compared as pairs.  Prints each job's worker and time on it,
# and where the wall time went: before the first submit (the jobs and their
# initramfs written), from it to the last job's end (LAVA), after (fetch,
# compare).
check_comparison() {  # check_comparison NAME WORKERS
  /usr/bin/python3 - "$work/$1" "$2" $(cat "$work/$1.span") <<'PY' || { cat "$work/$1.txt"; fail "comparison $1"; }
import datetime, glob, json, os, sys
d, workers, t0, t1 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
used, secs, submits, starts, ends = set(), [], [], [], []
for side in "AB":
    for r in (1, 2):
        rd = f"{d}/{side}/round{r}"
        rec = json.load(open(f"{rd}/lava.json"))
        assert rec["source"] == "server" and rec["outcome"] == "passed", rec
        assert rec["complete"] and rec["figures_valid"] is True and rec["guest_status"] == 0, rec
        runs = glob.glob(f"{rd}/runs/*/result.json")
        assert len(runs) == 1, f"{rd}: {runs}"
        run = json.load(open(runs[0]))
        assert run["context"]["complete"] and run["benchmarks"], runs[0]
        for b in run["benchmarks"]:
            assert b["events"]["verification"] == "passed", (b["name"], b["events"])
        used.add(rec["worker"])
        s = (t(rec["end_time"]) - t(rec["start_time"])).total_seconds()
        secs.append(s)
        submits.append(t(rec["submit_time"]).timestamp())
        starts.append(t(rec["start_time"]).timestamp())
        ends.append(t(rec["end_time"]).timestamp())
        print(f"  job {rec['job_id']} {side} round {r}: {rec['device']} ({rec['worker']}), {s:.1f} s on the device")
    assert len(os.listdir(f"{d}/{side}/runs")) == 2, os.listdir(f"{d}/{side}/runs")
    assert sorted(os.listdir(f"{d}/{side}/pairs")) == ["pair-0001", "pair-0002"], os.listdir(f"{d}/{side}/pairs")
assert len(used) == workers, f"jobs ran on {sorted(used)}, expected {workers} worker(s)"
assert os.path.getsize(f"{d}/compare.txt") > 0, "no comparison printed"
phases = {"before_submit_s": min(submits) - t0, "lava_s": max(ends) - min(submits), "after_s": t1 - max(ends)}
print("  " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
# How many jobs ran at once, on average, from the first start to the last end:
# at most 1 when the jobs ran one after the other, whatever they cost.
span = max(ends) - min(starts)
json.dump({"job_seconds": secs, "workers_used": sorted(used), **phases, "jobs_span_s": span,
           "concurrency": sum(secs) / span}, open(f"{d}.jobs.json", "w"))
PY
}

# bisect_on_lab DIR: bisect-kernels.sh --lava on the lab in DIR (two idle
# devices) over two candidates, links to the one kernel, the companion
# module's inject_delay_ns=100 planted on cand2 (as tests/vm/bisect_kernels.sh
# plants it).  The answer must be cand2 (last good cand1): two idle devices
# make k = 1 (a candidate's pair takes both), the confirm step (cand1 vs
# cand2: regression), its pairs running on both devices at the same time,
# every boot's job passed, the planted delay where it belongs.  One step of
# ten boots: what is the lab's own (jobs written, queued on both devices,
# fetched, compared) is the same in every step; a third candidate's `same`
# step cost ~85 s of CI for none of it.  The binary search over five
# candidates (both verdicts, both kinds of step) is vm.bisect_kernels', and
# the range each verdict leaves on the lab's path (kary.sh's lava_bounds: a
# bad candidate the new hi, a good one the new lo) is checked by vm_scripts
# (tests/vm/scripts_test.sh).
bisect_on_lab() {
  local d=$1 ks="" i t0
  mkdir -p "$work/bk"
  for i in 1 2; do ln -s "$kernel" "$work/bk/cand$i"; ks+="${ks:+,}$work/bk/cand$i"; done
  t0=$SECONDS
  "$src/scripts/vm/bisect-kernels.sh" --tracebench "$tb" --outdir "$work/bisect" "${bisect_design[@]}" --threshold 4 \
    --timeout 600 --kernels "$ks" --lava tracebench-lab --lava-identity-file "$d/lavacli.yaml" "${job_opts[@]}" \
    --inject-from cand2 inject_delay_ns=100 none/kmod_target/none/payload:0/threads:1 cand1 cand2 \
    -- run -t none -w kmod_target -p 0 --quick -r 6 -n 300 --no-samples >"$work/bisect.txt" 2>&1
  rc=$?
  bisect_wall=$((SECONDS - t0))
  [ $rc -eq 0 ] || { cat "$work/bisect.txt"; cat "$work/bisect/bisect.md" 2>/dev/null; fail "bisect-kernels --lava exited $rc"; }
  grep -q '^bisect-kernels: first bad kernel: cand2 ' "$work/bisect.txt" || { cat "$work/bisect.txt"; fail "the printed answer is not cand2"; }
  /usr/bin/python3 - "$work/bisect" "$bisect_wall" <<'PY' || { cat "$work/bisect.txt"; fail "bisect-kernels --lava evidence"; }
import datetime, json, os, sys
d, wall = sys.argv[1], int(sys.argv[2])
b = json.load(open(os.path.join(d, "bisect.json")))
assert b["status"] == "found" and b["first_bad"] == "cand2" and b["last_good"] == "cand1", (b["status"], b["first_bad"], b["last_good"])
assert b["lava"]["identity"] == "tracebench-lab", b.get("lava")
steps = b["steps"]
got = [(s["step"], s["kind"], s["candidate"]) for s in steps]
assert got == [(0, "confirm", "cand2")], got
t = lambda x: datetime.datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()
for s in steps:
    name = f"step {s['step']} ({s['candidate']})"
    assert s["idle_devices"] == 2, (name, s["idle_devices"])
    assert s["k"] == 1, (name, s["k"])
    n = s["rounds"]
    assert len(s["jobs"]) == 2 * n and s["a_runs"] == n and s["b_runs"] == n, (name, n, len(s["jobs"]))
    for j in s["jobs"]:
        assert j["outcome"] == "passed" and j["device"] in ("qemu-1", "qemu-2"), (name, j)
    injected = s["candidate"] == "cand2"
    assert s["kmod_params_in_effect"]["candidate"] == [f"inject_delay_ns={100 if injected else 0}"], (name, s["kmod_params_in_effect"])
    assert s["kmod_params_in_effect"]["reference"] == ["inject_delay_ns=0"], (name, s["kmod_params_in_effect"])
    want = ("regression", "bad") if injected else ("same", "good")
    assert (s["verdict"], s["decision"]) == want, (name, s["verdict"], s["decision"])
    print(f"ok: {name}: k={s['k']}, {n} pairs, ratio {s['ratio']:.2f}, {s['verdict']}; "
          f"reference boots {s['devices']['G']}, candidate boots {s['devices']['C']}")
# Each step ran on both devices at once: two of its jobs overlapped in time on different devices.
for s in steps:
    jobs = s["jobs"]
    assert {j["device"] for j in jobs} == {"qemu-1", "qemu-2"}, (s["step"], jobs)
    both = [(a["job_id"], b["job_id"]) for a in jobs for b in jobs
            if a["device"] != b["device"] and t(a["start_time"]) < t(b["end_time"]) and t(b["start_time"]) < t(a["end_time"])]
    assert both, f"no two jobs of step {s['step']} ran at the same time on the two devices"
# A queued job reaches a device soon after the device's last job ended: the
# scheduler acts on the idle event, or looks again within 2 s
# (scripts/lava/lava-scheduler.py); LAVA's own 20-s look left gaps of 14-22 s.
gaps = []
for s in steps:
    by_dev = {}
    for j in s["jobs"]:
        by_dev.setdefault(j["device"], []).append(j)
    for dev, js in by_dev.items():
        js.sort(key=lambda j: t(j["start_time"]))
        for a, b in zip(js, js[1:]):
            if t(b["submit_time"]) < t(a["end_time"]):  # b was waiting when a ended
                gaps.append((t(b["start_time"]) - t(a["end_time"]), s["step"], dev, a["job_id"], b["job_id"]))
assert gaps, "no job waited for a device: the steps' pairs did not queue"
worst = max(gaps)
assert worst[0] <= 8, f"job {worst[4]} reached {worst[2]} {worst[0]:.1f} s after job {worst[3]} ended there (step {worst[1]})"
print(f"ok: {len(gaps)} queued jobs reached their device at most {worst[0]:.1f} s after the last job there ended")
md = open(os.path.join(d, "bisect.md")).read()
assert "First bad kernel: **`cand2`**" in md and "Boots as LAVA jobs" in md, md
print(f"ok: bisection through LAVA: cand2 in {len(steps)} step, its pairs side by side on both devices, {wall} s")
PY
}

# --- 1. two workers -----------------------------------------------------------
start_lab "$work/lab2" 2
cmp_run=("${run_args[@]}")
compare_on "$work/lab2" two "$work/a/vmlinuz-$rel" "$work/b/vmlinuz-$rel" 2
[ $rc -eq 0 ] || { cat "$work/two.txt"; fail "compare-kernels --lava on two workers exited $rc"; }
wall2=$wall
echo "ok: 4 jobs on two workers, compared as pairs, in $wall2 s"
check_comparison two 2

# --- 2. a kernel that does not boot -------------------------------------------
cmp_run=("${bad_run_args[@]}")
compare_on "$work/lab2" badrun "$work/a/vmlinuz-$rel" "$work/bad/vmlinuz-$rel" 1
cat "$work/badrun.txt" | grep -E "compare-kernels|LAVA" | tail -8
[ $rc -eq 1 ] || fail "compare-kernels with a kernel that does not boot exited $rc, expected 1"
grep -q "job [0-9]* on .*: .*LAVA: \[" "$work/badrun.txt" || fail "compare-kernels did not say LAVA's error for the bad kernel"
[ -z "$(ls -A "$work/badrun/B/runs")" ] || fail "the failed job's runs were collected: $(ls "$work/badrun/B/runs")"
[ ! -s "$work/badrun/compare.txt" ] || fail "a comparison was printed with a side whose job failed"
/usr/bin/python3 - "$work/badrun/B/round1/lava.json" <<'PY' || fail "the bad kernel's lava.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["figures_valid"] is False and r["outcome"] != "passed" and r["error_type"], r
print("ok: the bad kernel's job:", r["outcome"], "-", r["error_type"], r["error_msg"])
PY
# --- 2b. k-ary bisection through LAVA, on the same lab ---------------------------
bisect_on_lab "$work/lab2"
stop_lab "$work/lab2"

# --- 3. the fan-out's gain --------------------------------------------------------
# The jobs of section 1 ran side by side: on average at least 1.5 at once
# from the first start to the last end (one after the other is at most 1,
# however slow a job is beside another on shared CPUs).
/usr/bin/python3 - "$out/times.json" "$wall2" "$work/two.jobs.json" "$(nproc)" <<'PY' || fail "the fan-out's gain"
import json, sys, datetime, socket
p, w2, j2, cpus = sys.argv[1], float(sys.argv[2]), json.load(open(sys.argv[3])), int(sys.argv[4])
json.dump({"host": socket.gethostname(), "cpus": cpus, "loadavg_at_end": open("/proc/loadavg").read().split()[:3],
           "date": datetime.datetime.utcnow().isoformat() + "Z", "jobs": 4, "two_workers_wall_s": w2,
           "two_workers": j2}, open(p, "w"), indent=2)
c = j2["concurrency"]
print(f"fan-out: 4 jobs on two workers in {w2:.0f} s; {sum(j2['job_seconds']):.0f} s of jobs in a span of "
      f"{j2['jobs_span_s']:.0f} s: {c:.2f} at once on average (bound 1.5; {p})")
assert c >= 1.5, f"the jobs ran {c:.2f} at once on average: the fan-out did not run them side by side"
PY
echo "PASS"
