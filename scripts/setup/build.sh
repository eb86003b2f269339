# Configures and builds for a purpose (sourced by scripts/setup.sh, not run).
#   build_for tool DIR    the tracebench binary (what `tracebench run` needs)
#                         and its man page (`man tracebench`: link_man_page)
#   build_for tests DIR   everything, the tests included
# RelWithDebInfo: results carry the build type, and SystemTap's user-function
# probes are compiled from the binary's DWARF (tracers/systemtap/script.cc).
build_for() {
  local what=$1 dir=$2 tests=OFF
  [ "$what" = tests ] && tests=ON
  # A build directory set up for the tests keeps them: the tool's set-up run
  # after the tests' must not unregister them.
  grep -qs '^TRACEBENCH_BUILD_TESTS:BOOL=ON' "$dir/CMakeCache.txt" && tests=ON
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRACEBENCH_BUILD_TESTS=$tests >/dev/null
  if [ "$what" = tests ]; then
    cmake --build "$dir" -j"$(nproc)"
  else
    cmake --build "$dir" -j"$(nproc)" --target tracebench man
  fi
  link_man_page "$dir"
}

# `man tracebench` finds the build's page: a link to it in
# TRACEBENCH_MAN_DIR (/usr/local/share/man/man1, on man's default path), so
# every later build keeps it current.  Where that folder is not writable the
# page stays in the build, and the message says how to read it.
link_man_page() {
  local page dest=${TRACEBENCH_MAN_DIR:-/usr/local/share/man/man1}
  page=$(realpath "$1")/bench/tracebench.1
  [ -s "$page" ] || { echo "setup: no man page in $1 (help2man missing?)" >&2; return 0; }
  if mkdir -p "$dest" 2> /dev/null && ln -sfn "$page" "$dest/tracebench.1" 2> /dev/null; then
    echo "setup: man tracebench reads $page (linked from $dest)"
  else
    echo "setup: cannot link the man page into $dest; read it with man -l $page" >&2
  fi
}
