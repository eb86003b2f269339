#!/usr/bin/python3
"""Hostile concurrency, table-driven: two real runs on one probe point, a
uprobe someone else left on the call site, cleanup from another pid
namespace.  No contaminated figure may come out marked valid, no live run's
object may be removed.

While a run (ftrace on `-w call`) holds the machine lock:
  - a second run, with no flag or a short --wait-lock, is refused (exit 2)
    naming the holder's pid and command, and writes nothing;
  - `cleanup`, here and from a new pid namespace (unshare -p -f
    --mount-proc), removes nothing and names the holder: the run's uprobe
    stays;
  - runs with --allow-concurrent run, and both they and the holder are marked
    "concurrent" (a warning in the summary); one on the same site either
    fails naming the foreign probe or is marked, never a clean "ok".
With the lock free, a uprobe planted by hand on the call site (named like a
dead run's, and under a foreign name) makes `run -t none -w call` fail with
the entry named; cleanup from another pid namespace removes nothing; cleanup
here removes the dead run's, never the foreign one.

usage: hostile_concurrency.py TRACEBENCH SOURCE_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from checks import check, failures

tb, src = os.path.abspath(sys.argv[1]), sys.argv[2]
work = tempfile.mkdtemp(prefix="tracebench-concurrency-")
tracefs = "/sys/kernel/tracing"
uprobe_events = os.path.join(tracefs, "uprobe_events")
lock_file = "/run/lock/tracebench.lock" if os.path.isdir("/run/lock") else "/tmp/tracebench.lock"
planted = []  # (group, event) to remove whatever happens


def run(args, timeout=300, prefix=()):
    return subprocess.run(list(prefix) + [tb] + args, capture_output=True, text=True, timeout=timeout)


def result_of(out_dir):
    found = [os.path.join(r, "result.json") for r, _, f in os.walk(out_dir) if "result.json" in f]
    return json.load(open(found[0])) if len(found) == 1 else None


def lock_holder():
    try:
        text = open(lock_file).read()
    except OSError:
        return None
    m = re.search(r"^pid=(\d+)$", text, re.M)
    return int(m.group(1)) if m else None


def events_text():
    return open(uprobe_events).read()


def call_site_offset():
    """File offset of tb_noinline_call in the binary (what uprobe_events takes)."""
    nm = subprocess.run(["nm", tb], capture_output=True, text=True, check=True).stdout
    vaddr = int(re.search(r"^([0-9a-f]+) T tb_noinline_call$", nm, re.M).group(1), 16)
    segs = subprocess.run(["readelf", "-lW", tb], capture_output=True, text=True, check=True).stdout
    for m in re.finditer(r"LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", segs):
        off, va, size = (int(x, 16) for x in m.groups())
        if va <= vaddr < va + size:
            return vaddr - va + off
    raise RuntimeError("tb_noinline_call is in no LOAD segment")


def append_event(line):
    # O_APPEND without Python's seek to the end, which tracefs refuses
    fd = os.open(uprobe_events, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def plant(group, event, offset):
    append_event(f"p:{group}/{event} {tb}:0x{offset:x}")
    planted.append((group, event))
    with open(os.path.join(tracefs, "events", group, event, "enable"), "w") as f:
        f.write("1")  # a uprobe is placed in the code only while enabled


def unplant(group, event):
    enable = os.path.join(tracefs, "events", group, event, "enable")
    if os.path.exists(enable):
        with open(enable, "w") as f:
            f.write("0")
        append_event(f"-:{group}/{event}")
    if (group, event) in planted:
        planted.remove((group, event))


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def attempts(case, probes, tries=5):
    """Runs case(attempt) -> [(name, cond, detail)] until the planted probes
    survived it: on a shared machine another user's `tracebench cleanup` may
    remove a probe named like a dead run's meanwhile (then it proves nothing)."""
    for attempt in range(tries):
        results = case(attempt)
        text = events_text()
        if all(f"p:{g}/{e} " in text for g, e in probes):
            for name, cond, detail in results:
                check(name, cond, detail)
            return
        print(f"retry: a planted probe was removed by another process during '{results[0][0]}'")
    check(f"{results[0][0]}: the planted probes stayed for one attempt", False, f"{tries} attempts")


def wait_lock_free(seconds=120):
    for _ in range(seconds * 10):
        if subprocess.run(["flock", "-n", lock_file, "true"]).returncode == 0:
            return True
        time.sleep(0.1)
    return False


try:
    check("machine lock free before the test", wait_lock_free(), f"{lock_file}: {open(lock_file).read()}")
    offset = call_site_offset()

    # --- while a run holds the lock --------------------------------------
    holder_out = os.path.join(work, "holder")
    # The holder must outlive the checks below whatever a sample costs here:
    # with an idle gap of 500 us before each of its samples it runs ~20 s on
    # any host (a run sized by samples alone ended before them on the
    # simulated slow host, whose short samples made its blocks short).
    holder = subprocess.Popen([tb, "run", "-t", "ftrace", "-w", "call", "-r", "100", "--ci-target", "0", "-n", "200",
                               "--gap-us", "500", "--out", holder_out],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        if lock_holder() == holder.pid or holder.poll() is not None:
            break
        time.sleep(0.1)
    check("the run records itself in the lock file", lock_holder() == holder.pid, open(lock_file).read())
    # its uprobe event exists (enabled in its traced blocks)
    for _ in range(300):
        if f"tb{holder.pid}_" in events_text() or holder.poll() is not None:
            break
        time.sleep(0.1)
    ours = [l for l in events_text().splitlines() if f"/tb{holder.pid}_" in l]
    check("the holder's uprobe event exists", ours, events_text())

    # (name, args, prefix, expected exit, regex on stderr)
    REFUSED = [
        ("second run refused at once", ["run", "-t", "none", "-w", "call", "-r", "2", "-n", "50"], (), 2,
         rf"machine lock .* is held by pid {holder.pid}, since .*: .*tracebench run -t ftrace -w call.*--wait-lock.*--allow-concurrent"),
        ("second run of another tracer refused", ["run", "-t", "ebpf", "-w", "call", "-r", "2", "-n", "50"], (), 2,
         rf"held by pid {holder.pid}\b"),
        ("a bounded wait gives up and says so", ["run", "-t", "none", "-w", "call", "-r", "2", "-n", "50",
                                                 "--wait-lock=1"], (), 2,
         rf"held by pid {holder.pid}.*\(waited 1 s\)"),
        ("wait and concurrent together refused", ["run", "-t", "none", "-w", "call", "--wait-lock=5",
                                                  "--allow-concurrent"], (), 2, r"exclude each other"),
        ("cleanup removes nothing while a run lives", ["cleanup"], (), 1,
         rf"held by pid {holder.pid}.*nothing removed"),
        ("cleanup from another pid namespace removes nothing", ["cleanup"],
         ("unshare", "-p", "-f", "--mount-proc"), 1, rf"held by pid {holder.pid}.*nothing removed"),
    ]
    for name, args, prefix, code, pattern in REFUSED:
        out_dir = os.path.join(work, re.sub(r"\W+", "_", name))
        extra = ["--out", out_dir] if args[0] == "run" else []
        r = run(args + extra, timeout=120, prefix=prefix)
        check(name + ": exit", r.returncode == code, f"rc {r.returncode}: {r.stderr}")
        check(name + ": says who", re.search(pattern, r.stderr, re.S), r.stderr)
        check(name + ": wrote nothing", not os.path.exists(out_dir), os.listdir(work))
    check("the holder's uprobe survived both cleanups",
          all(l in events_text().splitlines() for l in ours) and holder.poll() is None, events_text())

    # Beside it with --allow-concurrent: marked, never a clean figure.
    beside_out = os.path.join(work, "beside")
    r = run(["run", "-t", "none", "-w", "getpid", "-r", "2", "-n", "50", "--allow-concurrent", "--out", beside_out])
    res = result_of(beside_out)
    check("concurrent run on another probe runs", r.returncode == 0 and res, f"rc {r.returncode}: {r.stderr}")
    check("concurrent run is marked", res and res["context"].get("concurrent") is True, res and res["context"])
    check("concurrent run warns with the holder", re.search(rf"concurrently with pid {holder.pid}\b", r.stderr)
          and "CONCURRENT" in r.stdout, r.stdout + r.stderr)
    same_out = os.path.join(work, "same_site")
    r = run(["run", "-t", "ebpf", "-w", "call", "-r", "2", "-n", "50", "--allow-concurrent", "--out", same_out])
    res = result_of(same_out)
    check("concurrent run on the same site finishes", r.returncode in (0, 1) and res, f"rc {r.returncode}: {r.stderr}")
    if res:
        check("concurrent run on the same site is marked", res["context"].get("concurrent") is True, res["context"])
        for b in res["benchmarks"]:
            check(f"{b['name']}: failed on the foreign probe, or marked",
                  (b["status"] == "error" and "foreign probe" in b["error"]) or
                  (b["status"] == "ok" and res["context"]["concurrent"]), b.get("error"))

    try:
        holder_out_text, holder_err = holder.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        holder.kill()
        holder_out_text, holder_err = holder.communicate()
    res = result_of(holder_out)
    check("the holder finished", holder.returncode == 0, f"rc {holder.returncode}: {holder_err[-2000:]}")
    check("the holder learned someone ran beside it", res and res["context"].get("concurrent") is True,
          res and res["context"])
    check("the holder's summary says so", "CONCURRENT" in holder_out_text, holder_out_text)
    check("the holder's uprobe is gone", not any(f"/tb{holder.pid}_" in l for l in events_text().splitlines()),
          events_text())
    if res:
        v = subprocess.run([os.path.join(src, "scripts", "validate_result.py"),
                            os.path.join(holder_out, res["context"]["run_id"], "result.json")],
                           capture_output=True, text=True)
        check("the marked result is valid against the schema", v.returncode == 0, v.stderr)
        f = run(["model", "fit", holder_out, "--out", os.path.join(work, "model.json")], timeout=120)
        check("model fit refuses a concurrent run", f.returncode != 0 and "concurrently" in f.stderr, f.stderr)
        c = run(["compare", holder_out, holder_out], timeout=120)
        check("compare warns about a concurrent run", c.returncode == 0 and
              re.search(rf"warning: run {res['context']['run_id']} was measured concurrently", c.stdout), c.stdout)
    check("machine lock free after the runs", wait_lock_free(30))

    # --- a uprobe someone else left on the call site ----------------------
    gone = dead_pid()
    dead_event, foreign = f"tb{gone}_call", (f"tbhostile{os.getpid()}", "call")
    r = run(["run", "-t", "none", "-w", "call", "-r", "2", "-n", "50", "--out", os.path.join(work, "clean0")])
    check("none/call passes with no foreign probe", r.returncode == 0, r.stderr)
    # (name, planted probes, expected exit, regex the reason must match)
    PLANTED = [
        ("a dead run's uprobe on the call site", [("tracebench", dead_event)], 1,
         rf"foreign probe on the probe site user:tb_noinline_call: 1 byte\(s\).*0xcc here.*p:tracebench/{dead_event} "),
        ("a foreign tool's uprobe on the call site", [foreign], 1,
         rf"foreign probe .*0xcc here.*p:{foreign[0]}/{foreign[1]} "),
    ]
    for i, (name, probes, code, pattern) in enumerate(PLANTED):
        def case(attempt):
            for g, e in probes:
                if f"p:{g}/{e} " not in events_text():
                    plant(g, e, offset)
            out_dir = os.path.join(work, f"planted{i}-{attempt}")
            r = run(["run", "-t", "none", "-w", "call", "-r", "2", "-n", "50", "--out", out_dir])
            res = result_of(out_dir)
            b = res["benchmarks"][0] if res and res["benchmarks"] else {}
            return [(name + ": the run fails", r.returncode == code, f"rc {r.returncode}: {r.stderr}"),
                    (name + ": no figure, the reason", b.get("status") == "error" and not b.get("overhead_ns")
                     and re.search(pattern, b.get("error", ""), re.S), b),
                    (name + ": the summary says why", "foreign probe" in r.stdout, r.stdout)]
        attempts(case, probes)
        for g, e in probes:
            if (g, e) != ("tracebench", dead_event):
                unplant(g, e)

    # The dead run's probe stays planted; cleanup from another namespace
    # cannot judge its pid and removes nothing, cleanup here removes it.
    plant(foreign[0], foreign[1], offset)

    def ns_cleanup(attempt):
        if f"p:tracebench/{dead_event} " not in events_text():
            plant("tracebench", dead_event, offset)
        r = run(["cleanup"], prefix=("unshare", "-p", "-f", "--mount-proc"), timeout=120)
        return [("cleanup from another pid namespace: removes nothing", r.returncode == 1
                 and "pid namespace" in r.stderr, f"rc {r.returncode}: {r.stderr}")]
    attempts(ns_cleanup, [("tracebench", dead_event), foreign])
    r = run(["cleanup"], timeout=120)
    # (another process's cleanup may have removed the dead run's probe first)
    check("cleanup here removes the dead run's uprobe", r.returncode == 0
          and f"/{dead_event} " not in events_text(), f"rc {r.returncode}: {r.stdout} {r.stderr}")
    if f"/{dead_event} " not in events_text() and ("tracebench", dead_event) in planted:
        planted.remove(("tracebench", dead_event))
    check("cleanup leaves a foreign tool's uprobe", f"p:{foreign[0]}/{foreign[1]} " in events_text(), events_text())
    unplant(*foreign)
    r = run(["run", "-t", "none", "-w", "call", "-r", "2", "-n", "50", "--out", os.path.join(work, "clean1")])
    check("none/call passes again once they are gone", r.returncode == 0, r.stderr)
finally:
    for g, e in list(planted):
        try:
            unplant(g, e)
        except OSError as err:
            print(f"could not remove {g}/{e}: {err}")
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print(f"{len(failures)} failure(s): {failures}")
    sys.exit(1)
print("all cases passed")
