#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs inside the SoftRoCE guest (tools/softroce), where RDMA devices exist:
# what an operator sees of the transport (issue 13 items 3 and 4).
# - twinwire-info lists each port's link and netdev (tests/unit/check_info_rdma.sh);
# - with RLIMIT_MEMLOCK too low (and no CAP_IPC_LOCK), transport = auto falls
#   back to TCP with a WARN line that log_level = warn shows, naming what
#   the pool can grow to;
# - with Debian's default RLIMIT_MEMLOCK (8 MiB), RDMA still serves, with a
#   smaller pool and a WARN line saying what it holds; twinwire-info says
#   how many idle and streaming connections the limit allows;
# - under that limit an RDMA server started by hand (twinwire-bench server)
#   holds 500 connections and streams to one more at once (issue 41);
# - the notify protocol's STATUS names RDMA as the transport in use.
# One TAP stream.
#
#   guest_service.sh KVD INFO PLUGIN_DIR PROBE BENCH
set -u
KVD=$1 INFO=$2 PLUGIN_DIR=$3 PROBE=$4 BENCH=$5
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${SOFTROCE_SERVER_IP:-}" ]; then
    echo "guest_service.sh: SOFTROCE_SERVER_IP is not set: run me through softroce-run" >&2
    exit 2
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kvd-guest-service.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
. "$HERE/tap.sh"

# twinwire-info's own TAP lines, renumbered into this stream (the guest has
# no /dev/fd: a file, not a process substitution).
"$HERE/../unit/check_info_rdma.sh" "$INFO" "$PLUGIN_DIR" >"$WORK/info.tap"
while IFS= read -r line; do
    case $line in
    "ok "*) ok "twinwire-info: ${line#ok * - }" ;;
    "not ok "*) not_ok "twinwire-info: ${line#not ok * - }" ;;
    "#"*) echo "$line" ;;
    esac
done <"$WORK/info.tap"

# A memlock limit that disables RDMA, at log_level = warn.
(ulimit -l 64 && exec setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock \
    "$KVD" --port 0 --bind "$SOFTROCE_SERVER_IP" --log-level warn --log-file "$WORK/memlock.log") &
pid=$!
until_true 60 grep -qs 'falling back to TCP' "$WORK/memlock.log"
kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
has "RDMA disabled by RLIMIT_MEMLOCK: the fallback to TCP is a WARN line, shown at log_level = warn" \
    "$(cat "$WORK/memlock.log")" 'WARN \[transport\] using tcp: RDMA plugin refused: RLIMIT_MEMLOCK is 64 KiB'
has "it names what the pool can grow to and the fix" "$(cat "$WORK/memlock.log")" \
    'can grow to 257 MiB per event-loop thread and device[^|]*LimitMEMLOCK=infinity'

# Debian's default limit, as a daemon started by hand has it: RDMA, not TCP.
memlock8() { (ulimit -l 8192 && exec setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock "$@"); }
memlock8 "$KVD" --port 0 --bind "$SOFTROCE_SERVER_IP" --log-file "$WORK/memlock8.log" &
pid=$!
until_true 60 grep -qs ' serving on ' "$WORK/memlock8.log"
log=$(cat "$WORK/memlock8.log")
has "with RLIMIT_MEMLOCK at 8 MiB the daemon serves over RDMA" "$log" ' serving on [0-9.]+:[0-9]+ over rdma'
has "a WARN line says the pool was fitted to the limit and how many idle connections it holds" "$log" \
    'WARN \[rdma\] RLIMIT_MEMLOCK is 8192 KiB, less than rdma.pool_max \(256 MiB\) plus queues: the pool starts at [^ ]+ [KM]iB and grows to [^ ]+ [KM]iB per event-loop thread and device, room for [0-9]+ idle connections'
port=$(serving_port "$WORK/memlock8.log")
out=$(memlock8 "$PROBE" --host "$SOFTROCE_SERVER_IP" --port "${port:-0}" --transport rdma --show-transport PING 2>&1)
has "an RDMA client limited alike gets its answer over RDMA" "$out" 'transport: rdma.*PONG'
kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
out=$(memlock8 "$INFO" --plugin "$PLUGIN_DIR" 2>&1)
echo "# $(grep -o 'memlock: .*' <<<"$out" | head -1)"
has "twinwire-info says how many idle and streaming connections the limit allows" "$out" \
    'memlock: 8192 KiB; per event-loop thread and device: [0-9]+ idle connections \([0-9.]+ KiB each, [0-9]+ registered at start\) within rdma.pool_max \([^)]+\), or [0-9]+ idle beside [1-9][0-9]* streaming with rings grown to [0-9]+ [KM]iB'

# 500 connections and a streaming one against a server under the same
# limit: the 500 ping-pong 64 B now and then (their rings never grow), the
# streaming one grows its rings within what the limit leaves.
memlock8 "$BENCH" server --transport rdma --listen "$SOFTROCE_SERVER_IP" --port 0 >"$WORK/bench-server.out" \
    2>"$WORK/bench-server.log" &
pid=$!
until_true 60 grep -qs 'listening on' "$WORK/bench-server.out"
port=$(sed -n 's/.*listening on [0-9.]*:\([0-9]*\) .*/\1/p' "$WORK/bench-server.out")
"$BENCH" client --transport rdma --host "$SOFTROCE_SERVER_IP" --port "${port:-0}" --source "$SOFTROCE_CLIENT_IP" \
    -c 500 -t latency -s 64 -D 30 --json >"$WORK/many.json" 2>"$WORK/many.log" &
many=$!
sleep 15
"$BENCH" client --transport rdma --host "$SOFTROCE_SERVER_IP" --port "${port:-0}" --source "$SOFTROCE_CLIENT_IP" \
    -c 1 -t throughput -s 64k -D 5 --json >"$WORK/stream.json" 2>"$WORK/stream.log"
stream_rc=$?
wait "$many"
many_rc=$?
kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
has "under RLIMIT_MEMLOCK 8 MiB, 500 connections are served over RDMA with no error (exit $many_rc)" \
    "$(cat "$WORK/many.json") exit $many_rc" '"transport": *"rdma".*"connections": *500.*"errors": *0.* exit 0$'
has "and one more streams 64 KiB writes beside them (exit $stream_rc)" \
    "$(cat "$WORK/stream.json") exit $stream_rc" '"transport": *"rdma".*"bytes": *[1-9][0-9]*.*"errors": *0.* exit 0$'
if grep -q 'refused RDMA connection' "$WORK/bench-server.log"; then
    not_ok "the server refused no connection" "it did:" "$(grep 'refused RDMA connection' "$WORK/bench-server.log" | head -3)"
else
    ok "the server refused no connection"
fi
echo "# the streaming connection: $(grep -o '"bytes": *[0-9]*' "$WORK/stream.json" | head -1); server log: $(grep -c . "$WORK/bench-server.log") lines"

# Type=notify over RDMA: the STATUS line names the transport in use.
out=$("$HERE/notify_manager.py" "$WORK" "$KVD" --port 0 --bind "$SOFTROCE_SERVER_IP" --log-file "$WORK/notify.log")
has "READY=1 with STATUS naming RDMA (auto chooses it here)" "$out" \
    "datagram=READY=1\|STATUS=serving on ${SOFTROCE_SERVER_IP//./\\.}:[0-9]+ over rdma\+tcp \(transport rdma\)"
finish
