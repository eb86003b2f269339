#!/bin/bash
# integration.lava_job: every job template `tracebench lava job` writes is a
# valid LAVA job (LAVA's own schema, strict; and lava-run --validate with a
# rendered device where this machine can be that device's worker), the YAML
# is stable, bad input is refused with exit 2, a failed verification is a
# failed test case, and `tracebench lava fetch`
# rebuilds files from a log byte for byte, keeps the journal's revision when
# the final one is cut, and refuses what does not check.
#   job_templates.sh TRACEBENCH SOURCE_DIR WORKDIR
set -uo pipefail
tb=$1 src=$2 work=$3
lava=$src/scripts/lava
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import lava_common.schemas' 2>/dev/null ||
  fail "LAVA's schemas are missing: apt-get install lava-dispatcher lava-server (scripts/setup.sh)"

# Artifacts: any file for the kernel, a stand-in initramfs (not booted here).
cp /bin/true vmlinuz-9.9.9-test
head -c 1024 /dev/zero > initramfs.cpio
cmd=(run --quick -t kprobes -w kmod_target)
"$tb" lava job --kernel vmlinuz-9.9.9-test --initramfs initramfs.cpio --out qemu.yaml -- "${cmd[@]}" || fail "qemu job"
"$tb" lava job --kernel vmlinuz-9.9.9-test --initramfs initramfs.cpio --out qemu2.yaml -- "${cmd[@]}" || fail "qemu job again"
cmp -s qemu.yaml qemu2.yaml || fail "the same job twice is not the same YAML"
"$tb" lava job --device-type x86 --kernel vmlinuz-9.9.9-test --initramfs initramfs.cpio \
  --url-base http://lab.example/tracebench --artifacts served --out x86.yaml -- "${cmd[@]}" || fail "x86 job"
[ -f served/vmlinuz-9.9.9-test ] && [ -f served/initramfs.cpio ] || fail "--url-base: the artifacts were not put in --artifacts"
grep -q 'url: "http://lab.example/tracebench/initramfs.cpio"' x86.yaml || fail "x86 job: ramdisk URL"
for t in qemu x86; do grep -q 'sh /tb/lava-test.sh' $t.yaml || fail "$t job runs no test"; done

# LAVA's schema (what lava-server checks on submission).
/usr/bin/python3 "$lava/validate-job.py" qemu.yaml x86.yaml || fail "LAVA's schema refused a job"
# The dispatcher's validation, with the devices rendered as a server would.
# Job ids of this test only (a lab's own jobs are numbered from 1): lava-run
# --validate leaves its empty download folders under them, removed here.
vq=$((900000000 + $$)) vx=$((910000000 + $$))
trap 'rm -rf /var/lib/lava/dispatcher/tmp/$vq /var/lib/lava/dispatcher/tmp/$vx' EXIT
"$lava/render-device.py" "$lava/devices/qemu-tcg.jinja2" --job qemu.yaml --out qemu-device.yaml || fail "render qemu device"
grep -q -- '-smp 2' qemu-device.yaml || fail "the job's context did not reach the device"
lava-run --validate --device qemu-device.yaml --job-id $vq --output-dir lava-qemu qemu.yaml > qemu-validate.log 2>&1 ||
  { tail -5 qemu-validate.log; fail "lava-run --validate refused the qemu job"; }
"$lava/render-device.py" "$lava/devices/x86-pxe.jinja2" --job x86.yaml --out x86-device.yaml || fail "render x86 device"
if [ -f /etc/default/tftpd-hpa ]; then
  lava-run --validate --device x86-device.yaml --job-id $vx --output-dir lava-x86 x86.yaml > x86-validate.log 2>&1 ||
    { tail -5 x86-validate.log; fail "lava-run --validate refused the x86 job"; }
else
  echo "note: no tftpd-hpa here, so lava-run cannot validate the x86 job (a PXE worker's check); LAVA's schema did"
fi

# A job the schema refuses is found: the validator is not a rubber stamp.
sed 's/method: qemu/method: qemoo/' qemu.yaml > broken.yaml
/usr/bin/python3 "$lava/validate-job.py" broken.yaml > /dev/null && fail "the validator accepted a broken job"

# Refusals, exit 2.
"$tb" lava job --device-type arm64 --kernel vmlinuz-9.9.9-test --initramfs initramfs.cpio --out z.yaml -- run 2>/dev/null
[ $? -eq 2 ] || fail "unknown device type not refused with 2"
"$tb" lava job --kernel no-such-kernel --initramfs initramfs.cpio --out z.yaml -- run 2>/dev/null
[ $? -eq 2 ] || fail "missing kernel not refused with 2"
"$tb" lava job --kernel vmlinuz-9.9.9-test --initramfs initramfs.cpio --out z.yaml -- run -t no_such_tracer 2>/dev/null
[ $? -eq 2 ] || fail "a run the guest would refuse not refused with 2"
[ -f z.yaml ] && fail "a refused job left a file"

# Benchmarks as LAVA test cases: a failed verification is a failed case.
example=$(ls "$src"/results/report-example/*/result.json | head -1)
"$tb" lava cases "$example" > cases.txt || fail "lava cases"
grep -qx 'ebpf.getpid.count.payload_0.threads_1 pass 128.950' cases.txt || { cat cases.txt; fail "lava cases: the eBPF case"; }
/usr/bin/python3 - "$example" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["benchmarks"][1]["events"]
e.update(recorded=e["recorded"] - 10, exact=False, verification="failed",
         verification_reason=f"recorded {e['recorded'] - 10} + lost 0 != fired {e['fired']}")
json.dump(d, open("failed.json", "w"))
PY
"$tb" lava cases failed.json > failed-cases.txt || fail "lava cases (failed verification)"
grep -q '^ebpf.getpid.count.payload_0.threads_1 fail ' failed-cases.txt || { cat failed-cases.txt; fail "a failed verification is not a failed case"; }
# An unsteady benchmark (its events right, its overhead on no one level: no
# figure) says nothing of the kernel: unknown; a skipped one: skip.
/usr/bin/python3 - "$example" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["benchmarks"][1]
b.update(status="unsteady", error="the overhead changed level during the run",
         level_shifts=[{"repetitions_left_out": 3, "before_cycles": 900.0, "after_cycles": 300.0}],
         left_out_overheads_cycles=[900.0, 900.0, 900.0], overhead_cycles_per_event=None, overhead_ns_per_event=None)
d["benchmarks"][0]["status"] = "skipped"
json.dump(d, open("unsteady.json", "w"))
PY
"$tb" lava cases unsteady.json > unsteady-cases.txt || fail "lava cases (unsteady)"
grep -qx 'ebpf.getpid.count.payload_0.threads_1 unknown -' unsteady-cases.txt &&
  grep -q '^[^ ]* skip ' unsteady-cases.txt || { cat unsteady-cases.txt; fail "unsteady is not unknown or skipped not skip"; }

# fetch: a log as LAVA writes it, with the guest's frames (guest-test.sh's format).
printf '{"a": 1, "note": "a result"}\n' > r1.json
printf '{"a": 2, "note": "more results"}\n' > r2.json
frame() {  # frame REV NAME FILE [CUT]: the TBLAVA lines of one revision as LAVA log records
  local rev=$1 name=$2 f=$3 cut=${4:-}
  echo "{\"dt\": \"2026-01-01T00:00:00\", \"lvl\": \"target\", \"msg\": \"TBLAVA FILE $rev $name $(stat -c %s "$f") $(sha256sum "$f" | cut -d' ' -f1)\"}"
  base64 "$f" | awk -v r="$rev" '{ printf "{\"dt\": \"2026-01-01T00:00:00\", \"lvl\": \"target\", \"msg\": \"TBLAVA DATA %s %d %s\"}\n", r, NR, $0 }' |
    { if [ -n "$cut" ]; then sed 's/DATA \([0-9]*\) 1 ..../DATA \1 1 AAAA/'; else cat; fi; }
  echo "{\"dt\": \"2026-01-01T00:00:00\", \"lvl\": \"target\", \"msg\": \"TBLAVA END $rev $name $(base64 "$f" | wc -l)\"}"
}
rec() { echo "{\"dt\": \"2026-01-01T00:00:00\", \"lvl\": \"$1\", \"msg\": $2}"; }
{
  rec info '"start"'
  frame 1 results/x/result.json r1.json
  rec target '"[   12.5] some kernel line \\x1b[0m"'
  rec target '"TBLAVA FINAL"'
  frame 2 results/x/result.json r2.json
  rec results '{"case": "k.w.a", "definition": "0_tracebench", "measurement": !!float "12.5", "result": "pass", "starttc": ! "7", "units": "ns"}'
  rec target '"TBLAVA DONE 0"'
  rec results '{"case": "job", "definition": "lava", "result": "pass"}'
} > good.log
"$tb" lava fetch --log good.log got > fetch.out 2>&1 || { cat fetch.out; fail "fetch of a complete log did not exit 0"; }
cmp -s got/results/x/result.json r2.json || fail "fetch: the final revision did not come back byte for byte"
grep -q '"measurement": "12.5"' got/lava.json || fail "fetch: LAVA's test case measurement not read"

# The final revision cut (a line mangled): the journal's revision is kept, exit 1.
{
  frame 1 results/x/result.json r1.json
  rec target '"TBLAVA FINAL"'
  frame 2 results/x/result.json r2.json cut
  rec target '"TBLAVA DONE 0"'
  rec results '{"case": "job", "definition": "lava", "result": "pass"}'
} > cut.log
"$tb" lava fetch --log cut.log cutdir > cut.out 2>&1
[ $? -eq 1 ] || { cat cut.out; fail "fetch of a log whose final revision does not check did not exit 1"; }
cmp -s cutdir/results/x/result.json r1.json || fail "fetch: the journal's revision was not kept"
grep -q 'revision 2' cut.out || fail "fetch did not say which revision did not check"

# A job that failed (LAVA's error), the guest never done: exit 1 with LAVA's words.
{
  frame 1 results/x/result.json r1.json
  rec results '{"case": "job", "definition": "lava", "error_msg": "lava-test-shell timed out after 60 seconds", "error_type": "Test", "result": "fail"}'
} > timeout.log
"$tb" lava fetch --log timeout.log todir > to.out 2>&1
[ $? -eq 1 ] || fail "fetch of a failed job did not exit 1"
grep -q 'timed out after 60 seconds' to.out || fail "fetch did not give LAVA's error"
cmp -s todir/results/x/result.json r1.json || fail "fetch: a failed job's journal was not kept"

# Not a LAVA log: exit 2.
echo "hello" > notalog.txt
"$tb" lava fetch --log notalog.txt nodir 2>/dev/null
[ $? -eq 2 ] || fail "fetch of a file that is no LAVA log did not exit 2"
echo "PASS: LAVA job templates valid, fetch checks files"
