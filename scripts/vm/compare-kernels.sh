#!/bin/bash
# Two-kernel regression check: runs the same tracebench suite on kernel A
# and kernel B in the VM lab and compares the two runs.
#
#   scripts/vm/compare-kernels.sh [--tracebench BIN] [--outdir DIR] [--install]
#       [--accel auto|kvm|tcg] [--timeout S]
#       A B -- <tracebench run arguments>
#
# A and B are kernel images (/boot/vmlinuz-6.1.0-55-amd64) or Debian kernel
# releases (6.1.0-55-amd64, 6.12.107+deb12-amd64); with --install, missing
# releases are installed with apt-get (linux-image-<rel> linux-headers-<rel>).
# Writes DIR/A/ and DIR/B/ (each as `tracebench vm` leaves it) and prints
# `tracebench compare A B`; exits 0 when both runs succeeded and the
# comparison ran, 1 when a run failed, the comparison's status otherwise.
# Example (see README):
#   scripts/vm/compare-kernels.sh --install 6.1.0-55-amd64 6.12.107+deb12-amd64 \
#     -- run --quick -t kprobes -t none -w kmod_target -w kmod_fixed
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tb="" outdir="" install=0 accel=auto timeout_s=1800 compare_args=()
die() { echo "compare-kernels: $*" >&2; exit 2; }
pos=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tracebench) tb=$2; shift 2;;
    --outdir) outdir=$2; shift 2;;
    --install) install=1; shift;;
    --accel) accel=$2; shift 2;;
    --timeout) timeout_s=$2; shift 2;;
    --fail-on-regression) compare_args+=(--fail-on-regression); shift;;
    --) shift; break;;
    -*) die "unknown option '$1'";;
    *) pos+=("$1"); shift;;
  esac
done
[ ${#pos[@]} -eq 2 ] || die "need two kernels (A B) before --"
[ $# -gt 0 ] || die "need tracebench arguments after -- (e.g. run --quick -w kmod_target -t kprobes)"
[ "$1" = run ] || die "the guest command must be 'run ...' (got '$1')"
if [ -z "$tb" ]; then
  for c in "$here/../../build/bench/tracebench" "$(command -v tracebench 2>/dev/null || true)"; do
    [ -n "$c" ] && [ -x "$c" ] && { tb=$c; break; }
  done
fi
[ -n "$tb" ] && [ -x "$tb" ] || die "no tracebench binary: build it (cmake --build build) or pass --tracebench"

# Kernel image for an argument; installs the release when asked.
resolve() {
  local k=$1
  if [ -f "$k" ]; then echo "$k"; return 0; fi
  local rel=${k#/boot/vmlinuz-}
  if [ ! -f "/boot/vmlinuz-$rel" ] || [ ! -f "/usr/src/linux-headers-$rel/Makefile" ]; then
    if [ $install -eq 1 ]; then
      echo "compare-kernels: installing linux-image-$rel linux-headers-$rel" >&2
      apt-get install -y --no-install-recommends "linux-image-$rel" "linux-headers-$rel" >&2 ||
        die "apt-get install linux-image-$rel linux-headers-$rel failed"
    else
      die "kernel '$k' is not installed: apt-get install linux-image-$rel linux-headers-$rel (or pass --install)"
    fi
  fi
  echo "/boot/vmlinuz-$rel"
}
ka=$(resolve "${pos[0]}") || exit 2
kb=$(resolve "${pos[1]}") || exit 2
[ -n "$outdir" ] || outdir=vm-compare-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$outdir"

status=0
for side in A B; do
  k=$ka; [ $side = B ] && k=$kb
  echo "compare-kernels: [$side] $k" >&2
  rm -rf "${outdir:?}/$side"
  "$tb" vm --kernel "$k" --accel "$accel" --timeout "$timeout_s" --out-dir "$outdir/$side" \
    -- run --out runs "${@:2}"
  rc=$?
  if [ $rc -ne 0 ]; then echo "compare-kernels: run on $k failed (status $rc); see $outdir/$side" >&2; status=1; fi
done
ra=$(ls -1d "$outdir"/A/runs/*/ 2>/dev/null | tail -1)
rb=$(ls -1d "$outdir"/B/runs/*/ 2>/dev/null | tail -1)
if [ -z "$ra" ] || [ -z "$rb" ]; then
  echo "compare-kernels: a run produced no result directory; nothing to compare" >&2
  exit 1
fi
echo "compare-kernels: A = $ka ($ra)" >&2
echo "compare-kernels: B = $kb ($rb)" >&2
"$tb" compare "${compare_args[@]}" "$ra" "$rb" | tee "$outdir/compare.txt"
crc=${PIPESTATUS[0]}
[ $status -ne 0 ] && exit 1
exit $crc
