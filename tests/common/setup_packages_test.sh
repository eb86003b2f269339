#!/bin/bash
# scripts/setup/packages.sh against a simulated dpkg and apt: on a fresh
# machine dpkg-query has never heard of most packages and exits 1; those are
# the missing ones, and install_areas asks apt-get for exactly them.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A dpkg-query that knows only cmake and make (installed) and git (removed,
# config files left), and says "no packages found" of the rest, as dpkg does.
mkdir "$tmp/bin"
cat >"$tmp/bin/dpkg-query" <<'FAKE'
#!/bin/bash
rc=0
for p in "$@"; do
  case $p in
    -W|-f=*) ;;
    cmake|make) printf '%s\tinstall ok installed\n' "$p";;
    git) printf '%s\tdeinstall ok config-files\n' "$p";;
    *) echo "dpkg-query: no packages found matching $p" >&2; rc=1;;
  esac
done
exit $rc
FAKE
cat >"$tmp/bin/apt-get" <<'FAKE'
#!/bin/bash
echo "$*" >>"$APT_LOG"
FAKE
chmod +x "$tmp/bin/"*
export PATH="$tmp/bin:$PATH" APT_LOG="$tmp/apt.log"

missing=$(bash -c 'set -euo pipefail; . "$1/scripts/setup/packages.sh"; missing_packages cmake libfmt-dev make git bpftool' _ "$src")
[ "$missing" = $'libfmt-dev\ngit\nbpftool' ] || fail "missing packages: got '$missing'"

# An area whose packages are all unknown to dpkg: every one is installed.
mkdir "$tmp/setup"
cp "$src/scripts/setup/packages.sh" "$tmp/setup/"
printf '# purpose: a test area\n# programs: true\ncmake libfmt-dev\nmake lttng-tools # a comment\n' >"$tmp/setup/base.txt"
if [ "$(id -u)" -eq 0 ]; then
  bash -c 'set -euo pipefail; . "$1/setup/packages.sh"; install_areas base' _ "$tmp" 2>"$tmp/said"
  grep -q 'install -y -qq --no-install-recommends libfmt-dev lttng-tools$' "$APT_LOG" ||
    fail "apt-get was asked: $(cat "$APT_LOG" 2>/dev/null)"
  grep -q 'setup: base, a test area: installing libfmt-dev lttng-tools' "$tmp/said" || fail "said: $(cat "$tmp/said")"
fi
echo "setup_packages: ok"
