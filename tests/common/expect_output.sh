#!/bin/sh
# Runs a command and passes only when it exits with the expected status AND a
# line of its output (stdout and stderr) matches the extended regex; ctest's
# PASS_REGULAR_EXPRESSION alone ignores the exit status.
# Usage: expect_output.sh <exit status> <ERE> <command> [args...]
[ $# -ge 3 ] || { echo "usage: $0 <exit status> <ERE> <command> [args...]"; exit 2; }
want=$1
re=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
fail=0
if [ "$rc" -ne "$want" ]; then
  echo "FAIL: exit status $rc, expected $want"
  fail=1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
  echo "FAIL: no output line matches: $re"
  fail=1
fi
exit $fail
