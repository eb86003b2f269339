# Sourced by scripts/vm/bisect-kernels.sh --lava: k-ary kernel bisection
# whose boots are LAVA jobs, as many candidates tested at once as the lab's
# idle devices can boot side by side as pairs.
#
# Uses the caller's state and helpers: $tb, $outdir, $me, $lava, $lava_file,
# $lava_job_opts, $timeout_s (per job), $rounds, $max_rounds, $fixed, $gi,
# $bi, labels[], img[], hdr[], params[], run_args[]; fail, check_interrupt,
# wait_child (with $child, $rc), first_run_checks, compare_step (sets
# $verdict), record_step, decide, row_line, link_runs, link_pair; and
# lava_cli from fanout.sh.
#
# A step.  With D idle devices (`tracebench lava devices --idle`: the REST
# API's /devices/ and /workers/, Idle, health Good or Unknown, worker online),
# k = min(max(1, floor(D / 2)), candidates left inside the range) split
# points cut the range into k + 1 near-equal parts (lo + floor(j (hi - lo) /
# (k + 1)), j = 1..k; k = 1 is the middle, as the binary search takes it).
# D / 2: a candidate's pair is two boots side by side, so D devices run D / 2
# candidates' pairs at once; k = D would queue half of each round and, on two
# devices, cost more boots than binary search for no fewer rounds (measured:
# results/vm/lava-bisect-2026-11-28.md).  Each candidate is
# compared with GOOD as ABBA pairs of its own: round r of candidate j is
# G C when r + j is even, else C G, and every round of every candidate is
# submitted in that order, so the devices take a pair's two boots side by
# side (the drift they share cancels in the pair's ratio).  Which idle device
# takes a job is LAVA's choice, at random (its scheduler orders the idle
# devices with order_by("?")): a device's own offset then falls on either side
# of a pair with equal chance, noise in the pairs' log ratios that the test
# accounts for rather than a bias (the devices each boot ran on are kept in
# bisect.json).  The first --rounds rounds go in one
# batch, then one round at a time for the candidates still undecided, each
# judged by `compare --sequential` after every round from the --rounds'th, as
# a local step is.  A candidate stops getting pairs once it is decided, or
# once the others decided make its answer irrelevant (a bad candidate below
# it, a good one above it).  The range narrows to between the last good
# candidate below the first bad one; an undecided candidate still inside it
# stops the bisection (exit 4) with that range.

. "$here/../lava/fanout.sh"

lava_dtype=qemu
for o in "${lava_job_opts[@]}"; do
  case "$o" in --device-type=*) lava_dtype=${o#--device-type=};; esac
done

# lava_idle: the number of devices a job could start on now (at least 1:
# with none idle the jobs queue, one candidate at a time); lava_idle_seen:
# as the server said it.
lava_idle_devices() {
  local f=$outdir/.state/lava-devices.txt
  lava_cli devices --idle --device-type "$lava_dtype" > "$f" ||
    fail 1 failed "could not read the LAVA server's devices (tracebench lava devices, above)"
  lava_idle_seen=$(grep -c . "$f")
  lava_idle=$((lava_idle_seen >= 1 ? lava_idle_seen : 1))
}

# The job file of candidate $1 ($outdir/lava-jobs/<label>.yaml), written once.
lava_job_file() {
  printf '%s/lava-jobs/%s.yaml' "$outdir" "$(printf '%s' "${labels[$1]}" | tr -c 'A-Za-z0-9._+-' '_')"
}

# Writes the jobs of candidates $@ not written yet, side by side (each builds
# the companion module and an initramfs for its kernel and parameters).
lava_write_jobs() {
  local i todo=()
  for i in "$@"; do [ -f "$(lava_job_file "$i")" ] || todo+=("$i"); done
  [ ${#todo[@]} -gt 0 ] || return 0
  for i in "${todo[@]}"; do ensure_installed "$i"; done
  mkdir -p "$outdir/lava-jobs" "$outdir/lava-artifacts"
  (
    trap 'kill -TERM $(jobs -p) 2>/dev/null; exit 143' TERM INT HUP
    for i in "${todo[@]}"; do
      args=(lava job --kernel "${img[$i]}" --artifacts "$outdir/lava-artifacts" --out "$(lava_job_file "$i")"
            --job-name "bisect-kernels ${labels[$i]}${params[$i]:+ (${params[$i]})}")
      [ -n "${hdr[$i]}" ] && args+=(--modules-from "${hdr[$i]}")
      for p in ${params[$i]}; do args+=(--kmod-param "$p"); done
      echo "$me: writing the LAVA job of ${labels[$i]}${params[$i]:+ (${params[$i]})}" >&2
      "$tb" "${args[@]}" "${lava_job_opts[@]}" -- run --out runs "${run_args[@]:1}" > "$(lava_job_file "$i").log" 2>&1 &
    done
    st=0
    for p in $(jobs -p); do wait "$p" || st=1; done
    exit $st
  ) &
  child=$!
  wait_child
  check_interrupt
  if [ "$rc" -ne 0 ]; then
    for i in "${todo[@]}"; do
      [ -f "$(lava_job_file "$i")" ] || { tail -n 15 "$(lava_job_file "$i").log" >&2; rm -f "$(lava_job_file "$i")"; }
    done
    fail 1 failed "tracebench lava job failed (above; $outdir/lava-jobs/*.log)"
  fi
}

# Submits the boots listed in lava_q_* (job file, side, step dir, round),
# waits for them, fetches each into DIR/SIDE/roundR and links its run.
lava_first=1
lava_run_batch() {
  local ids=() i dir
  mapfile -t ids < <(lava_cli submit "${lava_q_job[@]}")
  [ ${#ids[@]} -eq ${#lava_q_job[@]} ] ||
    fail 1 failed "the LAVA server took ${#ids[@]} of ${#lava_q_job[@]} jobs (ids: ${ids[*]:-none})"
  echo "$me: LAVA jobs ${ids[*]}" >&2
  lava_cli wait --timeout $((timeout_s * ${#ids[@]})) "${ids[@]}" >&2 &
  child=$!
  wait_child
  [ $interrupted -eq 0 ] || echo "$me: LAVA jobs ${ids[*]} go on on the server (cancel them there if need be)" >&2
  check_interrupt
  for i in "${!ids[@]}"; do
    dir=${lava_q_dir[$i]}/${lava_q_side[$i]}/round${lava_q_round[$i]}
    if ! lava_cli fetch "${ids[$i]}" "$dir" > "$dir.fetch.log" 2>&1; then
      grep -v '^ ' "$dir.fetch.log" | tail -n 8 >&2
      fail 1 failed "LAVA job ${ids[$i]} (${lava_q_side[$i]} of ${lava_q_dir[$i]##*/}, round ${lava_q_round[$i]}) did not pass; none of its figures is used: $dir/lava.json"
    fi
    link_runs "$dir" "${lava_q_dir[$i]}/${lava_q_side[$i]}/runs"
    link_pair "$dir" "${lava_q_dir[$i]}/${lava_q_side[$i]}/pairs" "${lava_q_round[$i]}" ||
      fail 1 failed "job ${ids[$i]} ($dir) did not bring back one run"
    if [ $lava_first -eq 1 ]; then
      lava_first=0
      first_run_checks "$dir"
    fi
  done
}

# One step: GOOD against the candidates $4... at once; $1 = step, $2 = kind
# (confirm|bisect), $3 = the idle devices seen.  Sets lava_verdict[j] and
# lava_cand[j] (j = 1..k).
lava_step() {
  local k=$1 kind=$2 idle=$3
  shift 3
  local n=$# j r rr side first last t0=$SECONDS sd
  lava_cand=() lava_verdict=() lava_dir=() lava_pairs=()
  for ((j = 1; j <= n; ++j)); do
    lava_cand[$j]=${!j}
    sd=$outdir/step$k-$(printf '%s' "${labels[${lava_cand[$j]}]}" | tr -c 'A-Za-z0-9._+-' '_')
    lava_dir[$j]=$sd lava_verdict[$j]=undecided lava_pairs[$j]=0
    mkdir -p "$sd/G/runs" "$sd/C/runs" "$sd/G/pairs" "$sd/C/pairs"
  done
  lava_write_jobs "$gi" "${lava_cand[@]}"
  echo "$me: step $k: $n candidate(s) at once (${idle} idle device(s)): $(for ((j = 1; j <= n; ++j)); do printf '%s ' "${labels[${lava_cand[$j]}]}"; done)" >&2
  local active=()
  for ((j = 1; j <= n; ++j)); do active+=("$j"); done
  r=0
  while [ ${#active[@]} -gt 0 ] && [ "$r" -lt "$max_rounds" ]; do
    first=$((r + 1))
    last=$([ "$r" -eq 0 ] && echo "$rounds" || echo $((r + 1)))
    lava_q_job=() lava_q_side=() lava_q_dir=() lava_q_round=()
    for ((rr = first; rr <= last; ++rr)); do
      for j in "${active[@]}"; do
        local order=(G C)
        [ $(((rr + j) % 2)) -eq 1 ] && order=(C G)
        for side in "${order[@]}"; do
          local i=$gi
          [ "$side" = C ] && i=${lava_cand[$j]}
          lava_q_job+=("$(lava_job_file "$i")") lava_q_side+=("$side") lava_q_dir+=("${lava_dir[$j]}") lava_q_round+=("$rr")
        done
      done
    done
    lava_run_batch
    r=$last
    [ "$r" -ge "$rounds" ] || continue
    local still=()
    for j in "${active[@]}"; do
      compare_step "$k" "${lava_dir[$j]}"
      lava_verdict[$j]=$verdict lava_pairs[$j]=$r
      case "$verdict" in
        undecided) still+=("$j");;
        failed|missing) return 0;;
      esac
    done
    # Only candidates whose answer can still move the range get more pairs
    # (the confirm step's one, BAD, always).
    lava_bounds
    active=()
    for j in "${still[@]}"; do
      if [ "$kind" = confirm ] || { [ "${lava_cand[$j]}" -gt "$lava_lo" ] && [ "${lava_cand[$j]}" -lt "$lava_hi" ]; }; then
        active+=("$j")
        echo "$me: step $k (${labels[${lava_cand[$j]}]}): undecided after $r pair(s)" >&2
      else
        echo "$me: step $k (${labels[${lava_cand[$j]}]}): undecided after $r pair(s), no longer needed" >&2
      fi
    done
  done
  for ((j = 1; j <= n; ++j)); do
    record_step "$k" "$j" "${lava_cand[$j]}" "$kind" "${lava_dir[$j]}" "$((SECONDS - t0))" "${lava_pairs[$j]}" "$n" "$idle"
    lava_verdict[$j]=$verdict
  done
}

# The range the step's verdicts leave: lava_hi the first bad candidate (else
# the step's hi), lava_lo the last good one below it (else the step's lo).
lava_bounds() {
  local j c
  lava_hi=$hi lava_lo=$lo
  for ((j = 1; j <= ${#lava_cand[@]}; ++j)); do
    c=${lava_cand[$j]}
    [ "${lava_verdict[$j]}" = regression ] && [ "$c" -lt "$lava_hi" ] && lava_hi=$c
  done
  for ((j = 1; j <= ${#lava_cand[@]}; ++j)); do
    c=${lava_cand[$j]}
    case "${lava_verdict[$j]}" in
      same|improvement) [ "$c" -lt "$lava_hi" ] && [ "$c" -gt "$lava_lo" ] && lava_lo=$c;;
    esac
  done
  return 0
}

# How many candidates a step tests: $1 = idle devices, $2 = candidates
# inside the range.
lava_k() {
  local k=$(($1 / 2))
  [ $k -ge 1 ] || k=1
  echo $((k < $2 ? k : $2))
}

# The split points of (lo, hi) for k = $1.
lava_points() {  # $1 = k
  local kk=$1 j p last=$lo pts=()
  for ((j = 1; j <= kk; ++j)); do
    p=$((lo + j * (hi - lo) / (kk + 1)))
    [ "$p" -le "$last" ] && p=$((last + 1))
    [ "$p" -lt "$hi" ] || break
    pts+=("$p") last=$p
  done
  echo "${pts[@]}"
}

# The whole bisection on the lab: the confirm step (GOOD vs BAD, its pairs
# over the devices), then k-ary steps.  Sets lo, hi, k for the answer, or
# ends the script as the local bisection does.
lava_bisect() {
  local j c d inside kk pts
  lo=$gi hi=$bi k=0
  lava_idle_devices
  lava_step 0 confirm "$lava_idle_seen" "$bi"
  row_line header
  case "${lava_verdict[1]}" in
    regression) decide 0-1 bad "${labels[$gi]}..${labels[$bi]}"; row_line 0-1;;
    failed|missing)
      decide 0-1 - "-"; row_line 0-1
      fail 1 failed "BENCH ${lava_verdict[1]} in the GOOD vs BAD comparison (see $outdir/step0-*/compare.txt)";;
    undecided|inconclusive)
      decide 0-1 - "${labels[$gi]}..${labels[$bi]}"; row_line 0-1
      fail 4 undecided "GOOD ${labels[$gi]} vs BAD ${labels[$bi]} is ${lava_verdict[1]} after $max_rounds pair(s) (see $outdir/step0-*/compare.txt): more --max-rounds, a larger --threshold, or a quieter host";;
    *)
      decide 0-1 good "-"; row_line 0-1
      fail 3 no_regression "no regression of $bench between GOOD ${labels[$gi]} and BAD ${labels[$bi]} (verdict: ${lava_verdict[1]}); nothing to bisect";;
  esac
  while [ $((hi - lo)) -gt 1 ]; do
    k=$((k + 1))
    lava_idle_devices
    inside=$((hi - lo - 1))
    kk=$(lava_k "$lava_idle" "$inside")
    read -r -a pts <<< "$(lava_points "$kk")"
    lava_step "$k" bisect "$lava_idle_seen" "${pts[@]}"
    for ((j = 1; j <= ${#pts[@]}; ++j)); do
      case "${lava_verdict[$j]}" in
        failed|missing)
          decide "$k-$j" - "${labels[$lo]}..${labels[$hi]}"; row_line "$k-$j"
          fail 1 failed "BENCH ${lava_verdict[$j]} on ${labels[${lava_cand[$j]}]} (see its compare.txt)";;
        regression|same|improvement|undecided|inconclusive) ;;
        *) fail 1 failed "unknown verdict '${lava_verdict[$j]}' on ${labels[${lava_cand[$j]}]}";;
      esac
    done
    lava_bounds
    local stuck=""
    for ((j = 1; j <= ${#pts[@]}; ++j)); do
      c=${lava_cand[$j]}
      case "${lava_verdict[$j]}" in
        regression) d=bad;;
        same|improvement) d=good;;
        *) d=-; [ "$c" -gt "$lava_lo" ] && [ "$c" -lt "$lava_hi" ] && stuck+="${stuck:+, }${labels[$c]}";;
      esac
      decide "$k-$j" "$d" "${labels[$lava_lo]}..${labels[$lava_hi]}"
      row_line "$k-$j"
    done
    lo=$lava_lo hi=$lava_hi
    [ -z "$stuck" ] ||
      fail 4 undecided "$stuck undecided after $max_rounds pair(s): the first bad kernel is in ${labels[$lo]}..${labels[$hi]} (exclusive..inclusive); more --max-rounds, a larger --threshold, or a quieter host"
  done
}
