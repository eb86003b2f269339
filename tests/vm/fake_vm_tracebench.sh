#!/bin/bash
# tracebench with `vm` simulated on the host, for the tests of the scripts that
# boot kernels (bisect_simulated.sh, compare_sequential.sh): a boot is a run
# of the real tracebench ($REAL_TB) here, its known answer the `none`
# tracer's injected cost: a module parameter inject_delay_ns=N becomes
# none.inject_cycles=300N, and a kernel image whose text holds a line
# `inject_cycles=N` adds N.  Boots are counted in $BOOTS; those listed in
# $UNSTEADY_BOOTS come back with the benchmark marked unsteady, as a guest's
# run does when its clock changed level.  `lava job|submit|wait|fetch` are a
# LAVA server simulated the same way (a job file names the kernel's cycles and
# the run; a job runs when it is fetched; ids count from 1 in $BOOTS.jobs/).
# Every other command is the real one.

# The cycles a kernel image plants: its line inject_cycles=N, else 0.
kernel_cycles() {
  local k
  k=$(sed -n 's/^inject_cycles=\([0-9]*\)$/\1/p' "$1" 2>/dev/null | head -1)
  echo "${k:-0}"
}

if [ "$1" = lava ]; then
  sub=$2
  shift 2
  jobs_dir=$BOOTS.jobs
  mkdir -p "$jobs_dir"
  case "$sub" in
    job)  # --kernel K ... --out FILE ... -- run ARGS
      out="" cycles=0
      while [ $# -gt 0 ] && [ "$1" != -- ]; do
        case "$1" in
          --kernel) cycles=$(kernel_cycles "$2"); shift 2;;
          --out) out=$2; shift 2;;
          --*=*) shift;;
          *) shift 2;;
        esac
      done
      shift
      { echo "$cycles"; printf '%s\n' "$@"; } > "$out";;
    submit)  # [-i ID] [--identity-file F] JOB...
      while [[ "$1" == -* ]]; do shift 2; done
      for f in "$@"; do
        id=$(($(ls "$jobs_dir" | wc -l) + 1))
        cp "$f" "$jobs_dir/$id"
        echo "$id"
      done;;
    wait) ;;
    fetch)  # [-i ID] [--identity-file F] JOB DIR: the job's run, as the guest's /results
      while [[ "$1" == -* ]]; do shift 2; done
      mapfile -t job < "$jobs_dir/$1"
      mkdir -p "$2" && cd "$2" || exit 1
      n=$(($(cat "$BOOTS" 2>/dev/null || echo 0) + 1)); echo $n > "$BOOTS"
      echo "{\"job_id\": $1}" > lava.json
      "$REAL_TB" "${job[@]:1}" -o none.inject_cycles="${job[0]}" > /dev/null || exit;;
    *) echo "fake lava: no $sub" >&2; exit 2;;
  esac
  exit 0
fi
[ "$1" = vm ] || exec "$REAL_TB" "$@"
shift
out="" cycles=0 params=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out-dir) out=$2; shift 2;;
    --kernel)
      cycles=$((cycles + $(kernel_cycles "$2"))); shift 2;;
    --kmod-param) params+=("$2"); [[ "$2" == inject_delay_ns=* ]] && cycles=$((cycles + ${2#*=} * 300)); shift 2;;
    --) shift; break;;
    *) shift 2;;
  esac
done
[ "$1" = run ] || { echo "fake vm: want 'run' after --" >&2; exit 2; }
shift
mkdir -p "$out" && cd "$out" || exit 1
n=$(($(cat "$BOOTS" 2>/dev/null || echo 0) + 1)); echo $n > "$BOOTS"
echo '{"accel": "tcg"}' > vm.json
echo "inject_delay_ns=${params[0]#*=}" | sed 's/=$/=0/' > kmod-params.txt
"$REAL_TB" run "$@" -o none.inject_cycles=$cycles || exit
[[ " ${UNSTEADY_BOOTS:-} " == *" $n "* ]] || exit 0
/usr/bin/python3 - runs/*/result.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for b in r["benchmarks"]:
    # What a run writes when its repetitions held no one level: the shift, no figure.
    o = b.pop("overhead_cycles_per_event")["median"]
    b.pop("overhead_ns_per_event")
    b["status"] = "unsteady"
    b["level_shifts"] = [{"repetitions_left_out": 0, "before_cycles": o, "after_cycles": 2 * o}]
    b["left_out_overheads_cycles"] = []
json.dump(r, open(sys.argv[1], "w"))
PY
