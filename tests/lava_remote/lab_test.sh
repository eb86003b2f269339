#!/bin/bash
# A real single-node LAVA lab, end to end (scripts/lava/lab.sh and
# `tracebench lava submit|wait|fetch`):
#  0. a start in a directory that is not a lab's is refused (2), nothing removed;
#  1. a start that fails (its port taken) tears down everything it started;
#  2. the lab starts with two workers and its event publisher; two jobs
#     submitted at once run at the same time on different workers and pass,
#     each on its device within 8 s of its submission (the scheduler acts on
#     the submission's event; looking every 20 s without events, both jobs
#     wait the same 0-20 s, over 8 s three times in five); fetch writes their logs and
#     lava.json (lab, device, worker, job URL; no run in a smoke job, so
#     figures_valid false and fetch exits 1);
#  3. a job with a bad kernel URL is reported with LAVA's own error and a
#     non-zero exit by wait and fetch, and lava.json says it is not valid;
#  4. the token is printed nowhere;
#  5. stop leaves no process of the lab and nothing listening on its port.
#   lab_test.sh TRACEBENCH SOURCE_DIR
set -uo pipefail
tb=$1 src=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$src/tests/common/require.sh"
lab=$src/scripts/lava/lab.sh

[ "$(id -u)" -eq 0 ] || tb_skip lava "needs root (the lab runs PostgreSQL as postgres and qemu)"
for c in lava-server lava-worker lava-run gunicorn3 qemu-system-x86_64 cpio; do
  command -v "$c" >/dev/null || tb_skip lava "$c is missing: bash scripts/setup.sh installs the lab's packages"
done
[ -x /bin/busybox ] || tb_skip lava "no /bin/busybox: apt-get install busybox-static"
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
[ -n "$kernel" ] || tb_skip lava "no kernel image in /boot: apt-get install linux-image-amd64"

work=$(mktemp -d /var/tmp/tracebench-lava-test.XXXXXX)
chmod 755 "$work"  # the lab's PostgreSQL runs as postgres, under it
dir=$work/lab
listener=
cleanup() {
  [ -z "$listener" ] || kill "$listener" 2>/dev/null
  "$lab" stop --dir "$dir" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Nothing of the lab is left: no process naming its directory, none in the
# sessions it had (SIDS: read from DIR/pids before the stop; gunicorn's and
# qemu's command lines do not name the directory), nothing listening on its
# port, no PostgreSQL socket.
check_nothing_left() {
  local what=$1 port=$2 sids=${3:-} sid
  if pgrep -f -- "$dir" >/dev/null; then
    pgrep -af -- "$dir"
    fail "$what: processes of the lab are still running"
  fi
  for sid in $sids; do
    if [ -n "$(ps -eo sid= | awk -v s="$sid" '$1 == s')" ]; then
      ps -eo pid,sid,cmd | awk -v s="$sid" '$2 == s'
      fail "$what: session $sid of the lab still has processes"
    fi
  done
  if ss -ltnH "sport = :$port" | grep -q .; then fail "$what: port $port is still listened on"; fi
  [ ! -S "$dir/run/.s.PGSQL.5432" ] || fail "$what: the PostgreSQL socket is still there"
}

# --- 0. a directory that is not a lab's is refused, and kept -----------------
mkdir -p "$work/not-a-lab" && echo keep >"$work/not-a-lab/file"
"$lab" start --dir "$work/not-a-lab" >"$work/not-a-lab.txt" 2>&1
rc=$?
[ $rc -eq 2 ] || { cat "$work/not-a-lab.txt"; fail "start in a directory that is not a lab's exited $rc, expected 2"; }
[ -f "$work/not-a-lab/file" ] || fail "start removed a directory that is not a lab's"

# --- 1. a failed start tears down ---------------------------------------------
port=$(free_port)
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(600)' "$port" &
listener=$!
sleep 0.5
"$lab" start --dir "$dir" --workers 2 --port "$port" >"$work/failed-start.txt" 2>&1
rc=$?
kill "$listener"; wait "$listener" 2>/dev/null; listener=
[ $rc -eq 1 ] || { cat "$work/failed-start.txt"; fail "a start on a taken port exited $rc, expected 1"; }
grep -q "gunicorn exited at start" "$work/failed-start.txt" || { cat "$work/failed-start.txt"; fail "the failed start did not say why"; }
check_nothing_left "after a failed start" "$port"
echo "ok: a start on a taken port failed and left nothing running"

# --- 2. two workers, two jobs at once -----------------------------------------
start=$SECONDS
"$lab" start --dir "$dir" --workers 2 >"$work/start.txt" 2>&1 || { cat "$work/start.txt"; fail "lab start failed"; }
port=$(sed 's/.*://' "$dir/url")
echo "ok: lab up in $((SECONDS - start)) s at $(cat "$dir/url")"
"$lab" status --dir "$dir" >"$work/status.txt" || { cat "$work/status.txt"; fail "status says the lab is not up"; }
grep -q '^publisher  *up' "$work/status.txt" || { cat "$work/status.txt"; fail "status shows no event publisher up"; }
"$lab" start --dir "$dir" --workers 2 >>"$work/start.txt" 2>&1 || fail "a second start of a running lab failed"
grep -q "already running" "$work/start.txt" || fail "a second start did not see the running lab"
token=$(awk '$1 == "token:" { print $2 }' "$dir/lavacli.yaml")
[ -n "$token" ] || fail "no token in $dir/lavacli.yaml"
export XDG_CONFIG_HOME=$dir  # lavacli's identity file, as `tracebench lava` finds it by default
id_args=(--identity tracebench-lab)

mkdir -p "$work/root"/{bin,proc,sys,dev,tmp,etc,root}
cp /bin/busybox "$work/root/bin/busybox"
cp "$here/guest-init.sh" "$work/root/init"
(cd "$work/root" && find . | cpio -o -H newc 2>/dev/null) >"$work/busybox.cpio" || fail "cannot build the initramfs"
make_job() {  # make_job NAME KERNEL OUT
  sed -e "s|@KERNEL@|$2|" -e "s|@RAMDISK@|$work/busybox.cpio|" -e "s|@NAME@|$1|" "$here/smoke-job.yaml.in" >"$3"
}
make_job "lab test a" "$kernel" "$work/a.yaml"
make_job "lab test b" "$kernel" "$work/b.yaml"
make_job "lab test bad kernel" "/nonexistent/vmlinuz-bad" "$work/bad.yaml"

"$tb" lava submit "${id_args[@]}" "$work/a.yaml" "$work/b.yaml" >"$work/ids.txt" 2>"$work/submit.err" ||
  { cat "$work/submit.err"; fail "submit failed"; }
mapfile -t ids <"$work/ids.txt"
[ ${#ids[@]} -eq 2 ] || fail "submit printed ${#ids[@]} ids, expected 2: $(cat "$work/ids.txt")"
t0=$SECONDS
"$tb" lava wait "${id_args[@]}" --timeout 600 "${ids[@]}" >"$work/wait.txt" 2>&1
rc=$?
cat "$work/wait.txt"
[ $rc -eq 0 ] || fail "wait exited $rc for two good jobs"
echo "ok: two jobs done in $((SECONDS - t0)) s from submit"
# The smoke jobs carry no tracebench run: fetch says so with exit 1 (its
# exit 0 is for a job that passed AND whose run came back whole), and keeps
# the server's facts in lava.json.
for i in 0 1; do
  "$tb" lava fetch "${id_args[@]}" "${ids[$i]}" "$work/fetch-$i" >"$work/fetch-$i.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { cat "$work/fetch-$i.txt"; fail "fetch of smoke job ${ids[$i]} (no run in it) exited $rc, expected 1"; }
done
/usr/bin/python3 - "$work/fetch-0/lava.json" "$work/fetch-1/lava.json" "$(cat "$dir/url")" "${ids[@]}" <<'PY' || exit 1
import datetime, json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
url, ids = sys.argv[3], [int(x) for x in sys.argv[4:6]]
def fail(msg):
    print("FAIL:", msg); sys.exit(1)
for rec, job, name in ((a, ids[0], "lab test a"), (b, ids[1], "lab test b")):
    if rec["job_id"] != job or rec["job_name"] != name:
        fail(f"lava.json has job {rec['job_id']} ({rec['job_name']}), expected {job} ({name})")
    if rec["lab_url"] != url or rec["job_url"] != f"{url}/scheduler/job/{job}": fail(f"lab or job URL wrong: {rec}")
    if rec["health"] != "Complete" or rec["outcome"] != "passed" or rec["source"] != "server":
        fail(f"job {job} did not pass: {rec}")
    if rec["complete"] or rec["files"] or rec["figures_valid"] is not False:
        fail(f"job {job} carried no run, yet lava.json says it came back: {rec}")
    if len(rec["test_cases"]) != 2 or rec["failed_test_cases"]: fail(f"job {job}: test cases {rec['test_cases']} {rec['failed_test_cases']}")
    if not rec["device"] or not rec["worker"]: fail(f"job {job}: no device or worker: {rec}")
if a["worker"] == b["worker"] or a["device"] == b["device"]:
    fail(f"both jobs ran on {a['worker']}/{a['device']}: not fanned out over the two workers")
t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
overlap = min(t(a["end_time"]), t(b["end_time"])) - max(t(a["start_time"]), t(b["start_time"]))
if overlap.total_seconds() <= 0:
    fail(f"the jobs did not run at the same time: {a['start_time']}..{a['end_time']} and {b['start_time']}..{b['end_time']}")
queued = [(t(r["start_time"]) - t(r["submit_time"])).total_seconds() for r in (a, b)]
if max(queued) > 8:
    fail(f"the jobs waited {queued} s between submission and their device: the scheduler did not act on the events")
print(f"ok: jobs {ids} ran on {a['worker']} and {b['worker']}, {overlap.total_seconds():.1f} s at the same time, "
      f"each on its device {max(queued):.1f} s after submission at most")
PY
grep -q '"case": "uname", "definition": "0_smoke"' "$work/fetch-0/job.log.yaml" || fail "the fetched log has no uname test case"
/usr/bin/python3 - "$work/fetch-0/lava-results.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
suite = {s["id"]: s["name"] for s in r["suites"]}
cases = {(suite.get(t["suite"]), t["name"]): t["result"] for t in r["tests"]}
if cases.get(("0_smoke", "uname")) != "pass" or cases.get(("lava", "job")) != "pass":
    print("FAIL: lava-results.json lacks the job's results:", cases); sys.exit(1)
PY

# --- 3. a job that fails: LAVA's error, non-zero exits ------------------------
bad=$("$tb" lava submit "${id_args[@]}" "$work/bad.yaml" 2>"$work/submit-bad.err") || { cat "$work/submit-bad.err"; fail "submit of the bad job failed"; }
"$tb" lava wait "${id_args[@]}" --timeout 300 "$bad" >"$work/wait-bad.txt" 2>&1
rc=$?
cat "$work/wait-bad.txt"
[ $rc -eq 1 ] || fail "wait exited $rc for a job with a bad kernel URL, expected 1"
grep -q "job $bad on .*: job error: LAVA: \[Job\] .*vmlinuz-bad.* does not exist" "$work/wait-bad.txt" ||
  fail "wait did not report LAVA's error for job $bad"
"$tb" lava fetch "${id_args[@]}" "$bad" "$work/fetch-bad" >"$work/fetch-bad.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$work/fetch-bad.txt"; fail "fetch exited $rc for the failed job, expected 1"; }
/usr/bin/python3 - "$work/fetch-bad/lava.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
if r["health"] != "Incomplete" or r["outcome"] != "job error" or r["figures_valid"] is not False:
    print("FAIL: the failed job's lava.json:", r); sys.exit(1)
if r["error_type"] != "Job" or "vmlinuz-bad" not in (r["error_msg"] or ""):
    print("FAIL: LAVA's error is not in lava.json:", r); sys.exit(1)
print("ok: the bad job is reported as LAVA's", r["error_type"], "error:", r["error_msg"])
PY
# Refused input: a job id that is not one, no server named.
"$tb" lava wait "${id_args[@]}" x12 >/dev/null 2>&1; [ $? -eq 2 ] || fail "wait of a non-number did not exit 2"
(unset XDG_CONFIG_HOME; HOME=$work/nohome "$tb" lava wait 1 >/dev/null 2>&1); [ $? -eq 2 ] || fail "wait with no server did not exit 2"

# --- 4. the token is printed nowhere ------------------------------------------
if grep -rlF -- "$token" "$work"/*.txt "$work"/*.err "$work"/fetch-*/lava.json; then
  fail "the API token appears in the output above"
fi

# --- 5. stop leaves nothing ----------------------------------------------------
sids=$(cat "$dir"/pids/*)
[ "$(echo "$sids" | wc -w)" -eq 5 ] || fail "expected 5 sessions (gunicorn, publisher, scheduler, 2 workers), have: $sids"
"$lab" stop --dir "$dir" >"$work/stop.txt" 2>&1 || { cat "$work/stop.txt"; fail "lab stop failed"; }
check_nothing_left "after stop" "$port" "$sids"
"$lab" status --dir "$dir" >/dev/null 2>&1 && fail "status says a stopped lab is up"
echo "ok: stopped, nothing left running or listening"
echo "PASS"
