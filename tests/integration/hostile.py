#!/usr/bin/python3
"""Hostile input, table-driven: every case must give a clear message and the
expected exit code, write no result file it should not, and leave nothing of
ours in tracefs, BPF, LTTng or /tmp (scripts/leftovers.sh).

usage: hostile.py TRACEBENCH SOURCE_DIR
"""
import glob
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

tb, src = sys.argv[1], sys.argv[2]
leftovers = os.path.join(src, "scripts", "leftovers.sh")
work = tempfile.mkdtemp(prefix="tracebench-hostile-")
out = os.path.join(work, "out")  # must stay absent for every refused run


def left():
    r = subprocess.run([leftovers], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode else ""


# (args, expected exit code, regex the message must match)
REFUSED = [
    # out-of-range numbers: never wrapped, never replaced by a default
    (["run", "-t", "none", "-w", "write_null", "-p", "-5"], 2, r"--payload -5 is outside 0\.\.1048576"),
    (["run", "-t", "none", "-w", "write_null", "-p", "99999999999"], 2, r"--payload 99999999999 is outside"),
    (["run", "-t", "none", "-w", "getpid", "-r", "0"], 2, r"--repetitions 0 is outside 2\.\."),
    (["run", "-t", "none", "-w", "getpid", "-r", "-1"], 2, r"--repetitions -1 is outside"),
    (["run", "-t", "none", "-w", "getpid", "-n", "0"], 2, r"--samples 0 is outside"),
    (["run", "-t", "none", "-w", "getpid", "-b", "-1"], 2, r"--batch -1 is outside"),
    (["run", "-t", "none", "-w", "getpid", "-b", "0"], 2, r"--batch 0 is outside"),
    (["run", "-t", "none", "-w", "getpid", "--cpu", "-5"], 2, r"--cpu -5 is outside"),
    (["run", "-t", "none", "-w", "getpid", "--cpu", "4096"], 2, r"--cpu 4096 is outside"),
    (["run", "-t", "none", "-w", "getpid", "-j", "0"], 2, r"--threads 0 is outside"),
    (["run", "-t", "none", "-w", "getpid", "-j", "9999"], 2, r"--threads 9999 is outside"),
    (["run", "-t", "none", "-w", "getpid", "-r", "abc"], 2, r"(?i)abc"),
    # duplicates
    (["run", "-t", "none", "-w", "getpid", "-j", "1", "-j", "1"], 2, r"--threads 1 is given twice"),
    (["run", "-t", "none", "-t", "none", "-w", "getpid"], 2, r"--tracer none is given twice"),
    # output paths
    (["run", "-t", "none", "-w", "getpid", "--out", ""], 2, r"--out is empty"),
    (["run", "-t", "none", "-w", "getpid", "--out", "/etc/passwd"], 2, r"is not a directory"),
    (["run", "-t", "none", "-w", "getpid", "--out", "/etc/passwd/x"], 2, r"is not a directory"),
    (["run", "-t", "none", "-w", "getpid", "--out", "/proc/tracebench-nope/x"], 2, r"cannot create anything in /proc"),
    # names, options and combinations
    (["run", "-t", "nosuch"], 2, r"unknown tracer 'nosuch'"),
    (["run", "-w", "nosuch"], 2, r"unknown workload 'nosuch'"),
    (["run", "-t", "none", "-w", "getpid", "-p", "64"], 2, r"none of the selected workloads \(getpid\) takes a payload"),
    (["run", "-t", "none", "-w", "getpid", "-a", "none", "-a", "bogus"], 2, r"--action bogus: no selected tracer runs it"),
    (["run", "-t", "none", "-w", "ust_array64", "-p", "128"], 2, r"ust_array64 carries exactly 64 bytes"),
    (["run", "-t", "none", "-w", "marker"], 2, r"tracer none supports none of the selected workloads \(marker\)"),
    (["run", "-t", "none", "-w", "getpid", "-o", "ftrace.mode=discard"], 2, r"tracer ftrace is not in this run"),
    (["run", "-t", "none", "-w", "getpid", "-o", "nosuch.key=1"], 2, r"unknown tracer 'nosuch'"),
    (["run", "-t", "none", "-w", "getpid", "-o", "ftrace"], 2, r"expected <tracer>\.<key>=<value>"),
    (["run", "-t", "none", "-w", "getpid", "-o", "none.=1"], 2, r"expected <tracer>\.<key>=<value>"),
    (["run", "-t", "none", "-w", "getpid", "-o", "none.key=1"], 2, r"none: unknown option .key.; options: inject_cycles"),
    # where it runs is detected, not trusted
    (["run", "-t", "none", "-w", "getpid", "--execution", "bogus"], 2, r"--execution 'bogus'"),
    # Google Benchmark flags that would change the call order
    (["run", "-t", "none", "-w", "getpid", "--", "--benchmark_min_warmup_time=1"], 2, r"--benchmark_min_warmup_time=1' is not accepted"),
    (["run", "-t", "none", "-w", "getpid", "--", "--benchmark_enable_random_interleaving=true"], 2, r"is not accepted"),
    (["run", "-t", "none", "-w", "getpid", "--", "--benchmark_repetitions=3"], 2, r"is not accepted"),
]


def hypervisor_is_tcg():
    try:
        return "TCGTCGTCGTCG" in subprocess.run([tb, "env", "--json"], capture_output=True, text=True).stdout
    except OSError:
        return False


# Tracer options and actions, refused by each adapter's validate() at
# planning time (only for the tracers this machine has).
env = json.loads(subprocess.run([tb, "env", "--json"], capture_output=True, text=True).stdout)
available = {t["name"] for t in env["tracers"] if t["available"]}
ADAPTER_CASES = {
    "ftrace": (["-w", "getpid", "-o", "ftrace.mode=bogus"], r"mode=bogus: expected overwrite or discard"),
    "perf": (["-w", "getpid", "-o", "perf.nosuch=1"], r"nosuch"),
    "ebpf": (["-w", "getpid", "-a", "count", "-o", "ebpf.wakeup=sometimes"], r"wakeup"),
    "lttng": (["-w", "ust_hot", "-o", "lttng.nosuch=1"], r"nosuch"),
    "dvm": (["-w", "dvm_getpid", "-a", "script", "-o", "dvm.script=$probe { @ = count( }"], r"D program"),
}
for t, (args, pattern) in ADAPTER_CASES.items():
    if t in available:
        REFUSED.append((["run", "-t", t] + args, 2, pattern))
if "ftrace" in available:
    # More than one trace_marker write carries (4054 bytes on 6.18): refused up front.
    REFUSED.append((["run", "-t", "ftrace", "-w", "marker", "-p", "4096"], 2, r"carries at most \d+ bytes per event"))
if "dvm" in available:
    REFUSED.append((["run", "-t", "dvm", "-w", "dvm_getpid", "-a", "predicate-false", "-o", "dvm.ecbs=0"], 2,
                    r"ecbs=0: expected 1\.\.1000"))

if not hypervisor_is_tcg():
    REFUSED.append((["run", "-t", "none", "-w", "getpid", "--execution", "qemu-tcg"], 2, r"does not match this machine"))

before = left()
if before:
    print("state of ours is present before the test:\n" + before)
    sys.exit(1)

for args, code, pattern in REFUSED:
    name = " ".join(a if a else "''" for a in args)
    full = [tb] + args
    if args[0] == "run" and "--out" not in args:
        full[2:2] = ["--out", out]  # before any "--"
    try:
        r = subprocess.run(full, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        check(name, False, "hung (60 s)")
        continue
    msg = r.stdout + r.stderr
    ok_code = r.returncode != 0 if code is None else r.returncode == code
    check(name + " -> exit", ok_code, f"exit {r.returncode}, expected {code}: {msg.strip()[:300]}")
    check(name + " -> message", re.search(pattern, msg) is not None, f"no /{pattern}/ in: {msg.strip()[:300]}")
    check(name + " -> wrote nothing", not os.path.exists(out), f"{out} exists: {os.listdir(out) if os.path.isdir(out) else ''}")
    shutil.rmtree(out, ignore_errors=True)
    l = left()
    check(name + " -> left nothing", not l, l)

# Adversarial D programs: an error with a position, never a crash.
for name, text in [("5000 nested parentheses", "tb:::x { trace(" + "(" * 5000 + "1" + ")" * 5000 + "); }"),
                   ("10000 unary minus signs", "tb:::x { trace(" + "- " * 10000 + "1); }"),
                   ("10000-term sum", "tb:::x { trace(1" + "+1" * 10000 + "); }")]:
    path = os.path.join(work, "hostile.d")
    open(path, "w").write(text)
    r = subprocess.run([tb, "dvm", "-e", "-s", path], capture_output=True, text=True, timeout=60)
    msg = r.stdout + r.stderr
    check(f"dvm -s <{name}> -> no crash, non-zero exit", 0 < r.returncode < 128, f"exit {r.returncode}: {msg[:200]}")
    check(f"dvm -s <{name}> -> error with position",
          re.search(r"line 1, column \d+: expression (nested too deeply|too large)", msg) is not None, msg[:200])

# D programs refused at compile time, and a listing that matches nothing.
for args, code, pattern in [
        (["dvm", "-e", "-n", "tb:::fire { trace(arg0 / (3 - 3)); }"], 2,
         r"line 1, column 29: division by zero"),
        (["dvm", "-e", "-n", "tb:::fire { x = 1; x %= 0; }"], 2, r"line 1, column 25: division by zero"),
        (["dvm", "-l", "-n", "nosuch:::"], 1, r"no probe matches 'nosuch:::'"),
        # dtrace's -w (destructive actions) is not the workload: refused, pointing at --workload.
        (["dvm", "-w", "-n", "tb:::fire { trace(1); }"], 2, r"permit destructive actions.*--workload NAME"),
        (["dvm", "-n", "nosuch::: { trace(1); }"], 1, r"does not match any probes"),
        # -c/-p: another process, which only the kernel home sees; one of them; no workload.
        (["dvm", "-c", "true", "-n", "tb:::fire { trace(1); }"], 2, r"-c/-p trace another process.*--kernel"),
        (["dvm", "--kernel", "-c", "true", "-p", "1", "-n", "BEGIN { }"], 2, r"-c and -p both name"),
        (["dvm", "--kernel", "-c", "true", "--workload", "dvm_hot", "-n", "BEGIN { }"], 2, r"--workload is for"),
        (["dvm", "--kernel", "-p", "2147483647", "-n", "BEGIN { }"], 2, r"-p 2147483647: no such process"),
        (["dvm", "--kernel", "-c", "'unterminated", "-n", "BEGIN { }"], 2, r"not a command"),
        # pid probes name a process, a module it maps and a function there; -c's is not running yet.
        (["dvm", "--kernel", "-n", "pid2147483647:a.out:main:entry { }"], 1, r"no such process"),
        (["dvm", "--kernel", "-l", "-n", f"pid{os.getpid()}:libtb_nosuch.so::"], 1, r"maps no module libtb_nosuch.so"),
        (["dvm", "--kernel", "-c", "true", "-n", "pid$target:libc.so.6:malloc:entry { }"], 1,
         r"the -c command has not started, so a.out is its only module"),
        # usdt probes: <provider><pid>, the SDT notes of the process's modules.
        (["dvm", "--kernel", "-n", "python2147483647:::line { }"], 1, r"no such process"),
        (["dvm", "--kernel", "-l", "-n", f"tb_nosuch_provider{os.getpid()}:::"], 1,
         r"has no USDT probe of provider tb_nosuch_provider"),
        (["dvm", "-e", "-n", "tb:::fire /pid == $target/ { }"], 2, r"\$target is not defined: give a process"),
        (["dvm", "-e", "-n", "tb:::fire { trace($2); }", "1"], 2, r"macro argument \$2 is not defined \(1 given"),
        (["dvm", "-q", "--events", "10", "-o", "/nonexistent/dir/out", "-n", "tb:::fire { }"], 2,
         r"-o /nonexistent/dir/out: No such file")]:
    r = subprocess.run([tb] + args, capture_output=True, text=True, timeout=60)
    msg = r.stdout + r.stderr
    check(" ".join(args) + " -> exit", r.returncode == code, f"exit {r.returncode}, expected {code}: {msg[:300]}")
    check(" ".join(args) + " -> message", re.search(pattern, msg) is not None, msg[:300])

# A refused program with -o leaves no output file behind.
o_path = os.path.join(work, "dvm-o.txt")
r = subprocess.run([tb, "dvm", "-o", o_path, "-n", "nosuch::: { trace(1); }"], capture_output=True, text=True, timeout=60)
check("dvm -o with a refused program -> exit 1", r.returncode == 1, f"exit {r.returncode}: {r.stderr[:300]}")
check("dvm -o with a refused program -> no file", not os.path.exists(o_path), f"{o_path} was created")

# Ctrl-C (or SIGTERM) on `tracebench dvm`: like dtrace, the firing stops and
# the aggregations are printed, exit 0.
for sig in (signal.SIGINT, signal.SIGTERM):
    p = subprocess.Popen([tb, "dvm", "-q", "--workload", "dvm_getpid", "--events", "1000000000000",
                          "-n", 'syscall::getpid:entry { @["calls"] = count(); }'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    p.send_signal(sig)
    try:
        o, e = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        o, e = p.communicate()
        check(f"dvm {sig.name} -> stops", False, "still firing 20 s after the signal")
        continue
    m = re.search(r"calls\s+(\d+)", o)
    check(f"dvm {sig.name} -> exit 0", p.returncode == 0, f"exit {p.returncode}: {e[-300:]}")
    check(f"dvm {sig.name} -> aggregation printed", m is not None and int(m.group(1)) > 0, o[-300:] + e[-300:])

# Corrupt result files: compare names the file and exits 2.
good = os.path.join(work, "good")
r = subprocess.run([tb, "run", "-t", "none", "-w", "getpid", "-r", "2", "-n", "50", "--no-samples", "--out", good],
                   capture_output=True, text=True, timeout=120)
check("baseline run for compare cases", r.returncode == 0, r.stderr[-500:])
good_json = glob.glob(os.path.join(good, "*", "result.json"))[0]
doc = json.load(open(good_json))


def corrupt(name, mutate=None, text=None):
    d = os.path.join(work, "corrupt-" + name)
    os.makedirs(d)
    p = os.path.join(d, "result.json")
    if text is not None:
        open(p, "w").write(text)
    else:
        j = json.loads(json.dumps(doc))
        mutate(j)
        json.dump(j, open(p, "w"))
    return p


def set_path(j, path, value):
    for k in path[:-1]:
        j = j[k]
    j[path[-1]] = value


COMPARE_BAD = [
    ("truncated", None, json.dumps(doc)[:200], r"truncated|parse|unexpected"),
    ("not json", None, "hello", r"parse|invalid|syntax"),
    ("other schema", lambda j: set_path(j, ["schema"], "x"), None, r"not a tracebench result"),
    ("schema_version 99", lambda j: set_path(j, ["schema_version"], 99), None, r"schema_version 99"),
    ("no context", lambda j: j.pop("context"), None, r"context"),
    ("null field", lambda j: set_path(j, ["benchmarks", 0, "batch"], None), None, r"/benchmarks/0/batch"),
    ("tsc rate 0", lambda j: set_path(j, ["context", "tsc", "hz"], 0), None, r"context\.tsc\.hz is 0"),
    ("tsc rate negative", lambda j: set_path(j, ["context", "tsc", "hz"], -5), None, r"context\.tsc\.hz is -5"),
    ("values 1e308", lambda j: set_path(j, ["benchmarks", 0, "baseline", "repetition_medians_cycles"], [1e308] * 2),
     None, r"baseline\.repetition_medians_cycles holds"),
]
for name, mutate, text, pattern in COMPARE_BAD:
    p = corrupt(name.replace(" ", "_"), mutate, text)
    r = subprocess.run([tb, "compare", good_json, p], capture_output=True, text=True, timeout=60)
    msg = r.stdout + r.stderr
    check(f"compare {name} -> exit 2", r.returncode == 2, f"exit {r.returncode}: {msg[:300]}")
    check(f"compare {name} -> names the file and the problem", p in msg and re.search(pattern, msg) is not None,
          msg[:300])

# --fail-on-regression: B without benchmarks, or with A's benchmark failed.
for name, mutate in [("B empty", lambda j: set_path(j, ["benchmarks"], [])),
                     ("B failed", lambda j: j["benchmarks"][0].update(status="error", error="broken",
                                                                    overhead_cycles_per_event=None,
                                                                    overhead_ns_per_event=None))]:
    p = corrupt(name.replace(" ", "_"), mutate)
    r = subprocess.run([tb, "compare", good_json, p, "--fail-on-regression"], capture_output=True, text=True,
                       timeout=60)
    check(f"compare --fail-on-regression, {name} -> exit 1", r.returncode == 1, f"exit {r.returncode}: {r.stderr[:300]}")
r = subprocess.run([tb, "compare", good_json, good_json, "--fail-on-regression"], capture_output=True, text=True,
                   timeout=60)
check("compare --fail-on-regression, A = B -> exit 0", r.returncode == 0, r.stdout[-300:] + r.stderr[-300:])

# SIGKILL in the middle of a run: the benchmarks that finished are on disk,
# marked partial, schema-valid; cleanup leaves nothing.
killed = os.path.join(work, "killed")
p = subprocess.Popen([tb, "run", "-t", "none", "--out", killed], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 60
files = []
while time.time() < deadline:
    files = glob.glob(os.path.join(killed, "*", "result.json"))
    if files and json.load(open(files[0]))["benchmarks"]:
        break
    time.sleep(0.2)
p.send_signal(signal.SIGKILL)
p.wait()
check("SIGKILL: result.json exists", bool(files))
if files:
    j = json.load(open(files[0]))
    check("SIGKILL: marked partial", j["context"]["complete"] is False, j["context"].get("complete"))
    check("SIGKILL: finished benchmarks kept", len(j["benchmarks"]) >= 1, len(j["benchmarks"]))
    v = subprocess.run(["/usr/bin/python3", os.path.join(src, "scripts", "validate_result.py"), files[0]],
                       capture_output=True, text=True)
    check("SIGKILL: partial result is schema-valid", v.returncode == 0, v.stdout + v.stderr)
subprocess.run([tb, "cleanup"], capture_output=True)
l = left()
check("SIGKILL: nothing left after cleanup", not l, l)

# SIGINT: exit 130, partial result, nothing left.
inter = os.path.join(work, "interrupted")
p = subprocess.Popen([tb, "run", "-t", "none", "--out", inter], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                     text=True)
time.sleep(3)
p.send_signal(signal.SIGINT)
_, err = p.communicate(timeout=60)
check("SIGINT: exit 130", p.returncode == 130, f"exit {p.returncode}: {err[-300:]}")
files = glob.glob(os.path.join(inter, "*", "result.json"))
check("SIGINT: partial result kept", bool(files) and json.load(open(files[0]))["context"]["complete"] is False)
l = left()
check("SIGINT: nothing left", not l, l)

# What a dead run left is noticed by the next command of any kind, and
# removed by cleanup only.
dead = subprocess.Popen(["true"])
dead.wait()
inst = f"/sys/kernel/tracing/instances/tracebench-{dead.pid}"
if os.path.isdir("/sys/kernel/tracing/instances"):
    os.mkdir(inst)
    r = subprocess.run([tb, "list"], capture_output=True, text=True, timeout=60)
    check("leftover noticed by `list`", f"tracebench-{dead.pid}" in r.stderr and "tracebench cleanup" in r.stderr,
          r.stderr[:300])
    check("leftover kept by `list`", os.path.isdir(inst))
    r = subprocess.run([tb, "cleanup"], capture_output=True, text=True, timeout=60)
    check("leftover removed by cleanup", not os.path.isdir(inst), r.stdout + r.stderr)
    if os.path.isdir(inst):
        os.rmdir(inst)

shutil.rmtree(work, ignore_errors=True)
print(f"{len(failures)} failed" if failures else "hostile input: all cases handled")
sys.exit(1 if failures else 0)
