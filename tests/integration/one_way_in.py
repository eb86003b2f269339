#!/usr/bin/python3
"""One way in (issue 42, item 2), table-driven: a run request that `run`
refuses is refused by `model validate` and by `dvm` with the same exit code
(2) and the same message after each command's own prefix, because all three
hand it to one planner (harness/include/tracebench/run_request.h).  Nothing
is attached: every row is refused at plan time, so no root is needed.

usage: one_way_in.py TRACEBENCH
"""
import os
import subprocess
import sys
import tempfile

from checks import check, failures

tb = sys.argv[1]
work = tempfile.mkdtemp(prefix="tracebench-one-way-in-")
# Refused before the model is read: a missing file proves the order.
model = os.path.join(work, "no-model.json")

# (what, workload, payload, option as <tracer>.<key>=<value> or None, text the message holds)
ROWS = [
    ("unknown workload", "nosuch", 0, None, "unknown workload 'nosuch'"),
    ("payload beyond every workload", "dvm_hot", 2000000, None, "--payload 2000000 is outside 0..1048576"),
    ("payload for a workload without one", "getpid", 64, None, "--payload: none of the selected workloads (getpid)"),
    ("payload a fixed-size event cannot carry", "ust_array64", 32, None,
     "--payload 32: ust_array64 carries exactly 64 bytes"),
    ("payload beyond the module's limit", "kmod_payload", 8192, None,
     "--payload 8192: kmod_payload carries at most 4096 bytes"),
    ("workload the tracer cannot trace", "getpid", 0, None,
     "tracer dvm supports none of the selected workloads (getpid)"),
    ("option value outside its schema", "dvm_hot", 0, "dvm.bufsize=lots", "bufsize=lots"),
    ("option key the tracer lacks", "dvm_hot", 0, "dvm.nosuch=1", "nosuch"),
    ("option the tracer refuses in validate()", "dvm_hot", 0, "dvm.stagetiming=true",
     "dvm: option stagetiming applies to the kernel home"),
    ("option of an unknown tracer", "dvm_hot", 0, "nosuch.key=1", "--option 'nosuch.key=1': unknown tracer 'nosuch'"),
    ("option of a tracer not in the run", "dvm_hot", 0, "ebpf.wakeup=no_wakeup",
     "--option ebpf.wakeup: tracer ebpf is not in this run"),
    ("option without a key", "dvm_hot", 0, "dvm.=1", "--option 'dvm.=1': expected <tracer>.<key>=<value>"),
]


def commands(workload, payload, option):
    o = ["-o", option] if option else []
    # dvm's options are dtrace's -x, where a bare key=value is the dvm
    # tracer's own: given so (but for the row whose point is a missing key).
    bare = option and option.startswith("dvm.") and option != "dvm.=1"
    x = ["-x", option[len("dvm."):] if bare else option] if option else []
    return {
        "run": ["run", "--plan", "--out", work, "-t", "dvm", "-w", workload, "-p", str(payload)] + o,
        "model validate": ["model", "validate", "--model", model, "-t", "dvm", "-w", workload, "-p", str(payload)] + o,
        "dvm": ["dvm", "-q", "--events", "10", "-n", "tb:::fire { }", "--workload", workload,
                "--payload", str(payload)] + x,
    }


def refusal(cmd, stderr):
    """The message after `tracebench <cmd>: `, with any lines it continues on."""
    prefix = f"tracebench {cmd}: "
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(prefix):
            return "\n".join([line[len(prefix):]] + lines[i + 1:])
    return None


for what, workload, payload, option, want in ROWS:
    seen = {}
    for cmd, args in commands(workload, payload, option).items():
        r = subprocess.run([tb] + args, capture_output=True, text=True, timeout=60)
        msg = refusal(cmd, r.stderr)
        seen[cmd] = msg
        check(f"{what}: {cmd} exits 2", r.returncode == 2, f"exit {r.returncode}: {r.stderr}")
        check(f"{what}: {cmd} says why", msg is not None and want in msg, f"want '{want}': {r.stderr}")
    check(f"{what}: the same message from run, model validate and dvm", len(set(seen.values())) == 1,
          "\n".join(f"{c}: {m!r}" for c, m in seen.items()))

sys.exit(1 if failures else 0)
