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
grep -q '^latency (us): rt = round trip; ow = one way = rt / 2' "$out/table" || fail "one-way columns not labelled"
grep -q '^connections: 8 over tcp$' "$out/table" || fail "no connections line"
# stderr holds the tool's own status lines and progress lines (none in a run
# under a second), and nothing else: no warning, no error.
if grep -Ev '^(twinwire-bench local: |\[(latency|throughput)[^]]*\] +[0-9]+ s: [0-9])' "$out/err" | grep -q .; then
    fail "stderr has more than status and progress lines"
fi
# Rows: size, conns, then figures; every figure must be a number and the rates non-zero.
awk '
    /^latency/ { section = "latency"; next }
    /^throughput/ { section = "throughput"; next }
    /^size/ || NF == 0 { next }
    section == "latency" && $1 ~ /^[0-9]+$/ {
        rows++
        if ($3 != 2) { print "latency " $1 $2 ": conns " $3; bad = 1 }
        if ($4 != 600) { print "latency " $1 $2 ": round trips " $4 ", expected 600"; bad = 1 }
        for (i = 5; i <= 15; i++) if (!($i + 0 > 0)) { print "latency " $1 $2 ": field " i " is " $i; bad = 1 }
        # One way is half the round trip: mean, p50, p99, p99.9 (rounded to 0.1 us in the rt columns).
        for (i = 0; i < 4; i++) {
            d = $(12 + i) * 2 - $(6 + i); if (d < 0) d = -d
            if (d > 0.11) { print "latency " $1 $2 ": one way " $(12 + i) " is not half of " $(6 + i); bad = 1 }
        }
    }
    section == "throughput" && $1 ~ /^[0-9]+$/ {
        rows++
        if (!($4 + 0 > 0) || !($6 + 0 > 0)) { print "throughput " $1 $2 ": MB/s " $4 " msgs/s " $6; bad = 1 }
        # Gb/s (10^9 bits) beside MB/s (2^20 bytes): the same rate in two units.
        g = $4 * 1048576 * 8 / 1e9; d = g - $5; if (d < 0) d = -d
        if (d > 0.001 + g * 0.01) { print "throughput " $1 $2 ": " $5 " Gb/s is not " $4 " MB/s"; bad = 1 }
        expected = ($2 == "B" ? $1 : $1 * 1024) * 600
        if ($7 != expected) { print "throughput " $1 $2 ": bytes " $7 ", expected " expected; bad = 1 }
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
assert abs(tp["gbit_per_s"] - tp["bytes"] * 8 / 1e9 / tp["seconds"]) < 1e-6 * tp["gbit_per_s"] + 1e-9, tp
for k in ("mean", "p50", "p99", "p999"):
    assert lat["one_way_%s_us" % k] == lat["%s_us" % k] / 2, (k, lat)
# What a result needs to be compared later.
import re, socket
assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+.*", d["version"]), d["version"]
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", d["time"]), d["time"]
assert d["host"] == socket.gethostname(), d["host"]
assert d["command_line"] == "local --transport tcp --iterations 200 --sizes 4k --json", d["command_line"]
c = d["configuration"]
assert c["transport"] == {"value": "tcp", "origin": "--transport"}, c["transport"]
assert c["log_level"]["value"] == "warn" and c["threads"]["value"] == "1", c
PY
echo "ok: --json document has the fields, non-zero figures, one way, Gb/s, version, time, host and configuration"

"$bench" local --transport tcp -n 100 -s 64,1k --csv >"$out/csv" 2>"$out/err" || fail "local --csv exited with status $?"
python3 - "$out/csv" <<'PY' || fail "CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r["test"], r["size"]) for r in rows] == [("latency", "64"), ("latency", "1024"), ("throughput", "64"),
                                                 ("throughput", "1024")], rows
for r in rows:
    assert r["count"] == "100" and r["errors"] == "0", r
    if r["test"] == "latency":
        assert float(r["rt_p50_us"]) > 0 and abs(float(r["one_way_p50_us"]) * 2 - float(r["rt_p50_us"])) < 0.002, r
    else:
        assert float(r["mb_per_s"]) > 0 and float(r["gbit_per_s"]) > 0 and r["bytes"] == str(100 * int(r["size"])), r
PY
echo "ok: --csv has a header and one row per test and size"
