#!/usr/bin/python3
"""Integrity under a hostile user (issue 51), table-driven, one section per
class; each check fails when its guard is removed.

  - the machine lock: a symlink (to a file, dangling), a hard link or a FIFO
    planted at the lock's path is refused, never followed;
  - ab sessions: two started in the same second without --out each get a
    directory of their own; a side that leaves a copied run decides
    nothing; SIGKILL of ab ends the run it started;
  - duplicated runs: copies of one run on a side count once (pooled), and
    pairs that are one run (copies, a linked pair) are refused;
  - a run whose samples.csv is removed mid-run: exit 1, the loss said;
  - LAVA logs: a revision number sent twice, a second final revision, a
    frame after DONE: refused, nothing written;
  - parsers and inputs: a 50,000-character --origin, NaN for --wait-lock and
    selftest --budget;
  - files beside the result: an export or JUnit file over a run's
    summary.csv or samples.csv is refused and the file unchanged;
  - secrets: libpq's key=value form is a server, its password never printed.

Measuring commands take the machine lock (with --wait-lock); the fakes
that play a hostile side measure nothing and use a lock directory of
their own.

usage: hostile_integrity.py TRACEBENCH SOURCE_DIR
"""
import base64
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from checks import check, failures

tb, src = os.path.abspath(sys.argv[1]), sys.argv[2]
work = tempfile.mkdtemp(prefix="tracebench-integrity-")
CRASH = re.compile(r"Traceback|terminate called|uncaught exception|core dumped|Aborted|Segmentation")
private_lock = os.path.join(work, "lock")
os.mkdir(private_lock)
PRIVATE = dict(os.environ, TRACEBENCH_LOCK_DIR=private_lock)


def run(args, timeout=120, env=None, cwd=None):
    try:
        return subprocess.run([tb] + args, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd or work)
    except subprocess.TimeoutExpired:
        return None


def expect(name, args, code, pattern, timeout=60, env=None, cwd=None):
    r = run(args, timeout=timeout, env=env, cwd=cwd)
    if r is None:
        check(name, False, f"hung (no exit within {timeout} s): {args}")
        return None
    msg = r.stderr + r.stdout
    check(name, r.returncode == code and re.search(pattern, msg) is not None and not CRASH.search(msg),
          f"exit {r.returncode} (want {code}), output: {msg[-800:]!r}")
    return r


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def one_run(out, extra=()):
    """A real, small run (under the machine lock); its directory."""
    r = run(["run", "-t", "none", "-w", "getpid", "-r", "2", "-n", "20", "--wait-lock=1800", "--out", out, *extra],
            timeout=2000)
    dirs = glob.glob(os.path.join(out, "*", "result.json"))
    if r is None or r.returncode != 0 or len(dirs) != 1:
        print("FAIL: the fixture run did not complete", r and r.stderr[-800:])
        sys.exit(1)
    return os.path.dirname(dirs[0])


def fake_binary(name, body):
    """A stand-in for a side's tracebench binary in ab: `run ... --out DIR`."""
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write("#!/usr/bin/python3\nimport datetime, json, os, random, shutil, sys, time\n"
                "out = sys.argv[sys.argv.index('--out') + 1]\n" + body)
    os.chmod(path, 0o755)
    return path


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def children(pid):
    r = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(x) for x in r.stdout.split()]


started = []  # processes this test started, ended by pid whatever happens
try:
    RA = one_run(os.path.join(work, "fixture-a"))
    RB = one_run(os.path.join(work, "fixture-b"))

    # --- 1. the machine lock follows no planted name -------------------------
    victim = os.path.join(work, "victim")
    lock = os.path.join(private_lock, "tracebench.lock")
    plants = [
        ("symlink to a file", lambda: os.symlink(victim, lock), r"is a symbolic link"),
        ("dangling symlink", lambda: os.symlink(os.path.join(work, "made-by-root"), lock), r"is a symbolic link"),
        ("hard link", lambda: os.link(victim, lock), r"hard links"),
        ("FIFO", lambda: os.mkfifo(lock), r"is a FIFO"),
    ]
    for name, plant, pattern in plants:
        with open(victim, "w") as f:
            f.write("root:x:0:0:root:/root:/bin/bash\n")
        plant()
        expect(f"lock: {name} at the lock's path: refused", ["run", "-t", "none", "-w", "getpid", "-r", "2", "-n", "20",
                                                              "--out", os.path.join(work, "never")], 2,
               pattern + r".*remove it", env=PRIVATE)
        check(f"lock: {name}: the file it points to is unchanged, none created",
              open(victim).read() == "root:x:0:0:root:/root:/bin/bash\n" and
              not os.path.exists(os.path.join(work, "made-by-root")) and not os.path.exists(os.path.join(work, "never")))
        os.unlink(lock)

    # --- 2. ab sessions ---------------------------------------------------------
    fresh = fake_binary("fresh", f"""
src = {RA!r} if 'side=a' in sys.argv else {RB!r}
doc = json.load(open(os.path.join(src, 'result.json')))
now = datetime.datetime.now(datetime.timezone.utc)
doc['context']['run_id'] = now.strftime('%Y%m%dT%H%M%S.%fZ') + '-fake-nosha-%08x' % random.getrandbits(32)
d = os.path.join(out, doc['context']['run_id'])
os.makedirs(d)
json.dump(doc, open(os.path.join(d, 'result.json'), 'w'))
time.sleep(0.3)
""")
    same = os.path.join(work, "same-second")
    os.mkdir(same)
    for attempt in range(3):
        shutil.rmtree(same)
        os.mkdir(same)
        procs = [subprocess.Popen([tb, "ab", f"{fresh}:side=a", f"{fresh}:side=b", "--min-pairs", "2", "--max-pairs",
                                   "2", "--wait-lock=120", "--", "-t", "none", "-w", "getpid"],
                                  cwd=same, env=PRIVATE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        started += procs
        outs = [p.communicate(timeout=300) for p in procs]
        sessions = sorted(glob.glob(os.path.join(same, "results", "ab-*")))
        stamps = {re.sub(r"-\d+$", "", os.path.basename(s)) for s in sessions}
        if len(stamps) == 1:
            break  # both in the same second, as the case needs
    abs_ = [json.load(open(os.path.join(s, "ab.json"))) for s in sessions if os.path.exists(os.path.join(s, "ab.json"))]
    crowded = [p for p in glob.glob(os.path.join(same, "results", "ab-*", "[AB]", "pair-*"))
               if len([d for d in os.listdir(p) if os.path.isdir(os.path.join(p, d))]) != 1]
    check("ab: two sessions in the same second without --out: a directory each, each whole",
          len(sessions) == 2 and len(abs_) == 2 and all(len(d["pairs"]) == 2 for d in abs_) and not crowded and
          all(p.returncode != 2 for p in procs),
          f"{sessions} {[d.get('stopped') for d in abs_]} crowded {crowded} exits {[p.returncode for p in procs]} "
          f"{[o[1][-300:] for o in outs]}")

    stale = fake_binary("stale", f"""
shutil.copytree({RB!r}, os.path.join(out, os.path.basename({RB!r})))
""")
    r = expect("ab: a side that leaves a copied old run decides nothing",
               ["ab", f"{fresh}:side=a", stale, "--min-pairs", "2", "--max-pairs", "3", "--out",
                os.path.join(work, "ab-stale"), "--", "-t", "none", "-w", "getpid"], 1,
               r"not one it made in this pair", env=PRIVATE)
    check("ab: ... and no verdict in its table", r is not None and not re.search(r"improvement|regression|same",
                                                                                 r.stdout), r and r.stdout)
    replay = fake_binary("replay", f"""
d = os.path.join(os.path.dirname(os.path.dirname(out)), 'keep')
if not os.path.exists(d):
    src = {RB!r}
    doc = json.load(open(os.path.join(src, 'result.json')))
    now = datetime.datetime.now(datetime.timezone.utc)
    doc['context']['run_id'] = now.strftime('%Y%m%dT%H%M%S.%fZ') + '-fake-nosha-00000001'
    os.makedirs(d)
    json.dump(doc, open(os.path.join(d, 'result.json'), 'w'))
shutil.copytree(d, os.path.join(out, 'r'))
""")
    expect("ab: a side that copies its first run into later pairs decides nothing",
           ["ab", f"{fresh}:side=a", replay, "--min-pairs", "2", "--max-pairs", "3", "--out",
            os.path.join(work, "ab-replay"), "--", "-t", "none", "-w", "getpid"], 1, r"are one run", env=PRIVATE)

    # SIGKILL of ab: the run it started ends too (the machine lock is freed).
    killed = os.path.join(work, "ab-killed")
    ab = subprocess.Popen([tb, "ab", ".", ".", "--min-pairs", "2", "--max-pairs", "2", "--out", killed, "--wait-lock=1800", "--",
                           "-t", "none", "-w", "getpid", "-r", "100000", "--ci-target", "0", "-n", "2000"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started.append(ab)
    child, deadline = None, time.time() + 1900
    while time.time() < deadline and ab.poll() is None and child is None:
        kids = children(ab.pid)
        if kids and os.path.exists(os.path.join(killed, "A", "pair-0001", "run.log")):
            time.sleep(3)  # measuring by now
            child = kids[0]
        time.sleep(0.2)
    ab.kill()
    ab.wait()
    gone_in = None
    if child:
        for i in range(300):
            if not alive(child):
                gone_in = i * 0.1
                break
            time.sleep(0.1)
    check("ab: SIGKILL of ab ends the run it started (no run left measuring with the lock)",
          child is not None and gone_in is not None, f"child {child}, gone after {gone_in} s")
    if child and alive(child):
        os.kill(child, signal.SIGKILL)

    # --- 3. duplicated runs count once ------------------------------------------
    def side(name, layout):
        base = os.path.join(work, name)
        for rel, run_dir in layout:
            shutil.copytree(run_dir, os.path.join(base, rel), symlinks=True)
        return base

    pa = side("copies-a", [(f"r{i}", RA) for i in range(3)])
    pb = side("copies-b", [(f"r{i}", RB) for i in range(3)])
    r = run(["compare", pa, pb, "--json"])
    rows = json.loads(r.stdout)["rows"] if r is not None and r.returncode == 0 else []
    check("runs: three copies a side are one run a side (the one-run test, not Welch on copies)",
          rows and all(row["method"] == "repetitions" for row in rows) and r.stderr.count("counted once") == 4,
          r and (r.stdout[-600:] + r.stderr[-600:]))
    six_a = side("six-a", [(f"pair-{i:04d}/r", RA) for i in range(1, 7)])
    six_b = side("six-b", [(f"pair-{i:04d}/r", RB) for i in range(1, 7)])
    expect("runs: one run copied into six pairs a side is refused", ["compare", six_a, six_b], 2, r"are one run")
    linked_a = side("linked-a", [("pair-0001/r", RA)])
    os.symlink("pair-0001", os.path.join(linked_a, "pair-0002"))
    linked_b = side("linked-b", [("pair-0001/r", RB)])
    os.symlink("pair-0001", os.path.join(linked_b, "pair-0002"))
    expect("runs: a pair that is a symlink to another is refused", ["compare", linked_a, linked_b], 2, r"are one run")
    edited = side("edited", [("r0", RA), ("r1", RA)])
    doc = json.load(open(os.path.join(edited, "r1", "result.json")))
    doc["context"]["host"] += "-edited"
    json.dump(doc, open(os.path.join(edited, "r1", "result.json"), "w"))
    expect("runs: one run id with two contents on a side is refused", ["compare", edited, pb], 2,
           r"different contents")

    # --- 4. a result that cannot be written is not claimed ----------------------
    # samples.csv is appended through one open file: removed mid-run, its rows
    # went to a file nobody can read and the run ended with exit 0.
    gone = os.path.join(work, "gone")
    p = subprocess.Popen([tb, "run", "-t", "none", "-w", "getpid", "-w", "call", "-w", "write_null", "-r", "4", "-n",
                          "20000", "--wait-lock=1800", "--out", gone],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started.append(p)
    samples = []
    while p.poll() is None and not samples:
        samples = glob.glob(os.path.join(gone, "*", "samples.csv"))
        time.sleep(0.01)
    time.sleep(0.3)
    alive = p.poll() is None
    if samples:
        os.unlink(samples[0])
    out, err = p.communicate(timeout=600)
    check("run: samples.csv removed mid-run: exit 1, says its samples are lost",
          alive and p.returncode == 1 and "samples.csv was removed or replaced" in err and
          "without its samples" in err and not CRASH.search(err), f"alive {alive}, exit {p.returncode}: {err[-500:]!r}")

    # --- 5. LAVA logs: frames in order, one final revision, nothing after DONE --
    def frame(rev, name, data):
        lines = [f"TBLAVA FILE {rev} {name} {len(data)} {hashlib.sha256(data).hexdigest()}"]
        enc = base64.encodebytes(data).decode().split()
        lines += [f"TBLAVA DATA {rev} {i} {chunk}" for i, chunk in enumerate(enc, 1)]
        return lines + [f"TBLAVA END {rev} {name} {len(enc)}"]

    def log(frames):
        recs = [json.dumps({"dt": "2026-01-01T00:00:00", "lvl": "target", "msg": m}) for m in frames]
        recs.append(json.dumps({"dt": "2026-01-01T00:00:01", "lvl": "results",
                                "msg": {"case": "job", "definition": "lava", "result": "pass"}}))
        return "\n".join("- " + r for r in recs) + "\n"

    real = open(os.path.join(RA, "result.json"), "rb").read()
    forged = real.replace(b'"complete": true', b'"complete": true ')
    name = "results/x/result.json"
    LOGS = [
        ("complete log", frame(1, name, real) + ["TBLAVA FINAL"] + frame(2, name, real) + ["TBLAVA DONE 0"], 0, r"complete"),
        ("a revision number sent twice", frame(1, name, real) + ["TBLAVA FINAL"] + frame(2, name, real) +
         frame(2, name, forged) + ["TBLAVA DONE 0"], 2, r"numbered upwards"),
        ("a second final revision", frame(1, name, real) + ["TBLAVA FINAL"] + frame(2, name, real) +
         frame(3, name, forged) + ["TBLAVA DONE 0"], 2, r"second final revision"),
        ("a revision after DONE", frame(1, name, real) + ["TBLAVA FINAL"] + frame(2, name, real) + ["TBLAVA DONE 0"] +
         frame(3, name, forged), 2, r"after TBLAVA DONE"),
        ("a second FINAL", frame(1, name, real) + ["TBLAVA FINAL"] + frame(2, name, real) + ["TBLAVA FINAL"] +
         ["TBLAVA DONE 0"], 2, r"second TBLAVA FINAL"),
    ]
    for i, (what, frames, code, pattern) in enumerate(LOGS):
        path = os.path.join(work, f"lava{i}.log")
        open(path, "w").write(log(frames))
        got = os.path.join(work, f"lava{i}")
        expect(f"lava fetch: {what}", ["lava", "fetch", "--log", path, got], code, pattern)
        if code == 2:
            check(f"lava fetch: {what}: nothing written", not os.path.exists(got))
        else:
            check(f"lava fetch: {what}: the real file back", sha(os.path.join(got, name)) == sha(os.path.join(RA, "result.json")))

    # --- 6. parsers and inputs --------------------------------------------------
    expect("export kcidb: a 50,000-character --origin", ["export", "kcidb", RA, "--origin", "a" * 49999 + "!"], 2,
           r"--origin a+\.\.\.: KCIDB takes")
    # (each would measure if NaN passed: under the machine lock, or with fakes)
    expect("run --wait-lock=nan", ["run", "-t", "none", "-w", "getpid", "-r", "2", "-n", "20", "--wait-lock=nan",
                                   "--out", os.path.join(work, "nan")], 2, r"not a finite number")
    expect("ab --wait-lock=nan", ["ab", f"{fresh}:side=a", f"{fresh}:side=b", "--wait-lock=nan", "--out",
                                  os.path.join(work, "ab-nan"), "--", "-t", "none", "-w", "getpid"], 2,
           r"not a finite number", env=PRIVATE)
    expect("selftest --budget nan", ["selftest", "--budget", "nan"], 2, r"not a finite number")

    # A history row edited by hand is refused by every reader, never drawn.
    db = os.path.join(work, "h.sqlite")
    r = run(["history", "add", RA, "--db", db])
    check("history: the fixture run added", r is not None and r.returncode == 0, r and r.stderr)
    bench = json.load(open(os.path.join(RA, "result.json")))["benchmarks"][0]["name"]
    import sqlite3
    with sqlite3.connect(db) as c:
        c.execute("UPDATE benchmarks SET low_ns = value_ns + 1000, high_ns = -1")
    expect("history show: a hand-edited row is refused", ["history", "show", bench, "--db", db], 2,
           r"does not hold its figure")
    expect("report --history: a hand-edited row is refused", ["report", "--history", db, "--out",
                                                             os.path.join(work, "hist-report")], 2,
           r"does not hold its figure")
    check("report --history: nothing drawn", not os.path.exists(os.path.join(work, "hist-report")))

    # --- 7. files beside the result -------------------------------------------
    for what, args, target in [
        ("export bencher --out the run's summary.csv", ["export", "bencher", RA, "--out"], "summary.csv"),
        ("export kcidb --out the run's samples.csv", ["export", "kcidb", RA, "--origin", "tb", "--out"], "samples.csv"),
        ("compare --junit the run's samples.csv", ["compare", RA, RB, "--junit"], "samples.csv"),
        ("compare --junit the run's summary.csv", ["compare", RA, RB, "--junit"], "summary.csv"),
    ]:
        f = os.path.join(RA, target)
        before = sha(f)
        expect(what, args + [f], 2, r"one of the inputs")
        check(f"{what}: unchanged", sha(f) == before)

    # --- 8. secrets: libpq's key=value form -------------------------------------
    kv = f"host={work}/no-server port=1 dbname=tb user=tb password=S3cr3t-kv connect_timeout=2"
    r = expect("history: a libpq key=value string is a server, not a file", ["history", "show", "x", "--db", kv], 2,
               r"cannot connect to the history server", cwd=work)
    check("history: ... its password never printed, no directory named after it",
          r is not None and "S3cr3t-kv" not in r.stdout + r.stderr and "password=***" in r.stderr and
          not glob.glob(os.path.join(work, "host=*")), r and r.stderr[-400:])
    r = expect("history add: the same", ["history", "add", RA, "--db", kv], 2, r"password=\*\*\*", cwd=work)
    check("history add: ... never printed", r is not None and "S3cr3t-kv" not in r.stdout + r.stderr)
finally:
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(work, ignore_errors=True)

print(f"{len(failures)} failure(s)" if failures else "all passed")
sys.exit(1 if failures else 0)
