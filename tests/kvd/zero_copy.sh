#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# kvd.zero_copy (issue 14 item 2): requests parsed from borrowed receive
# buffers, large GET replies sent from lent send buffers, and the copying
# path (kvd.zero_copy = no) answering byte for byte the same.  Over fault
# with fault.max_read = 1 (and rx_latency_ms, so fault lends from its own
# queue) every buffer holds one byte, so every request is split at every
# byte boundary: its first byte is borrowed, the handler leaves it, and the
# rest goes through the input buffer.  A client that half-closes after its
# last request still gets every reply.  TAP output.
#
#   zero_copy.sh KVD        (TWINWIRE_PLUGIN_PATH finds the fault plugin)
set -u
KVD=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kvd-zero-copy.XXXXXX")
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
. "$(dirname "$0")/tap.sh"

# start NAME ARGS...: a daemon on a free port; sets PORT_NAME.
start() {
    local name=$1
    shift
    "$KVD" --port 0 --bind 127.0.0.1 --log-file "$WORK/$name.log" "$@" 2>"$WORK/$name.stderr" &
    await_daemon "$name" $!
}

# session PORT: sends a pipeline of requests (a 200 KiB value, an inline
# command, a multibulk request, a malformed one last) and half-closes; prints
# what came back, then the client's zero-copy counters from a second
# connection's INFO (which reports that connection's own counters).
session() {
    python3 - "$1" <<'PY'
import socket, sys
port = int(sys.argv[1])
big = bytes((i * 7) % 251 for i in range(200 * 1024))
def bulk(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out
reqs = bulk("SET", "big", big) + bulk("GET", "big") + b"PING\r\n" + bulk("SET", "k", "v") + \
       bulk("GET", "k") + bulk("DEL", "k") + bulk("GET", "big") + b"*1\r\n$x\r\n"
s = socket.create_connection(("127.0.0.1", port))
s.sendall(reqs)
s.shutdown(socket.SHUT_WR)
s.settimeout(20)
got = b""
while True:
    chunk = s.recv(1 << 16)
    if not chunk:
        break
    got += chunk
want = b"+OK\r\n" + b"$%d\r\n%s\r\n" % (len(big), big) + b"+PONG\r\n+OK\r\n$1\r\nv\r\n:1\r\n" + \
       b"$%d\r\n%s\r\n" % (len(big), big)
rest = got[len(want):]
print("replies", "match" if got.startswith(want) else "differ (%d bytes, want %d + error)" % (len(got), len(want)))
print("error", rest.decode(errors="replace").strip())
# The counters of a connection that GETs the big value.
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(20)
s.sendall(bulk("GET", "big"))
need = len(big) + 10
got = b""
while len(got) < need:
    got += s.recv(1 << 16)
s.sendall(bulk("INFO", "transport"))
info = b""
while b"client_zero_copy_recvs" not in info or not info.endswith(b"\r\n"):
    chunk = s.recv(1 << 16)
    if not chunk:
        break
    info += chunk
for line in info.decode().split("\r\n"):
    if line.startswith("client_zero_copy_"):
        print(line)
PY
}

# check NAME ZERO_COPY: the session's replies, and whether lent/borrowed buffers were used.
check() {
    local name=$1 zc=$2 port_var=PORT_$1 out
    out=$(session "${!port_var}" 2>&1)
    has "$name: every reply of a half-closed pipeline arrives, byte for byte" "$out" $'replies match\n'
    has "$name: a malformed request gets a clear error" "$out" "error -ERR Protocol error: invalid bulk length"
    if [ "$zc" = yes ]; then
        has "$name: requests were read from borrowed buffers" "$out" $'client_zero_copy_recvs:[1-9]'
        has "$name: the large GET reply went out from lent buffers" "$out" $'client_zero_copy_sends:[1-9]'
    else
        has "$name: kvd.zero_copy = no borrows and lends nothing" "$out" \
            $'client_zero_copy_sends:0\nclient_zero_copy_recvs:0'
    fi
}

if start zc --transport tcp; then check zc yes; fi
if start copy --transport tcp --set kvd.zero_copy=no; then check copy no; fi
# rx_latency_ms makes fault lend its own queue, cut by max_read (alone,
# max_read cuts only read calls and borrows go to the inner transport).
if start bytewise --transport fault --set fault.max_read=1 --set fault.rx_latency_ms=1 --set fault.seed=1; then
    check bytewise yes
fi
finish
