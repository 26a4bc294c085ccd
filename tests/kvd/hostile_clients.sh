#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# twinwire-kvd against hostile clients, the real binary over TCP, with the
# address space bounded (prlimit --as) the way an operator's ulimit -v or a
# container's memory limit bounds it, and with few file descriptors:
#   - MGET of a 1 MiB key 3000 times (a 21 KB request asking for 3000 MiB);
#   - the same with the reply limit out of the way, so memory runs out for real;
#   - 200 connections that send only "*1048576\r\n";
#   - more clients than the open-file limit allows.
# TAP output; exit 77 when prlimit or python3 is missing.
#
#   hostile_clients.sh KVD
set -u
KVD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
CLIENT=$HERE/hostile_client.py

for tool in prlimit python3; do
    if ! command -v $tool >/dev/null; then
        echo "1..0 # SKIP $tool is not installed"
        exit 77
    fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kvd-hostile.XXXXXX")
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do { kill -KILL "$p" && wait "$p"; } 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
. "$HERE/tap.sh"

# start NAME LIMITS ARGS...: the daemon under prlimit LIMITS (a word like
# --as=1073741824), waiting until it serves; sets PID_<NAME>, PORT_<NAME>.
start() {
    local name=$1 limits=$2; shift 2
    local log=$WORK/$name.log
    prlimit $limits -- "$KVD" --port 0 --transport tcp --log-file "$log" "$@" 2>"$WORK/$name.stderr" &
    await_daemon "$name" $!
}
client() { python3 "$CLIENT" "$@" 2>&1; }
alive() { kill -0 "$1" 2>/dev/null && echo alive || echo "exited ($(wait "$1"; echo "status $?"))"; }
# still_serving NAME: the daemon NAME is running and answers a new client.
still_serving() {
    local pid=PID_$1 port=PORT_$1
    same "$1: the daemon is still running" "$(alive "${!pid}")" alive
    same "$1: other clients are still served" "$(client "${!port}" ping)" "+PONG"
}

# skip DESCRIPTION REASON: a case that cannot run here, reported as such.
skip() { ok "$1 # SKIP $2"; }

echo "# twinwire-kvd against hostile clients"
AS=$((1024 * 1024 * 1024))
LIMIT_AS=--as=$AS
# AddressSanitizer and ThreadSanitizer reserve terabytes of shadow memory:
# an address-space limit cannot apply to a sanitized build.  The cases that
# refuse a request run without the limit; those that need memory to run out
# are reported as skipped, one by one.
NO_AS=
if grep -qE '__(asan|tsan)_init' "$KVD"; then
    NO_AS="$KVD is built with a sanitizer, whose shadow memory needs more than a 1 GiB address space"
    LIMIT_AS=
    echo "# the address-space limit is off: $NO_AS"
fi

# --- one small request asking for gigabytes of replies ------------------
if start mget "$LIMIT_AS"; then
    P=$PORT_mget
    same "a 1 MiB value is stored" "$(client $P set big 1048576)" "+OK"
    same "MGET of it 3000 times (3000 MiB of replies) gets an error within the reply limit" \
        "$(client $P mget big 3000)" \
        "-ERR reply to 'mget' exceeds the reply limit of 67108864 bytes (write_buffer_limit); nothing was sent"
    still_serving mget
    same "MGET of it 60 times (60 MiB, within the limit) is answered" "$(client $P mget big 60)" "*60"
    has "the refused reply is logged" "$(cat "$WORK/mget.log")" \
        "WARN \[kvd\] client 127\.0\.0\.1:[0-9]+: the reply to 'mget' exceeds 67108864 bytes"
    same "INFO stats counts the refused reply" "$(client $P info replies_over_limit)" 1
else
    not_ok "a daemon with a 1 GiB address space starts"
fi

# --- memory running out for real while a reply is built -----------------
# write_buffer_limit = 8G puts the reply limit beyond the address space.
if [ -n "$NO_AS" ]; then
    for case in "MGET of it 3000 times runs out of memory: that client gets an error or is closed" \
        "oom: the daemon is still running" "oom: other clients are still served" "the value is intact" \
        "the client's close is logged with the reason" "INFO stats counts the client closed for memory"; do
        skip "$case" "$NO_AS"
    done
elif start oom "$LIMIT_AS" --set write_buffer_limit=8G; then
    P=$PORT_oom
    client $P set big 1048576 >/dev/null
    reply=$(client $P mget big 3000)
    has "MGET of it 3000 times runs out of memory: that client gets an error or is closed" "$reply" \
        '^(-ERR out of memory serving this request; closing the connection|closed)$'
    still_serving oom
    same "the value is intact" "$(client $P mget big 1)" "*1"
    has "the client's close is logged with the reason" "$(cat "$WORK/oom.log")" \
        "client 127\.0\.0\.1:[0-9]+ over tcp: out of memory while serving its request; closing the connection"
    same "INFO stats counts the client closed for memory" "$(client $P info clients_out_of_memory)" 1
else
    not_ok "a daemon with write_buffer_limit = 8G and a 1 GiB address space starts"
fi

# --- argument counts that reserve nothing --------------------------------
if start headers "$LIMIT_AS"; then
    same "200 connections announcing 1048576 arguments each leave PING answered beside them" \
        "$(client $PORT_headers headers 200)" "+PONG"
    still_serving headers
else
    not_ok "a daemon with a 1 GiB address space starts (headers)"
fi

# --- more clients than the open-file limit allows ----------------------------
if start fds "--nofile=100:100"; then
    has "maxclients is lowered to what 100 descriptors allow, and logged" "$(cat "$WORK/fds.log")" \
        'WARN \[kvd\] kvd\.maxclients lowered from 10000 to 64: the open file limit is 100 \(hard limit 100\)'
    same "64 clients are served and the 65th gets the redis error, then is closed" \
        "$(client $PORT_fds fill 64)" "64 PONG; one more: -ERR max number of clients reached; closed"
    same "a client after them is served" "$(client $PORT_fds ping)" "+PONG"
else
    not_ok "a daemon with 100 descriptors starts"
fi

finish
