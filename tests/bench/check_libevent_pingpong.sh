#!/bin/sh
# twinwire-libevent-pingpong (the raw libevent anchor of tcp-compare.sh): its
# client counts exactly the round trips asked for against its own server, in
# twinwire-bench's --csv columns with non-zero latencies and no errors, and
# fails with a message when nothing listens.
# usage: check_libevent_pingpong.sh TWINWIRE_LIBEVENT_PINGPONG
set -eu
prog=$1
out=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; for f in "$out"/*; do echo "--- $f"; cat "$f"; done; exit 1; }

# A port nobody else in this run picks: derived from our pid, retried on a clash.
for try in 1 2 3 4 5; do
    port=$(( 40000 + ($$ * 7 + try * 131) % 20000 ))
    "$prog" server --listen 127.0.0.1 --port "$port" >"$out/server" 2>&1 &
    server=$!
    sleep 0.2
    kill -0 "$server" 2>/dev/null && break
    server=
done
[ -n "$server" ] || fail "the server could not listen on any of 5 ports"

"$prog" client --host 127.0.0.1 --port "$port" --iterations 500 --csv >"$out/csv" 2>"$out/err" ||
    fail "client exited with status $?"
head -1 "$out/csv" | grep -q '^test,size,connections,count,seconds,rate_per_s,rt_mean_us,rt_p50_us,' ||
    fail "not twinwire-bench's csv header"
awk -F, '$1 == "latency" {
        found = 1
        if ($2 != 64) { print "size " $2 ", expected 64"; exit 1 }
        if ($4 != 500) { print "count " $4 ", expected 500"; exit 1 }
        if (!($8 + 0 > 0) || !($14 + 0 > 0)) { print "p50 not positive: rt " $8 ", one way " $14; exit 1 }
        if ($20 != 0) { print "errors " $20; exit 1 }
    } END { if (!found) { print "no latency line"; exit 1 } }' "$out/csv" >"$out/why" || fail "$(cat "$out/why")"

kill "$server"
wait "$server" 2>/dev/null || true
server=
if "$prog" client --host 127.0.0.1 --port "$port" --iterations 10 >"$out/refused" 2>&1; then
    fail "the client succeeded with nothing listening"
fi
grep -qi 'connect\|refused' "$out/refused" || fail "no reason given when nothing listens"
echo "ok: 500 round trips counted, csv as twinwire-bench's; a refused connect fails with a reason"
