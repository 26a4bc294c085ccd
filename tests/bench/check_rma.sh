#!/bin/bash
# `twinwire-bench rma` over tcp and pair (the host's RMA emulation): every
# test ran, every transfer was checked (a read compared with the exposure, a
# write slot by the server) and found nothing wrong, the figures are not zero.
# Then, over tcp, 40 other peers connect to its RMA server and close: the
# memory each one made it take (a 16 MiB region) is given back (issue 42, F4).
# usage: check_rma.sh TWINWIRE_BENCH   (TWINWIRE_PLUGIN_PATH: pair)
set -eu
bench=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for transport in tcp pair; do
    status=0
    "$bench" rma --transport "$transport" -D 1 --sizes 4k,1M >"$out/$transport.txt" 2>"$out/$transport.err" || status=$?
    if [ "$status" != 0 ]; then
        echo "FAIL: rma over $transport exited with status $status"
        cat "$out/$transport.err" "$out/$transport.txt"
        exit 1
    fi
    for test in stream rma-write rma-read; do
        for size in 4096 1048576; do
            line=$(awk -v t="$test" -v s="$size" '$1 == t && $2 == s { print; exit }' "$out/$transport.txt")
            [ -n "$line" ] || { echo "FAIL: $transport: no $test row for $size"; cat "$out/$transport.txt"; exit 1; }
            echo "$line" | grep -q FAILED && { echo "FAIL: $transport: $line"; exit 1; }
            echo "$line" | awk '{ exit !($3 > 0 && $4 > 0) }' ||
                { echo "FAIL: $transport: a zero figure: $line"; exit 1; }
        done
    done
    grep -q "x stream" "$out/$transport.txt" || { echo "FAIL: $transport: no ratio to stream"; exit 1; }
    echo "ok: rma over $transport: $(grep -c . "$out/$transport.txt") lines, every transfer checked"
done

# --- memory given back when RMA peers close ----------------------------------
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# One peer: connect, wait for the server's first 16 bytes (its hello: the
# region is allocated and prefilled by then), close.
visit() {
    local got
    exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
    got=$(timeout 20 head -c 16 <&3 | wc -c)
    exec 3<&-
    [ "$got" = 16 ]
}
# --sizes 1M and the window of 8: a 16 MiB region per connection, 8 MiB of it
# written (the read slots). Long enough to outlast the check; stopped below.
# Under ASan, freed memory would wait in its quarantine (256 MiB): none here.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
    "$bench" rma --transport tcp -t rma-read --sizes 1M -D 600 >"$out/memory.txt" 2>"$out/memory.err" &
pid=$!
stop_bench() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
trap 'stop_bench; rm -rf "$out"' EXIT
port=
for _ in $(seq 600); do # 60 s at most: the port is printed before the run starts
    port=$(sed -n 's/^twinwire-bench rma: RMA server on .* port \([0-9]*\)$/\1/p' "$out/memory.err")
    [ -n "$port" ] || ! kill -0 "$pid" 2>/dev/null && break
    sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: twinwire-bench rma printed no RMA port"; cat "$out/memory.err"; exit 1; }
# 10 peers first: the allocator's (and a sanitizer's) own high-water marks
# are reached before the measure starts.
for i in $(seq 10); do
    visit "$port" || { echo "FAIL: warm-up peer $i got no hello from the RMA server"; exit 1; }
done
base=$(rss_kb "$pid")
for i in $(seq 40); do
    visit "$port" || { echo "FAIL: peer $i got no hello from the RMA server"; exit 1; }
done
after=$(rss_kb "$pid")
# The closes are handled on the bench's loop, after the peers left: wait
# (60 s at most) for the memory to come back within 64 MiB of the start,
# where 40 regions kept would be 320 MiB.
bound=$((base + 64 * 1024))
for _ in $(seq 600); do
    now=$(rss_kb "$pid")
    [ "$now" -le "$bound" ] && break
    sleep 0.1
done
kill -0 "$pid" 2>/dev/null || { echo "FAIL: twinwire-bench rma exited under the peers"; cat "$out/memory.err"; exit 1; }
if [ "$now" -gt "$bound" ]; then
    echo "FAIL: 40 RMA peers connected and closed: resident $base kB before, $now kB after (bound $bound kB)"
    exit 1
fi
echo "ok: 40 RMA peers connected and closed: resident $base kB before, $after kB right after, $now kB after the closes"
