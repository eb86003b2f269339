#!/bin/bash
# Installs the Debian packages tracebench needs (only the missing ones),
# then configures and builds it in ./build.  Safe to run again.
#   scripts/setup.sh            install + configure + build
#   TRACEBENCH_BUILD_DIR=dir    build somewhere else
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # toolchain
  g++ cmake make pkg-config git
  # libraries the suite links
  libbenchmark-dev libgtest-dev libgmock-dev libpapi-dev papi-tools libfmt-dev libcli11-dev nlohmann-json3-dev
  libtraceevent-dev libtracefs-dev liblttng-ust-dev liblttng-ctl-dev libssl-dev zlib1g-dev
  # syscall names for the D-VM's kernel home
  libseccomp-dev
  # Student's t distribution for compare's test on run medians (Boost.Math, headers only)
  libboost-dev
  # eBPF: skeletons are generated at build time
  libbpf-dev bpftool clang llvm libelf-dev systemtap-sdt-dev
  # the formatting .clang-format settles (scripts/format.sh, tests.format)
  clang-format
  # independent tools the cross-checks compare against
  linux-perf bpftrace trace-cmd lttng-tools
  # readelf, which the usdt provider's notes are checked against, and strip, which the VM lab's
  # initramfs takes executables through (binutils, normally with g++)
  binutils
  # LTTng-UST trace read-back (babeltrace2 C API; Python bindings for the cross-check)
  libbabeltrace2-dev python3-bt2
  # VM lab: a Debian kernel + headers to build the module against, qemu, busybox initramfs
  linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static cpio pahole zstd xz-utils file
  # SystemTap: stap compiles the scripts on the host (for the guest's kernel), staprun/stapio run them
  systemtap systemtap-runtime
  # pgrep: the VM lab checks that no qemu is left behind (procps, normally present)
  procps
  # VM lab, LTTng kernel domain: lttng-modules is built from its .deb (apt-get download), depmod
  kmod
  # LAVA (harness/lava/): lava-run, LAVA's dispatcher alone, runs and validates the jobs (its
  # schemas: python3-lava-common); lava-server ships the device-type templates (qemu.jinja2).
  # Of the dispatcher's recommends a qemu job needs qemu-system-x86 and cpio (above).
  lava-dispatcher lava-server
  # tests
  python3 python3-jsonschema
  # report (plots), results history, the report's browser test
  python3-matplotlib libsqlite3-dev sqlite3 chromium
  # the results history on a PostgreSQL server (libpq), and the throw-away cluster its tests start
  libpq-dev postgresql
  # tracebench lava submit|wait|fetch: LAVA's REST API (libcurl), lavacli's identity file (libyaml)
  libcurl4-openssl-dev libyaml-dev
  # the single-node LAVA lab (scripts/lava/lab.sh) its test starts: server, dispatcher, database;
  # curl asks its API whether it is up, ss (iproute2) checks that nothing is left listening
  lavacli gunicorn curl iproute2
  # the man page (help2man reads the built binary's --help)
  help2man
  # D-VM fuzz targets: libFuzzer, ASan and UBSan runtimes for clang
  libclang-rt-14-dev
)
extra=scripts/setup-packages.txt  # one package per line, added by areas that need more
if [ -f "$extra" ]; then
  while read -r p; do
    case "$p" in ''|'#'*) ;; *) packages+=("$p") ;; esac
  done < "$extra"
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install packages (apt-get)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build=${TRACEBENCH_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRACEBENCH_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
