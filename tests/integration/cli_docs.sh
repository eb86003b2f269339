#!/bin/bash
# What the command line says about itself: --version, the man page the build
# makes with help2man (a section per subcommand), the bash completion script
# (completes subcommands, options, tracer and workload names, -o keys and
# their words where -o is --option), the set-up's link that lets `man
# tracebench` find the page, what `cmake
# --install` puts where (the cross-check's loop programs included), and `env`'s table (a row per tracer, no raw JSON, no
# library log lines; --json keeps everything).
set -euo pipefail
tb=$1
build=$2
work=$(mktemp -d /tmp/tracebench-cli-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

v=$("$tb" --version)
[[ "$v" =~ ^tracebench\ [0-9]+\.[0-9]+\.[0-9]+\ \(git\ [0-9a-f]+ ]] || fail "--version printed '$v'"

man=$build/bench/tracebench.1
[ -s "$man" ] || fail "no man page at $man (the build's man target; help2man from scripts/setup.sh)"
grep "^\.TH TRACEBENCH" "$man" | grep -qF "\"$v\"" || fail "the man page is not of this version ($v)"
paths=$("$tb" completion --list)
[ "$(echo "$paths" | wc -l)" -ge 10 ] || fail "completion --list names $(echo "$paths" | wc -l) subcommands"
while read -r p; do
  grep -qF ".SS \"tracebench $p\"" "$man" || fail "the man page has no section for 'tracebench $p'"
done <<< "$paths"
page=$(MANWIDTH=160 man -l "$man" 2> /dev/null | col -b)
for want in "--gap-us" "model predict" "EXIT STATUS" "refused input"; do
  grep -qF -- "$want" <<< "$page" || fail "the rendered man page lacks '$want'"
done

# The set-up's link: `man tracebench` finds the build's page (here in a
# folder of the test's own); an unwritable folder is said, not fatal.
src=$(cd "$(dirname "$0")/../.." && pwd)
(. "$src/scripts/setup/build.sh" && TRACEBENCH_MAN_DIR=$work/man/man1 link_man_page "$build") > /dev/null
[ -L "$work/man/man1/tracebench.1" ] || fail "the set-up linked no page into $work/man/man1"
[ "$(readlink -f "$(MANPATH=$work/man man -w tracebench)")" = "$(readlink -f "$man")" ] \
  || fail "man does not find $man through the set-up's link"
touch "$work/file"
msg=$( (. "$src/scripts/setup/build.sh" && TRACEBENCH_MAN_DIR=$work/file/man1 link_man_page "$build") 2>&1) \
  || fail "an unwritable man folder failed the set-up"
grep -qF "man -l" <<< "$msg" || fail "an unwritable man folder was not said: '$msg'"

"$tb" completion bash > "$work/tb.bash"
bash -n "$work/tb.bash" || fail "the completion script is not valid bash"
cmp -s "$work/tb.bash" "$build/bench/tracebench.bash" || fail "the build's completion script differs from the binary's"
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _tracebench; echo "${COMPREPLY[*]}"' \
    _ "$work/tb.bash" "$@"
}
check() {  # check WANT WORDS...: WANT is among the completions of WORDS
  local want=$1; shift
  local got; got=$(complete_words "$@")
  [[ " $got " == *" $want "* ]] || fail "completing '$*' gave '$got', not '$want'"
}
check run tracebench r
check report tracebench r
check --tracer tracebench run --tr
check --gap-us tracebench run --ga
check ftrace tracebench run -t ""
check getpid tracebench run -t ftrace -w get
check fit tracebench model ""
check --bootstrap tracebench model fit --b
check add tracebench history a
check crosscheck tracebench cro
check --case tracebench crosscheck --ca
[ -z "$(complete_words tracebench model fit --tr)" ] || fail "'model fit' completes run's --tracer"
# -o TRACER.KEY=VALUE, as bash splits it at '=': the keys, then a key's words.
check ftrace.clock= tracebench run -t ftrace -o ftrace.cl
check perf.clock= tracebench model validate -o perf.cl
check monotonic_raw tracebench run -o perf.clock = mono
check off tracebench run -o lttng.overwrite = ""
check inf tracebench run -t lttng -o lttng.blocking_timeout_us = ""
[ -z "$(complete_words tracebench export kcidb -o ftrace.cl)" ] || fail "export kcidb's -o (its output file) completes tracer keys"
[ -z "$(complete_words tracebench run -o ftrace.buffer_kb = "")" ] || fail "a number's value completes to words"

cmake --install "$build" --prefix "$work/inst" > /dev/null
# The cross-check's loop programs go where an installed tracebench looks for them (bin/../libexec/tracebench).
for f in bin/tracebench share/man/man1/tracebench.1 share/bash-completion/completions/tracebench \
         libexec/tracebench/tracebench-crosscheck-loop; do
  [ -s "$work/inst/$f" ] || fail "cmake --install put no $f"
done

"$tb" env > "$work/env.txt" 2> /dev/null
"$tb" env --json > "$work/env.json" 2> /dev/null
/usr/bin/python3 - "$work/env.txt" "$work/env.json" <<'PY'
import json, re, sys
text, j = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
rows = text[text.index("\ntracer "):].splitlines()[1:]
for t in j["tracers"]:
    row = [r for r in rows if re.match(re.escape(t["name"]) + r" +(available|unavailable) ", r)]
    assert len(row) == 1, (t["name"], rows)
    assert ("unavailable" in row[0]) == (not t["available"]), row
    for v in t["versions"].values():
        assert v in text, (t["name"], v)
assert '{"' not in text, "raw JSON in env's text"
assert "libbpf:" not in text, "a library's log lines in env's text"
print(f"ok: env table, {len(j['tracers'])} tracers")
PY
echo "cli docs: ok"
