#!/bin/bash
# The VM lab end to end, as a user runs it: `tracebench vm -- run --quick`
# of every kernel tracer on the companion module's workloads (tracepoints
# with and without payload, the noinline target function), then checks what
# came back: a schema-valid result with every benchmark ok, each tracer on
# each workload it supports (Ftrace events and the function tracer, eBPF
# tracepoint and fentry, perf, kprobes; then eBPF fexit, kprobe and raw_tp in
# a second boot), every event accounted for
# (recorded == fired - lost, nothing lost at this rate), the run marked as
# emulated when it ran under TCG, and the whole run inside the issue's
# 5-minute budget.
#   kmod_suite.sh TRACEBENCH SRC OUTDIR
# Kernel: tests/common/test_kernel.sh ($TRACEBENCH_VM_KERNEL, else Debian 12's series in /boot).
set -uo pipefail
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
tracebench=$1 src=$2 out=$3
mkdir -p "$(dirname "$out")"
# `run --out <absolute dir>` names the host directory the results come back
# to (the guest writes its default results/ under /results).
args=(vm --timeout 420 --kernel "$kernel")
# A guest soft lockup (seen in CI under multi-threaded TCG: a vCPU looping on
# a stale int3 of patched kernel text with interrupts off, the patching CPU
# spinning in smp_call_function_many_cond; run-qemu.sh now runs TCG with one
# thread) panics the guest (softlockup_panic=1) and the panic's backtraces
# are printed here; such a boot is retried once, and a second lockup fails.
for attempt in 1 2; do
  rm -rf "$out"
  start=$SECONDS
  "$tracebench" "${args[@]}" -- run --quick --out "$out" \
    -t none -t ftrace -t ebpf -t perf -t kprobes -w kmod_fixed -w kmod_payload -w kmod_target
  rc=$?
  wall=$((SECONDS - start))
  [ $rc -eq 3 ] && grep -q "soft lockup" "$out/console.log" 2>/dev/null || break
  echo "vm kmod suite: attempt $attempt: guest soft lockup ($wall s); console:"
  grep -E "^\[[0-9]+/[0-9]+\] |soft lockup|RIP:|Call Trace|\+0x" "$out/console.log" | tail -n 80
  [ $attempt -eq 2 ] && break
  cp "$out/console.log" "$out.lockup-console.log" 2>/dev/null || true
  echo "vm kmod suite: retrying once (the lockup console is kept in $out.lockup-console.log)"
done
echo "vm kmod suite: status $rc, $wall s (boot, module build and suite), results in $out"
if [ $rc -ne 0 ]; then
  echo "--- guest output (tail) ---"; tail -n 60 "$out/guest-output.txt" 2>/dev/null
  exit 1
fi
results=("$out"/results/*/result.json)
[ -f "${results[0]}" ] || { echo "FAIL: no result.json came back from the guest"; exit 1; }
/usr/bin/python3 "$src/scripts/validate_result.py" --require-ok --or-unsteady "${results[0]}" || exit 1
PYTHONPATH="$src/tests/vm" /usr/bin/python3 - "${results[0]}" "$out/vm.json" "$wall" <<'PY'
import json, sys
from guest_result import measured, overhead_ns
r = json.load(open(sys.argv[1]))
vm = json.load(open(sys.argv[2]))
wall = int(sys.argv[3])
ctx = r["context"]
assert ctx["execution"] == "qemu-" + vm["accel"], (ctx["execution"], vm["accel"])
assert ctx["emulated"] == vm["emulated"], "a TCG run must be marked emulated"
seen = {(b["tracer"], b["workload"]) for b in r["benchmarks"]}
want = {(t, w) for t in ("none", "ftrace", "ebpf") for w in ("kmod_fixed", "kmod_payload", "kmod_target")}
want |= {("perf", "kmod_fixed"), ("perf", "kmod_payload"), ("kprobes", "kmod_target")}
missing = want - seen
assert not missing, f"benchmarks missing from the VM run: {sorted(missing)}"
for b in r["benchmarks"]:
    name = f"{b['tracer']}/{b['workload']}/{b['action']}/payload:{b['payload_bytes']}"
    assert b["batch"] >= 1000, f"{name}: kmod samples must batch >= 1000 events, got {b['batch']}"
    if b["tracer"] == "none":
        continue
    e = b["events"]
    assert e["fired"] > 0 and e["recorded"] > 0, f"{name}: nothing recorded: {e}"
    assert e["recorded"] == e["fired"] - e["lost"], f"{name}: events not accounted for: {e}"
    assert e["verification"] == "passed", f"{name}: verification {e['verification']}"
    assert b["overhead_cycles_per_event"] is not None or b["status"] == "unsteady", name
print(f"ok: {len(r['benchmarks'])} benchmarks on {ctx['kernel']['release']} under {vm['accel']}, "
      f"{wall} s wall")
for b in sorted(r["benchmarks"], key=lambda x: (x["tracer"], x["workload"], x["payload_bytes"])):
    if b["tracer"] != "none":
        print(f"  {b['tracer']:8} {b['workload']:13} {b['action']:16} {b['payload_bytes']:5} B: "
              f"{overhead_ns(b, '9.1f')} overhead, "
              f"{b['events']['recorded']} events recorded")
assert wall < 300, f"the VM-lab kmod suite took {wall} s (budget: 5 minutes under TCG)"
PY
[ $? -eq 0 ] || exit 1

# The other eBPF attach types on the module's target function (fexit,
# kprobe) and raw_tp on the syscall entry, in one more boot; in the same boot
# the D-VM in the module (dvm_kernel) against eBPF's tracepoint program on
# getpid's entry, the same count of the same events, and dvm_kernel recording
# the module's payload tracepoint (sdt provider), every byte checked; and
# `tracebench dvm --kernel -c CMD` tracing a command's syscalls ($target);
# the pid provider: dvm_kernel and eBPF on the same user function (a uprobe
# each; dvm_kernel's at=return a uretprobe) and `dvm --kernel -c` on the
# command's own main() (entry, return,
# argc), registered before the held command exec'd its program; the usdt
# provider: both on the same semaphore-guarded SDT site.  Both baselines
# must be the untraced call's (the D-VM's uprobes are lifted between traced
# blocks, as eBPF's links are).
variants=$out-ebpf-attach
rm -rf "$variants"
vm=(--outdir "$variants" --timeout 600 --bin "$tracebench:/tb/bin/tracebench" --kernel "$kernel")
"$src/scripts/vm/tracebench-vm.sh" "${vm[@]}" -- sh -c '
  for a in fentry fexit kprobe; do
    tracebench run --quick -t ebpf -w kmod_target -p 0 -o ebpf.attach=$a --out $a || exit 1
  done
  tracebench run --quick -t ebpf -w getpid -o ebpf.attach=raw_tp --out raw_tp || exit 1
  tracebench run --quick -t dvm_kernel -t ebpf -a count -w getpid --out dvm_kernel || exit 1
  tracebench run --quick -t dvm_kernel -a record -w kmod_payload -p 64 --out dvm_kernel_sdt || exit 1
  tracebench run --quick -t dvm_kernel -a disabled -w getpid -w kmod_fixed --out dvm_kernel_disabled || exit 1
  tracebench run --quick -t dvm_kernel -a disabled -a count -w getpid -o dvm_kernel.syscallprobe=kprobe --out dvm_kernel_kprobe || exit 1
  tracebench dvm --kernel -q -c "ls /" -n "syscall::exit_group:entry /pid == \$target/ { printf(\"exit_group by %s\\n\", execname); } syscall::*:entry /pid == \$target/ { @[probefunc] = count(); }" > dvm_c.txt || exit 1
  tracebench run --quick -t dvm_kernel -t ebpf -a count -w call --out pid_call || exit 1
  tracebench run --quick -t dvm_kernel -a count -w call -o dvm_kernel.at=return --out pid_return || exit 1
  tracebench run --quick -t dvm_kernel -t ebpf -a count -w usdt --out usdt_hot || exit 1
  tracebench dvm --kernel -q -c "tracebench list" -n "pid\$target:a.out:main:entry, pid\$target:a.out:main:return { @[probename] = count(); } pid\$target:a.out:main:entry { printf(\"argc %d\\n\", arg0); }" > dvm_pid.txt || exit 1'
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: eBPF attach variants in the VM: status $rc"; tail -n 40 "$variants/guest-output.txt" 2>/dev/null
  exit 1
fi
PYTHONPATH="$src/tests/vm" /usr/bin/python3 - "$variants" <<'PY'
import glob, json, sys
from guest_result import measured, overhead_ns, interval_ns, overhead_ratio
for attach in ("fentry", "fexit", "kprobe", "raw_tp"):
    paths = glob.glob(f"{sys.argv[1]}/{attach}/*/result.json")
    assert paths, f"no result for attach={attach}"
    (b,) = json.load(open(paths[0]))["benchmarks"]
    e = b["events"]
    assert measured(b), f"attach={attach}: {b.get('error')}"
    assert b["tracer_details"]["attach"] == attach, b["tracer_details"]
    assert e["recorded"] > 0 and e["recorded"] == e["fired"] - e["lost"], f"attach={attach}: {e}"
    print(f"  ebpf attach={attach:7} {b['workload']:12} {overhead_ns(b)}, "
          f"{e['recorded']} events")
def dvm_kernel_and_ebpf(run, what):
    """The run's dvm_kernel and ebpf benchmarks, each ok with every event recorded; their overhead ratio."""
    (path,) = glob.glob(f"{sys.argv[1]}/{run}/*/result.json")
    by = {b["tracer"]: b for b in json.load(open(path))["benchmarks"]}
    assert set(by) == {"dvm_kernel", "ebpf"}, sorted(by)
    for t, b in sorted(by.items()):
        e = b["events"]
        assert measured(b), f"{t}: {b.get('error')}"
        assert e["verification"] == "passed" and e["recorded"] == e["fired"] - e["lost"] and e["lost"] == 0, f"{t}: {e}"
        print(f"  {t:10} {what} {overhead_ns(b)}, {e['recorded']} events")
    d = by["dvm_kernel"]["tracer_details"]
    assert d["probe_firings"] >= by["dvm_kernel"]["events"]["fired"], d
    base = {t: b["baseline"]["ns_per_event"]["p50"] for t, b in by.items()}
    assert base["dvm_kernel"] < 2 * base["ebpf"] + 20, f"{what}: dvm_kernel's baseline is not untraced: {base}"
    return overhead_ratio(by["dvm_kernel"], by["ebpf"])
ratio = dvm_kernel_and_ebpf("dvm_kernel", "getpid count")
print(f"  dvm_kernel / ebpf per-event overhead: {ratio} (emulated; the issue's target is within 2x)")
(path,) = glob.glob(f"{sys.argv[1]}/dvm_kernel_sdt/*/result.json")
(b,) = json.load(open(path))["benchmarks"]
e = b["events"]
assert measured(b) and e["verification"] == "passed", f"dvm_kernel sdt record: {b.get('error')} {e}"
assert e["recorded"] == e["fired"] - e["lost"] and e["payload_verified_bytes"] == 64 * e["recorded"], e
print(f"  dvm_kernel kmod_payload record 64 B {overhead_ns(b)}, "
      f"{e['recorded']} records, every payload byte checked")
(path,) = glob.glob(f"{sys.argv[1]}/dvm_kernel_disabled/*/result.json")
for b in json.load(open(path))["benchmarks"]:
    e = b["events"]
    assert measured(b) and e["verification"] == "passed" and e["recorded"] == 0, f"disabled: {b.get('error')} {e}"
    print(f"  dvm_kernel disabled probe on {b['workload']:10} {overhead_ns(b)} "
          f"{interval_ns(b)} over the untraced call, interleaved (emulated)")
(path,) = glob.glob(f"{sys.argv[1]}/dvm_kernel_kprobe/*/result.json")
by = {b["action"]: b for b in json.load(open(path))["benchmarks"]}
assert set(by) == {"disabled", "count"}, sorted(by)
for a, b in sorted(by.items()):
    e = b["events"]
    assert measured(b) and e["verification"] == "passed", f"syscallprobe=kprobe {a}: {b.get('error')} {e}"
    assert b["tracer_details"]["options"]["syscallprobe"] == "kprobe", b["tracer_details"]["options"]
    assert e["recorded"] == (0 if a == "disabled" else e["fired"]), f"syscallprobe=kprobe {a}: {e}"
    print(f"  dvm_kernel syscallprobe=kprobe getpid {a:8} {overhead_ns(b)} "
          f"{interval_ns(b)} (emulated)")
import re
text = open(f"{sys.argv[1]}/dvm_c.txt").read()
calls = dict((m.group(1), int(m.group(2))) for m in re.finditer(r"^\s+(\w+)\s+(\d+)$", text, re.M))
assert "exit_group by ls\n" in text and calls.get("exit_group") == 1 and calls.get("getdents64", 0) >= 1, text
print(f"  dvm --kernel -c 'ls /': {sum(calls.values())} syscalls of the command, exit_group by ls")
ratio = dvm_kernel_and_ebpf("pid_call", "uprobe on tb_noinline_call, count")
print(f"  dvm_kernel (pid provider) / ebpf (uprobe) per-event overhead: {ratio} (emulated)")
(path,) = glob.glob(f"{sys.argv[1]}/pid_return/*/result.json")
(b,) = json.load(open(path))["benchmarks"]
e = b["events"]
assert measured(b) and e["verification"] == "passed" and e["lost"] == 0, f"dvm_kernel at=return: {b.get('error')} {e}"
assert ":tb_noinline_call:return " in b["tracer_details"]["script"], b["tracer_details"]["script"]
print(f"  dvm_kernel at=return (the pid provider's uretprobe) on tb_noinline_call {overhead_ns(b)}, "
      f"{e['recorded']} events")
ratio = dvm_kernel_and_ebpf("usdt_hot", "usdt tracebench:hot, count")
print(f"  dvm_kernel (usdt provider) / ebpf (usdt) per-event overhead: {ratio} (emulated)")
text = open(f"{sys.argv[1]}/dvm_pid.txt").read()
got = dict((m.group(1), int(m.group(2))) for m in re.finditer(r"^\s+(entry|return)\s+(\d+)$", text, re.M))
assert got == {"entry": 1, "return": 1} and "argc 2\n" in text, text
print("  dvm --kernel -c 'tracebench list' on pid$target:a.out:main: entry 1, return 1, argc 2")
PY
[ $? -eq 0 ] || exit 1

# LTTng's kernel domain, as a user runs it: `tracebench vm --lttng-modules`
# builds lttng-modules for the kernel (cached per kernel: built once, by this
# test or vm.lttng_kernel, whichever runs first) and the lttng_kernel tracer
# runs on the module's tracepoints (through LTTng's probe for them, payloads
# checked byte for byte), the module target (kprobe, kretprobe) and getpid
# (syscall entry+exit events).
lttng_out=$out-lttng-kernel
rm -rf "$lttng_out"
args=(vm --lttng-modules --out-dir "$lttng_out" --timeout 600 --kernel "$kernel")
# Two repetitions (-r 2) of ten samples a block (-n 10), the fewest `run`
# takes: what is checked here (the plan, every event accounted for and
# checked, every payload byte) holds block by block, and two traced blocks
# still take the session through its per-block cycle (created at enable,
# destroyed at disable) twice; the time a benchmark takes grows with its
# blocks (that cycle is slow under TCG) and with the bytes they trace
# (LTTng's consumer daemon writes them, the adapter reads every event back).
# The figures printed are then of two repetitions, with the confidence that
# gives.  A ring that holds a block's 1 KiB records (10 x 1000 of them, about
# 11 MB; the consumer daemon drains slowly under TCG): a benchmark that loses
# more than 5% is partial, not passed.
"$tracebench" "${args[@]}" -- run --quick -r 2 -n 10 --out suite -t lttng_kernel -a record -a function \
  -w kmod_fixed -w kmod_payload -w kmod_target -w getpid -o lttng_kernel.num_subbuf=32
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: lttng_kernel in the VM: status $rc"; tail -n 40 "$lttng_out/guest-output.txt" 2>/dev/null
  exit 1
fi
results=("$lttng_out"/suite/*/result.json)
/usr/bin/python3 "$src/scripts/validate_result.py" --require-ok --or-unsteady "${results[0]}" || exit 1
PYTHONPATH="$src/tests/vm" /usr/bin/python3 - "${results[0]}" <<'PY'
import json, sys
from guest_result import overhead_ns
r = json.load(open(sys.argv[1]))
seen = {(b["workload"], b["action"], b["payload_bytes"]) for b in r["benchmarks"] if b["tracer"] == "lttng_kernel"}
want = {(w, a, 0) for w in ("kmod_target", "getpid") for a in ("record", "function")}
want |= {("kmod_fixed", "record", 0)} | {("kmod_payload", "record", p) for p in (0, 64, 1024)}
want |= {("kmod_target", a, p) for a in ("record", "function") for p in (64, 1024)}  # the target takes a payload too
assert seen == want, f"lttng_kernel benchmarks: {sorted(seen)}, expected {sorted(want)}"
for b in r["benchmarks"]:
    e, d = b["events"], b["tracer_details"]
    name = f"lttng_kernel/{b['workload']}/{b['action']}/payload:{b['payload_bytes']}"
    if b["workload"] == "kmod_payload":
        assert e["payload_verified_bytes"] == e["recorded"] * b["payload_bytes"], f"{name}: payload not verified: {e}"
    assert e["verification"] == "passed", f"{name}: {e}"
    if e["exact"]:
        assert e["recorded"] + e["lost"] == e["fired"], f"{name}: {e}"
    else:  # a kretprobe on the syscall function sees every process
        assert (b["workload"], b["action"]) == ("getpid", "function") and e["recorded"] >= e["fired"], f"{name}: {e}"
    paired = d["trace"]["paired_events"]
    assert d["trace"]["events_checked"] == d["trace"]["events"] + paired, f"{name}: not every event checked: {d}"
    print(f"  lttng_kernel {b['workload']:12} {b['action']:9} {b['payload_bytes']:5} B {d['instrumentation']:10} "
          f"{overhead_ns(b)}, {e['recorded']} recorded of {e['fired']}")
PY
