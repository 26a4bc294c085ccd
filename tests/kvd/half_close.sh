#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 11 item 6, as a user saw it: printf '*1\r\n$4\r\nPING\r\n' | nc -N
# host port got nothing when the request and the end-of-stream arrived in
# one read.  The client here is a plain socket that sends and half-closes at
# once (what nc -N does), so both reach the daemon together.  TAP output.
#
#   half_close.sh KVD
set -u
KVD=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kvd-half-close.XXXXXX")
PID=
cleanup() {
    [ -n "$PID" ] && { kill -KILL "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; }
    rm -rf "$WORK"
}
trap cleanup EXIT
. "$(dirname "$0")/tap.sh"

"$KVD" --port 0 --bind 127.0.0.1 --transport tcp --log-file "$WORK/kvd.log" 2>"$WORK/kvd.stderr" &
PID=$!
if ! until_true 60 grep -qs ' serving on ' "$WORK/kvd.log"; then
    echo "1..1"; echo "not ok 1 - twinwire-kvd starts"; sed 's/^/#   /' "$WORK/kvd.log" "$WORK/kvd.stderr"; exit 1
fi
PORT=$(serving_port "$WORK/kvd.log")

# send_and_half_close BYTES: the reply bytes until the server closes (5 s bound).
send_and_half_close() {
    python3 - "$PORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
s.shutdown(socket.SHUT_WR)
s.settimeout(5)
got = b""
try:
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
except socket.timeout:
    got += b"<no end of stream within 5 s>"
sys.stdout.write(got.decode("latin-1").replace("\r\n", "|"))
PY
}

for round in 1 2 3 4 5; do
    same "PING sent with end-of-stream gets PONG, then the server closes (round $round)" \
        "$(send_and_half_close '*1\r\n$4\r\nPING\r\n')" "+PONG|"
done
same "three pipelined requests sent with end-of-stream get three replies" \
    "$(send_and_half_close '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n')" \
    '+OK|$1|v|+PONG|'
kill -0 "$PID" 2>/dev/null && ok "the daemon is still running" || not_ok "the daemon is still running"
finish
