#!/bin/bash
# compare-kernels.sh --max-rounds, the sequential kernel A/B, with the boots
# simulated (fake_vm_tracebench.sh: each boot a real run on this host, a
# kernel's cost planted as the `none` tracer's injected cycles):
#  1. B 5x slower than A: rounds booted until the test decides `regression`
#     (it decides nothing before five pairs), before the most allowed; each
#     look in rounds.txt, the B-first order of even rounds kept;
#  2. A and B alike: `same` within the threshold, and the rounds stop there;
#  3. a regression with too few rounds allowed: `undecided`, never a guess;
#     the first look at --rounds, not before;
#  4. bad input (--max-rounds below --rounds) refused with exit 2 before
#     anything boots;
#  5. the same regression with the boots as LAVA jobs (the fake's LAVA): the
#     first --rounds rounds as one batch, then one round (two jobs) at a
#     time until decided.
#   compare_sequential.sh TRACEBENCH
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
compare=$here/../../scripts/vm/compare-kernels.sh
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
. "$(dirname "$0")/../common/check.sh"
export REAL_TB
REAL_TB=$(realpath "$1")
echo "inject_cycles=0" > "$t/vmlinuz-a"
echo "inject_cycles=0" > "$t/vmlinuz-a2"
# A 100 ns delay at this TSC's rate is more than 5x a getpid on any host.
echo "inject_cycles=30000" > "$t/vmlinuz-b"
run=(-- run -t none -w getpid --quick -r 6 -n 300 --no-samples)
ab() {  # ab NAME A B ARGS...: a comparison into $t/NAME; sets rc
  local name=$1 a=$2 b=$3; shift 3
  BOOTS=$t/$name.boots "$compare" --tracebench "$here/fake_vm_tracebench.sh" --outdir "$t/$name" "$@" \
    "$t/$a" "$t/$b" "${run[@]}" > "$t/$name.out" 2>&1
  rc=$?
}
looks() { wc -l < "$t/$1/rounds.txt"; }
bench=none/getpid/none/payload:0/threads:1

ab regression vmlinuz-a vmlinuz-b --rounds 2 --max-rounds 9 --threshold 1
check "regression: exit 0 ($rc)" '[ $rc -eq 0 ]'
check "regression: decided" 'grep -q "^round [0-9]*: $bench regression$" "$t/regression/rounds.txt"'
check "regression: looks from round 2 on, until it is decided" \
  '[ "$(head -1 "$t/regression/rounds.txt" | cut -d: -f1)" = "round 2" ] && [ "$(grep -c regression "$t/regression/rounds.txt")" -eq 1 ]'
check "regression: stopped before the most rounds ($(looks regression) looks)" '[ "$(cat "$t/regression.boots")" -lt 18 ]'
check "regression: B first in round 2" '[ "$(grep -m1 -o "round 2/9 \[[AB]\]" "$t/regression.out")" = "round 2/9 [B]" ]'
check "regression: the verdict printed" 'grep -q "regression" "$t/regression/compare.txt"'

ab same vmlinuz-a vmlinuz-a2 --rounds 2 --max-rounds 9 --threshold 1
check "same: exit 0 ($rc)" '[ $rc -eq 0 ]'
check "same: decided same ($(tail -1 "$t/same/rounds.txt"))" 'tail -1 "$t/same/rounds.txt" | grep -q " same"'
check "same: stopped when decided" '[ "$(grep -c " same" "$t/same/rounds.txt")" -eq 1 ]'

ab short vmlinuz-a vmlinuz-b --rounds 2 --max-rounds 3 --threshold 1
check "too few rounds: exit 0 ($rc), undecided" '[ $rc -eq 0 ] && [ "$(looks short)" -eq 2 ] && tail -1 "$t/short/rounds.txt" | grep -q undecided'
check "too few rounds: three rounds booted" '[ "$(cat "$t/short.boots")" -eq 6 ]'

ab late vmlinuz-a vmlinuz-b --rounds 4 --max-rounds 9 --threshold 1
check "first look at --rounds 4 ($(head -1 "$t/late/rounds.txt" | cut -d: -f1))" \
  '[ "$(head -1 "$t/late/rounds.txt" | cut -d: -f1)" = "round 4" ]'

ab bad1 vmlinuz-a vmlinuz-b --rounds 3 --max-rounds 2
check "--max-rounds below --rounds refused ($rc)" '[ $rc -eq 2 ] && grep -q "max-rounds must be" "$t/bad1.out" && [ ! -e "$t/bad1.boots" ]'
ab lava vmlinuz-a vmlinuz-b --rounds 2 --max-rounds 9 --threshold 1 --lava lab
check "lava: exit 0 ($rc)" '[ $rc -eq 0 ]'
check "lava: decided" 'grep -q "^round [0-9]*: $bench regression$" "$t/lava/rounds.txt"'
check "lava: the first rounds as one batch in ABBA order" \
  'grep -q "LAVA jobs 1 2 3 4 (rounds 1-2, 4 boots: A B B A)" "$t/lava.out"'
check "lava: then a round at a time (round 3: A first)" 'grep -q "LAVA jobs 5 6 (rounds 3-3, 2 boots: A B)" "$t/lava.out"'
check "lava: stopped before the most rounds ($(looks lava) looks)" \
  '[ "$(cat "$t/lava.boots")" -lt 18 ] && [ "$(cat "$t/lava.boots")" -eq $((2 * ($(looks lava) + 1))) ]'
[ $fail -eq 0 ] || { for f in regression same short lava; do echo "--- $f"; tail -20 "$t/$f.out"; done; }
exit $fail
