#!/bin/bash
# Two-kernel regression check: runs the same tracebench suite on kernel A
# and kernel B in the VM lab and compares the two runs.
#
#   scripts/vm/compare-kernels.sh [--tracebench BIN] [--outdir DIR] [--install]
#       [--accel auto|kvm|tcg] [--clock wall|icount] [--timeout S] [--rounds N] [--max-rounds M]
#       [--threshold T]
#       [--fail-on-regression]
#       [--lava IDENTITY [--lava-identity-file FILE] [--lava-job-option OPT]...]
#       A B -- <tracebench run arguments>
#
# A and B are kernel images (/boot/vmlinuz-6.1.0-55-amd64) or Debian kernel
# releases (6.1.0-55-amd64, 6.12.107+deb12-amd64); with --install, missing
# releases are installed with apt-get (linux-image-<rel> linux-headers-<rel>).
# --rounds N boots A B, B A, A B, ... N times each (default 1): timings drift
# with the host for minutes at a time, so one run per kernel can differ by
# more than the change sought; rounds interleave the kernels in time and the
# comparison tests them as pairs.  Writes DIR/A/round<i>/ and DIR/B/round<i>/ (each as
# `tracebench vm` leaves it), links every run directory into DIR/A/runs/ and
# DIR/B/runs/, and prints `tracebench compare DIR/A/runs DIR/B/runs` (also in
# DIR/compare.txt, and as JSON in DIR/compare.json); exits 0 when every run succeeded and the comparison ran,
# 1 when a run failed, the comparison's status otherwise.  The runs are also
# laid out as pairs (DIR/A/pairs/pair-NNNN, round N of A with round N of B),
# so with 2+ rounds compare tests the pairs' ratios.
#
# --max-rounds M (M > N): a sequential A/B, as `tracebench ab` runs one.
# After N rounds, and after every round from then on (B first in even
# rounds, so a drift over two rounds cancels), `tracebench
# compare --sequential` tests the pairs; the boots stop when every benchmark
# is decided (improvement, regression or same within --threshold, default
# 5%) or at M rounds, where what is left is `undecided` with the MDE the
# pairs reached.  compare.json holds the last test; rounds.txt what each
# look decided.  With --lava the first N rounds go as one batch of jobs,
# then one round (two jobs) at a time.  Two
# boots of the same kernel under TCG can differ by tens of percent, so a
# difference of a few percent needs many rounds, or KVM.
#
# --clock icount (local boots): TCG with a clock that counts instructions
# (`tracebench vm --clock icount`, run-qemu.sh): every boot of a kernel gives
# the same figure, in guest instructions per event, so one round decides what
# the instruction count can show (not cache, pipeline or trap costs).
#
# --lava IDENTITY: the boots are LAVA jobs (`tracebench lava job`, one per
# kernel, submitted 2N times) on the server of lavacli's identity IDENTITY
# (--lava-identity-file FILE, else $XDG_CONFIG_HOME/lavacli.yaml), all
# submitted at once in ABBA order so that a lab's idle devices run them side
# by side (with --max-rounds, then two at a time), then waited for and
# fetched (`tracebench lava submit|wait|fetch`; harness/lava/README.md,
# scripts/lava/README.md).  A job that did not pass
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
tb="" outdir="" install=0 accel=auto clock=wall timeout_s=1800 rounds=1 max_rounds="" compare_args=() lava="" lava_file=""
lava_job_opts=()
die() { echo "compare-kernels: $*" >&2; exit 2; }
pos=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tracebench) tb=$2; shift 2;;
    --outdir) outdir=$2; shift 2;;
    --install) install=1; shift;;
    --accel) accel=$2; shift 2;;
    --clock) clock=${2:-}; shift 2;;
    --timeout) timeout_s=$2; shift 2;;
    --rounds) rounds=$2; shift 2;;
    --max-rounds) max_rounds=${2:-}; shift 2;;
    --threshold) compare_args+=(--threshold "${2:-}"); shift 2;;
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
[ -n "$max_rounds" ] || max_rounds=$rounds
[[ "$max_rounds" =~ ^[1-9][0-9]?$ ]] && [ "$max_rounds" -ge "$rounds" ] ||
  die "--max-rounds must be --rounds..99 (got '$max_rounds', --rounds $rounds)"
sequential=0
[ "$max_rounds" -gt "$rounds" ] && sequential=1
[ $sequential -eq 0 ] || [ "$rounds" -ge 2 ] || die "--max-rounds needs --rounds 2 or more: the sequential test looks at pairs"
case "$clock" in wall|icount) ;; *) die "--clock must be wall or icount (got '$clock')";; esac
[ "$clock" = wall ] || [ -z "$lava" ] || die "--clock icount is for local boots: LAVA's devices boot with QEMU's wall clock"
seq_args=()
[ $sequential -eq 0 ] || seq_args=(--sequential)
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

# The sequential test on the pairs so far (round $1): its verdicts in
# compare.json and a line in rounds.txt; prints how many benchmarks it has
# not decided (fails when compare cannot test them).
sequential_look() {
  "$tb" compare --json "${compare_args[@]}" "${seq_args[@]}" "$outdir/A/pairs" "$outdir/B/pairs" > "$outdir/compare.json" \
    2> "$outdir/compare.err" || { cat "$outdir/compare.err" >&2; return 1; }
  python3 - "$outdir/compare.json" "$1" "$outdir/rounds.txt" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1])).get("rows", [])
verdicts = [r.get("verdict", "?") for r in rows]
open(sys.argv[3], "a").write("round %s: %s\n" % (sys.argv[2], ", ".join(
    "%s %s" % (r.get("benchmark", "?"), r.get("verdict", "?")) for r in rows)))
print(sum(v == "undecided" for v in verdicts))
PY
}

status=0
for side in A B; do rm -rf "${outdir:?}/$side"; mkdir -p "$outdir/$side/runs" "$outdir/$side/pairs"; done
# A boot's runs, once it is back: into the side's runs/ and as pair $3.
collect() {  # $1 = side, $2 = round directory, $3 = round
  link_runs "$2" "$outdir/$1/runs"
  link_pair "$2" "$outdir/$1/pairs" "$3" || pairs_ok=0
}
pairs_ok=1
# Round $1 booted here: both sides, B first in even rounds.
local_round() {
  local round=$1 order=(A B) side k vmdir rc
  [ $((round % 2)) -eq 0 ] && order=(B A)
  for side in "${order[@]}"; do
    k=$ka; [ $side = B ] && k=$kb
    echo "compare-kernels: round $round/$max_rounds [$side] $k" >&2
    vmdir=$outdir/$side/round$round
    "$tb" vm --kernel "$k" --accel "$accel" --clock "$clock" --timeout "$timeout_s" --out-dir "$vmdir" \
      -- run --out runs "${run_args[@]}"
    rc=$?
    if [ $rc -ne 0 ]; then echo "compare-kernels: run on $k failed (status $rc); see $vmdir" >&2; status=1; fi
    collect "$side" "$vmdir" "$round"
  done
}
# Rounds $1..$2, here or as LAVA jobs (one batch).
boot_rounds() {
  local r
  if [ -n "$lava" ]; then lava_rounds "$1" "$2" || status=1; return; fi
  for ((r = $1; r <= $2; ++r)); do local_round "$r"; done
}
run_args=("${@:2}")
: > "$outdir/rounds.txt"
if [ -n "$lava" ]; then
  . "$here/../lava/fanout.sh"
  lava_write_jobs "$ka" "$kb" "${run_args[@]}" || status=1
fi
booted=0  # rounds booted: --rounds, or with --max-rounds as many as the test needed
if [ $status -eq 0 ]; then boot_rounds 1 "$rounds"; booted=$rounds; fi
# The sequential test after --rounds rounds, then after every round more.
while [ $sequential -eq 1 ] && [ $status -eq 0 ] && [ $pairs_ok -eq 1 ]; do
  undecided=$(sequential_look "$booted") || break
  [ "$undecided" -gt 0 ] && [ "$booted" -lt "$max_rounds" ] || break
  booted=$((booted + 1))
  boot_rounds "$booted" "$booted"
done
ra=$outdir/A/runs rb=$outdir/B/runs
na=$(ls -1 "$ra" | wc -l) nb=$(ls -1 "$rb" | wc -l)
if [ "$na" -eq 0 ] || [ "$nb" -eq 0 ]; then
  echo "compare-kernels: a side produced no result directory; nothing to compare" >&2
  exit 1
fi
echo "compare-kernels: A = $ka ($na runs in $ra)" >&2
echo "compare-kernels: B = $kb ($nb runs in $rb)" >&2
# Every round of both sides back: compare the pairs; else the runs pooled.
if [ $pairs_ok -eq 1 ] && [ "$booted" -ge 2 ]; then
  ra=$outdir/A/pairs rb=$outdir/B/pairs
elif [ "$booted" -ge 2 ]; then
  echo "compare-kernels: a round did not come back on both sides: the runs are compared pooled, not as pairs" >&2
  seq_args=()
fi
"$tb" compare "${compare_args[@]}" "${seq_args[@]}" "$ra" "$rb" | tee "$outdir/compare.txt"
crc=${PIPESTATUS[0]}
# The same comparison as JSON, for scripts (upstream-table.py).
"$tb" compare --json "${compare_args[@]}" "${seq_args[@]}" "$ra" "$rb" > "$outdir/compare.json" 2>/dev/null || true
[ $status -ne 0 ] && exit 1
exit $crc
