#!/bin/bash
# ctest driver: runs a GoogleTest binary inside the VM lab and turns its
# result into this process's exit status.
#   run-in-vm.sh NAME OUTROOT -- [tracebench-vm.sh options] -- COMMAND...
# Kernel: tests/common/test_kernel.sh ($TRACEBENCH_VM_KERNEL, else Debian 12's series in /boot).
# Fails (never skips) when the VM lab cannot run: CI installs what it needs.
# After the guest exits, checks that the gtest JSON came back and that no
# test was skipped inside the guest (a skip there means the module or a
# kernel facility was missing, which is exactly what the VM is for).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=$1 outroot=$2; shift 2
[ "${1:-}" = "--" ] && shift
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
out=$outroot/$name
rm -rf "$out"
mkdir -p "$out"
start=$SECONDS
"$here/../../scripts/vm/tracebench-vm.sh" --kernel "$kernel" --outdir "$out" \
  --timeout "${TRACEBENCH_VM_TIMEOUT:-600}" "$@"
rc=$?
echo "vm test $name: kernel $kernel, status $rc, $((SECONDS - start)) s, results in $out"
[ -f "$out/vm.json" ] && cat "$out/vm.json"
if [ $rc -ne 0 ]; then
  echo "--- guest output (tail) ---"; tail -n 60 "$out/guest-output.txt" 2>/dev/null
  exit 1
fi
json=$out/$name.json
if [ ! -f "$json" ]; then echo "FAIL: $json did not come back from the guest" >&2; exit 1; fi
if grep -q '"result": "SKIPPED"' "$json"; then
  echo "FAIL: tests were skipped inside the VM:" >&2
  grep -B12 '"result": "SKIPPED"' "$json" | grep '"name"' >&2
  exit 1
fi
tests=$(grep -o '"tests": [0-9]*' "$json" | head -1 | grep -o '[0-9]*$')
if [ -z "$tests" ] || [ "$tests" -eq 0 ]; then echo "FAIL: no tests ran in the guest" >&2; exit 1; fi
echo "vm test $name: $tests tests passed in the guest"
exit 0
