#!/bin/bash
# tests/common/test_kernel.sh on boot directories of each kind: Debian 12's
# 6.1 images beside a newer 6.12 one (the newest 6.1 is picked, by version
# order, not by name), only a 6.12 (none, with the reason and what to
# install), and TRACEBENCH_VM_KERNEL naming another (taken as it is).
set -u
. "$(dirname "$0")/test_kernel.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
unset TRACEBENCH_VM_KERNEL
export TB_BOOT_DIR=$t

touch "$t/vmlinuz-6.1.0-9-amd64" "$t/vmlinuz-6.1.0-56-amd64" "$t/vmlinuz-6.12.57+deb12-amd64" "$t/config-6.1.0-56-amd64"
got=$(tb_test_kernel) || fail "no kernel picked among 6.1 and 6.12 images"
[ "$got" = "$t/vmlinuz-6.1.0-56-amd64" ] || fail "picked $got, not the newest 6.1 image"
echo "ok: the newest 6.1 image beside a 6.12 one"

rm "$t"/vmlinuz-6.1.*
if got=$(tb_test_kernel 2>"$t/err"); then fail "picked $got where only a 6.12 image is"; fi
grep -q "no $t/vmlinuz-6.1.\*.*apt-get install linux-image-amd64" "$t/err" || fail "reason: $(cat "$t/err")"
echo "ok: none where only 6.12 is, saying why: $(cat "$t/err")"

got=$(TRACEBENCH_VM_KERNEL=/elsewhere/vmlinuz-6.12.57+deb12-amd64 tb_test_kernel) || fail "TRACEBENCH_VM_KERNEL refused"
[ "$got" = /elsewhere/vmlinuz-6.12.57+deb12-amd64 ] || fail "TRACEBENCH_VM_KERNEL gave $got"
echo "ok: TRACEBENCH_VM_KERNEL taken as it is"
