#!/bin/bash
# The cost model for the VM-lab tracers, as a user runs it: `tracebench vm --
# model suite -t kprobes -t dvm_kernel --quick` measures, fits and validates
# the kprobes scenarios (kprobe and kretprobe with a BPF count, a kprobe
# event read back from its instance) and the D-VM's kernel home's (sys,
# sys10, pid through the pid provider, payload: the paper's Table 7 for the
# module's D-VM) in the guest, and everything comes back.  Checks: every
# step succeeded, each scenario has a validation with a prediction and a
# measurement, schema-valid, marked as the guest's execution (emulated under
# TCG) in the validations and in Table 7, every event accounted for; the
# tracefs reader's cost per read pass (consumer_per_enable) was fitted from
# the runs with 10 samples per block, and the kernel D-VM consumer's cost per
# pass (consumer_per_wakeup) from its count runs after an idle gap.  About
# five minutes under TCG.
#   model_suite.sh TRACEBENCH SRC OUTDIR
# Kernel: tests/common/test_kernel.sh ($TRACEBENCH_VM_KERNEL, else Debian 12's series in /boot).
set -uo pipefail
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
tracebench=$1 src=$2 out=$3
mkdir -p "$(dirname "$out")"
rm -rf "$out"
args=(vm --out-dir "$out" --timeout 600 --kernel "$kernel")
start=$SECONDS
"$tracebench" "${args[@]}" -- model suite -t kprobes -t dvm_kernel --quick --out suite
rc=$?
echo "vm model suite: status $rc, $((SECONDS - start)) s, results in $out"
if [ $rc -ne 0 ]; then
  echo "--- guest output (tail) ---"; tail -n 60 "$out/guest-output.txt" 2>/dev/null
  exit 1
fi
d=$out/suite
for f in table7.md suite.json model.json model.md; do [ -s "$d/$f" ] || { echo "FAIL: missing $f"; exit 1; }; done
/usr/bin/python3 "$src/scripts/validate_result.py" "$d/model.json" "$d"/validation/*.json || exit 1
/usr/bin/python3 - "$d" "$out/vm.json" <<'PY'
import json, os, sys
d, vm = sys.argv[1], json.load(open(sys.argv[2]))
s = json.load(open(os.path.join(d, "suite.json")))
assert s["steps"] and all(x["exit_code"] == 0 for x in s["steps"]), s["steps"]
names = sorted(os.listdir(os.path.join(d, "validation")))
assert names == ["dvm_kernel-payload.json", "dvm_kernel-pid.json", "dvm_kernel-sys.json", "dvm_kernel-sys10.json",
                 "dvm_kernel-sys_kprobe.json", "kprobes-fbt.json", "kprobes-fbt_record.json", "kprobes-fbt_return.json"], names
execution = "qemu-" + vm["accel"]
for n in names:
    v = json.load(open(os.path.join(d, "validation", n)))
    assert v["model"]["execution"] == execution and v["model"]["emulated"] == vm["emulated"], v["model"]
    e = v["events"]
    assert e["verification"] == "passed" and e["recorded"] == e["fired"] - e["lost"], (n, e)
    assert v["predicted"]["probe_cycles"] > 0 and v["measured"]["rate_hz"] > 0, (n, v["predicted"], v["measured"])
    assert v["error"]["cpu_percent"] is not None, (n, v["predicted"])
m = json.load(open(os.path.join(d, "model.json")))
assert m["context"]["emulated"] == vm["emulated"], m["context"]
entries = {x["action"]: x for x in m["entries"] if x["tracer"] == "kprobes"}
assert set(entries) == {"bpf_kprobe", "bpf_kretprobe", "tracefs_kprobe"}, sorted(entries)
per_enable = entries["tracefs_kprobe"]["parameters"]["consumer_per_enable"]
assert per_enable["cycles"] is not None, per_enable
dvm = {(x["probe_kind"], x["action"]): x for x in m["entries"] if x["tracer"] == "dvm_kernel" and not x["options"]}
assert set(dvm) == {("syscall", "count"), ("user_function", "count"), ("kmod_tracepoint", "record")}, sorted(dvm)
per_pass = dvm[("syscall", "count")]["parameters"]["consumer_per_wakeup"]
assert per_pass["cycles"] is not None, per_pass
# A pass as a paced workload meets it: from the count runs after an idle gap.
for key, x in dvm.items():
    source = x["fit"]["consumer"].get("per_wakeup_from", "")
    assert "runs of its configuration after an idle gap" in source, (key, x["fit"]["consumer"])
t = open(os.path.join(d, "table7.md")).read()
for tracer, scenarios in (("kprobes", ("fbt", "fbt_return", "fbt_record")),
                          ("dvm_kernel", ("sys", "sys10", "sys_kprobe", "pid", "payload"))):
    label = f"| {tracer} ({execution}, emulated) |" if vm["emulated"] else f"| {tracer} |"
    for sc in scenarios:
        assert f"{label} {sc} |" in t, t
print(f"ok: kprobes and dvm_kernel Table 7 under {execution}; a read pass costs the kprobes reader "
      f"{per_enable['cycles']:.0f} cycles, a consumer pass the kernel D-VM's {per_pass['cycles']:.0f}")
for l in t.splitlines():
    if l.startswith("| kprobes") or l.startswith("| dvm_kernel"):
        print("  " + l)
PY
