#!/bin/bash
# tracebench.1 from the command line itself: help2man reads `tracebench
# --help` and `--version`, and a COMMANDS section holds the --help of every
# subcommand (their paths from `tracebench completion --list`).  The build
# runs it (target `man`); usage: make-man.sh TRACEBENCH OUT.1
set -euo pipefail
bin=$1
out=$2
command -v help2man > /dev/null || { echo "help2man is not installed (scripts/setup.sh installs it: scripts/setup/base.txt)" >&2; exit 1; }
inc=$(mktemp /tmp/tracebench-man-XXXXXX)
trap 'rm -f "$inc"' EXIT
{
  echo "[COMMANDS]"
  "$bin" completion --list | while read -r path; do
    echo ".SS \"tracebench $path\""
    echo ".nf"
    # roff: a line that starts with . or ' would be a request; backslashes escape.
    # shellcheck disable=SC2086
    "$bin" $path --help | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
    echo ".fi"
  done
  cat <<'TXT'
[EXIT STATUS]
0 done; 1 a run or a check failed; 2 refused input (nothing was changed); 70 an uncaught error (after teardown); 130 interrupted.
[FILES]
Results go to \fB<out>/<run id>/\fR: result.json, summary.csv, samples.csv.
[SEE ALSO]
README.md in the source tree; `tracebench completion bash` for shell completion.
TXT
} > "$inc"
help2man --no-info --no-discard-stderr --name "what does a Linux tracer cost per event?" \
  --include "$inc" --output "$out" "$bin"
