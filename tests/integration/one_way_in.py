#!/usr/bin/python3
"""One way in (issue 42, item 2), table-driven: a run request that `run`
refuses is refused by `model validate` and by `dvm` with the same exit code
(2) and the same message after each command's own prefix, because all three
hand it to one planner (harness/include/tracebench/run_request.h); for each
of dvm's homes (user, --kernel, --kernel -c).  Nothing
is attached: every row is refused at plan time, so no root is needed.

usage: one_way_in.py TRACEBENCH
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, failures

tb = sys.argv[1]
work = tempfile.mkdtemp(prefix="tracebench-one-way-in-")
atexit.register(shutil.rmtree, work, ignore_errors=True)
# Refused before the model is read: a missing file proves the order.
model = os.path.join(work, "no-model.json")

# The D-VM's three ways in to `dvm`, each against `run -t <tracer>` and
# `model validate -t <tracer>`: the user home, the kernel home (--kernel,
# tracer dvm_kernel) firing a workload, and the kernel home tracing another
# process (--kernel -c true: no workload; `run` and `model validate` are
# given dvm_hot, which the option rows never reach).
HOMES = [
    ("dvm", "dvm", []),
    ("dvm --kernel", "dvm_kernel", ["--kernel"]),
    ("dvm --kernel -c", "dvm_kernel", ["--kernel", "-c", "true"]),
]
# Where the module is not loaded, `run -t dvm_kernel` refuses as unavailable
# whatever follows the option and payload checks, while `dvm --kernel`
# leaves the module's absence to its session (it lists and compiles
# without it): rows judged after the availability check are the kernel
# home's only where the module is.
MODULE = os.path.exists("/dev/tracebench")

# (what, workload, payload, option as {t}.<key>=<value> or None, text the
# message holds, judged before availability, with -c/-p too)
ROWS = [
    ("unknown workload", "nosuch", 0, None, "unknown workload 'nosuch'", True, False),
    ("payload beyond every workload", "dvm_hot", 2000000, None, "--payload 2000000 is outside 0..1048576", True,
     False),
    ("payload for a workload without one", "getpid", 64, None, "--payload: none of the selected workloads (getpid)",
     True, False),
    ("payload a fixed-size event cannot carry", "ust_array64", 32, None,
     "--payload 32: ust_array64 carries exactly 64 bytes", True, False),
    ("payload beyond the module's limit", "kmod_payload", 8192, None,
     "--payload 8192: kmod_payload carries at most 4096 bytes", True, False),
    ("workload the tracer cannot trace", "getpid", 0, None,
     "tracer dvm supports none of the selected workloads (getpid)", False, False),
    ("option value outside its schema", "dvm_hot", 0, "{t}.bufsize=lots", "bufsize=lots", True, True),
    ("option key the tracer lacks", "dvm_hot", 0, "{t}.nosuch=1", "{t}: unknown option 'nosuch'", True, True),
    ("option the tracer refuses in validate()", "dvm_hot", 0, "{t}.stagetiming=true",
     "dvm: option stagetiming applies to the kernel home", False, False),
    ("option of an unknown tracer", "dvm_hot", 0, "nosuch.key=1", "--option 'nosuch.key=1': unknown tracer 'nosuch'",
     True, True),
    ("option of a tracer not in the run", "dvm_hot", 0, "ebpf.wakeup=no_wakeup",
     "--option ebpf.wakeup: tracer ebpf is not in this run", False, True),
    ("option without a key", "dvm_hot", 0, "{t}.=1", "--option '{t}.=1': expected <tracer>.<key>=<value>", True,
     True),
]


def commands(tracer, dvm_flags, workload, payload, option):
    o = ["-o", option] if option else []
    # dvm's options are dtrace's -x, where a bare key=value is the dvm
    # tracer's own: given so (but for the row whose point is a missing key).
    own = tracer + "."
    bare = option and option.startswith(own) and option != own + "=1"
    x = ["-x", option[len(own):] if bare else option] if option else []
    process = "-c" in dvm_flags
    dvm = ["dvm", "-q", "--events", "10", "-n", "BEGIN { }" if process else "tb:::fire { }"] + dvm_flags
    dvm += [] if process else ["--workload", workload, "--payload", str(payload)]
    return {
        "run": ["run", "--plan", "--out", work, "-t", tracer, "-w", workload, "-p", str(payload)] + o,
        "model validate": ["model", "validate", "--model", model, "-t", tracer, "-w", workload, "-p", str(payload)] + o,
        "dvm": dvm + x,
    }


def refusal(cmd, stderr):
    """The message after `tracebench <cmd>: `, with any lines it continues on."""
    prefix = f"tracebench {cmd}: "
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(prefix):
            return "\n".join([line[len(prefix):]] + lines[i + 1:])
    return None


rows_run = 0
for home, tracer, dvm_flags in HOMES:
    process = "-c" in dvm_flags
    for what, workload, payload, option, want, early, with_process in ROWS:
        if (process and not with_process) or (tracer == "dvm_kernel" and not early and not MODULE):
            continue
        if tracer == "dvm_kernel" and what in ("workload the tracer cannot trace",
                                               "option the tracer refuses in validate()"):
            continue  # the user home's refusals (getpid and stagetiming are the kernel home's own)
        option = option.format(t=tracer) if option else None
        want = want.format(t=tracer)
        label = f"{home}: {what}"
        seen = {}
        for cmd, args in commands(tracer, dvm_flags, workload, payload, option).items():
            r = subprocess.run([tb] + args, capture_output=True, text=True, timeout=60)
            msg = refusal(cmd, r.stderr)
            seen[cmd] = msg
            check(f"{label}: {cmd} exits 2", r.returncode == 2, f"exit {r.returncode}: {r.stderr}")
            check(f"{label}: {cmd} says why", msg is not None and want in msg, f"want '{want}': {r.stderr}")
        check(f"{label}: the same message from run, model validate and dvm", len(set(seen.values())) == 1,
              "\n".join(f"{c}: {m!r}" for c, m in seen.items()))
        rows_run += 1
# Every row for the user home (12), those judged before availability for the
# kernel home (9) and its -c (4); one more each where the module is.
check("rows compared", rows_run == (27 if MODULE else 25), f"{rows_run} rows")

# -c/-p: no workload hands over a payload, so one is refused, by dvm alone.
r = subprocess.run([tb, "dvm", "--kernel", "-c", "true", "--payload", "64", "-n", "BEGIN { }"], capture_output=True,
                   text=True, timeout=60)
check("dvm --kernel -c with a payload exits 2", r.returncode == 2, f"exit {r.returncode}: {r.stderr}")
check("dvm --kernel -c with a payload says why", "--payload 64: -c/-p trace another process" in r.stderr, r.stderr)

sys.exit(1 if failures else 0)
