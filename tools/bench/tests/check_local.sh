#!/bin/sh
# `twinwire-bench local` over TCP: the table has both sections with a row per
# size and non-zero figures, and --json gives one document with the same.
# usage: check_local.sh TWINWIRE_BENCH
set -eu
bench=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$out/table" "$out/json" 2>/dev/null; echo "--- stderr"; cat "$out/err" 2>/dev/null; exit 1; }

"$bench" local --transport tcp --threads 2 --connections 2 --iterations 300 --sizes 64,64k \
    >"$out/table" 2>"$out/err" || fail "local exited with status $?"
grep -q '^transport: tcp (' "$out/table" || fail "no transport line"
grep -q '^connections: 8 over tcp$' "$out/table" || fail "no connections line"
grep -q '^\[latency 64 B\]\|^\[throughput' "$out/err" || true # progress lines appear only after 1 s
# Rows: size, conns, then figures; every figure must be a number and the rates non-zero.
awk '
    /^latency/ { section = "latency"; next }
    /^throughput/ { section = "throughput"; next }
    /^size/ || NF == 0 { next }
    section == "latency" && $1 ~ /^[0-9]+$/ {
        rows++
        if ($3 != 2) { print "latency " $1 $2 ": conns " $3; bad = 1 }
        if ($4 != 600) { print "latency " $1 $2 ": round trips " $4 ", expected 600"; bad = 1 }
        for (i = 5; i <= 11; i++) if (!($i + 0 > 0)) { print "latency " $1 $2 ": field " i " is " $i; bad = 1 }
    }
    section == "throughput" && $1 ~ /^[0-9]+$/ {
        rows++
        if (!($4 + 0 > 0) || !($5 + 0 > 0)) { print "throughput " $1 $2 ": MB/s " $4 " msgs/s " $5; bad = 1 }
        expected = ($2 == "B" ? $1 : $1 * 1024) * 600
        if ($6 != expected) { print "throughput " $1 $2 ": bytes " $6 ", expected " expected; bad = 1 }
    }
    END { if (rows != 4) { print "expected 4 result rows, found " rows + 0; bad = 1 } exit bad }
' "$out/table" || fail "table figures"
echo "ok: table has latency and throughput rows with non-zero figures"

"$bench" local --transport tcp --iterations 200 --sizes 4k --json >"$out/json" 2>"$out/err" ||
    fail "local --json exited with status $?"
python3 - "$out/json" <<'PY' || fail "JSON document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["mode"] == "local" and d["transport"] == "tcp", d
assert d["errors"] == 0 and d["interrupted"] is False, d
assert d["connections"] == [{"transport": "tcp", "fallback_reason": "", "count": 2}], d["connections"]
(lat,) = d["latency"]
assert lat["size"] == 4096 and lat["round_trips"] == 200, lat
for k in ("mean_us", "p50_us", "p99_us", "p999_us", "min_us", "max_us", "round_trips_per_s"):
    assert lat[k] > 0, (k, lat)
assert lat["p50_us"] <= lat["p99_us"] <= lat["p999_us"] <= lat["max_us"], lat
(tp,) = d["throughput"]
assert tp["bytes"] == 200 * 4096 and tp["messages"] == 200, tp
assert tp["mb_per_s"] > 0 and tp["messages_per_s"] > 0 and tp["seconds"] > 0, tp
PY
echo "ok: --json document has the fields and non-zero figures"
