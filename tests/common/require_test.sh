#!/bin/bash
# TRACEBENCH_REQUIRE turns a skip for a missing capability into a failure
# with the reason, in gtest tests (tests/common/require.h) and shell tests
# (tests/common/require.sh); unset, or listing other capabilities, the test
# is a skip that ctest reports as one (gtest's "[  SKIPPED ]", exit 77).
# Usage: require_test.sh <require_probe binary>
set -u
probe=${1:?usage: $0 <require_probe binary>}
here=$(cd "$(dirname "$0")" && pwd)
fail=0
expect() {  # what, want status, want text, command...
  local what=$1 want=$2 text=$3; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [[ $rc != "$want" ]] || ! grep -qF -- "$text" <<< "$out"; then
    echo "FAIL: $what: exit $rc (want $want), output without '$text':"; echo "$out" | tail -8; fail=1
  else
    echo "ok: $what"
  fi
}
sh_probe=". '$here/require.sh'; tb_skip tb-probe-cap 'the probe capability is never here'"

for req in "" "ebpf,perf" "tb-probe-capx" "tb-probe"; do
  expect "gtest, TRACEBENCH_REQUIRE='$req': skipped" 0 "[  SKIPPED ]" env TRACEBENCH_REQUIRE="$req" "$probe"
  expect "shell, TRACEBENCH_REQUIRE='$req': skipped" 77 "SKIP: the probe capability is never here" \
    env TRACEBENCH_REQUIRE="$req" bash -c "$sh_probe"
done
expect "gtest, unset: skipped" 0 "[  SKIPPED ]" env -u TRACEBENCH_REQUIRE "$probe"
for req in "tb-probe-cap" "ebpf,tb-probe-cap" "tb-probe-cap,lttng"; do
  expect "gtest, TRACEBENCH_REQUIRE='$req': fails with the reason" 1 \
    "tb-probe-cap is required (TRACEBENCH_REQUIRE=$req) but cannot run: the probe capability is never here" \
    env TRACEBENCH_REQUIRE="$req" "$probe"
  expect "shell, TRACEBENCH_REQUIRE='$req': fails with the reason" 1 \
    "FAIL: tb-probe-cap is required (TRACEBENCH_REQUIRE=$req) but cannot run: the probe capability is never here" \
    env TRACEBENCH_REQUIRE="$req" bash -c "$sh_probe"
done
exit $fail
