#!/usr/bin/python3
"""Hostile files and streams, table-driven: no uncaught exception, no hang,
no lost or overwritten output with exit 0.

  - paths that crash a careless command: symlink loops as a result.json or
    as --out, a 300-character --out component, a FIFO named result.json,
    /dev/zero as a D program, numbers out of range (dvm, NaN thresholds);
  - standard output on /dev/full, closed, or a pipe nobody reads (model
    predict on a model fitted here from a small ftrace sweep);
  - an output path that is one of the inputs (refused, input unchanged);
  - a small full file system (tmpfs made and unmounted here): no 0-byte or
    temp file left, an old file left whole;
  - a run whose folder is removed mid-run, and a run whose disk fills;
  - run ids: two runs started together into two folders, and two older runs
    sharing one id, all land in one history;
  - report: an interval that does not hold its median draws, a failed
    drawing leaves no folder.

Every case: the expected exit code and message, no traceback, no abort.

usage: hostile_io.py TRACEBENCH SOURCE_DIR
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from checks import check, failures

tb, src = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="tracebench-hostile-io-")
CRASH = re.compile(r"Traceback|terminate called|uncaught exception|core dumped|Aborted")


def run(args, timeout=120, **kw):
    try:
        return subprocess.run([tb] + args, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return None


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def expect(name, args, code, pattern, timeout=60):
    """A refusal or failure: exit `code`, a message matching `pattern`, no crash."""
    r = run(args, timeout=timeout)
    if r is None:
        check(name, False, f"hung (no exit within {timeout} s): {args}")
        return None
    msg = r.stderr + r.stdout
    check(name, r.returncode == code and re.search(pattern, msg) and not CRASH.search(msg),
          f"exit {r.returncode} (want {code}), output: {msg[-600:]!r}")
    return r


def make_run(out, extra=()):
    return subprocess.Popen([tb, "run", "-t", "none", "-w", "getpid", "-r", "2", "-n", "20", "--out", out, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_dir(out):
    dirs = [d for d in glob.glob(os.path.join(out, "*")) if os.path.isdir(d)]
    return dirs[0] if len(dirs) == 1 else None


try:
    # Two real runs started together, into two folders (the same second); the
    # second waits for the machine lock the first holds, then measures.
    procs = [make_run(os.path.join(work, side), ("--wait-lock=300",)) for side in ("a", "b")]
    for p in procs:
        p.communicate(timeout=300)
    A, B = run_dir(os.path.join(work, "a")), run_dir(os.path.join(work, "b"))
    if not (A and B and all(p.returncode == 0 for p in procs)):
        print("FAIL: the fixture runs did not complete", [p.returncode for p in procs])
        sys.exit(1)
    ra, rb = os.path.join(A, "result.json"), os.path.join(B, "result.json")
    ida, idb = (json.load(open(x))["context"]["run_id"] for x in (ra, rb))
    check("run ids of two runs started together differ", ida != idb, f"{ida} {idb}")
    check("run id: time to the microsecond, host, sha, random suffix",
          re.fullmatch(r"\d{8}T\d{6}\.\d{6}Z-[\w-]+-[0-9a-f]{8}", ida) is not None, ida)

    # --- paths that used to throw -------------------------------------------
    loop = os.path.join(work, "loop")
    os.symlink("loop", loop)  # a symlink to itself: ELOOP for every lookup through it
    loopjson = os.path.join(work, "loopjson")
    os.mkdir(loopjson)
    os.symlink("result.json", os.path.join(loopjson, "result.json"))
    fifo_dir = os.path.join(work, "fifo")
    os.mkdir(fifo_dir)
    os.mkfifo(os.path.join(fifo_dir, "result.json"))
    os.mkfifo(os.path.join(work, "prog.d"))
    longname = os.path.join(work, "x" * 300)
    db = os.path.join(work, "h.sqlite")
    ELOOP = r"(?i)too many levels of symbolic links"
    CASES = [
        ("compare: symlink loop as a run", ["compare", A, loop], 2, ELOOP),
        ("compare: symlink loop as result.json", ["compare", loopjson, A], 2, ELOOP),
        ("compare: a loop named *.json", ["compare", loop + ".json", A], 2, r"No such file|symbolic links"),
        ("history add: symlink loop", ["history", "add", loop, "--db", db], 2, ELOOP),
        ("history add: loop as result.json", ["history", "add", loopjson, "--db", db], 2, ELOOP),
        ("export: symlink loop", ["export", "bencher", loop], 2, ELOOP),
        ("export: --out through a loop", ["export", "bencher", A, "--out", os.path.join(loop, "x.json")], 2, ELOOP),
        ("model fit: symlink loop", ["model", "fit", loop, "--out", os.path.join(work, "m.json")], 2, ELOOP),
        ("report: symlink loop as a run", ["report", loop, "--out", os.path.join(work, "rep-loop")], 2, ELOOP),
        ("report: --out a symlink loop", ["report", A, "--out", loop], 2, r"exists and is not an empty directory"),
        ("report: --out through a symlink loop", ["report", A, "--out", os.path.join(loop, "r")], 2, ELOOP),
        ("run: --out through a symlink loop", ["run", "-t", "none", "-w", "getpid", "--out", os.path.join(loop, "x")],
         2, ELOOP),
        ("run: --out with a 300-character name", ["run", "-t", "none", "-w", "getpid", "--out", longname], 2,
         r"(?i)file name too long"),
        ("export: --out with a 300-character name", ["export", "bencher", A, "--out", longname + ".json"], 2,
         r"(?i)file name too long"),
        ("compare: --junit with a 300-character name", ["compare", A, B, "--junit", longname], 2,
         r"(?i)file name too long"),
        ("report: --out with a 300-character name", ["report", A, "--out", longname], 2, r"(?i)file name too long"),
        ("compare: FIFO named result.json", ["compare", fifo_dir, A], 2, r"a FIFO, not a regular file"),
        ("history add: FIFO named result.json", ["history", "add", fifo_dir, "--db", db], 2, r"a FIFO"),
        ("history show: FIFO as the database", ["history", "show", "x", "--db", os.path.join(fifo_dir, "result.json")],
         2, r"a FIFO"),
        ("dvm --payload 99999999999", ["dvm", "-n", "BEGIN { exit(0); }", "--payload", "99999999999"], 2,
         r"--payload 99999999999 is outside 0\.\.1048576"),
        ("dvm --payload -1", ["dvm", "-n", "BEGIN { exit(0); }", "--payload", "-1"], 2, r"--payload -1 is outside"),
        ("dvm --events -5", ["dvm", "-n", "BEGIN { exit(0); }", "--events", "-5"], 2, r"--events -5 is outside 1\.\."),
        ("dvm --events 0", ["dvm", "-n", "BEGIN { exit(0); }", "--events", "0"], 2, r"--events 0 is outside"),
        ("dvm -p -5", ["dvm", "-n", "BEGIN { exit(0); }", "-p", "-5"], 2, r"-p -5 is outside"),
        ("dvm -s /dev/zero", ["dvm", "-s", "/dev/zero"], 2, r"/dev/zero: a character device"),
        ("dvm -s FIFO", ["dvm", "-s", os.path.join(work, "prog.d")], 2, r"a FIFO"),
        ("compare --threshold nan", ["compare", A, B, "--threshold", "nan"], 2, r"--threshold"),
        ("history changes --alpha nan", ["history", "changes", "--db", db, "--alpha", "nan"], 2, r"--alpha"),
    ]
    for name, args, code, pattern in CASES:
        expect(name, args, code, pattern, timeout=30)
    check("no file made under the 300-character name", not glob.glob(os.path.join(work, "x" * 200 + "*")))

    # --- standard output that cannot be written -----------------------------
    STDOUT = [
        ("compare", ["compare", A, B]),
        ("export", ["export", "bencher", A]),
        ("list --json", ["list", "--json"]),
        ("env --json", ["env", "--json"]),
        ("dvm", ["dvm", "-q", "-n", "tb:::fire { @[arg0 % 4] = count(); }", "--events", "1000"]),
    ]
    if subprocess.run([tb, "history", "add", A, "--db", db], capture_output=True).returncode == 0:
        name = json.load(open(ra))["benchmarks"][0]["name"]
        STDOUT.append(("history show", ["history", "show", name, "--db", db]))
    else:
        check("history add of a run", False)
    # model predict needs a model: a small ftrace payload sweep fitted (as integration.model does).
    mdir = os.path.join(work, "model")
    subprocess.run([tb, "run", "-t", "ftrace", "-w", "marker", "-a", "payload", "-p", "0", "-p", "1024", "-p", "4000",
                    "-r", "2", "-n", "100", "--out", os.path.join(mdir, "runs")], capture_output=True, timeout=600)
    model = os.path.join(mdir, "model.json")
    r = run(["model", "fit", os.path.join(mdir, "runs"), "--out", model], timeout=300)
    check("a model fitted for the predict cases", r is not None and r.returncode == 0, r and r.stderr[-300:])
    scenario = os.path.join(mdir, "scenario.json")
    with open(scenario, "w") as f:
        json.dump({"probes": [{"tracer": "ftrace", "probe_kind": "marker", "action": "payload", "payload_bytes": 2048,
                               "rate_hz": 10000}]}, f)
    STDOUT.append(("model predict", ["model", "predict", "--model", model, scenario]))
    h = sha(model)
    expect("model predict --out the model: refused", ["model", "predict", "--model", model, scenario, "--out", model],
           2, r"one of the inputs")
    check("the model is unchanged", sha(model) == h)
    for name, args in STDOUT:
        with open("/dev/full", "w") as full:
            r = subprocess.run([tb] + args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        check(f"{name} > /dev/full: exit 1 and says so",
              r.returncode != 0 and "writing standard output failed" in r.stderr and not CRASH.search(r.stderr),
              f"exit {r.returncode}: {r.stderr[-300:]!r}")
        r = subprocess.run(["/bin/sh", "-c", 'exec "$@" >&-', "sh", tb] + args, stderr=subprocess.PIPE, text=True,
                           timeout=120)
        check(f"{name} with stdout closed: exit 1 and says so",
              r.returncode != 0 and "standard output is closed" in r.stderr, f"exit {r.returncode}: {r.stderr[-300:]!r}")
    p = subprocess.Popen([tb, "list", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.close()  # the reader is gone before anything is written: EPIPE
    err = p.stderr.read()
    p.wait(timeout=60)
    check("list --json into a closed pipe: exit 1 and says so (EPIPE, not a silent SIGPIPE)",
          p.returncode == 1 and "Broken pipe" in err, f"exit {p.returncode}: {err!r}")

    # --- an output path that is an input --------------------------------------
    before = {x: sha(x) for x in (ra, rb)}
    link = os.path.join(work, "link.json")
    os.symlink(ra, link)
    SAME = [
        ("export --out R/result.json", ["export", "bencher", A, "--out", ra]),
        ("export --out a symlink to R/result.json", ["export", "bencher", A, "--out", link]),
        ("compare --junit B/result.json", ["compare", A, B, "--junit", rb]),
        ("model fit --out R/result.json", ["model", "fit", A, "--out", ra]),
        ("dvm -o R/result.json", ["dvm", "-n", "tb:::fire { @ = count(); }", "--events", "100", "-o", ra]),
    ]
    for name, args in SAME:
        expect(f"{name}: refused", args, 2, r"one of the inputs|a file of a tracebench run")
    check("the inputs are unchanged", before == {x: sha(x) for x in (ra, rb)})
    prog = os.path.join(work, "p.d")
    with open(prog, "w") as f:
        f.write("tb:::fire { @ = count(); }\n")
    h = sha(prog)
    expect("dvm -o the -s program: refused", ["dvm", "-s", prog, "--events", "100", "-o", prog], 2, r"one of the inputs")
    check("the D program is unchanged", sha(prog) == h)

    # --- a full file system -----------------------------------------------------
    full = os.path.join(work, "full")
    os.mkdir(full)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tracebench-full", full]).returncode == 0
    check("a small tmpfs mounted for the full-disk cases", mounted)
    if mounted:
        try:
            with open(os.path.join(full, "old.txt"), "w") as f:
                f.write("old output\n")
            subprocess.run(["dd", "if=/dev/zero", "of=" + os.path.join(full, "filler"), "bs=4k"], capture_output=True)
            FULL = [
                ("export --out on a full disk", ["export", "bencher", A, "--out", os.path.join(full, "bmf.json")],
                 "bmf.json"),
                ("compare --junit on a full disk", ["compare", A, B, "--junit", os.path.join(full, "j.xml")], "j.xml"),
                ("dvm -o (new) on a full disk", ["dvm", "-n", "tb:::fire { @[arg0] = count(); }", "--events", "20000",
                                                 "-o", os.path.join(full, "d.txt")], "d.txt"),
            ]
            for name, args, made in FULL:
                r = run(args)
                check(f"{name}: fails and says so", r is not None and r.returncode != 0 and
                      re.search(r"(?i)no space left", r.stderr) and not CRASH.search(r.stderr),
                      r and f"exit {r.returncode}: {r.stderr[-300:]!r}")
                check(f"{name}: no 0-byte file", not os.path.exists(os.path.join(full, made)))
            r = run(["dvm", "-n", "tb:::fire { @[arg0] = count(); }", "--events", "20000", "-o",
                     os.path.join(full, "old.txt")])
            check("dvm -o (existing) on a full disk: fails", r is not None and r.returncode != 0)
            check("dvm -o (existing) on a full disk: the old file is whole",
                  open(os.path.join(full, "old.txt")).read() == "old output\n")
            with open(os.path.join(full, "c.json"), "w") as out:
                r = subprocess.run([tb, "compare", A, B, "--json"], stdout=out, stderr=subprocess.PIPE, text=True)
            check("compare --json > file on a full disk: exit 1 and says so",
                  r.returncode != 0 and "writing standard output failed" in r.stderr, r.stderr[-300:])
            check("no temp file left on the full disk",
                  sorted(os.listdir(full)) == ["c.json", "filler", "old.txt"], os.listdir(full))
            # A run whose disk fills: stops, says what it kept, samples.csv ends on a whole benchmark.
            os.remove(os.path.join(full, "filler"))
            os.remove(os.path.join(full, "c.json"))
            subprocess.run(["dd", "if=/dev/zero", "of=" + os.path.join(full, "filler"), "bs=1k", "count=150"],
                           capture_output=True)
            r = run(["run", "-t", "none", "-w", "getpid", "-w", "call", "-r", "2", "-n", "2000", "--out",
                     os.path.join(full, "runs")], timeout=300)
            msg = r.stderr if r else ""
            check("run on a filling disk: exit 1, stopped, says what was kept",
                  r is not None and r.returncode == 1 and "writing the run's files failed" in msg and "kept:" in msg
                  and not CRASH.search(msg), msg[-600:])
            d = run_dir(os.path.join(full, "runs"))
            if d and os.path.exists(os.path.join(d, "result.json")):
                res = json.load(open(os.path.join(d, "result.json")))
                check("its result.json is whole and marked partial", res["context"]["complete"] is False)
                with open(os.path.join(d, "samples.csv")) as f:
                    text = f.read()
                check("its samples.csv ends on a whole row", text.endswith("\n"), text[-80:])
            else:
                check("its result.json is kept", False, str(d))
        finally:
            subprocess.run(["umount", full])

    # --- a run whose folder is removed mid-run ----------------------------------
    gone = os.path.join(work, "gone")
    p = subprocess.Popen([tb, "run", "-t", "none", "-w", "getpid", "-w", "call", "-w", "write_null", "-r", "4", "-n",
                          "20000", "--out", gone], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    d = None
    while time.time() < deadline and p.poll() is None:
        d = run_dir(gone)
        if d and os.path.exists(os.path.join(d, "samples.csv")):
            break
        time.sleep(0.05)
    if d:
        shutil.rmtree(d)
    out, err = p.communicate(timeout=600)
    check("run whose folder is removed: exit 1, stopped, says nothing was kept",
          d is not None and p.returncode == 1 and "nothing of this run was kept" in err and not CRASH.search(err),
          f"exit {p.returncode}: {err[-600:]!r}")
    check("it does not make the folder again, nor claim a result.json", not os.listdir(gone) and re.search(r"^results.*result\.json", out, re.M) is None,
          f"{os.listdir(gone)} {out[-300:]!r}")

    # --- one history for every run ------------------------------------------------
    db2 = os.path.join(work, "h2.sqlite")
    r = run(["history", "add", A, B, "--db", db2])
    check("two runs started together both land in one history", r is not None and r.returncode == 0 and
          "2 run(s) added, 0 already there" in r.stdout, r and (r.stdout + r.stderr))
    # Ids of older runs were unique per folder only, to the second: two distinct runs may share one.
    old = []
    for i, base in enumerate((A, B)):
        d = os.path.join(work, f"old{i}")
        shutil.copytree(base, d)
        res = json.load(open(os.path.join(d, "result.json")))
        res["context"]["run_id"] = "20261127T120000Z-host-58fae67"
        json.dump(res, open(os.path.join(d, "result.json"), "w"))
        old.append(d)
    r = run(["history", "add", *old, "--db", db2])
    check("two older runs sharing one id both land", r is not None and r.returncode == 0 and
          "2 run(s) added" in r.stdout and "stored as 20261127T120000Z-host-58fae67~" in r.stderr,
          r and (r.stdout + r.stderr))
    r = run(["history", "add", *old, A, "--db", db2])
    check("adding them again adds nothing", r is not None and r.returncode == 0 and
          "0 run(s) added, 3 already there" in r.stdout, r and (r.stdout + r.stderr))

    # --- report --------------------------------------------------------------------
    inv = os.path.join(work, "inv")
    shutil.copytree(A, inv)
    res = json.load(open(os.path.join(inv, "result.json")))
    for b in res["benchmarks"]:
        if b.get("overhead_ns"):
            b["overhead_ns"]["low"], b["overhead_ns"]["high"] = b["overhead_ns"]["high"] + 5, b["overhead_ns"]["low"] + 5
    json.dump(res, open(os.path.join(inv, "result.json"), "w"))
    rep = os.path.join(work, "rep-inv")
    r = run(["report", inv, "--out", rep], timeout=300)
    msg = r.stdout + r.stderr if r else ""
    check("report of a run with an inverted interval: a page or a refusal, never a traceback",
          r is not None and r.returncode in (0, 2) and not CRASH.search(msg), msg[-600:])
    if r is not None and r.returncode == 0:
        check("its page is whole", os.path.exists(os.path.join(rep, "index.html")))
    else:
        check("a refused report leaves no folder", not os.path.exists(rep))
    # The drawing itself, on an input the binary wrote, with the interval inverted there.
    rep_ok = os.path.join(work, "rep-ok")
    r = run(["report", A, "--out", rep_ok], timeout=300)
    check("report of a run", r is not None and r.returncode == 0, r and r.stderr[-300:])
    data = json.load(open(os.path.join(rep_ok, "report-input.json")))
    for run_ in data["runs"]:
        for b in run_["benchmarks"]:
            b["status"], b["payload_bytes"], b["threads"] = "ok", 0, 1
            b["overhead_ns"] = {"median": 10.0, "low": 12.0, "high": 8.0, "n": 2}
            b["overhead_cycles"] = {"median": 30.0, "low": 36.0, "high": None, "n": 2}
    # The charts draw the configurations (runs of one configuration pooled).
    for c in data["configurations"]:
        c["overhead_ns"] = {"median": 10.0, "low": 12.0, "high": 8.0, "n": 2, "confidence": 0.5,
                            "confidence_label": "50%"}
    inv_input = os.path.join(work, "inverted-input.json")
    json.dump(data, open(inv_input, "w"))
    r = subprocess.run(["/usr/bin/python3", os.path.join(src, "scripts", "report", "report.py"), inv_input,
                        os.path.join(work, "rep-py")], capture_output=True, text=True, timeout=300)
    check("report.py draws an inverted interval and says it is not drawn",
          r.returncode == 0 and "Traceback" not in r.stderr and
          "interval does not hold the median" in open(os.path.join(work, "rep-py", "report.md")).read(),
          r.stderr[-600:])
    # A drawing that fails halfway leaves no folder (the page is made in a temp dir, renamed at the end).
    fake = os.path.join(work, "scripts", "report")
    os.makedirs(fake)
    with open(os.path.join(fake, "report.py"), "w") as f:
        f.write("import os, sys\nopen(os.path.join(sys.argv[2], 'index.html'), 'w').write('half')\nsys.exit(3)\n")
    rep_fail = os.path.join(work, "rep-fail")
    r = subprocess.run([tb, "report", A, "--out", rep_fail], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TRACEBENCH_SCRIPTS_DIR=os.path.join(work, "scripts")))
    check("a failed drawing: exit 1, no half-written folder, no temp folder",
          r.returncode == 1 and not os.path.exists(rep_fail) and not glob.glob(os.path.join(work, ".rep-fail*")),
          f"exit {r.returncode} {os.listdir(work)} {r.stderr[-300:]!r}")
finally:
    subprocess.run(["umount", os.path.join(work, "full")], capture_output=True)
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print(f"{len(failures)} case(s) failed: {failures}")
    sys.exit(1)
print("all cases passed")
