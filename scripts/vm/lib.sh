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
