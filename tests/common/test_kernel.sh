# The kernel the VM-lab and LAVA tests boot (sourced; tb_test_kernel prints
# its path, or says why there is none on stderr and returns 1):
# $TRACEBENCH_VM_KERNEL when set, else the newest image of the series the
# tests were written for, Debian 12's own (linux-image-amd64, which
# `scripts/setup.sh --tests` installs).  A newer kernel installed beside it
# (Debian's 6.12, to compare kernels) is never picked by itself: Debian 12's
# lttng-modules and SystemTap do not build for it.  TB_BOOT_DIR (default
# /boot) is for this helper's own test.
TB_TEST_KERNEL_SERIES=6.1
tb_test_kernel() {
  if [ -n "${TRACEBENCH_VM_KERNEL:-}" ]; then
    echo "$TRACEBENCH_VM_KERNEL"
    return 0
  fi
  local boot=${TB_BOOT_DIR:-/boot} k
  k=$(ls -1 "$boot"/vmlinuz-"$TB_TEST_KERNEL_SERIES".* 2>/dev/null | sort -V | tail -1)
  if [ -z "$k" ]; then
    echo "no $boot/vmlinuz-$TB_TEST_KERNEL_SERIES.*, the kernel the VM-lab tests were written for:" \
      "apt-get install linux-image-amd64 linux-headers-amd64 (Debian 12), or name one in TRACEBENCH_VM_KERNEL" >&2
    return 1
  fi
  echo "$k"
}
