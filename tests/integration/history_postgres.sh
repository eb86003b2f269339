#!/bin/bash
# tracebench history on PostgreSQL (run under with_postgres.sh, which makes a
# throw-away cluster and gives TB_PG_URI): two processes adding 50 runs each
# at once lose none; two runs with the same id from different folders both
# land, added at once on PostgreSQL and in turn on SQLite; the same runs
# added again are known; the same runs fed
# to both back ends read back alike through `history list`, `show`,
# `changes` and `report --history`; a database that is not ours is refused
# and left unchanged; a server that is down or silent gives exit 2 and a
# clear message, in bounded time, with the URI's password masked; libpq's
# key=value form names the same server, its password masked too.
set -euo pipefail
tracebench=$1
: "${TB_PG_URI:?run under with_postgres.sh}"
work=$(mktemp -d /tmp/tracebench-it-XXXXXX)
listener=
cleanup() {
  [ -n "$listener" ] && kill "$listener" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
pg=$TB_PG_URI
psql_pg() { runuser -u postgres -- psql -h "$TB_PG_SOCKET" -p "$TB_PG_PORT" -X -A -t -q "$@"; }
name=none/getpid/none/payload:0/threads:1

"$tracebench" run -t none -w getpid --quick --out "$work/real" > /dev/null 2>&1
good=$(ls -d "$work"/real/*/ | head -1)

# Copies of the real run: FOLDER COUNT PREFIX STEP [SAME_ID] -> runs with
# their own ids and dates, the figure scaled by STEP from the 9th on (with a
# little noise); SAME_ID gives every copy that one id and date.
copies() {
  /usr/bin/python3 - "$good/result.json" "$@" <<'PY'
import json, os, random, sys
src, out, count, prefix, step = sys.argv[1:6]
same = sys.argv[6] if len(sys.argv) > 6 else None
base = json.load(open(src))
rng = random.Random(prefix)
for i in range(int(count)):
    r = json.loads(json.dumps(base))
    r["context"]["run_id"] = same or f"{prefix}-{i:03d}"
    r["context"]["date_utc"] = "2026-11-01T00:00:00Z" if same else f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}T00:00:00Z"
    b = next(x for x in r["benchmarks"] if x["workload"] == "getpid")
    level = 1000.0 * (float(step) if i >= 8 else 1.0) * (1 + rng.gauss(0, 0.01))
    f = level / b["baseline"]["ns_per_event"]["p50"]
    for k in ("cycles_per_event", "ns_per_event"):
        for s in ("min", "p10", "p50", "p90", "p99", "max", "mean", "stddev", "mad"):
            b["baseline"][k][s] *= f
    b["baseline"]["repetition_medians_cycles"] = [x * f for x in b["baseline"]["repetition_medians_cycles"]]
    os.makedirs(f"{out}/{i:03d}")
    json.dump(r, open(f"{out}/{i:03d}/result.json", "w"))
PY
}

# 1. Two writers of 50 runs each at once, one `history add` of 50 each,
# forced to overlap: a third session holds the runs table against inserts
# while both start, so both have read before either writes.  Each set holds
# a run with one id shared by both (figures apart): one of the two must
# lose the race for that id and store its run as id~hash.
copies "$work/a" 49 a 1.0 && copies "$work/a-twin" 1 race-a 1.0 race-twin && mv "$work/a-twin/000" "$work/a/049"
copies "$work/b" 49 b 1.0 && copies "$work/b-twin" 1 race-b 1.0 race-twin && mv "$work/b-twin/000" "$work/b/049"
"$tracebench" history add "$good" --db "$pg" > /dev/null  # the schema
psql_pg -d tbhist -c "BEGIN; LOCK TABLE runs IN EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT" > /dev/null & holder=$!
sleep 1
"$tracebench" history add "$work/a" --db "$pg" > "$work/wa.txt" 2>&1 & wa=$!
"$tracebench" history add "$work/b" --db "$pg" > "$work/wb.txt" 2>&1 & wb=$!
rc=0; wait $wa || rc=$?; wait $wb || rc=$?; wait $holder
[ $rc -eq 0 ] || { cat "$work/wa.txt" "$work/wb.txt"; echo "a writer failed: exit $rc"; exit 1; }
n=$(psql_pg -d tbhist -c "SELECT count(*) FROM runs WHERE run_id ~ '^(a|b|race-twin)'")
[ "$n" = 100 ] || { cat "$work/wa.txt" "$work/wb.txt"; echo "two writers of 50 runs each: $n runs in the history"; exit 1; }
[ "$(psql_pg -d tbhist -c "SELECT count(*) FROM runs WHERE run_id LIKE 'race-twin~%'")" = 1 ] ||
  { echo "the raced id was not stored as id~hash"; exit 1; }
"$tracebench" history list --db "$pg" --json | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
assert len(s) == 1 and s[0]["runs"] == 101 and s[0]["runs_with_figure"] == 101, s'
# Adding them again changes nothing: the figures read back from the server
# are the ones stored, so each run is known as itself (not stored again as
# id~hash).
"$tracebench" history add "$work/a" "$work/b" --db "$pg" | tee "$work/again.txt"
grep -q '0 run(s) added, 100 already there' "$work/again.txt" || { echo "adding the same runs again added some"; exit 1; }
echo "two writers: 100 of 100 runs"

# 2. Two runs with one id (same second, two --out folders): both land, the
# second under id~hash; at once on PostgreSQL, in turn on SQLite.
copies "$work/twin1" 1 twin1 1.0 twin-run  # one id, figures apart (their noise)
copies "$work/twin2" 1 twin2 1.0 twin-run
"$tracebench" history add "$work/twin1" --db "$pg" > /dev/null 2>&1 & t1=$!
"$tracebench" history add "$work/twin2" --db "$pg" > /dev/null 2>&1 & t2=$!
wait $t1 $t2
for db in "$pg" "$work/twins.sqlite"; do
  if [ "$db" != "$pg" ]; then
    "$tracebench" history add "$work/twin1" --db "$db" > /dev/null
    "$tracebench" history add "$work/twin2" --db "$db" > /dev/null 2>&1
  fi
  "$tracebench" history show "$name" --db "$db" --json | /usr/bin/python3 -c '
import json, sys
ids = sorted(p["run_id"] for s in json.load(sys.stdin) for p in s["points"] if p["run_id"].startswith("twin-run"))
assert len(ids) == 2 and ids[0] == "twin-run" and ids[1].startswith("twin-run~") and len(ids[1]) == 9 + 12, ids'
done
echo "same id from two folders: both stored, on both back ends"

# 3. One series fed to both back ends reads back alike.
copies "$work/series" 16 series 1.2
psql_pg -d postgres -c "CREATE DATABASE tbsame"
pg_same=${pg/\/tbhist?//tbsame?}
for db in "$pg_same" "$work/same.sqlite"; do "$tracebench" history add "$work/series" --db "$db" > /dev/null; done
for cmd in "list --json" "show $name --json" "changes --min-change 0.05"; do
  "$tracebench" history $cmd --db "$pg_same" | grep -v '^history: ' > "$work/pg.out"
  "$tracebench" history $cmd --db "$work/same.sqlite" | grep -v '^history: ' > "$work/sqlite.out"
  cmp -s "$work/pg.out" "$work/sqlite.out" || { diff "$work/pg.out" "$work/sqlite.out"; echo "history $cmd differs between the back ends"; exit 1; }
done
grep -q "slower at 2026-01-09T00:00:00Z (run series-008" "$work/pg.out" || { cat "$work/pg.out"; echo "PostgreSQL: the step was not found at run 8"; exit 1; }
for db in "$pg_same" "$work/same.sqlite"; do
  out=$work/report-$([ "$db" = "$pg_same" ] && echo pg || echo sqlite)
  "$tracebench" report --history "$db" --out "$out" > /dev/null
done
/usr/bin/python3 - "$work/report-pg/report-input.json" "$work/report-sqlite/report-input.json" <<'PY'
import json, sys
pg, lite = (json.load(open(p))["history"] for p in sys.argv[1:3])
assert pg["db"].startswith("postgresql://") and lite["db"].endswith("same.sqlite"), (pg["db"], lite["db"])
assert pg["series"] == lite["series"] and len(pg["series"][0]["points"]) == 16, (pg, lite)
assert [c["run_id"] for c in pg["series"][0]["changes"]] == ["series-008"], pg["series"][0]["changes"]
PY
echo "list, show, changes and report --history: the same from both back ends"

# 4. A database that is not ours: refused (exit 2), left as it was.
psql_pg -d postgres -c "CREATE DATABASE other"
psql_pg -d other -c "CREATE TABLE runs(id int); INSERT INTO runs VALUES (1)"
other=${pg/\/tbhist?//other?}
# pg_dump's \restrict lines carry a random key per dump.
dump_other() { runuser -u postgres -- "$TB_PG_BIN/pg_dump" -h "$TB_PG_SOCKET" -p "$TB_PG_PORT" other | grep -v '^\\\(un\)\?restrict '; }
before=$(dump_other)
for cmd in "add $work/twin1" "list" "show $name" "changes"; do
  set +e; "$tracebench" history $cmd --db "$other" > "$work/other.txt" 2>&1; rc=$?; set -e
  [ $rc -eq 2 ] && grep -q "not a tracebench history database" "$work/other.txt" ||
    { cat "$work/other.txt"; echo "history $cmd on a foreign database: exit $rc"; exit 1; }
done
after=$(dump_other)
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after"); echo "a refused add changed a foreign database"; exit 1; }
echo "foreign database: refused, unchanged"

# 5. No server: at once; a server that accepts and never answers: after the
# URI's connect_timeout (2 s), else after tracebench's own (10 s).  Exit 2, a
# clear message, the password masked.
down="postgresql://postgres:s3cret@/tbhist?host=$work&port=1"
mkdir -p "$work/silent"
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
held = []
while True: held.append(s.accept()[0])' "$work/silent/.s.PGSQL.2" & listener=$!
for i in $(seq 50); do [ -S "$work/silent/.s.PGSQL.2" ] && break; sleep 0.1; done
silent="postgresql://postgres@/tbhist?host=$work/silent&port=2&password=s3cret"
for db in "$down" "$silent&connect_timeout=2" "$silent"; do
  case $db in *connect_timeout=2) limit=8000 ;; *) limit=16000 ;; esac
  start=$(date +%s%N)
  set +e; timeout 30 "$tracebench" history add "$work/twin1" --db "$db" > "$work/down.txt" 2>&1; rc=$?; set -e
  took_ms=$((($(date +%s%N) - start) / 1000000))
  cat "$work/down.txt"
  [ $rc -eq 2 ] || { echo "a server that is down or silent: exit $rc, expected 2"; exit 1; }
  grep -q "cannot connect to the history server" "$work/down.txt" || { echo "no clear message"; exit 1; }
  grep -q "s3cret" "$work/down.txt" && { echo "the password was printed"; exit 1; }
  grep -q '\*\*\*' "$work/down.txt" || { echo "the URI is not named (masked)"; exit 1; }
  [ $took_ms -lt $limit ] || { echo "gave up after $took_ms ms, expected less than $limit"; exit 1; }
  echo "gave up after $took_ms ms"
done
# 6. libpq's key=value form names the same server (issue 51): the same
# history read back, the password masked in every message, nothing made on
# disk after its name (it was taken for a SQLite path).
kv="host=$TB_PG_SOCKET port=$TB_PG_PORT dbname=tbhist user=postgres password=kv-s3cret"
(cd "$work" && "$tracebench" history add "$work/twin1" --db "$kv") > "$work/kv.txt" 2>&1 ||
  { cat "$work/kv.txt"; echo "history add with a key=value string failed"; exit 1; }
(cd "$work" && "$tracebench" history list --db "$kv") >> "$work/kv.txt" 2>&1
"$tracebench" history list --db "$pg" > "$work/kv-uri.txt" 2>&1
grep -q "kv-s3cret" "$work/kv.txt" && { cat "$work/kv.txt"; echo "the key=value password was printed"; exit 1; }
grep -q "password=\*\*\*" "$work/kv.txt" || { cat "$work/kv.txt"; echo "the key=value string is not named (masked)"; exit 1; }
grep -qF "$(sed -n 2p "$work/kv-uri.txt")" "$work/kv.txt" || { echo "the key=value form read another history"; exit 1; }
ls "$work" | grep -q '^host=' && { echo "a directory was made after the key=value string"; exit 1; }
echo "key=value form: the server, password masked"
echo "history_postgres: ok"
