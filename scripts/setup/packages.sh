# The areas' package lists (scripts/setup/<area>.txt) and their install
# (sourced by scripts/setup.sh, not run).  A list: `# purpose: ...` (what the
# area is for, said when it is installed), `# programs: ...` (what tells that
# it is installed: programs on PATH, or absolute paths), then packages, any
# number a line, `#` comments.
setup_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The areas there are, in the order they are installed.
all_areas() {
  local f
  echo base
  for f in "$setup_dir"/*.txt; do
    f=$(basename "$f" .txt)
    [ "$f" = base ] || echo "$f"
  done
}

area_exists() { [ -f "$setup_dir/$1.txt" ]; }

# A header field of an area's list (purpose, programs).
area_field() { sed -n "s/^# $2: //p" "$setup_dir/$1.txt" | head -n 1; }

# Whether an area's programs (its `# programs:` line) are all here.
area_installed() {
  local p
  for p in $(area_field "$1" programs); do
    case $p in
      /*) [ -e "$p" ] || return 1;;
      *) command -v "$p" >/dev/null || return 1;;
    esac
  done
}

# The packages of an area's list, one a line.
area_packages() { sed -e 's/#.*//' "$setup_dir/$1.txt" | tr -s ' \t' '\n\n' | sed '/^$/d'; }

# Those of PKG... that are not installed.  dpkg-query exits 1 when it has
# never heard of one of them (the usual case on a fresh machine): that is an
# answer (not installed), not an error.
missing_packages() {
  local p installed
  installed=$({ dpkg-query -W -f='${Package}\t${Status}\n' "$@" 2>/dev/null || true; } |
    awk -F'\t' '$2 == "install ok installed" {print $1}')
  for p in "$@"; do
    grep -qx -- "$p" <<<"$installed" || echo "$p"
  done
}

# Installs what AREA... lack, saying for each area what comes and why.
install_areas() {
  local area missing=() m list
  for area in "$@"; do
    list=$(missing_packages $(area_packages "$area"))  # a failure stops here, not silently
    [ -n "$list" ] || continue
    mapfile -t m <<<"$list"
    echo "setup: $area, $(area_field "$area" purpose): installing ${m[*]}" >&2
    missing+=("${m[@]}")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install packages (apt-get)" >&2
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
