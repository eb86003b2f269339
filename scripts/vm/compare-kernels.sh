#!/bin/bash
# Two-kernel regression check: runs the same tracebench suite on kernel A
# and kernel B in the VM lab and compares the two runs.
#
#   scripts/vm/compare-kernels.sh [--tracebench BIN] [--outdir DIR] [--install]
#       [--accel auto|kvm|tcg] [--timeout S] [--rounds N] [--fail-on-regression]
#       [--lava IDENTITY [--lava-identity-file FILE] [--lava-job-option OPT]...]
#       A B -- <tracebench run arguments>
#
# A and B are kernel images (/boot/vmlinuz-6.1.0-55-amd64) or Debian kernel
# releases (6.1.0-55-amd64, 6.12.107+deb12-amd64); with --install, missing
# releases are installed with apt-get (linux-image-<rel> linux-headers-<rel>).
# --rounds N boots A, B, A, B, ... N times each (default 1): timings drift
# with the host for minutes at a time, so one run per kernel can differ by
# more than the change sought; rounds interleave the kernels in time and the
# comparison pools them.  Writes DIR/A/round<i>/ and DIR/B/round<i>/ (each as
# `tracebench vm` leaves it), links every run directory into DIR/A/runs/ and
# DIR/B/runs/, and prints `tracebench compare DIR/A/runs DIR/B/runs` (also in
# DIR/compare.txt); exits 0 when every run succeeded and the comparison ran,
# 1 when a run failed, the comparison's status otherwise.  The runs are also
# laid out as pairs (DIR/A/pairs/pair-NNNN, round N of A with round N of B),
# so with 2+ rounds compare tests the pairs' ratios.
#
# --lava IDENTITY: the boots are LAVA jobs (`tracebench lava job`, one per
# kernel, submitted 2N times) on the server of lavacli's identity IDENTITY
# (--lava-identity-file FILE, else $XDG_CONFIG_HOME/lavacli.yaml), all
# submitted at once in ABBA order so that a lab's idle devices run them side
# by side, then waited for and fetched (`tracebench lava submit|wait|fetch`;
# harness/lava/README.md, scripts/lava/README.md).  A job that did not pass
# is a failed run (exit 1), never a figure; DIR/<side>/round<i>/lava.json
# names the job, its device and worker and LAVA's error.  --lava-job-option
# OPT (repeatable) passes OPT to `tracebench lava job` (--smp=1,
# --boot-timeout=90s); --timeout S is then the wait allowed per job.
# Example (see scripts/vm/README.md):
#   scripts/vm/compare-kernels.sh --install 6.1.0-55-amd64 6.12.107+deb12-amd64 \
#     -- run --quick -t kprobes -t none -w kmod_target -w kmod_fixed
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tb="" outdir="" install=0 accel=auto timeout_s=1800 rounds=1 compare_args=() lava="" lava_file=""
lava_job_opts=()
die() { echo "compare-kernels: $*" >&2; exit 2; }
pos=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tracebench) tb=$2; shift 2;;
    --outdir) outdir=$2; shift 2;;
    --install) install=1; shift;;
    --accel) accel=$2; shift 2;;
    --timeout) timeout_s=$2; shift 2;;
    --rounds) rounds=$2; shift 2;;
    --fail-on-regression) compare_args+=(--fail-on-regression); shift;;
    --lava) [ -n "${2:-}" ] || die "--lava needs an identity"; lava=$2; shift 2;;
    --lava-identity-file) [ -f "${2:-}" ] || die "--lava-identity-file '${2:-}' is not a file"; lava_file=$2; shift 2;;
    --lava-job-option) [ -n "${2:-}" ] || die "--lava-job-option needs an option of tracebench lava job"; lava_job_opts+=("$2"); shift 2;;
    --lava-job-option=?*) lava_job_opts+=("${1#--lava-job-option=}"); shift;;
    --) shift; break;;
    -*) die "unknown option '$1'";;
    *) pos+=("$1"); shift;;
  esac
done
[ ${#pos[@]} -eq 2 ] || die "need two kernels (A B) before --"
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || die "--rounds must be 1..99 (got '$rounds')"
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
for side in A B; do rm -rf "${outdir:?}/$side"; mkdir -p "$outdir/$side/runs" "$outdir/$side/pairs"; done
# A boot's runs, once it is back: into the side's runs/ and as pair $3.
collect() {  # $1 = side, $2 = round directory, $3 = round
  link_runs "$2" "$outdir/$1/runs"
  link_pair "$2" "$outdir/$1/pairs" "$3" || pairs_ok=0
}
pairs_ok=1
if [ -n "$lava" ]; then
  . "$here/../lava/fanout.sh"
  lava_boots "$ka" "$kb" "$rounds" "${@:2}" || status=1
else
  for ((round = 1; round <= rounds; ++round)); do
    for side in A B; do
      k=$ka; [ $side = B ] && k=$kb
      echo "compare-kernels: round $round/$rounds [$side] $k" >&2
      vmdir=$outdir/$side/round$round
      "$tb" vm --kernel "$k" --accel "$accel" --timeout "$timeout_s" --out-dir "$vmdir" \
        -- run --out runs "${@:2}"
      rc=$?
      if [ $rc -ne 0 ]; then echo "compare-kernels: run on $k failed (status $rc); see $vmdir" >&2; status=1; fi
      collect "$side" "$vmdir" "$round"
    done
  done
fi
ra=$outdir/A/runs rb=$outdir/B/runs
na=$(ls -1 "$ra" | wc -l) nb=$(ls -1 "$rb" | wc -l)
if [ "$na" -eq 0 ] || [ "$nb" -eq 0 ]; then
  echo "compare-kernels: a side produced no result directory; nothing to compare" >&2
  exit 1
fi
echo "compare-kernels: A = $ka ($na runs in $ra)" >&2
echo "compare-kernels: B = $kb ($nb runs in $rb)" >&2
# Every round of both sides back: compare the pairs; else the runs pooled.
if [ $pairs_ok -eq 1 ] && [ "$rounds" -ge 2 ]; then
  ra=$outdir/A/pairs rb=$outdir/B/pairs
elif [ "$rounds" -ge 2 ]; then
  echo "compare-kernels: a round did not come back on both sides: the runs are compared pooled, not as pairs" >&2
fi
"$tb" compare "${compare_args[@]}" "$ra" "$rb" | tee "$outdir/compare.txt"
crc=${PIPESTATUS[0]}
[ $status -ne 0 ] && exit 1
exit $crc
