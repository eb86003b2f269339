# Helpers the VM-lab scripts share (sourced, not run): one meaning each.

# A module parameter the guest's insmod line can carry unquoted: NAME a C
# identifier (<= 64 chars), VALUE 1..256 characters of [A-Za-z0-9_.,:+-].
# (tracebench vm checks the same in C++ before it calls the scripts.)
kmod_param_ok() { [[ "$1" =~ ^[A-Za-z_][A-Za-z0-9_]{0,63}=[A-Za-z0-9_.,:+-]{1,256}$ ]]; }
kmod_param_rule="NAME of [A-Za-z0-9_] (not starting with a digit), VALUE of [A-Za-z0-9_.,:+-]"

# Runs a command (exec) so that it gets signal SIG when the shell that
# started it dies, even by SIGKILL (PR_SET_PDEATHSIG through util-linux's
# setpriv): `with_pdeathsig KILL qemu-system-x86_64 ... &` leaves no qemu
# behind its script.  Without setpriv the command runs as it is.
with_pdeathsig() {
  local sig=$1
  shift
  if command -v setpriv >/dev/null; then exec setpriv --pdeathsig "$sig" "$@"; fi
  exec "$@"
}

# A kernel image's release: from its name (/boot/vmlinuz-<release>), else
# from the bzImage header (`file`); nothing when neither tells.
kernel_release() {
  case "$(basename "$1")" in vmlinuz-*) echo "${1##*/vmlinuz-}"; return;; esac
  if command -v file >/dev/null; then
    file -bL "$1" 2>/dev/null | sed -n 's/.*Linux kernel.* version \([^ ,]*\).*/\1/p' || true
  fi
}

# The headers of a release (a directory with a Makefile), or nothing.
headers_for() {
  local d
  [ -n "$1" ] || return 0
  for d in "/usr/src/linux-headers-$1" "/lib/modules/$1/build"; do
    if [ -f "$d/Makefile" ]; then echo "$d"; return 0; fi
  done
  return 0
}

# The run one boot brought back (ROUND_DIR/runs/<run>/) as pair N of a side
# laid out as pairs, PAIRS_DIR/pair-NNNN/<run>, which `tracebench compare`
# tests as interleaved pairs (harness/include/tracebench/pairs.h); ROUND_DIR
# and PAIRS_DIR share a parent.  The boot must have left exactly one run.
#   link_pair ROUND_DIR PAIRS_DIR N
link_pair() {
  local run runs=() pair
  for run in "$1"/runs/*/; do [ -f "$run/result.json" ] && runs+=("${run%/}"); done
  [ ${#runs[@]} -eq 1 ] || { echo "link_pair: $1 holds ${#runs[@]} runs, not one" >&2; return 1; }
  pair=$(printf 'pair-%04d' "$3")
  mkdir -p "$2/$pair" || return 1
  ln -sfn "../../$(basename "$1")/runs/$(basename "${runs[0]}")" "$2/$pair/$(basename "${runs[0]}")"
}

# Links the run directories a boot brought back (ROUND_DIR/runs/*/ with a
# result.json) into RUNS_DIR as <round>-<name>, so that one directory holds a
# side's runs for `tracebench compare`:  link_runs ROUND_DIR RUNS_DIR
link_runs() {
  local run name round
  round=$(basename "$1")
  for run in "$1"/runs/*/; do
    [ -f "$run/result.json" ] || continue  # (also the unexpanded pattern of an empty runs/)
    name=$(basename "$run")
    ln -sfn "../$round/runs/$name" "$2/$round-$name"
  done
  return 0
}
