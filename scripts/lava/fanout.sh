# Sourced by scripts/vm/compare-kernels.sh --lava: the boots of a comparison
# as LAVA jobs on a LAVA server, fanned out over the lab's idle devices.
#
# Uses the caller's $tb (tracebench), $outdir, $lava (lavacli identity),
# $lava_file (its file, or empty), $lava_job_opts (more options of `tracebench
# lava job`: --smp 1, --boot-timeout 90s, ...), $timeout_s (per boot: the wait
# allows it for each job, as the jobs may queue for one device), $pairs_ok and
# its collect SIDE DIR ROUND (which links a boot's runs into the side's runs/
# and pairs/).  `fetch ID DIR` rebuilds the guest's /results in DIR, so the
# run of `run --out runs` is DIR/runs/<run id>/, where collect looks.
#
# One job per kernel (`tracebench lava job`: the kernel, an initramfs with
# tracebench and the companion module built for it, the run as a LAVA test),
# submitted once per round and side in ABBA order (A B, B A, A B, ...): the
# scheduler hands jobs to idle devices in the order they came, so with two
# devices a pair runs side by side and each kernel lands on each device as
# often as the other, and a device's own drift does not fall on one side.
# The first --rounds rounds go as one batch; a sequential A/B (--max-rounds)
# then submits one round (two jobs) at a time until it is decided.
# Every job is waited for and fetched; a job that did not pass (LAVA's
# verdict: boot failure, timeout, infrastructure error, a failed
# verification) is reported with its lava.json and never collected as a run.

# tracebench lava SUBCOMMAND with the identity.
lava_cli() {
  local sub=$1
  shift
  local id=(-i "$lava")
  [ -n "$lava_file" ] && id+=(--identity-file "$lava_file")
  "$tb" lava "$sub" "${id[@]}" "$@"
}

# lava_write_jobs KERNEL_A KERNEL_B RUN-ARGS...: the two jobs (each builds
# the module and an initramfs for its kernel), written side by side into
# $outdir/<side>/job.yaml; 1 when either could not be made.
lava_write_jobs() {
  local ka=$1 kb=$2
  shift 2
  local art=$outdir/lava-artifacts side k i pids=() bad=0
  mkdir -p "$art"
  for side in A B; do
    k=$ka
    [ $side = B ] && k=$kb
    "$tb" lava job --kernel "$k" --artifacts "$art" --out "$outdir/$side/job.yaml" \
      --job-name "compare-kernels $side $(basename "$k")" "${lava_job_opts[@]}" -- run --out runs "$@" >&2 &
    pids+=($!)
  done
  for i in 0 1; do
    if ! wait "${pids[$i]}"; then
      echo "compare-kernels: tracebench lava job failed for $([ $i -eq 0 ] && echo "$ka" || echo "$kb") (above)" >&2
      bad=1
    fi
  done
  return $bad
}

# lava_rounds FIRST LAST: rounds FIRST..LAST of both sides as one batch of
# jobs (the jobs lava_write_jobs wrote), submitted in ABBA order, waited
# for, fetched and collected; 1 when a job could not be submitted or did
# not pass.
lava_rounds() {
  local first=$1 last=$2 side r i
  local jobs=() sides=() rounds_of=() ids=()
  for ((r = first; r <= last; ++r)); do
    local order=(A B)
    [ $((r % 2)) -eq 0 ] && order=(B A)
    for side in "${order[@]}"; do
      jobs+=("$outdir/$side/job.yaml")
      sides+=("$side")
      rounds_of+=("$r")
    done
  done
  mapfile -t ids < <(lava_cli submit "${jobs[@]}")
  if [ ${#ids[@]} -ne ${#jobs[@]} ]; then
    echo "compare-kernels: the LAVA server took ${#ids[@]} of ${#jobs[@]} jobs (ids: ${ids[*]:-none})" >&2
    return 1
  fi
  echo "compare-kernels: LAVA jobs ${ids[*]} (rounds $first-$last, ${#ids[@]} boots: ${sides[*]})" >&2
  # Non-zero when a job did not pass: each is fetched and judged below.
  lava_cli wait --timeout $((timeout_s * ${#ids[@]})) "${ids[@]}" >&2
  local failed=0 dir
  for i in "${!ids[@]}"; do
    dir=$outdir/${sides[$i]}/round${rounds_of[$i]}
    if ! lava_cli fetch "${ids[$i]}" "$dir" >&2; then
      echo "compare-kernels: LAVA job ${ids[$i]} (${sides[$i]}, round ${rounds_of[$i]}) did not pass (LAVA's error above):" \
        "none of its figures is used; $dir/lava.json" >&2
      failed=1
      pairs_ok=0
      continue
    fi
    collect "${sides[$i]}" "$dir" "${rounds_of[$i]}"
  done
  return $failed
}
