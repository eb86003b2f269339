#!/bin/bash
# Sets this machine up for a purpose: installs the Debian packages it needs
# (only the missing ones; each area's list is scripts/setup/<area>.txt) and
# builds what it runs in ./build.  Safe to run again.
#   scripts/setup.sh              the tool and the host's tracers (area base): builds build/bench/tracebench
#   scripts/setup.sh --tests      what every test needs (every area): builds everything, the tests included
#   scripts/setup.sh --area NAME  one area more, installed only (repeatable; --list names them): the
#                                 commands that need one say which when it is missing
#   TRACEBENCH_BUILD_DIR=dir      build somewhere else
#   TRACEBENCH_MAN_DIR=dir        link the man page there (/usr/local/share/man/man1): `man tracebench`
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup/packages.sh
. scripts/setup/build.sh

usage() { sed -n '5,10p' "$0" | sed 's/^# //' >&2; exit 2; }

list_areas() {
  local a here
  for a in $(all_areas); do
    here="not installed"
    area_installed "$a" && here=installed
    printf '%-11s %-14s %s\n' "$a" "$here" "$(area_field "$a" purpose)"
  done
}

build=tool areas=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tests) build=tests;;
    --area)
      [ $# -ge 2 ] || usage
      area_exists "$2" || { echo "setup: no area '$2'; there are:" >&2; list_areas >&2; exit 2; }
      areas+=("$2")
      [ $build = tests ] || build=none
      shift;;
    --list) list_areas; exit 0;;
    *) usage;;
  esac
  shift
done
case $build in
  tool) areas=(base);;
  tests) mapfile -t areas < <(all_areas);;
esac
install_areas "${areas[@]}"
[ $build = none ] || build_for $build "${TRACEBENCH_BUILD_DIR:-build}"
