#!/usr/bin/env bash
# The vtable ping-pong of tools/lab/latency-layers.sh, over the built-in
# TCP on the host: the server echoes, the client completes every round trip
# asked for and prints one figure; a client with nobody listening fails
# and says so.  (Its RDMA run is the benchmark itself, in the guest.)
set -uo pipefail
exe=$1
dir=$(mktemp -d)
trap 'kill $srv 2>/dev/null; wait; rm -rf "$dir"' EXIT
"$exe" --child lat-bench-server 127.0.0.1 tcp >"$dir/server.out" 2>"$dir/server.err" &
srv=$!
for _ in $(seq 100); do grep -q '^[0-9]' "$dir/server.out" && break; sleep 0.1; done
port=$(head -1 "$dir/server.out")
[ -n "$port" ] || { echo "FAIL: the server printed no port"; cat "$dir/server.err"; exit 1; }
for size in 64 4096 65536; do
    out=$("$exe" --child lat-bench-client 127.0.0.1 127.0.0.1 "$port" "$size" 500 tcp 2>"$dir/client.err") ||
        { echo "FAIL: the client at $size bytes exited $?"; cat "$dir/client.err"; exit 1; }
    value=$(awk '$1 == "one_way_p50_us" && $2 + 0 > 0 { print $2 }' <<<"$out")
    [ -n "$value" ] || { echo "FAIL: no positive one_way_p50_us at $size bytes in: $out"; exit 1; }
    echo "ok: $size bytes, 500 round trips, one way p50 $value us"
done
# Port 1 on loopback: nothing listens there.
if "$exe" --child lat-bench-client 127.0.0.1 127.0.0.1 1 64 10 tcp >"$dir/refused.out" 2>"$dir/refused.err"; then
    echo "FAIL: a client with nobody listening exited 0"; exit 1
fi
grep -q "lat-bench-client\|connect" "$dir/refused.err" ||
    { echo "FAIL: the refused client did not say why:"; cat "$dir/refused.err"; exit 1; }
echo "ok: a client with nobody listening fails: $(grep -m1 . "$dir/refused.err")"
