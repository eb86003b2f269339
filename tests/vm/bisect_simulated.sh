#!/bin/bash
# bisect-kernels.sh's decisions, with the guests simulated (no qemu, ~40 s):
#  1. a search over five candidates with a regression planted from cand3:
#     steps cand5 (confirm), cand3, cand2; the answer cand3, last good cand2;
#     every step's evidence in bisect.json;
#  2. boots whose run comes back `unsteady` (no figure: under TCG the guest's
#     clock can change level mid-run): their pairs do not count, are said,
#     kept and booted again; a fourth in a step stops it with exit 1;
#  3. GOOD vs BAD without a regression: exit 3, nothing bisected;
#  4. a step its pairs cannot decide (two at most): exit 4, never a guess.
# tests/vm/bisect_kernels.sh does the same with real guests under QEMU.
#
# A simulated boot (`tracebench vm`, fake_vm_tracebench.sh) is a run of the
# real tracebench on this host, where a candidate's module parameter
# inject_delay_ns=N becomes none.inject_cycles=300N (the `none` tracer's
# known answer: a 100 ns delay is 30,000 cycles, more than 5x a getpid on any
# host, as the planted regression must be for --threshold 4); the boots
# listed in UNSTEADY_BOOTS come back with the benchmark marked unsteady, as a
# guest's run does.
#   bisect_simulated.sh TRACEBENCH
set -uo pipefail
tb=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
bisect=$here/../../scripts/vm/bisect-kernels.sh
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
. "$(dirname "$0")/../common/check.sh"

mkdir -p "$t/k" "$t/headers"
touch "$t/headers/Makefile"
kernels=""
for i in 1 2 3 4 5; do
  echo "image $i" > "$t/k/cand$i"
  kernels+="${kernels:+,}$t/k/cand$i"
done
bench=none/getpid/none/payload:0/threads:1
run=(-- run -t none -w getpid --quick -r 6 -n 300 --no-samples)
export REAL_TB=$tb
bisect_sim() {  # bisect_sim NAME UNSTEADY_BOOTS ARGS...: runs a bisection into $t/NAME; sets rc
  local name=$1 unsteady=$2; shift 2
  BOOTS=$t/$name.boots UNSTEADY_BOOTS=$unsteady "$bisect" --tracebench "$here/fake_vm_tracebench.sh" --outdir "$t/$name" \
    --headers "$t/headers" --threshold 4 "$@" > "$t/$name.out" 2>&1
  rc=$?
}

# 1 and 2.  Step 0's boots, ABBA: G1 C1 C2 G2 G3 C3 C4 G4 ...; the 5th
# (round 3's GOOD) and the 7th (round 4's candidate) come back unsteady:
# rounds 3 and 4 do not count, and the step needs seven rounds for five pairs.
bisect_sim search "5 7" --rounds 3 --max-rounds 8 --kernels "$kernels" --inject-from cand3 inject_delay_ns=100 \
  "$bench" cand1 cand5 "${run[@]}"
grep -v '^bisect-kernels: boot ' "$t/search.out"
check "the search answers (exit 0)" '[ $rc -eq 0 ]'
check "the answer is cand3" 'grep -q "^bisect-kernels: first bad kernel: cand3 .*last good: cand2 " "$t/search.out"'
check "each pair that does not count is said" '[ "$(grep -c "does not count" "$t/search.out")" -eq 2 ]'
check "the unsteady side is named" 'grep -q "pair 3 does not count (cand1.s run is unsteady: no figure)" "$t/search.out"'
/usr/bin/python3 - "$t/search" "$bench" <<'PY' || fail=1
import json, os, sys
d, bench = sys.argv[1:3]
b = json.load(open(os.path.join(d, "bisect.json")))
assert b["status"] == "found" and (b["first_bad"], b["last_good"]) == ("cand3", "cand2"), b["status"]
assert b["benchmark"] == bench and b["good"] == "cand1" and b["bad"] == "cand5" and b["design"] == "sequential"
for c in b["candidates"]:
    assert c["kmod_params"] == (["inject_delay_ns=100"] if c["label"] >= "cand3" else []), c
steps = b["steps"]
assert [(s["kind"], s["candidate"]) for s in steps] == [("confirm", "cand5"), ("bisect", "cand3"), ("bisect", "cand2")], \
    [(s["kind"], s["candidate"]) for s in steps]
for s in steps:
    name = f"step {s['step']} ({s['candidate']})"
    n, booted = s["rounds"], s["pairs_booted"]
    # Step 0 lost rounds 3 and 4; no other step lost any.
    assert booted == n + (2 if s["step"] == 0 else 0), f"{name}: {n} pairs counted, {booted} booted"
    assert 5 <= n <= 8 and s["sequential"]["pairs"] == n, (name, n, s["sequential"])
    assert s["a_runs"] + s["b_runs"] == 2 * booted - (booted - n), (name, s["a_runs"], s["b_runs"])
    assert len(s["reference_runs"]) == booted and len(s["candidate_runs"]) == booted, name
    for r in s["reference_runs"] + s["candidate_runs"]:
        assert os.path.isfile(os.path.join(d, r, "result.json")), f"{name}: {r} kept without result.json"
    injected = s["candidate"] >= "cand3"
    assert s["kmod_params_in_effect"] == {"reference": ["inject_delay_ns=0"],
                                          "candidate": [f"inject_delay_ns={100 if injected else 0}"]}, name
    want = ("regression", "bad") if injected else ("same", "good")
    assert (s["verdict"], s["decision"]) == want, (name, s["verdict"], s["decision"])
    print(f"ok   {name}: {s['verdict']}, {n} pairs counted of {booted} booted, ratio {s['ratio']:.2f}")
assert "First bad kernel: **`cand3`**" in open(os.path.join(d, "bisect.md")).read()
PY

# 2.  Four pairs without a figure in one step: exit 1 with the reason.
bisect_sim lost "1 3 5 7" --rounds 3 --max-rounds 6 --kernels "$kernels" --inject-from cand3 inject_delay_ns=100 \
  "$bench" cand1 cand5 "${run[@]}"
tail -n 3 "$t/lost.out"
check "four unsteady pairs: exit 1" '[ $rc -eq 1 ]'
check "the reason is given" 'grep -q "4 pairs without a figure for BENCH" "$t/lost.out"'
check "no answer printed" '! grep -q "first bad kernel" "$t/lost.out"'
check "bisect.json says failed" '/usr/bin/python3 -c "import json,sys; assert json.load(open(sys.argv[1]))[\"status\"] == \"failed\"" "$t/lost/bisect.json"'

# 3.  GOOD vs BAD without a regression (no parameter on either): exit 3.
bisect_sim noregr "" --rounds 3 --kernels "$t/k/cand1,$t/k/cand2" "$bench" cand1 cand2 "${run[@]}"
tail -n 2 "$t/noregr.out"
check "no regression: exit 3" '[ $rc -eq 3 ]'
check "no regression: said" 'grep -q "no regression of $bench between GOOD cand1 and BAD cand2" "$t/noregr.out"'
/usr/bin/python3 - "$t/noregr/bisect.json" <<'PY' || fail=1
import json, sys
b = json.load(open(sys.argv[1]))
assert b["status"] == "no_regression" and b["first_bad"] is None, (b["status"], b["first_bad"])
assert b["compare_options"]["threshold"] == 4, b["compare_options"]
assert len(b["steps"]) == 1 and b["steps"][0]["kind"] == "confirm" and b["steps"][0]["verdict"] == "same", b["steps"]
print(f"ok   no regression: ratio {b['steps'][0]['ratio']:.3f}, {b['steps'][0]['verdict']}, nothing bisected")
PY

# 4.  Two pairs at most: the sequential test decides nothing before five.
bisect_sim undecided "" --rounds 2 --max-rounds 2 --kernels "$kernels" --inject-from cand3 inject_delay_ns=100 \
  "$bench" cand1 cand5 "${run[@]}"
tail -n 2 "$t/undecided.out"
check "undecidable step: exit 4" '[ $rc -eq 4 ]'
/usr/bin/python3 - "$t/undecided/bisect.json" <<'PY' || fail=1
import json, sys
b = json.load(open(sys.argv[1]))
assert b["status"] == "undecided" and b["first_bad"] is None and b["design"] == "sequential", b["status"]
s = b["steps"]
assert len(s) == 1 and s[0]["verdict"] == "undecided" and s[0]["rounds"] == 2, s
assert "GOOD cand1 vs BAD cand5 is undecided after 2 pair(s)" in b["message"], b["message"]
print(f"ok   undecided after 2 pairs (ratio {s[0]['ratio']:.2f}): {b['message']}")
PY
[ $fail -eq 0 ] && echo "bisect simulated: ok"
exit $fail
