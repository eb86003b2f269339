#!/bin/bash
# The suite's formatting, settled once by clang-format: .clang-format at the
# top (C++: harness/, tracers/, bench/, tests/, the D-VM core) and
# kmod/.clang-format (the module's C, in the kernel's own style).
#   format.sh          reformat every tracked C/C++ source in place
#   format.sh --check  change nothing; list the files clang-format would change, exit 1 if any
# Generated and third-party-shaped files are left alone: tests/dvm/golden (the
# D compiler's expected output) and anything under build/.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
case "${1:-}" in
  --check) check=1;;
  "") ;;
  *) echo "usage: format.sh [--check]" >&2; exit 2;;
esac
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found: apt-get install clang-format" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' | grep -v '^tests/dvm/golden/')
if [ $check -eq 0 ]; then
  clang-format -i --style=file "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'format.sh: not formatted as .clang-format says (run scripts/format.sh): %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "format.sh: ${#files[@]} files formatted as .clang-format says"
