#!/usr/bin/env python3
"""No function over 80 lines and no file over 600 in harness/, tracers/, kmod/ or bench/ without a reason.

usage: function_sizes_test.py SOURCE_DIR

Runs scripts/function_sizes.py over harness/, tracers/, kmod/ and bench/ (C and C++).  A function longer than the
limit fails the test unless it is in ALLOWED below with the reason it is
one piece (or what it is waiting for); an entry that is no longer over the
limit fails it too, so the list only shrinks.  A file longer than the file
limit needs the words "longer than" and "600 lines" (or "600-line") in its opening comment
(its first 40 lines), saying why.
"""
import os
import re
import subprocess
import sys
import tempfile

LIMIT, FILE_LIMIT = 80, 600

# "path function": why it is longer than the guide.
ALLOWED = {
    "harness/model/model_files.cc scenario_from_json":
        "SCENARIO.json's fields and their checks, one line each, in the file's order",
    "harness/src/verification.cc judge_counts":
        "the verification rules of harness/README.md in their numbered order, each a few lines",
    "harness/src/clock_check.cc decide_clock":
        "the clock checks of harness/README.md's table in its order, each a few lines",
    "harness/model/predict.cc predict":
        "eqs. 4-8 of model.h term by term, each a few lines, in the equations' order",
    "harness/model/validate.cc to_json":
        "a validation file's fields written one line each, in the file's order: a table, not steps",
    "harness/lava/lava_log.cc yaml_line_to_json":
        "one scanner over a line of LAVA's log: its states (tag, quoted string, escape, plain) share the position",
    "kmod/dvm/core/vm.cc dif_exec":
        "the interpreter's dispatch over every opcode with the registers in locals: a handler per function would make each instruction a call",
    "tracers/dvm/compiler/codegen.h gen":
        "one switch over the D expression node kinds, a case each of a few instructions (as DTrace's dt_cg_node)",
    "tracers/dvm/runtime/session.cc Session::enable":
        "checks everything before it changes anything, so a refused program leaves the session as it was; split, the steps would share half-built state",
    "tracers/ebpf/options.cc option_schema":
        "the adapter's option schema, an entry per option: a table, not steps",
    "tracers/ebpf/options.cc EbpfTracer::parse_options":
        "the options one after another, each from its typed value to the configuration with its checks: a key's reading in one place",
    "kmod/dvm/core/verify.cc dif_verify":
        "one pass with a case per opcode class, the rules side by side as DTrace's dtrace_difo_validate() keeps them",
    "tracers/dvm/runtime/records.cc Session::chew":
        "one loop over a buffer's records with a case per action kind, each printing its data",
    "tracers/dvm/runtime/kernel.cc KernelHome::enable":
        "the session laid out in the module's ABI as DVM_ENABLE takes it, read against the ABI in one place",
    "tracers/dvm/compiler/lexer.h next":
        "one switch over the next character: every token's shape in one place",
    "kmod/tracebench_main.c tb_ioctl_fire":
        "the request's checks, the timed firing loop and its per-chunk bookkeeping: what is inside a timed interval reads in one place",
    "tracers/delay/selftest_command.cc selftest":
        "the command's steps in the order they are printed: lock, the costs to recover, a run per cost, the table, the verdict",
    "tracers/ebpf/ebpf_tracer.cc EbpfTracer::resolve_target":
        "one switch over the probe kinds, each a few lines from probe point to the program's target",
    "tracers/dvm/compiler/disasm.cc disassemble":
        "one switch over the opcodes, a case per operand format",
    "tracers/dvm/costs/flow_tables.cc register_table6":
        "Table 6's rows, one registration each, in the table's order",
    "tracers/ebpf/ebpf_tracer.cc EbpfTracer::details":
        "every details() field in one place, before attach and after",
    "kmod/dvm/dvm_session.c tb_dvm_map_probes":
        "one switch over the probe kinds, each case a few lines: what a probe of each kind may be",
    "tracers/dvm/dvm_tracer.cc prepare":
        "one D program per action, written where the action's checks are: a table of what each action traces",
    "tracers/dvm/compiler/dcompile.cc aggregation":
        "the aggregating functions' argument rules side by side, one table",
    "tracers/lttng/sessiond.cc start_sessiond":
        "starting the daemon is one sequence of steps that each wait on the last, each failure said with what the daemon had done",
    "kmod/dvm/core/vm.cc call_subr":
        "one switch over the subroutines, each case a few lines",
    "tracers/lttng/channel_config.cc option_schema":
        "the two domains' option tables, one entry per key",
    "tracers/dvm/costs/flow_tables.cc register_validation":
        "two registrations whose program texts and runs are written out where they are used",
}


def script_sees_every_kind(script):
    """The script counts a long function whatever its head: an `extern "C"`
    one returning a struct pointer (once missed: a 212-line function went
    unseen), while an `extern "C" {` block stays a scope."""
    body = "".join(f"  x += {i};\n" for i in range(90))
    text = (f'extern "C" struct s *build(int x)\n{{\n{body}  return 0;\n}}\n'
            f'extern "C" {{\nint small(int x) {{ return x; }}\n}}\n')
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "probe.cc")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        out = subprocess.run([sys.executable, script, "--limit", str(LIMIT), path], capture_output=True, text=True,
                             check=True).stdout
    names = [line.split()[-1] for line in out.splitlines()]
    return [] if names == ["build"] else [f"function_sizes.py read {text[:40]!r}... as {names}, not ['build']"]


def main():
    src = sys.argv[1]
    script = os.path.join(src, "scripts", "function_sizes.py")
    out = subprocess.run([sys.executable, script, "--limit", str(LIMIT), "--file-limit", str(FILE_LIMIT), "harness", "tracers", "kmod", "bench"],
                         cwd=src, capture_output=True, text=True, check=True).stdout
    problems, over = script_sees_every_kind(script), set()
    for line in out.splitlines():
        m = re.fullmatch(r"(\d+) (\S+?)(?::\d+)? (.+)", line)
        if not m:
            problems.append(f"cannot read the script's line: {line}")
            continue
        n, path, name = int(m.group(1)), m.group(2), m.group(3)
        if name == "file":
            with open(os.path.join(src, path), encoding="utf-8") as f:
                head = "".join(f.readlines()[:40])
            if not (re.search(r"longer than", head, re.I) and re.search(r"600[- ]line", head)):
                problems.append(f"{path}: {n} lines, and its opening comment does not say why it is longer than 600 "
                                f"lines: say why there, or split it by responsibility")
            continue
        key = f"{path} {name}"
        over.add(key)
        if key not in ALLOWED:
            problems.append(f"{path}: {name} is {n} lines (over {LIMIT}): split it into named steps, or add it to "
                            f"ALLOWED in {os.path.relpath(__file__, src)} with the reason it is one piece")
    for key in sorted(set(ALLOWED) - over):
        problems.append(f"{key} is no longer over {LIMIT} lines (or is gone): remove it from ALLOWED")
    for p in problems:
        print(p)
    print(f"{len(over)} function(s) over {LIMIT} lines, {len(ALLOWED)} allowed with a reason")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
