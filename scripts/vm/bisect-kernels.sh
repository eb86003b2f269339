#!/bin/bash
# Kernel bisection in the VM lab: the first kernel of an ordered list at which
# one benchmark regressed, found like `git bisect` finds a commit.
#
#   scripts/vm/bisect-kernels.sh [options] BENCH GOOD BAD -- run <tracebench run arguments>
#
#   scripts/vm/bisect-kernels.sh --install --kernels 6.1.0-47-amd64,6.1.0-50-amd64,6.1.0-53-amd64,6.1.0-56-amd64 \
#     kprobes/kmod_target/count/payload:0/threads:1 6.1.0-47-amd64 6.1.0-56-amd64 \
#     -- run --quick -t kprobes -w kmod_target -p 0
#
# BENCH  a benchmark as result.json and `tracebench compare` name it,
#        TRACER/WORKLOAD/ACTION/payload:N/threads:N[/gap_us:N] (the `none` tracer's action
#        is `none`: none/kmod_target/none/payload:0/threads:1).
# GOOD   a kernel without the regression, BAD one with it; GOOD before BAD in
#        the candidate list.
#
# The candidates, oldest first:
#   --kernels K1,K2,...   given in order;
#   --kernels-file FILE   the same, one a line (blank lines and # comments skipped);
#   neither               derived: GOOD and BAD are Debian releases, and the list
#                         is every release of their flavour (amd64, cloud-amd64,
#                         ...) installed in /boot or known to apt (`apt-cache
#                         pkgnames linux-image-`), in version order (sort -V).
# A kernel is a Debian release (6.1.0-47-amd64, 6.12.107+deb12-amd64: the image
# /boot/vmlinuz-<rel>, the headers /usr/src/linux-headers-<rel>; --install
# installs a missing one with apt-get when it is first booted, as
# compare-kernels.sh does) or a kernel image path (its release, for the
# headers, comes from the file name vmlinuz-<rel> or the image's header;
# --headers DIR names them for every image path).  GOOD, BAD and --inject-from
# name a list entry as given or by its label: the release, or the image's file
# name.  Only the entries from GOOD to BAD are used (and checked).
#
# Method.  First GOOD against BAD: if `tracebench compare` calls BENCH
# `same` or an `improvement` there is nothing to bisect (exit 3).  Then
# binary search between them: each step boots the reference (GOOD) and the
# candidate in the middle of the range left as interleaved pairs in ABBA order
# (G C, C G, G C, ...: timings drift with the host for minutes, and the drift
# a pair shares cancels in its ratio), runs `tracebench compare --sequential
# --json DIR/stepK-<cand>/G/pairs DIR/stepK-<cand>/C/pairs` after each pair
# from the --rounds'th on, and stops the step when BENCH's row is decided or
# at --max-rounds pairs.  The sequential test (`tracebench ab`'s always-valid
# mixture SPRT on the pairs' log ratios) keeps its error rates however often
# it looks; it cannot decide anything before five pairs at alpha 0.05.  A
# pair counts when BENCH has a figure on both sides (an `unsteady` run has
# none: its pair is booted again, three times a step at most; with --lava
# such a pair is compared as the runs that have one).  Its
# `verdict` decides: `regression` makes the candidate bad, `same` or
# `improvement` good; `undecided` at --max-rounds (or `inconclusive` with
# --fixed) stops the bisection with exit 4 and the range left, never a
# guess; `failed` or `missing` (BENCH failed or did not run) with exit 1.
# Its medians, pairs, ratio, p-value and interval are the evidence kept.
# With --fixed each step is exactly --rounds pairs and compare's
# fixed-sample paired t decides (with its MDE: `inconclusive` when it could
# not have seen the threshold).  The answer is the first bad kernel and the
# last good one before it; 1 + ceil(log2(candidates - 1)) steps of 2 boots a
# pair.  `same` means within --threshold: under TCG one boot of a kernel can
# measure 1.7x another boot of it, so look for large changes there (e.g.
# --threshold 4 for a planted 28x; tests/vm/bisect_kernels.sh).
#
# Options:
#   --rounds N          pairs of boots (one a side) before a step's first look,
#                       2..99 (default 3); with --fixed, the pairs of every step.
#   --max-rounds M      pairs at most per step, --rounds..99 (default 10).
#   --fixed             decide each step on exactly --rounds pairs with compare's
#                       fixed-sample paired t (no further pairs).
#   --threshold X, --alpha X   passed to `tracebench compare` (relative change
#                       below which a difference is `same`, 0..10; significance
#                       level, 0..1).
#   --inject-from KERNEL NAME=VALUE   calibration hook: the candidates at and after
#                       KERNEL boot with the companion module's parameter
#                       NAME=VALUE (`tracebench vm --kmod-param`), e.g.
#                       inject_delay_ns=100 plants a known regression of every
#                       kmod workload (kmod/README.md) to check that the
#                       bisection finds it (tests/vm/bisect_kernels.sh).
#                       Repeatable; never use it for a real bisection.
#   --install           apt-get install releases that are missing (image + headers).
#   --headers DIR       kernel headers for the candidates given as image paths.
#   --tracebench BIN    (default: build/bench/tracebench, else tracebench in PATH)
#   --outdir DIR        (default vm-bisect-<UTC time>)
#   --accel auto|kvm|tcg   (default auto: the first boot decides, every later
#                       boot uses the same, so no step compares TCG with KVM)
#   --timeout S         per boot (default 1800)
#   --lava IDENTITY     boot on a LAVA lab instead of this machine's qemu: the
#                       server of lavacli's identity IDENTITY
#                       (--lava-identity-file FILE, else
#                       $XDG_CONFIG_HOME/lavacli.yaml); each boot a LAVA job
#                       (`tracebench lava job|submit|wait|fetch`), and each step
#                       tests as many candidates at once as the server has idle
#                       devices (k-ary; scripts/lava/kary.sh says how).
#                       --lava-job-option OPT (repeatable) passes OPT to
#                       `tracebench lava job` (--smp=1, --boot-timeout=120s);
#                       --timeout S is then the wait allowed per job.  A job
#                       that did not pass is a failed boot (exit 1, LAVA's error
#                       in its lava.json).  The output is the same, with each
#                       boot's job, device and worker and each step's k in
#                       bisect.json (steps of k candidates share a number).
#
# Output: a line per step as it finishes and the step table at the end on
# stdout; DIR/bisect.json (candidates, steps with their evidence: reference,
# candidate, both sides' median ns and runs, ratio, p-value, verdict, the
# module parameters in effect, run directories; the answer: first_bad,
# last_good) and DIR/bisect.md.  Every boot is kept: DIR/stepK-<label>/G/roundI
# and C/roundI as `tracebench vm` leaves them, the runs linked into G/runs and
# C/runs and as pairs into G/pairs/pair-NNNN and C/pairs/pair-NNNN, the last
# comparison of the pairs in compare.json and compare.txt.  qemu never outlives
# a boot (`tracebench vm` kills it on every exit path); Ctrl-C or TERM stops
# the boot under way and the bisection.
#
# Exit status:
#   0    found: the first bad kernel (and the last good one) printed and in bisect.json
#   1    a boot or a run failed, BENCH failed in a run, or compare failed;
#        the steps done so far are in bisect.json
#   2    bad input, refused before anything boots (a BENCH the run arguments do
#        not produce is found after the first boot and refused then)
#   3    no regression: GOOD vs BAD is `same` or an `improvement`; nothing to bisect
#   4    undecided: a step's test could not decide within its pairs (--max-rounds;
#        `inconclusive` with --fixed); the range left and the evidence are kept
#   130  interrupted (INT, TERM, HUP): the VM was stopped; bisect.json says so
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
py=/usr/bin/python3
me=bisect-kernels
die() { echo "$me: $*" >&2; exit 2; }
cmdline=("$0" "$@")

tb="" outdir="" install=0 accel=auto timeout_s=1800 rounds=3 max_rounds=10 fixed=0 headers="" kernels="" kernels_file=""
threshold="" alpha="" lava="" lava_file=""
inject_from=() inject_param=() lava_job_opts=()
pos=()
need() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --tracebench) need "$@"; tb=$2; shift 2;;
    --outdir) need "$@"; outdir=$2; shift 2;;
    --install) install=1; shift;;
    --accel) need "$@"; accel=$2; shift 2;;
    --timeout) need "$@"; timeout_s=$2; shift 2;;
    --rounds) need "$@"; rounds=$2; shift 2;;
    --max-rounds) need "$@"; max_rounds=$2; shift 2;;
    --fixed) fixed=1; shift;;
    --headers) need "$@"; headers=$2; shift 2;;
    --kernels) need "$@"; kernels=$2; shift 2;;
    --kernels-file) need "$@"; kernels_file=$2; shift 2;;
    --threshold) need "$@"; threshold=$2; shift 2;;
    --alpha) need "$@"; alpha=$2; shift 2;;
    --lava) need "$@"; lava=$2; shift 2;;
    --lava-identity-file) need "$@"; lava_file=$2; shift 2;;
    --lava-job-option) need "$@"; lava_job_opts+=("$2"); shift 2;;
    --lava-job-option=?*) lava_job_opts+=("${1#--lava-job-option=}"); shift;;
    --inject-from)
      [ $# -ge 3 ] && [ -n "$2" ] && [ -n "$3" ] || die "--inject-from needs KERNEL NAME=VALUE"
      inject_from+=("$2"); inject_param+=("$3"); shift 3;;
    --) shift; break;;
    -*) die "unknown option '$1'";;
    *) pos+=("$1"); shift;;
  esac
done
run_args=("$@")

# --- Arguments ---------------------------------------------------------------
[ ${#pos[@]} -eq 3 ] || die "need BENCH GOOD BAD before -- (got ${#pos[@]} arguments: ${pos[*]:-none})"
bench=${pos[0]} good=${pos[1]} bad=${pos[2]}
[[ "$bench" =~ ^[A-Za-z0-9_]+/[A-Za-z0-9_]+/[A-Za-z0-9_]+/payload:[0-9]+/threads:[0-9]+(/gap_us:[0-9]+)?$ ]] ||
  die "BENCH '$bench' is not a benchmark name: TRACER/WORKLOAD/ACTION/payload:N/threads:N[/gap_us:N] (e.g. none/kmod_target/none/payload:0/threads:1)"
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] && [ "$rounds" -ge 2 ] || die "--rounds must be 2..99 (got '$rounds')"
[[ "$max_rounds" =~ ^[1-9][0-9]?$ ]] && [ "$max_rounds" -ge "$rounds" ] ||
  die "--max-rounds must be --rounds..99 (got '$max_rounds', --rounds $rounds)"
[ $fixed -eq 0 ] || max_rounds=$rounds
case "$accel" in auto|kvm|tcg) ;; *) die "--accel must be auto, kvm or tcg (got '$accel')";; esac
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] && [ "$timeout_s" -ge 10 ] && [ "$timeout_s" -le 86400 ] ||
  die "--timeout must be 10..86400 seconds (got '$timeout_s')"
[ -z "$threshold" ] || [[ "$threshold" =~ ^([0-9](\.[0-9]+)?|10(\.0*)?|\.[0-9]+)$ ]] ||
  die "--threshold must be a number in 0..10 (got '$threshold')"
[ -z "$alpha" ] || [[ "$alpha" =~ ^(0(\.[0-9]+)?|1(\.0*)?|\.[0-9]+)$ ]] || die "--alpha must be a number in 0..1 (got '$alpha')"
[ -z "$headers" ] || [ -f "$headers/Makefile" ] || die "--headers '$headers' is not a kernel build directory (no Makefile)"
[ -z "$kernels" ] || [ -z "$kernels_file" ] || die "give the candidates with --kernels or --kernels-file, not both"
if [ -n "$lava" ]; then
  [ "$accel" = auto ] || die "--accel with --lava: the LAVA device decides KVM or TCG (its device dictionary)"
  [ -z "$lava_file" ] || [ -f "$lava_file" ] || die "--lava-identity-file '$lava_file' is not a file"
else
  [ -z "$lava_file" ] && [ ${#lava_job_opts[@]} -eq 0 ] || die "--lava-identity-file and --lava-job-option need --lava IDENTITY"
fi
[ ${#run_args[@]} -gt 0 ] || die "need tracebench run arguments after -- (e.g. -- run --quick -t none -w kmod_target -p 0)"
[ "${run_args[0]}" = run ] || die "the guest command must be 'run ...' (got '${run_args[0]}')"
# The script names the guest's output (--out runs); BENCH's tracer and
# workload must be among those the run selects, when it selects.
sel_t=() sel_w=()
for ((i = 1; i < ${#run_args[@]}; ++i)); do
  a=${run_args[$i]} nxt=${run_args[$((i + 1))]:-}
  case "$a" in
    --) break;;
    --out|--out=*) die "run --out is set by $me (each boot's runs land in its own directory); leave it out";;
    --plan) die "run --plan runs nothing: nothing to bisect";;
    -t|--tracer) sel_t+=("$nxt");;
    --tracer=*) sel_t+=("${a#--tracer=}");;
    -w|--workload) sel_w+=("$nxt");;
    --workload=*) sel_w+=("${a#--workload=}");;
  esac
done
btracer=${bench%%/*} rest=${bench#*/}; bworkload=${rest%%/*}
if [ ${#sel_t[@]} -gt 0 ] && [[ " ${sel_t[*]} " != *" $btracer "* ]]; then
  die "BENCH's tracer '$btracer' is not among the run's tracers (-t ${sel_t[*]})"
fi
if [ ${#sel_w[@]} -gt 0 ] && [[ " ${sel_w[*]} " != *" $bworkload "* ]]; then
  die "BENCH's workload '$bworkload' is not among the run's workloads (-w ${sel_w[*]})"
fi
for p in "${inject_param[@]}"; do
  kmod_param_ok "$p" || die "--inject-from: '$p' is not a module parameter NAME=VALUE ($kmod_param_rule)"
done

# Designs that cannot decide whatever the kernels do.
if [ $fixed -eq 1 ] && [ "$rounds" -eq 2 ]; then
  echo "$me: note: --fixed with two pairs: the paired t has one degree of freedom and finds only large changes; 3 to 5 rounds are what it needs" >&2
elif [ $fixed -eq 0 ] && [ "$max_rounds" -lt 5 ]; then
  echo "$me: note: --max-rounds $max_rounds: the sequential test decides nothing before five pairs at alpha 0.05; every step will be undecided" >&2
fi

# --- The candidate list --------------------------------------------------------
# Release and flavour: 6.1.0-56-amd64 -> 6.1.0-56 amd64; 6.12.107+deb12-cloud-amd64 -> 6.12.107+deb12 cloud-amd64.
flavour_of() { [[ "$1" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?(-[0-9]+|\+deb[0-9]+)?-([a-z].*)$ ]] && echo "${BASH_REMATCH[3]}"; }
is_path() { [[ "$1" == */* ]] || [ -f "$1" ]; }
list=()
if [ -n "$kernels_file" ]; then
  [ -f "$kernels_file" ] && [ -r "$kernels_file" ] || die "--kernels-file '$kernels_file' is not a readable file"
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%#*}; line=$(echo "$line" | tr -d '[:space:]')
    [ -n "$line" ] && list+=("$line")
  done < "$kernels_file"
  [ ${#list[@]} -gt 0 ] || die "--kernels-file '$kernels_file' lists no kernel"
elif [ -n "$kernels" ]; then
  [[ "$kernels" != *,,* && "$kernels" != ,* && "$kernels" != *, ]] || die "--kernels '$kernels' has an empty entry"
  IFS=, read -r -a list <<< "$kernels"
else
  is_path "$good" || is_path "$bad" && die "GOOD and BAD are image paths: give the candidates with --kernels or --kernels-file"
  fl=$(flavour_of "$good")
  [ -n "$fl" ] || die "GOOD '$good' is not a Debian kernel release (like 6.1.0-47-amd64); give the candidates with --kernels"
  [ "$(flavour_of "$bad")" = "$fl" ] || die "GOOD '$good' and BAD '$bad' are not releases of the same flavour; give --kernels"
  mapfile -t list < <(
    { ls -1 /boot 2>/dev/null | sed -n 's/^vmlinuz-//p'
      apt-cache pkgnames linux-image- 2>/dev/null | sed 's/^linux-image-//'
      echo "$good"; echo "$bad"; } |
    while read -r r; do [ "$(flavour_of "$r")" = "$fl" ] && echo "$r"; done | sort -uV)
  # GOOD .. BAD in version order.
  keep=() on=0
  for k in "${list[@]}"; do
    [ "$k" = "$good" ] && on=1
    [ $on -eq 1 ] && keep+=("$k")
    [ "$k" = "$bad" ] && [ $on -eq 1 ] && break
  done
  [ ${#keep[@]} -ge 2 ] && [ "${keep[-1]}" = "$bad" ] || die "GOOD '$good' does not come before BAD '$bad' in version order"
  list=("${keep[@]}")
  echo "$me: candidates derived from /boot and apt (${#list[@]}): ${list[*]}" >&2
fi
n_all=${#list[@]}
# Labels: the release, or the image's file name (its path when two share a name).
labels=()
for ((i = 0; i < n_all; ++i)); do
  k=${list[$i]}
  [ -n "$k" ] || die "the candidate list has an empty entry"
  for ((j = 0; j < i; ++j)); do [ "${list[$j]}" = "$k" ] && die "kernel '$k' is listed twice"; done
  if is_path "$k"; then labels+=("$(basename "$k")"); else labels+=("$k"); fi
done
for ((i = 0; i < n_all; ++i)); do
  for ((j = 0; j < n_all; ++j)); do
    if [ $i -ne $j ] && [ "${labels[$i]}" = "${labels[$j]}" ]; then labels[$i]=${list[$i]}; fi
  done
done
index_of() {  # $1 = a list entry or a label; prints its index
  local i
  for ((i = 0; i < n_all; ++i)); do
    if [ "${list[$i]}" = "$1" ] || [ "${labels[$i]}" = "$1" ]; then echo $i; return 0; fi
  done
  return 1
}
gi=$(index_of "$good") || die "GOOD '$good' is not in the candidate list (${labels[*]})"
bi=$(index_of "$bad") || die "BAD '$bad' is not in the candidate list (${labels[*]})"
[ "$gi" -lt "$bi" ] || die "GOOD '$good' must come before BAD '$bad' in the candidate list (${labels[*]})"
inj_idx=()
for ((k = 0; k < ${#inject_from[@]}; ++k)); do
  x=$(index_of "${inject_from[$k]}") || die "--inject-from '${inject_from[$k]}' is not in the candidate list (${labels[*]})"
  inj_idx+=("$x")
done

# Per used candidate (GOOD .. BAD): image, release, headers, module parameters.
img=() rel=() hdr=() params=() needs_install=()
for ((i = gi; i <= bi; ++i)); do
  k=${list[$i]}
  if is_path "$k"; then
    [ -f "$k" ] || die "kernel image '$k' not found"
    [ -r "$k" ] || die "kernel image '$k' is not readable (Debian installs them 0600: run as root)"
    r=$(kernel_release "$k")
    h=$headers
    if [ -z "$h" ]; then
      [ -n "$r" ] || die "kernel image '$k': not a bzImage whose release can be read; pass --headers DIR"
      h=$(headers_for "$r")
      [ -n "$h" ] || die "kernel image '$k' (release $r): no headers in /usr/src/linux-headers-$r; apt-get install linux-headers-$r or pass --headers DIR"
    fi
    img[$i]=$k rel[$i]=$r hdr[$i]=$h needs_install[$i]=0
  else
    [[ "$k" =~ ^[A-Za-z0-9][A-Za-z0-9.+_-]*$ ]] || die "kernel '$k' is neither an image path nor a Debian release"
    img[$i]=/boot/vmlinuz-$k rel[$i]=$k hdr[$i]=""
    if [ -f "/boot/vmlinuz-$k" ] && [ -f "/usr/src/linux-headers-$k/Makefile" ]; then
      needs_install[$i]=0
    else
      apt-cache show "linux-image-$k" >/dev/null 2>&1 && apt-cache show "linux-headers-$k" >/dev/null 2>&1 ||
        die "unknown kernel '$k': not installed, and apt knows no linux-image-$k and linux-headers-$k (apt-get update?)"
      [ $install -eq 1 ] || die "kernel '$k' is not installed: apt-get install linux-image-$k linux-headers-$k (or pass --install)"
      needs_install[$i]=1
    fi
  fi
  # The calibration parameters: every --inject-from at or before i; a later
  # one with the same NAME wins.
  declare -A pv=() ; order=()
  for ((k2 = 0; k2 < ${#inject_from[@]}; ++k2)); do
    if [ "${inj_idx[$k2]}" -le "$i" ]; then
      nm=${inject_param[$k2]%%=*}
      [ -n "${pv[$nm]+x}" ] || order+=("$nm")
      pv[$nm]=${inject_param[$k2]#*=}
    fi
  done
  s=""
  for nm in "${order[@]}"; do s+="${s:+ }$nm=${pv[$nm]}"; done
  params[$i]=$s
  unset pv
done

if [ -z "$tb" ]; then
  for c in "$here/../../build/bench/tracebench" "$(command -v tracebench 2>/dev/null || true)"; do
    [ -n "$c" ] && [ -x "$c" ] && { tb=$c; break; }
  done
fi
[ -n "$tb" ] && [ -x "$tb" ] || die "no tracebench binary: build it (cmake --build build) or pass --tracebench"
[ -x "$py" ] || die "$py not found: apt-get install python3"
[ -n "$outdir" ] || outdir=vm-bisect-$(date -u +%Y%m%dT%H%M%SZ)
if [ -e "$outdir" ] && [ -n "$(ls -A "$outdir" 2>/dev/null)" ]; then
  die "--outdir '$outdir' exists and is not empty: give a new directory (every run of a bisection is kept there)"
fi
mkdir -p "$outdir" || die "cannot create --outdir '$outdir'"
outdir=$(cd "$outdir" && pwd)

# --- Running -------------------------------------------------------------------
t_start=$(date -u +%Y-%m-%dT%H:%M:%SZ) s_start=$SECONDS
mkdir -p "$outdir/.state"
{
  printf '%s\0' "${cmdline[@]}" > "$outdir/.state/cmdline"
  printf '%s\0' "${run_args[@]}" > "$outdir/.state/run_args"
  for ((i = gi; i <= bi; ++i)); do
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "${labels[$i]}" "${list[$i]}" "${img[$i]}" "${rel[$i]}" "${params[$i]}"
  done > "$outdir/.state/candidates.tsv"
}
compare_opts=()
[ $fixed -eq 1 ] || compare_opts+=(--sequential)
[ -n "$threshold" ] && compare_opts+=(--threshold "$threshold")
[ -n "$alpha" ] && compare_opts+=(--alpha "$alpha")

child="" interrupted=0
on_signal() {
  interrupted=1
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap on_signal INT TERM HUP

# bisect.json and bisect.md from the state; $1 = status, $2 = message.
finish() {
  local status=$1 msg=$2
  "$py" - "$outdir" "$status" "$msg" "$bench" "$rounds" "$accel" "$gi" "$bi" "$t_start" \
    "$((SECONDS - s_start))" "${threshold:-}" "${alpha:-}" "$max_rounds" "$fixed" "$lava" "$lava_file" \
    "${lava_job_opts[@]}" <<'PY' || echo "$me: writing bisect.json failed" >&2
import json, os, sys, datetime
out, status, msg, bench, rounds, accel, gi, bi, t_start, wall, thr, alpha, max_rounds, fixed, lava, lava_file = sys.argv[1:17]
lava_job_opts = sys.argv[17:]
st = os.path.join(out, ".state")
def nul(path):
    with open(path, "rb") as f:
        return [x.decode() for x in f.read().split(b"\0") if x]
cands = []
for line in open(os.path.join(st, "candidates.tsv")):
    i, label, given, image, release, params = line.rstrip("\n").split("\t")
    cands.append({"index": int(i), "label": label, "given": given, "image": image, "release": release or None,
                  "kmod_params": params.split() if params else []})
steps = []
d = os.path.join(st, "steps")
for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
    steps.append(json.load(open(os.path.join(d, f))))
ans = {}
if os.path.exists(os.path.join(st, "answer.json")):
    ans = json.load(open(os.path.join(st, "answer.json")))
label_of = {c["index"]: c for c in cands}
first_bad = label_of.get(ans.get("first_bad"))
last_good = label_of.get(ans.get("last_good"))
doc = {
    "tool": "scripts/vm/bisect-kernels.sh",
    "benchmark": bench,
    "status": status,
    "message": msg,
    "first_bad": first_bad["label"] if first_bad and status == "found" else None,
    "last_good": last_good["label"] if last_good and status == "found" else None,
    "first_bad_kernel": first_bad["image"] if first_bad and status == "found" else None,
    "last_good_kernel": last_good["image"] if last_good and status == "found" else None,
    "good": label_of[int(gi)]["label"],
    "bad": label_of[int(bi)]["label"],
    "rounds": int(rounds),
    "max_rounds": int(max_rounds),
    "design": "fixed" if fixed == "1" else "sequential",
    "accel": accel,
    "compare_options": {"threshold": float(thr) if thr else None, "alpha": float(alpha) if alpha else None},
    "command": nul(os.path.join(st, "cmdline")),
    "run_args": nul(os.path.join(st, "run_args")),
    "candidates": cands,
    "steps": steps,
    "started": t_start,
    "finished": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "wall_seconds": int(wall),
}
if lava:
    # Each boot a LAVA job; a step's records share its number, k and the jobs of each boot.
    doc["lava"] = {"identity": lava, "identity_file": lava_file or None, "job_options": lava_job_opts}
tmp = os.path.join(out, "bisect.json.tmp")
with open(tmp, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
os.replace(tmp, os.path.join(out, "bisect.json"))

def num(x, fmt):
    return "-" if x is None else format(x, fmt)
md = [f"# Kernel bisection: `{bench}`", ""]
md.append(f"Status: **{status}**. {msg}")
md.append("")
design = (f"exactly {rounds} pairs a step, compare's paired t" if fixed == "1" else
          f"{rounds} to {max_rounds} pairs a step until compare's sequential test decides")
md.append(f"Good `{doc['good']}`, bad `{doc['bad']}`; boots of the reference and the candidate as interleaved "
          f"pairs (ABBA), {design}; accel {accel}; {doc['wall_seconds']} s.")
md.append("")
md.append("| # | candidate | module parameters | vs reference | reference median ns (runs) | "
          "candidate median ns (runs) | ratio | p | test | verdict | kernel is | range left |")
md.append("|---:|---|---|---|---:|---:|---:|---:|---|---|---|---|")
for s in steps:
    md.append(f"| {s['step']} | `{s['candidate']}` | {' '.join(s['candidate_kmod_params']) or '-'} | "
              f"`{s['reference']}` | {num(s['a_median_ns'], '.2f')} ({s['a_runs']}) | "
              f"{num(s['b_median_ns'], '.2f')} ({s['b_runs']}) | {num(s['ratio'], '.3f')} | "
              f"{num(s['p_value'], '.3g')} | {s.get('method') or '-'} | {s['verdict']} | {s.get('decision', '-')} | {s.get('range_after', '-')} |")
md.append("")
if doc["first_bad"]:
    md.append(f"First bad kernel: **`{doc['first_bad']}`** ({doc['first_bad_kernel']}); "
              f"last good: `{doc['last_good']}` ({doc['last_good_kernel']}).")
    md.append("")
lava_steps = [s for s in steps if "jobs" in s]
if lava_steps:
    md.append(f"Boots as LAVA jobs (identity `{lava}`); a step tests k candidates at once, "
              "each against the reference as its own ABBA pairs:")
    md.append("")
    md.append("| # | k | idle devices | candidate | reference boots by device | candidate boots by device | jobs |")
    md.append("|---:|---:|---:|---|---|---|---|")
    by_dev = lambda d: ", ".join(f"{n}: {c}" for n, c in sorted(d.items())) or "-"
    for s in lava_steps:
        jobs = " ".join(f"{j['side']}{j['round']}:{j['job_id']}@{j['device']}" for j in s["jobs"])
        md.append(f"| {s['step']} | {s['k']} | {s['idle_devices']} | `{s['candidate']}` | {by_dev(s['devices']['G'])} | "
                  f"{by_dev(s['devices']['C'])} | {jobs} |")
    md.append("")
inj = [c for c in cands if c["kmod_params"]]
if inj:
    md.append("Calibration (`--inject-from`): " + ", ".join(f"`{c['label']}` boots with {' '.join(c['kmod_params'])}"
                                                       for c in inj) + ".")
    md.append("")
md.append("Candidates: " + ", ".join(f"`{c['label']}`" for c in cands) + ".")
md.append("")
md.append("Command: `" + " ".join(doc["command"]) + "`")
with open(os.path.join(out, "bisect.md"), "w") as f:
    f.write("\n".join(md) + "\n")
PY
}

fail() {  # $1 = exit status, $2 = status word, $3 = message
  # A child killed by the same Ctrl-C fails: the interruption is the news.
  if [ $interrupted -eq 1 ] && [ "$1" != 130 ]; then
    set -- 130 interrupted "interrupted: the boot under way was stopped"
  fi
  echo "$me: $3" >&2
  finish "$2" "$3"
  echo "$me: $outdir/bisect.json, $outdir/bisect.md" >&2
  exit "$1"
}
check_interrupt() {
  [ $interrupted -eq 1 ] || return 0
  local left
  left=$(pgrep -f "qemu-system.*$outdir/" 2>/dev/null | tr '\n' ' ')
  [ -z "$left" ] || echo "$me: warning: qemu still running after the interruption: pid $left" >&2
  fail 130 interrupted "interrupted: the boot under way was stopped${left:+ (but qemu is still running: pid $left)}"
}

# Installs a release the first time it is booted.
ensure_installed() {  # $1 = index
  local i=$1 k=${list[$1]}
  [ "${needs_install[$i]}" = 1 ] || return 0
  echo "$me: installing linux-image-$k linux-headers-$k" >&2
  # In the foreground: a TERM to this script waits for apt-get and dpkg to
  # finish rather than killing them half way.
  apt-get install -y --no-install-recommends "linux-image-$k" "linux-headers-$k" >&2
  rc=$?
  check_interrupt
  [ "$rc" -eq 0 ] || fail 1 failed "apt-get install linux-image-$k linux-headers-$k failed (status $rc)"
  needs_install[$i]=0
}

rc=0
wait_child() {
  wait "$child"; rc=$?
  while kill -0 "$child" 2>/dev/null; do wait "$child"; rc=$?; done
  child=""
}

# One boot of candidate $1 into directory $2 (a `tracebench vm` out dir).
first_boot=1
boot() {
  local i=$1 dir=$2 args p
  check_interrupt
  ensure_installed "$i"
  args=(vm --kernel "${img[$i]}" --accel "$accel" --timeout "$timeout_s" --out-dir "$dir")
  [ -n "${hdr[$i]}" ] && args+=(--headers "${hdr[$i]}")
  for p in ${params[$i]}; do args+=(--kmod-param "$p"); done
  echo "$me: boot ${labels[$i]}${params[$i]:+ (${params[$i]})} -> ${dir#"$outdir"/}" >&2
  "$tb" "${args[@]}" -- run --out runs "${run_args[@]:1}" > "$dir.log" 2>&1 &
  child=$!
  wait_child
  check_interrupt
  if [ "$rc" -ne 0 ]; then
    tail -n 25 "$dir.log" >&2
    fail 1 failed "the boot of ${labels[$i]} failed (status $rc); see $dir.log and $dir/"
  fi
  if [ $first_boot -eq 1 ]; then
    first_boot=0
    first_run_checks "$dir"
    if [ "$accel" = auto ]; then
      accel=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["accel"])' "$dir/vm.json" 2>/dev/null || echo auto)
      echo "$me: the first boot ran under $accel: every later boot uses --accel $accel" >&2
    fi
  fi
}

# The first run that came back (boot directory $1) must produce BENCH.
first_run_checks() {
  local dir=$1 res names
  res=$(ls -1 "$dir"/runs/*/result.json 2>/dev/null | head -1)
  [ -n "$res" ] || fail 1 failed "no result.json came back from the first boot ($dir)"
  names=$("$py" -c 'import json,sys; print("\n".join(b["name"] for b in json.load(open(sys.argv[1]))["benchmarks"]))' "$res")
  if ! grep -qxF "$bench" <<< "$names"; then
    echo "$me: the run produces: $(echo $names)" >&2
    fail 2 bad_input "BENCH '$bench' is not among the benchmarks the run arguments produce (listed above); nothing bisected"
  fi
}

# compare of a step's pairs so far: $1 = step number, $2 = its directory.
# Sets verdict to BENCH's (or "missing").
compare_step() {
  local k=$1 sd=$2
  if ! "$tb" compare --json "${compare_opts[@]}" "$sd/G/pairs" "$sd/C/pairs" > "$sd/compare.json" 2> "$sd/compare.err"; then
    cat "$sd/compare.err" >&2
    fail 1 failed "tracebench compare failed on step $k ($sd/compare.err)"
  fi
  "$tb" compare "${compare_opts[@]}" "$sd/G/pairs" "$sd/C/pairs" > "$sd/compare.txt" 2>/dev/null
  check_interrupt
  verdict=$("$py" -c 'import json,sys
rows = [r for r in json.load(open(sys.argv[1])).get("rows", []) if r.get("benchmark") == sys.argv[2]]
print(rows[0].get("verdict") or "missing" if rows else "missing")' "$sd/compare.json" "$bench")
}

# The evidence of one comparison (GOOD vs candidate $3) from its compare.json:
# a record in .state/steps (one per step; a LAVA step has one per candidate,
# $2 its slot, and $8 $9 the step's k and the idle devices seen).  Sets verdict.
record_step() {  # $1 = step, $2 = slot or "", $3 = candidate, $4 = kind, $5 = dir, $6 = seconds, $7 = pairs that count
  # ($10 = pairs booted, when some did not count)
  local k=$1 slot=$2 c=$3 kind=$4 sd=$5
  verdict=$("$py" - "$sd" "$bench" "$k" "$slot" "$kind" "${labels[$gi]}" "${labels[$c]}" "${params[$gi]}" "${params[$c]}" \
    "$outdir" "$6" "$7" "${8:-}" "${9:-}" "${10:-$7}" <<'PY'
import json, os, sys, glob
def record_name(k, slot):
    return "%03d.json" % int(k) if not slot else "%03d-%02d.json" % (int(k), int(slot))
sd, bench, k, slot, kind, ref, cand, ref_params, cand_params, out, secs, rounds, kk, idle, booted = sys.argv[1:16]
c = json.load(open(os.path.join(sd, "compare.json")))
rows = [r for r in c.get("rows", []) if r.get("benchmark") == bench]
if not rows:
    sys.stderr.write("no row for %s in %s (rows: %s)\n" % (bench, os.path.join(sd, "compare.json"),
                     ", ".join(r.get("benchmark", "?") for r in c.get("rows", []))))
    print("missing")
    sys.exit(0)
r = rows[0]
def get(*names):
    for n in names:
        if n in r:
            return r[n]
    return None
def in_effect(side):
    seen = []
    for f in sorted(glob.glob(os.path.join(sd, side, "round*", "kmod-params.txt"))):
        seen.append(" ".join(open(f).read().split()))
    return sorted(set(seen))
def runs(side):
    return sorted(os.path.relpath(os.path.realpath(p), out) for p in glob.glob(os.path.join(sd, side, "pairs", "*", "*")))
verdict = get("verdict") or "missing"
rec = {
    "step": int(k), "kind": kind, "reference": ref, "candidate": cand,
    "reference_kmod_params": ref_params.split(), "candidate_kmod_params": cand_params.split(),
    "kmod_params_in_effect": {"reference": in_effect("G"), "candidate": in_effect("C")},
    "rounds": int(rounds), "pairs_booted": int(booted), "sequential": get("sequential"),
    "a_median_ns": get("a_median_ns", "a_median"), "b_median_ns": get("b_median_ns", "b_median"),
    "a_runs": get("a_runs"), "b_runs": get("b_runs"), "a_n": get("a_n"), "b_n": get("b_n"),
    "ratio": get("ratio"), "p_value": get("p_value"), "verdict": verdict, "what": get("what"),
    "method": get("method"),
    "detail": get("detail") or "", "warnings": c.get("warnings", []),
    "dir": os.path.relpath(sd, out), "reference_runs": runs("G"), "candidate_runs": runs("C"),
    "compare_json": os.path.relpath(os.path.join(sd, "compare.json"), out),
    "seconds": int(secs),
}
if kk:
    # A LAVA step: k candidates at once, each boot a job.
    rec["k"], rec["idle_devices"] = int(kk), int(idle)
    rec["jobs"] = []
    for side in ("G", "C"):
        for f in sorted(glob.glob(os.path.join(sd, side, "round*", "lava.json")),
                        key=lambda f: int(os.path.basename(os.path.dirname(f))[5:])):
            j = json.load(open(f))
            rec["jobs"].append({"side": side, "round": int(os.path.basename(os.path.dirname(f))[5:]),
                                "job_id": j.get("job_id"), "job_url": j.get("job_url"), "device": j.get("device"),
                                "worker": j.get("worker"), "submit_time": j.get("submit_time"),
                                "start_time": j.get("start_time"), "end_time": j.get("end_time"),
                                "outcome": j.get("outcome")})
    rec["devices"] = {side: {} for side in ("G", "C")}
    for j in rec["jobs"]:
        d = rec["devices"][j["side"]]
        d[j["device"] or "?"] = d.get(j["device"] or "?", 0) + 1
os.makedirs(os.path.join(out, ".state", "steps"), exist_ok=True)
with open(os.path.join(out, ".state", "steps", record_name(k, slot)), "w") as f:
    json.dump(rec, f, indent=2)
print(verdict)
PY
  )
  [ -n "$verdict" ] || fail 1 failed "could not read $sd/compare.json"
}

# BENCH's status in the run a boot brought back ($1 = its round directory):
# ok, unsteady, error, ... or "missing".
bench_status() {
  "$py" - "$1" "$bench" <<'PY'
import glob, json, sys
found = glob.glob(sys.argv[1] + "/runs/*/result.json")
rows = [b for b in json.load(open(found[0])).get("benchmarks", []) if b.get("name") == sys.argv[2]] if found else []
print(rows[0].get("status") or "?" if rows else "missing")
PY
}

# A pair counts when BENCH has a figure on both sides.  A run measured on no
# one level of the clock (`unsteady`: under TCG the emulated clock can change
# level mid-run) has none; its pair is booted again, at most max_lost times a
# step.  Any other status goes to compare, which calls BENCH failed.
max_lost=3
pair_counts() {  # $1 = step, $2 = candidate index, $3 = step dir, $4 = round; sets lost
  local side st why=""
  for side in G C; do
    st=$(bench_status "$3/$side/round$4")
    [ "$st" = unsteady ] && why+="${why:+, }$([ $side = G ] && echo "${labels[$gi]}" || echo "${labels[$2]}")'s run is unsteady"
  done
  [ -z "$why" ] && return 0
  lost=$((lost + 1))
  echo "$me: step $1 (${labels[$2]}): pair $4 does not count ($why: no figure); booting another" >&2
  [ $lost -le $max_lost ] ||
    fail 1 failed "step $1 (${labels[$2]}): $lost pairs without a figure for BENCH ($3/*/round*): the runs are unsteady on this clock; longer runs (-n) or --accel kvm"
  return 1
}

# One comparison: reference GOOD (index gi) vs candidate $2; $1 = step number,
# $3 = kind (confirm|bisect), $4 = range before (text).  Sets verdict.
verdict=""
step() {
  local k=$1 c=$2 kind=$3 sd r t0=$SECONDS pairs=0 lost=0 booted=0
  sd=$outdir/step$k-$(printf '%s' "${labels[$c]}" | tr -c 'A-Za-z0-9._+-' '_')
  mkdir -p "$sd/G/runs" "$sd/C/runs" "$sd/G/pairs" "$sd/C/pairs"
  for ((r = 1; pairs < max_rounds; ++r)); do
    local order=(G C)
    [ $((r % 2)) -eq 0 ] && order=(C G)  # ABBA: a drift linear over two pairs cancels
    booted=$r
    for side in "${order[@]}"; do
      local i=$gi; [ $side = C ] && i=$c
      boot "$i" "$sd/$side/round$r"
      link_runs "$sd/$side/round$r" "$sd/$side/runs"
      link_pair "$sd/$side/round$r" "$sd/$side/pairs" "$r" || fail 1 failed "boot $sd/$side/round$r did not leave one run"
    done
    pair_counts "$k" "$c" "$sd" "$r" || continue
    pairs=$((pairs + 1))
    [ "$pairs" -ge "$rounds" ] || continue
    compare_step "$k" "$sd"
    [ "$verdict" = undecided ] || break
    echo "$me: step $k (${labels[$c]}): undecided after $pairs pair(s)" >&2
  done
  record_step "$k" "" "$c" "$kind" "$sd" "$((SECONDS - t0))" "$pairs" "" "" "$booted"
}

# Updates the last step record with the decision and the range left, prints its line.
decide() {  # $1 = step (K, or K-J for slot J of a LAVA step), $2 = decision (good|bad), $3 = range text
  "$py" - "$outdir" "$1" "$2" "$3" <<'PY'
import json, os, sys
out, k, decision, rng = sys.argv[1:5]
p = os.path.join(out, ".state", "steps", "-".join("%03d" % int(x) if i == 0 else "%02d" % int(x)
                                                  for i, x in enumerate(k.split("-"))) + ".json")
s = json.load(open(p))
s["decision"], s["range_after"] = decision, rng
json.dump(s, open(p, "w"), indent=2)
PY
}

row_line() {  # the step table's line for step $1 (K or K-J), its header, or all lines
  "$py" - "$outdir" "$1" <<'PY'
import json, os, sys
out, k = sys.argv[1:3]
w = max([9] + [len(l.split("\t")[1]) for l in open(os.path.join(out, ".state", "candidates.tsv"))])
if k == "header":
    print(f"{'step':>4}  {'candidate':<{w}}  {'reference':<{w}}  {'ref ns':>9} {'runs':>4}  {'cand ns':>9} {'runs':>4}  "
          f"{'ratio':>7}  {'p':>8}  {'verdict':<11} {'is':<5} range left")
    sys.exit(0)
d = os.path.join(out, ".state", "steps")
names = sorted(os.listdir(d)) if k == "all" else \
    ["-".join("%03d" % int(x) if i == 0 else "%02d" % int(x) for i, x in enumerate(k.split("-"))) + ".json"]
f = lambda x, fm: "-" if x is None else format(x, fm)
for name in names:
  s = json.load(open(os.path.join(d, name)))
  print(f"{s['step']:>4}  {s['candidate']:<{w}}  {s['reference']:<{w}}  {f(s['a_median_ns'], '.2f'):>9} {f(s['a_runs'], 'd'):>4}  "
      f"{f(s['b_median_ns'], '.2f'):>9} {f(s['b_runs'], 'd'):>4}  {f(s['ratio'], '.3f'):>7}  {f(s['p_value'], '.2g'):>8}  "
      f"{s['verdict']:<11} {s.get('decision', '-'):<5} {s.get('range_after', '')}")
PY
}

# The answer (lo = last good, hi = first bad, k steps taken): the state, the
# evidence files, the table and the line scripts read; exit 0.
found() {
  printf '{"first_bad": %d, "last_good": %d}\n' "$hi" "$lo" > "$outdir/.state/answer.json"
  msg="first bad kernel: ${labels[$hi]} (${img[$hi]}); last good: ${labels[$lo]} (${img[$lo]}); $((k + 1)) steps, $((SECONDS - s_start)) s"
  finish found "$msg"
  echo
  row_line header
  row_line all
  echo
  echo "$me: $msg"
  echo "$me: evidence in $outdir/bisect.json and $outdir/bisect.md"
  exit 0
}

echo "$me: $bench: GOOD ${labels[$gi]}, BAD ${labels[$bi]}, $((bi - gi + 1)) candidates, $rounds..$max_rounds pair(s) of boots a step" >&2
if [ -n "$lava" ]; then
  # The boots as LAVA jobs, k candidates a step (scripts/lava/kary.sh).
  accel=lava
  . "$here/../lava/kary.sh"
  lava_bisect
  found
fi
# Step 0: GOOD vs BAD must be a regression.
step 0 "$bi" confirm
row_line header
case "$verdict" in
  regression) decide 0 bad "${labels[$gi]}..${labels[$bi]}"; row_line 0;;
  failed|missing)
    decide 0 - "-"; row_line 0
    fail 1 failed "BENCH $verdict in the GOOD vs BAD comparison (see $outdir/step0-*/compare.txt)";;
  undecided|inconclusive)
    decide 0 - "${labels[$gi]}..${labels[$bi]}"; row_line 0
    fail 4 undecided "GOOD ${labels[$gi]} vs BAD ${labels[$bi]} is $verdict after $max_rounds pair(s) (see $outdir/step0-*/compare.txt): more --max-rounds, a larger --threshold, or a quieter host";;
  *)
    decide 0 good "-"; row_line 0
    fail 3 no_regression "no regression of $bench between GOOD ${labels[$gi]} and BAD ${labels[$bi]} (verdict: $verdict); nothing to bisect";;
esac
lo=$gi hi=$bi k=0
while [ $((hi - lo)) -gt 1 ]; do
  k=$((k + 1))
  mid=$(((lo + hi) / 2))
  step $k "$mid" bisect
  case "$verdict" in
    regression) hi=$mid; d=bad;;
    failed|missing)
      decide $k - "${labels[$lo]}..${labels[$hi]}"; row_line $k
      fail 1 failed "BENCH $verdict on ${labels[$mid]} (see its compare.txt)";;
    undecided|inconclusive)
      decide $k - "${labels[$lo]}..${labels[$hi]}"; row_line $k
      fail 4 undecided "${labels[$mid]} is $verdict after $max_rounds pair(s): the first bad kernel is in ${labels[$lo]}..${labels[$hi]} (exclusive..inclusive); more --max-rounds, a larger --threshold, or a quieter host";;
    same|improvement) lo=$mid; d=good;;
    *) fail 1 failed "unknown verdict '$verdict' on ${labels[$mid]}";;
  esac
  decide $k $d "${labels[$lo]}..${labels[$hi]}"
  row_line $k
done
found
