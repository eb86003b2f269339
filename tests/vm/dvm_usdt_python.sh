#!/bin/bash
# The kernel D-VM's usdt provider on a program this project did not build:
# Debian's python3 (built with SDT probes, semaphores on each) runs a script
# under `tracebench dvm --kernel -c`, and python$target:::function-entry /
# line count what the script did: f and g called 100 times each.  (Python
# 3.11 fires function-entry only while its line probe is enabled too.)
#   dvm_usdt_python.sh TRACEBENCH OUTDIR
# Exit 77 (skipped) without /usr/bin/python3 or its SDT notes.
set -uo pipefail
. "$(dirname "$0")/../common/test_kernel.sh"
kernel=$(tb_test_kernel) || exit 1
tracebench=$1 out=$2
python=$(realpath /usr/bin/python3 2>/dev/null) || { echo "SKIP: no /usr/bin/python3"; exit 77; }
readelf -n "$python" 2>/dev/null | grep -q "Provider: python" || { echo "SKIP: $python has no SDT notes"; exit 77; }
stdlib=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])') || exit 1
rm -rf "$out"
mkdir -p "$out"
cat > "$out/calls.py" <<'PY'
def f(n):
    return n + 1
def g(n):
    return f(n) * 2
s = 0
for i in range(100):
    s += g(i)
print("sum", s)
PY
# As a user runs it: `tracebench vm --bin` packs the program with its
# libraries, --file its standard library and the script.
args=(vm --out-dir "$out/vm" --timeout 600 --bin "$python:/tb/bin/python3" --file "$stdlib"
      --file "$out/calls.py:/tb/calls.py")
args+=(--kernel "$kernel")
"$tracebench" "${args[@]}" -- dvm --kernel -q -c "python3 -S /tb/calls.py" -n '
    python$target:::function-entry /copyinstr(arg0) == "/tb/calls.py"/ { @[copyinstr(arg1)] = count(); }
    python$target:::line { @lines = count(); }'
rc=$?
text=$(grep -v '^\[' "$out/vm/guest-output.txt" 2>/dev/null)
echo "$text" | tail -n 20
if [ $rc -ne 0 ]; then
  echo "FAIL: tracebench vm -- dvm --kernel on python3: status $rc"
  exit 1
fi
/usr/bin/python3 - "$text" <<'PY'
import re, sys
text = sys.argv[1]
got = dict((m.group(1), int(m.group(2))) for m in re.finditer(r"^\s+(\S+)\s+(\d+)$", text, re.M))
assert "sum 10100" in text, "the script did not run to its end"
assert got.get("f") == 100 and got.get("g") == 100, f"function-entry on calls.py: {got}"
lines = [int(m.group(1)) for m in re.finditer(r"^\s+(\d+)$", text, re.M)]
assert lines and lines[0] >= 400, f"@lines: {lines}"  # the loop alone runs 4 lines x 100
print(f"  python3 under the kernel D-VM: f 100, g 100, {lines[0]} lines (usdt, semaphores raised by the module)")
PY
