#!/bin/bash
# `tracebench model suite --plan` lists, for every tracer, the runs, the fit
# and the validations its Table 7 scenarios call for.  The lists are held
# byte for byte against model_suite_plan.txt: the scenarios and their knobs
# come from each tracer's description (Tracer::model()), and a change to
# them, or to how the harness turns them into runs, shows here.  Regenerate
# after an intended change with: model_suite_plan.sh TRACEBENCH --update
set -euo pipefail
tb=$(readlink -f "$1")  # absolute: the plans are made in an empty directory
golden="$(cd "$(dirname "$0")" && pwd)/model_suite_plan.txt"
out=$(mktemp -d /tmp/tracebench-plan-XXXXXX)
trap 'rm -rf "$out"' EXIT

# One section per command: a line "## <arguments>", then its output, made
# in an empty directory: the plan's last line times its steps by an earlier
# suite under ./results when there is one, and here there is none.
cd "$out"
args_list=()
for t in ebpf ftrace perf lttng dvm kprobes dvm_kernel lttng_kernel delay; do
  args_list+=("-t $t --quick" "-t $t")
done
args_list+=("-t dvm -t ftrace --rounds 2 --seconds 12")

: > "$out/now.txt"
for args in "${args_list[@]}"; do
  echo "## $args" >> "$out/now.txt"
  # shellcheck disable=SC2086  # the arguments are words
  if ! "$tb" model suite --plan $args --out OUT >> "$out/now.txt" 2> "$out/err.txt"; then
    cat "$out/err.txt"
    if grep -q "unknown tracer" "$out/err.txt"; then
      echo "not built here" >> "$out/now.txt"
    else
      exit 1
    fi
  fi
done
if [ "${2:-}" = "--update" ]; then cp "$out/now.txt" "$golden"; echo "wrote $golden"; exit 0; fi

# A tracer this build left out (no libbpf, no LTTng-UST) is compared by the
# others only.
python3 - "$golden" "$out/now.txt" <<'PY'
import sys
def sections(path):
    s, key = {}, None
    for line in open(path):
        if line.startswith("## "):
            key = line[3:].strip(); s[key] = []
        else:
            s[key].append(line)
    return s
want, got = sections(sys.argv[1]), sections(sys.argv[2])
bad = 0
for key, lines in want.items():
    if got.get(key) == ["not built here\n"]:
        print(f"skipped: model suite --plan {key}: a tracer of it is not built here")
        continue
    if got.get(key) != lines:
        bad += 1
        print(f"FAIL: model suite --plan {key} differs from the list kept:")
        import difflib
        sys.stdout.writelines(difflib.unified_diff(lines, got.get(key, []), "kept", "now", n=1))
print(f"{len(want) - bad} of {len(want)} plans as kept")
sys.exit(1 if bad else 0)
PY
