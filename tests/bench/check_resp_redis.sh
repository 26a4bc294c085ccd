#!/bin/sh
# The RESP mode against a real redis-server: every SET and GET gets a good
# reply, the keys really land in Redis, and error replies (WRONGTYPE) are
# counted and make the exit status non-zero.
# usage: check_resp_redis.sh TWINWIRE_BENCH
set -eu
bench=$1
for tool in redis-server redis-cli python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed (Debian: redis-server, redis-tools, python3)"; exit 77; }
done
dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.out "$dir"/*.err "$dir/redis.log"; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

# A free port: try a few until one redis-server accepts.
port=
for try in 1 2 3 4 5 6 7 8; do
    p=$(( 20000 + ($$ * 7 + try * 1009) % 40000 ))
    redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/redis.log" 2>&1 &
    pid=$!
    for wait in 1 2 3 4 5 6 7 8 9 10; do
        if redis-cli -p "$p" ping 2>/dev/null | grep -q PONG; then port=$p; break 2; fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    # redis-server may have exited already (the port was taken): under set -e
    # a failed kill would end the script here, silently, instead of trying the next port.
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
done
[ -n "$port" ] || fail "could not start redis-server on a free port"

"$bench" resp --port "$port" --transport tcp --clients 10 --requests 2000 --pipeline 4 --data-size 7 \
    --keyspace 500 --json >"$dir/run.out" 2>"$dir/run.err" || fail "resp exited with status $?"
python3 - "$dir/run.out" <<'PY' || fail "JSON document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["errors"] == 0 and d["transport"] == "tcp", d
assert [t["test"] for t in d["tests"]] == ["SET", "GET"], d["tests"]
for t in d["tests"]:
    assert t["replies"] == 2000 and t["error_replies"] == 0, t
    assert t["requests_per_s"] > 0 and t["p50_ms"] > 0 and t["p50_ms"] <= t["p99_ms"] <= t["p999_ms"], t
PY
echo "ok: 2000 SET and 2000 GET requests, all with good replies"

keys=$(redis-cli -p "$port" dbsize)
[ "$keys" -gt 0 ] && [ "$keys" -le 500 ] || fail "redis holds $keys keys, expected 1..500"
key=$(redis-cli -p "$port" --scan --pattern 'key:*' | head -n 1)
case $key in key:[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]) ;; *) fail "unexpected key name '$key'" ;; esac
[ "$(redis-cli -p "$port" get "$key")" = xxxxxxx ] || fail "$key does not hold the 7-byte value"
echo "ok: redis holds $keys keys named like $key with the value sent"

# redis-benchmark's INCR, LPUSH and MGET tests, with the short options it uses.
"$bench" resp -p "$port" --transport tcp -c 4 -n 300 -P 3 -d 5 -r 50 -t incr,lpush,mget --csv \
    >"$dir/more.out" 2>"$dir/more.err" || fail "resp -t incr,lpush,mget exited with status $?"
python3 - "$dir/more.out" <<'PY' || fail "CSV of incr, lpush, mget"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["test"] for r in rows] == ["INCR", "LPUSH", "MGET"], rows
for r in rows:
    assert r["requests"] == "300" and r["errors"] == "0" and float(r["requests_per_s"]) > 0, r
PY
[ "$(redis-cli -p "$port" llen mylist)" = 300 ] || fail "mylist holds $(redis-cli -p "$port" llen mylist) items, expected 300"
[ "$(redis-cli -p "$port" lindex mylist 0)" = xxxxx ] || fail "mylist does not hold the 5-byte value"
total=0
for key in $(redis-cli -p "$port" --scan --pattern 'counter:*'); do total=$((total + $(redis-cli -p "$port" get "$key"))); done
[ "$total" -eq 300 ] || fail "the counters add up to $total, expected 300 INCRs"
echo "ok: 300 INCR, LPUSH and MGET requests each, all with good replies; the counters add up to 300, mylist holds 300"

redis-cli -p "$port" flushall >/dev/null
redis-cli -p "$port" rpush key:000000000000 a >/dev/null
if "$bench" resp --port "$port" --transport tcp --clients 2 --requests 50 --keyspace 1 --tests get \
    >"$dir/wrongtype.out" 2>"$dir/wrongtype.err"; then
    fail "error replies did not make the exit status non-zero"
fi
grep -q 'WRONGTYPE' "$dir/wrongtype.out" || fail "the WRONGTYPE error is not reported"
grep -q '^GET  *50 .* 50$' "$dir/wrongtype.out" || fail "the 50 error replies are not counted"
echo "ok: WRONGTYPE replies are counted as errors and the exit status is non-zero"
