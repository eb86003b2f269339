#!/bin/bash
# The D-VM's Tables 3 and 6 in the kernel home: tracebench_dvm_costs's consumer
# cells in the VM lab, where the module is loaded, so the table3k/ cells run
# (each term a DVM_STATUS / DVM_BUFSNAP / DVM_AGGSNAP ioctl with its copy-out,
# per pass of 2000 payload-tracepoint records and 1000 aggregation keys), and
# the table6k/ cells (stages 1-3 per probe kind, the module's stage timing),
# and Table 5 (the guest kernel's context switch and cross-CPU wakeup).
# Checks both homes' tables came back measured (finite, positive, every
# record read) and stage 1 measured where the call is this process's.
#   dvm_costs_kernel.sh TRACEBENCH_DVM_COSTS SRC OUTDIR
# Kernel: tests/common/test_kernel.sh ($TRACEBENCH_VM_KERNEL, else Debian 12's series in /boot).
set -uo pipefail
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
costs=$1 src=$2 out=$3
rm -rf "$out"
mkdir -p "$(dirname "$out")"
vm=(--outdir "$out" --timeout 600 --bin "$costs:/tb/bin/tracebench_dvm_costs" --kernel "$kernel")
"$src/scripts/vm/tracebench-vm.sh" "${vm[@]}" -- \
  sh -c 'tracebench_dvm_costs --benchmark_filter="table3|table5|table6k" --dvm_out=t3 > t3.txt 2>&1'
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: tracebench_dvm_costs in the VM: status $rc"
  tail -n 40 "$out/guest-output.txt" 2>/dev/null; cat "$out/t3.txt" 2>/dev/null | tail -20
  exit 1
fi
/usr/bin/python3 - "$out/t3/dvm_costs.json" <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1]))
for table in ("table3_consumer", "table3_consumer_kernel"):
    t = j.get(table)
    assert t, f"no {table} (the module's cells did not run)"
    for k, v in t.items():
        assert v is not None and math.isfinite(v) and v > 0, f"{table}.{k} = {v}"
k = j["table3_consumer_kernel"]
assert k["records_per_pass"] == 2000, k
assert k["bytes_per_pass"] == j["table3_consumer"]["bytes_per_pass"], (k, j["table3_consumer"])
t6 = j.get("table6_stages_kernel")
assert t6 and set(t6) == {"syscall", "pid", "usdt", "sdt", "fbt"}, f"table6_stages_kernel: {t6}"
for p, stages in t6.items():
    want = ("stage1_trap", "stage2_provider_entry", "stage3_vm") if p in ("syscall", "pid", "usdt") else \
           ("stage2_provider_entry", "stage3_vm")
    for st in want:
        c = stages[st]
        assert c and math.isfinite(c["cycles"]) and c["cycles"] > 0, f"table6k {p} {st} = {c}"
    if p in ("sdt", "fbt"):
        assert stages["stage1_trap"] is None, f"{p}: stage 1 cannot be measured from the module's own loop"
print("kernel home Table 6, cycles per firing (stage 1 / 2 / 3; emulated under TCG): " +
      ", ".join(f"{p} " + " / ".join(f"{s['cycles']:.0f}" if s else "-" for s in
                                      (t6[p]["stage1_trap"], t6[p]["stage2_provider_entry"], t6[p]["stage3_vm"]))
                for p in ("syscall", "pid", "usdt", "sdt", "fbt")))
t5 = j.get("table5_context_switch") or {}
for name in ("switch_one_cpu", "wakeup_other_cpu"):
    c = t5.get(name)
    assert c and math.isfinite(c["cycles"]) and c["cycles"] > 0, f"table5 {name} = {c}"
print(f"guest Table 5 (emulated under TCG): context switch {t5['switch_one_cpu_ns']:.0f} ns, "
      f"wakeup on the other CPU {t5['wakeup_other_cpu_ns']:.0f} ns")
print("kernel home, cycles per pass (emulated under TCG): " +
      ", ".join(f"{n} {k[n]:.0f}" for n in ("status_snapshot", "buffer_switch", "aggregation_snapshot",
                                           "aggregation_rebuild")) + f"; chew {k['chew_per_record']:.0f} per record")
PY
