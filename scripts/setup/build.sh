# Configures and builds for a purpose (sourced by scripts/setup.sh, not run).
#   build_for tool DIR    the tracebench binary (what `tracebench run` needs)
#                         and its man page (`man -l DIR/bench/tracebench.1`)
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
}
