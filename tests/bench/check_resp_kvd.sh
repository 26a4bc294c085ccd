#!/bin/sh
# twinwire-bench resp against twinwire-kvd over TCP: redis-benchmark's SET,
# GET, INCR, LPUSH and MGET tests each get a good reply to every request
# (kvd's lists serve LPUSH), and the CSV has a line per test.
# usage: check_resp_kvd.sh TWINWIRE_BENCH TWINWIRE_KVD
set -u
bench=$1 kvd=$2
dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

"$kvd" --port 0 --transport tcp --log-file "$dir/kvd.log" 2>"$dir/kvd.err" &
pid=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's/.* serving on [^ ]*:\([0-9]*\) over .*/\1/p' "$dir/kvd.log" 2>/dev/null | head -1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
[ -n "$port" ] || fail "twinwire-kvd did not start"

"$bench" resp -p "$port" --transport tcp -c 4 -n 500 -P 4 -r 100 -t set,get,incr,lpush,mget --csv \
    >"$dir/run.csv" 2>"$dir/run.err" || fail "resp exited with status $?"
python3 - "$dir/run.csv" <<'PY' || fail "CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["test"] for r in rows] == ["SET", "GET", "INCR", "LPUSH", "MGET"], rows
for r in rows:
    assert r["requests"] == "500" and r["errors"] == "0" and float(r["requests_per_s"]) > 0, r
PY
echo "ok: 500 SET, GET, INCR, LPUSH and MGET requests each to twinwire-kvd, all with good replies"
