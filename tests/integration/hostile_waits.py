#!/usr/bin/python3
"""Waits, validation before attach and before boot, the history's lock and a
foreign database, table-driven (issue 37, items 5, 7, 8):

- a stopped (SIGSTOP) LTTng session daemon: list, compare, cleanup and
  `run -t none` finish within a bound and say what they did not check;
  `run -t lttng` fails with the daemon's pid and why;
- ftrace.event / ftrace.clock the kernel does not offer, and a Google
  Benchmark filter that selects nothing: exit 2 at plan time, no result folder;
- two `history add` waiting on another writer's lock both land; one that waits
  longer than the busy timeout says so; a foreign SQLite file is refused, byte
  for byte untouched;
- `vm -- run -t bogus` and `vm --kmod-param nosuchparam=1` refused in seconds,
  with no qemu started (a qemu-system-x86_64 first on PATH records any start).

usage: hostile_waits.py TRACEBENCH SOURCE_DIR
"""
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

from checks import check, failures

tb, src = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="tracebench-waits-")
PIDFILE = "/var/run/lttng/lttng-sessiond.pid"


def run(args, timeout=120, env=None):
    """(exit code, stdout + stderr, seconds)."""
    t0 = time.monotonic()
    try:
        r = subprocess.run([tb] + args, capture_output=True, text=True, timeout=timeout, env=env)
        return r.returncode, r.stdout + r.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        return None, out, time.monotonic() - t0


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def result_dirs(base):
    return glob.glob(os.path.join(base, "*", "result.json"))


# ------------------------------------------------------------------ a real run to compare and add
runs = os.path.join(work, "runs")
rc, text, _ = run(["run", "-t", "none", "-w", "getpid", "--quick", "--out", runs], timeout=300)
check("a quick none run for the cases below", rc == 0 and len(result_dirs(runs)) == 1, text[-2000:])
run_dir = os.path.dirname(result_dirs(runs)[0]) if result_dirs(runs) else ""


# ------------------------------------------------------------------ a stopped session daemon
def daemon_pid():
    try:
        pid = int(open(PIDFILE).read().split()[0])
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError, IndexError):
        return 0


started = False
pid = daemon_pid()
if not pid and shutil.which("lttng-sessiond"):
    subprocess.run(["lttng-sessiond", "--daemonize", "--no-kernel"], check=True, stdin=subprocess.DEVNULL)
    for _ in range(200):
        pid = daemon_pid()
        if pid:
            break
        time.sleep(0.05)
    started = bool(pid)
check("an lttng-sessiond runs (started here when none did)", pid > 0, "lttng-tools installed?")

# (command, bound in seconds, expected exit code, regex the output must match)
STOPPED = [
    (["list"], 15, 0, r"LTTng sessions of dead runs not checked: LTTng session daemon \(pid {pid}\) is stopped"),
    (["compare", run_dir, run_dir], 15, 0, r"LTTng session daemon \(pid {pid}\) is stopped"),
    (["cleanup"], 15, 0, r"LTTng sessions of dead runs not removed: LTTng session daemon \(pid {pid}\) is stopped"),
    (["run", "-t", "none", "-w", "getpid", "--quick", "--out", os.path.join(work, "stopped-runs")], 120, 0,
     r"LTTng session daemon \(pid {pid}\) is stopped"),
    (["run", "-t", "lttng", "-w", "ust_hot", "--quick", "--out", os.path.join(work, "stopped-lttng")], 30, 2,
     r"nothing to run.*\n\s*lttng: LTTng session daemon \(pid {pid}\) is stopped"),
]
if pid:
    os.kill(pid, signal.SIGSTOP)
    try:
        for args, bound, want, pattern in STOPPED:
            rc, text, secs = run(args, timeout=bound + 60)
            name = "stopped daemon: " + " ".join(a if not a.startswith(work) else "DIR" for a in args[:4])
            check(f"{name}: finishes within {bound} s (took {secs:.1f} s)", rc is not None and secs <= bound,
                  text[-1500:])
            check(f"{name}: exit {want}", rc == want, f"exit {rc}: {text[-1500:]}")
            check(f"{name}: says why", re.search(pattern.format(pid=pid), text), text[-1500:])
        check("stopped daemon: run -t lttng left no result folder",
              not os.path.exists(os.path.join(work, "stopped-lttng")))
    finally:
        os.kill(pid, signal.SIGCONT)
    if started:
        os.kill(pid, signal.SIGTERM)
        for _ in range(200):
            if not daemon_pid():
                break
            time.sleep(0.05)

# ------------------------------------------------------------------ refused at plan time
# (args, regex): exit 2, nothing attached, no result folder.
PLAN = [
    (["run", "-t", "ftrace", "-w", "getpid", "--quick", "-o", "ftrace.event=nosuch:event"],
     r"tracefs event nosuch:event \(option event\) does not exist on this kernel"),
    (["run", "-t", "ftrace", "-w", "getpid", "--quick", "-o", "ftrace.clock=bogus"],
     r"option clock=bogus is not a trace clock of this kernel; have: .*local"),
    (["run", "-t", "perf", "-w", "getpid", "--quick", "-o", "perf.event=nosuch:event"],
     r"perf: tracepoint nosuch:event \(option event\) does not exist on this kernel"),
    (["run", "-t", "none", "-w", "getpid", "--quick", "--", "--benchmark_filter=nosuchbenchmark"],
     r"the Google Benchmark filter selects none of the 1 planned benchmarks"),
    (["run", "-t", "none", "-w", "getpid", "--quick", "--", "--benchmark_filter=-getpid"],
     r"the Google Benchmark filter selects none"),
    (["run", "-t", "dvm", "-w", "dvm_getpid", "--quick", "-o", "dvm.bufsize=1024m", "-o", "dvm.nslots=2"],
     r"dvm: the buffers would need 4\d{3} MiB .* more than the D-VM's 4096 MiB"),
]
for i, (args, pattern) in enumerate(PLAN):
    out = os.path.join(work, f"plan-{i}")
    rc, text, _ = run(args + ["--out", out] if "--" not in args else
                      args[:args.index("--")] + ["--out", out] + args[args.index("--"):])
    name = "plan: " + " ".join(args[1:])
    check(f"{name}: exit 2", rc == 2, f"exit {rc}: {text[-1500:]}")
    check(f"{name}: says why", re.search(pattern, text), text[-1500:])
    check(f"{name}: no result folder", not os.path.exists(out), str(os.listdir(out)) if os.path.exists(out) else "")
# A filter that selects something still runs (the check is not a blanket refusal).
rc, text, _ = run(["run", "-t", "none", "-w", "getpid", "-w", "write_null", "--quick", "-p", "0", "--plan", "--",
                   "--benchmark_filter=getpid"])
check("plan: a filter that selects one of two benchmarks is accepted", rc == 0, text[-1500:])

# ------------------------------------------------------------------ history: lock and foreign databases
db = os.path.join(work, "history.sqlite")
copies = []
if run_dir:
    base = json.load(open(os.path.join(run_dir, "result.json")))
    for k in range(3):
        d = os.path.join(work, f"copy{k}")
        os.makedirs(d)
        r = json.loads(json.dumps(base))
        r["context"]["run_id"] = f"{base['context']['run_id']}-copy{k}"
        json.dump(r, open(os.path.join(d, "result.json"), "w"))
        copies.append(d)
    rc, text, _ = run(["history", "add", copies[0], "--db", db])
    check("history: the first add creates the database", rc == 0, text)
    # Another writer holds the lock for 2 s while two adds start: both wait and land.
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    procs = [subprocess.Popen([tb, "history", "add", c, "--db", db], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for c in copies[1:]]
    time.sleep(2)
    holder.execute("COMMIT")
    results = [(p.wait(timeout=60), p.stdout.read()) for p in procs]
    check("history: two adds behind another writer's lock both succeed", all(rc == 0 for rc, _ in results),
          str(results))
    n = sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]
    check("history: all three runs are in the database", n == 3, f"{n} runs")
    # A lock held longer than the busy timeout: the add gives up and says so.
    holder.execute("BEGIN IMMEDIATE")
    t0 = time.monotonic()
    rc, text, secs = run(["history", "add", run_dir, "--db", db], timeout=60)
    holder.execute("ROLLBACK")
    holder.close()
    check("history: an add behind a lock held 10+ s gives up after the busy timeout",
          rc == 2 and 9 <= secs <= 30 and re.search(r"held the database's lock for the whole 10 s", text),
          f"exit {rc} after {secs:.1f} s: {text}")

# Foreign SQLite files: refused (exit 2), not one byte changed, no journal left.
FOREIGN = [
    ("a table of its own", ["CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)",
                            "INSERT INTO notes(text) VALUES ('keep me')"]),
    ("user_version 1 and other tables", ["CREATE TABLE runs(x)", "PRAGMA user_version = 1"]),
    ("another application_id", ["PRAGMA application_id = 1234", "CREATE TABLE runs(x)", "CREATE TABLE benchmarks(y)"]),
]
for name, sql in FOREIGN:
    path = os.path.join(work, "foreign-" + re.sub(r"\W+", "-", name) + ".sqlite")
    c = sqlite3.connect(path, isolation_level=None)
    for q in sql:
        c.execute(q)
    c.close()
    before = sha(path)
    rc, text, _ = run(["history", "add", run_dir or work, "--db", path])
    check(f"history: foreign database ({name}) refused with exit 2", rc == 2, f"exit {rc}: {text}")
    check(f"history: foreign database ({name}): says so", re.search(r"not a tracebench history database", text), text)
    check(f"history: foreign database ({name}) unchanged", sha(path) == before)
    check(f"history: foreign database ({name}): no journal left",
          not [f for f in os.listdir(work) if f.startswith(os.path.basename(path) + "-")])

# ------------------------------------------------------------------ vm: refused before build and boot
fake = os.path.join(work, "fakebin")
os.makedirs(fake)
marker = os.path.join(work, "qemu-started")
for prog in ("qemu-system-x86_64", "make"):
    with open(os.path.join(fake, prog), "w") as f:
        f.write(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\nexit 1\n")
    os.chmod(os.path.join(fake, prog), 0o755)
env = dict(os.environ, PATH=fake + ":" + os.environ.get("PATH", ""))
# (vm arguments, regex)
VM = [
    (["--", "run", "-t", "bogus"], r"unknown tracer 'bogus'.*\n.*refused on the host.*nothing was built or booted"),
    (["--", "run", "-t", "none", "-w", "getpid", "-o", "none.nosuchkey=1"], r"none: unknown option"),
    (["--", "run", "-t", "none", "-w", "getpid", "-j", "3"], r"--threads 3 is outside 1\.\.2"),
    (["--", "nosuchcommand"], r"'nosuchcommand' is not a tracebench command"),
    (["--kmod-param", "nosuchparam=1", "--", "run", "-t", "none", "-w", "getpid"],
     r"the companion module has no parameter 'nosuchparam' \(its parameters: inject_delay_ns"),
]
for args, pattern in VM:
    out = os.path.join(work, "vm-out")
    rc, text, secs = run(["vm", "--smp", "2", "--out-dir", out] + args, timeout=120, env=env)
    name = "vm " + " ".join(args)
    check(f"{name}: exit 2", rc == 2, f"exit {rc}: {text[-1500:]}")
    check(f"{name}: says why", re.search(pattern, text), text[-1500:])
    check(f"{name}: refused within 20 s (took {secs:.1f} s)", secs <= 20)
    check(f"{name}: nothing built, no qemu started", not os.path.exists(marker),
          open(marker).read() if os.path.exists(marker) else "")
    check(f"{name}: no output folder", not os.path.exists(out))

shutil.rmtree(work, ignore_errors=True)
if failures:
    print(f"{len(failures)} case(s) failed:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all cases passed")
