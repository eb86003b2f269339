# Sourced by test scripts that check many things and report each:
#   check NAME EXPRESSION   evaluates EXPRESSION (a shell test); prints
#                           "ok   NAME" or "FAIL NAME", and a failure sets fail=1
# The script ends with `exit $fail`.
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
