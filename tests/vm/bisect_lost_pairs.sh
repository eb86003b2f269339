#!/bin/bash
# bisect-kernels.sh when a boot's run comes back without a figure (no qemu).
# Under TCG the guest's clock can change level mid-run, and the run then
# calls the benchmark `unsteady` with no figure.  Such a pair must not count:
# the bisection boots another, says so, keeps every boot, and still answers;
# more than three such pairs in a step stop it with exit 1.
#
# The guests are simulated: `tracebench vm` is replaced by a run of the real
# tracebench on this host, where a candidate's module parameter
# inject_delay_ns=N becomes none.inject_cycles (the known answer of the `none`
# tracer), and the boots listed in UNSTEADY_BOOTS come back with the benchmark
# marked unsteady and its figure removed, as a guest's run does.
#   bisect_lost_pairs.sh TRACEBENCH
set -uo pipefail
tb=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
bisect=$here/../../scripts/vm/bisect-kernels.sh
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=1; fi; }

cat > "$t/fake-tb" <<'SH'
#!/bin/bash
# tracebench with `vm` simulated on the host (tests/vm/bisect_lost_pairs.sh).
[ "$1" = vm ] || exec "$REAL_TB" "$@"
shift
out="" cycles=0 params=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out-dir) out=$2; shift 2;;
    --kmod-param) params+=("$2"); [[ "$2" == inject_delay_ns=* ]] && cycles=$((${2#*=} * 30)); shift 2;;
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
[[ " $UNSTEADY_BOOTS " == *" $n "* ]] || exit 0
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
SH
chmod +x "$t/fake-tb"
mkdir -p "$t/k" "$t/headers"
touch "$t/headers/Makefile"
for i in 1 2 3; do echo "image $i" > "$t/k/cand$i"; done
kernels="$t/k/cand1,$t/k/cand2,$t/k/cand3"
bench=none/getpid/none/payload:0/threads:1
run=(-- run -t none -w getpid --quick -r 6 -n 300 --no-samples)
export REAL_TB=$tb

# Boots in step 0, ABBA: G1 C1 C2 G2 G3 C3 C4 G4 ...; the 5th (round 3's
# GOOD) and the 7th (round 4's candidate) come back unsteady: rounds 3 and 4
# do not count, and the step needs seven rounds for its five pairs.
BOOTS=$t/boots1 UNSTEADY_BOOTS="5 7" "$bisect" --tracebench "$t/fake-tb" --outdir "$t/b1" --headers "$t/headers" \
  --rounds 3 --max-rounds 6 --threshold 4 --kernels "$kernels" --inject-from cand3 inject_delay_ns=100 \
  "$bench" cand1 cand3 "${run[@]}" > "$t/b1.out" 2>&1
rc=$?
cat "$t/b1.out"
check "two unsteady boots: the bisection still answers (exit 0)" '[ $rc -eq 0 ]'
check "the answer is cand3" 'grep -q "^bisect-kernels: first bad kernel: cand3 " "$t/b1.out"'
check "each lost pair is said" '[ "$(grep -c "does not count" "$t/b1.out")" -eq 2 ]'
check "the unsteady side is named" 'grep -q "pair 3 does not count (cand1.s run is unsteady: no figure)" "$t/b1.out"'
/usr/bin/python3 - "$t/b1/bisect.json" <<'PY' || fails=1
import json, sys
b = json.load(open(sys.argv[1]))
s = b["steps"][0]
assert s["candidate"] == "cand3" and s["verdict"] == "regression", (s["candidate"], s["verdict"])
n, booted = s["rounds"], s["pairs_booted"]
assert booted == n + 2, f"{n} pairs counted, {booted} booted: want two lost"
assert s["sequential"]["pairs"] == n, (n, s["sequential"])
assert len(s["reference_runs"]) == booted and len(s["candidate_runs"]) == booted, s
assert s["a_runs"] + s["b_runs"] == 2 * booted - 2, (s["a_runs"], s["b_runs"], booted)
print(f"ok   step 0: {n} pairs counted of {booted} booted, runs {s['a_runs']}/{s['b_runs']} kept")
PY

# Four lost pairs in one step: exit 1 with the reason, never an answer.
BOOTS=$t/boots2 UNSTEADY_BOOTS="1 3 5 7" "$bisect" --tracebench "$t/fake-tb" --outdir "$t/b2" --headers "$t/headers" \
  --rounds 3 --max-rounds 6 --threshold 4 --kernels "$kernels" --inject-from cand3 inject_delay_ns=100 \
  "$bench" cand1 cand3 "${run[@]}" > "$t/b2.out" 2>&1
rc=$?
tail -n 3 "$t/b2.out"
check "four unsteady pairs: exit 1" '[ $rc -eq 1 ]'
check "the reason is given" 'grep -q "4 pairs without a figure for BENCH" "$t/b2.out"'
check "no answer printed" '! grep -q "first bad kernel" "$t/b2.out"'
check "bisect.json says failed" '/usr/bin/python3 -c "import json,sys; assert json.load(open(sys.argv[1]))[\"status\"] == \"failed\"" "$t/b2/bisect.json"'
[ $fails -eq 0 ] && echo "bisect lost pairs: ok"
exit $fails
