#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A hostile peer of the RMA emulation: a raw TCP socket speaking the frame
format (docs/rma.md "The emulation") against rma-hostile-server, a twinwire
server that enabled RMA.  Each case is named; the output is TAP.

    hostile_peer.py SERVER [CASE...]       (no CASE: every case)

What it checks: the server's memory (VmRSS of /proc/PID/status) stays within
a bound whatever the peer sends without reading, the peer is paused and then
cut off with a reason, the wire's exact bounds and keys hold on one
connection, hello mismatches get their precise reasons, nothing after an
`end` frame reaches the application, and the memory is given back after the
peer closes.  Every wait has a deadline; nothing sleeps to hope.
"""
import os
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time

HELLO, DATA, END, READ_REQ, READ_DATA, READ_DONE, WRITE_DATA, WRITE_DONE = range(1, 9)
LAST = 1
MAGIC = 0x414D5254
TW_EREMOTEACCESS = 10011
REGION = 4096
# The server's write_buffer_limit here: small, so that a flood reaches it
# fast.  A peer whose answers wait unread is cut off after the output took
# nothing for shutdown_timeout_ms.
SERVER_SETTINGS = ["write_buffer_limit=1M", "write_high_watermark=512k", "write_low_watermark=256k",
                   "shutdown_timeout_ms=3000"]
STALL_S = 3.0
# How far the server's resident memory may grow over its start while one
# hostile peer floods it.  The emulation's bound per connection (docs/rma.md):
# output < max(write_buffer_limit, 320 KiB) + 220, the wire held <= 4 MiB +
# read_buffer_size + 16 + 65600, one frame's scratch 65600, the tables of
# reads and refused writes ~1.4 MB: about 7 MB here, with room left for the
# allocator.  Before the bounds it grew by hundreds of MB in seconds (issue
# 42, F2 and F3).
RSS_BOUND_KB = 24 * 1024
# Generous deadlines: they hold on a busy 2-core machine; a pass takes far less.
CLOSE_DEADLINE = 60.0
ANSWER_DEADLINE = 20.0

# The reasons the server gives (framework/src/rma_link.cpp); see cases below.
REASON_VERSION = "RMA: the peer speaks RMA emulation version 2, this side 1"
REASON_MALFORMED_HELLO = "RMA: the peer's RMA hello is malformed: flags 0, reserved 0, tag 72623859790382856"
REASON_NOT_ENABLED = "RMA: the peer did not enable RMA on this connection"
REASON_UNREAD = "RMA: the peer has not read its answers"
REASON_AFTER_END = "RMA: stream bytes after the peer's end of stream"
REASON_SECOND_END = "RMA: a second end frame (the peer's stream had already ended)"


def frame(kind, payload=b"", tag=0, flags=0, length=None):
    n = len(payload) if length is None else length
    return struct.pack("<IBBHQ", n, kind, flags, 0, tag) + payload


def hello(version=1, tag=0):
    return frame(HELLO, struct.pack("<II", MAGIC, version), tag=tag)


def read_req(tag, id_, key, offset, n):
    return frame(READ_REQ, struct.pack("<QQQQ", id_, key, offset, n), tag=tag)


def write_data(tag, id_, key, offset, data, last=True):
    return frame(WRITE_DATA, struct.pack("<QQQ", id_, key, offset) + data, tag=tag, flags=LAST if last else 0)


def pattern(k, offset, n):
    return bytes(((i * 7 + k) & 0xFF) for i in range(offset, offset + n))


class Failed(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failed(what)


class Server:
    """rma-hostile-server in its own process; its event lines collected."""

    def __init__(self, exe):
        self.proc = subprocess.Popen([exe] + SERVER_SETTINGS, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, errors="replace")
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._collect, daemon=True).start()
        line = self.wait_for(lambda l: l.startswith(("port ", "error ")), 30)
        if not line or not line.startswith("port "):
            raise Failed("the server did not start: %s" % (line or "no output"))
        self.port = int(line.split()[1])

    def _collect(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines.append("exited")
            self.cond.notify_all()

    def find(self, predicate):
        with self.cond:
            return next((l for l in self.lines if predicate(l)), None)

    def wait_for(self, predicate, timeout):
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                found = next((l for l in self.lines if predicate(l)), None)
                if found or time.monotonic() >= end:
                    return found
                self.cond.wait(min(0.2, end - time.monotonic()))

    def closed(self, conn_id):
        line = self.find(lambda l: l.startswith("close %d|" % conn_id))
        return line.split("|", 3)[1:] if line else None  # error, code, reason

    def wait_closed(self, conn_id, timeout=CLOSE_DEADLINE):
        self.wait_for(lambda l: l.startswith("close %d|" % conn_id), timeout)
        return self.closed(conn_id)

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise Failed("no VmRSS")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Peer:
    """One connection; `start` does the hello and takes the descriptors."""

    def __init__(self, server, rcvbuf=None):
        self.server = server
        self.s = socket.socket()
        if rcvbuf:
            # A peer that never reads: the kernel holds little for it.
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.connect(("127.0.0.1", server.port))
        self.s.settimeout(ANSWER_DEADLINE)
        # The server's id of this connection, from its accept line.
        accepted = re.compile(r"accept (\d+) 127\.0\.0\.1:%d$" % self.s.getsockname()[1])
        line = server.wait_for(lambda l: accepted.match(l) and int(l.split()[1]) not in Peer.taken, ANSWER_DEADLINE)
        expect(line, "the server logs the accept")
        self.id = int(line.split()[1])
        Peer.taken.add(self.id)
        self.inbuf = b""
        self.stream = b""
        self.answers = []  # (type, tag, flags, payload) of RMA frames received

    taken = set()  # ids of connections already matched to a Peer

    def send(self, data):
        self.s.sendall(data)

    def start(self, send_hello=True):
        if send_hello:
            self.send(hello())
        kind, _, tag, payload = self.read_frame()
        expect(kind == HELLO and payload == struct.pack("<II", MAGIC, 1) and tag == 0,
               "the server's first frame is its hello")
        words = self.read_line().split()
        expect(len(words) == 3 and words[0] == "D", "the server sends its descriptors first")
        self.rw, self.ro = (self.descriptor(bytes.fromhex(w)) for w in words[1:])
        self.send(frame(DATA, b"PING\n"))
        expect(self.read_line() == "PONG", "the server answers PING")
        return self

    @staticmethod
    def descriptor(d):
        magic, id_, key, length, access, version = struct.unpack("<IQQQII", d)
        expect(magic == MAGIC and version == 1, "a descriptor of the emulation")
        return {"id": id_, "key": key, "len": length, "access": access}

    def _fill(self):
        chunk = self.s.recv(65536)
        if not chunk:
            raise Failed("the server closed the connection (%s)" % (self.server.closed(self.id),))
        self.inbuf += chunk

    def read_frame(self):
        while len(self.inbuf) < 16:
            self._fill()
        n, kind, flags, _, tag = struct.unpack("<IBBHQ", self.inbuf[:16])
        while len(self.inbuf) < 16 + n:
            self._fill()
        payload, self.inbuf = self.inbuf[16:16 + n], self.inbuf[16 + n:]
        return kind, flags, tag, payload

    def read_line(self):
        while b"\n" not in self.stream:
            kind, flags, tag, payload = self.read_frame()
            if kind == DATA:
                self.stream += payload
            else:
                self.answers.append((kind, tag, flags, payload))
        line, self.stream = self.stream.split(b"\n", 1)
        return line.decode()

    def answer(self, tag):
        """The RMA frames for `tag` up to its done frame: (data, status, reason)."""
        data = b""
        while True:
            for i, (kind, t, _, payload) in enumerate(self.answers):
                if t != tag:
                    continue
                del self.answers[i]
                if kind == READ_DATA:
                    (at,) = struct.unpack("<Q", payload[:8])
                    expect(at == len(data), "read data in order")
                    data += payload[8:]
                    break
                status = struct.unpack("<i", payload[:4])[0]
                return data, status, payload[4:].decode(errors="replace")
            else:
                kind, flags, t, payload = self.read_frame()
                if kind == DATA:
                    self.stream += payload
                else:
                    self.answers.append((kind, t, flags, payload))

    def region(self, k, offset, n):
        self.send(frame(DATA, b"GET %d %d %d\n" % (k, offset, n)))
        return bytes.fromhex(self.read_line())

    def close(self):
        self.s.close()


def flood(server, peer, unit, seconds=CLOSE_DEADLINE):
    """Send `unit` again and again without reading, until the server cuts the
    peer off or the deadline.  Returns what happened; fails as soon as the
    server's memory passes the bound."""
    s = peer.s
    s.setblocking(False)
    batch = unit * max(1, 65536 // len(unit))
    base = server.rss_kb()
    out = {"sent": 0, "max_growth_kb": 0, "blocked_s": 0.0, "longest_block_s": 0.0, "closed": None, "error": None}
    pos, blocked_since = 0, None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        growth = server.rss_kb() - base
        out["max_growth_kb"] = max(out["max_growth_kb"], growth)
        if growth > RSS_BOUND_KB:
            raise Failed("the server grew by %d kB (bound %d kB) after %d bytes sent" % (growth, RSS_BOUND_KB,
                                                                                         out["sent"]))
        out["closed"] = server.closed(peer.id)
        if out["closed"]:
            break
        try:
            n = s.send(batch[pos:])
            out["sent"] += n
            pos = (pos + n) % len(batch)
            if blocked_since is not None:
                out["longest_block_s"] = max(out["longest_block_s"], time.monotonic() - blocked_since)
                blocked_since = None
        except BlockingIOError:
            if blocked_since is None:
                blocked_since = time.monotonic()
            out["longest_block_s"] = max(out["longest_block_s"], time.monotonic() - blocked_since)
            select.select([], [s], [], 0.05)
        except OSError as e:  # reset or broken pipe: the server cut it off
            out["error"] = e.strerror
            out["closed"] = server.wait_closed(peer.id, ANSWER_DEADLINE)
            break
    s.setblocking(True)
    return out


# --- the cases -----------------------------------------------------------
# Each takes the server and returns a line of detail for the TAP output.

def describe(r):
    return "sent %d bytes, max growth %d kB, longest pause %.1f s, closed: %s" % (
        r["sent"], r["max_growth_kb"], r["longest_block_s"], r["closed"])


def cut_off_by_flood(server, unit_of):
    """The server stops reading once its answers fill write_buffer_limit (the
    peer's sends block: paused), then cuts the peer off when they stay unread
    for shutdown_timeout_ms."""
    peer = Peer(server, rcvbuf=4096).start()
    r = flood(server, peer, unit_of(peer))
    peer.close()
    expect(r["closed"], "the peer was not cut off within %.0f s: %s" % (CLOSE_DEADLINE, describe(r)))
    # Paused: the peer's sends blocked for most of the stall (the kernel's
    # buffers fill in a fraction of it).
    expect(r["longest_block_s"] >= STALL_S / 3, "the server never paused reading: %s" % describe(r))
    expect(r["closed"][1] == "timed out" and r["closed"][2].startswith(REASON_UNREAD),
           "closed as %s" % (r["closed"],))
    return describe(r)


def case_refused_reads_never_read(server):
    """read requests refused (a forged key), the peer never reading its answers"""
    return cut_off_by_flood(server, lambda p: read_req(1, p.rw["id"], p.rw["key"] ^ 1, 0, 16))


def case_refused_writes_never_read(server):
    """writes refused (a read-only exposure), each its own write, never reading"""
    return cut_off_by_flood(server, lambda p: write_data(1, p.ro["id"], p.ro["key"], 0, b"x" * 8))


def case_empty_writes_never_read(server):
    """valid 0-byte writes, each answered, never reading"""
    return cut_off_by_flood(server, lambda p: write_data(1, p.rw["id"], p.rw["key"], 0, b""))


def case_reading_peer_resumed(server):
    """a peer that asks more answers than the output holds, and reads them, gets every one"""
    peer = Peer(server).start()
    count = 40000  # about 4.6 MB of answers: the output (1 MiB) fills and empties again
    unit = [read_req(tag, peer.rw["id"], peer.rw["key"] ^ 1, 0, 16) for tag in range(1, count + 1)]
    errors = []

    def send_all():
        try:
            peer.s.sendall(b"".join(unit))
        except OSError as e:
            errors.append(e)

    sender = threading.Thread(target=send_all)
    sender.start()
    base, growth, got = server.rss_kb(), 0, 0
    for tag in range(1, count + 1):
        _, status, why = peer.answer(tag)
        expect(refused(status, why), "answer %d: %d %r" % (tag, status, why))
        got += 1
        if tag % 1000 == 0:
            growth = max(growth, server.rss_kb() - base)
            expect(growth <= RSS_BOUND_KB, "the server grew by %d kB" % growth)
    sender.join(ANSWER_DEADLINE)
    expect(not errors, "sending: %s" % errors)
    expect(server.closed(peer.id) is None, "the server cut off a peer that reads: %s" % (server.closed(peer.id),))
    peer.send(frame(DATA, b"PING\n"))
    expect(peer.read_line() == "PONG", "the connection still serves the stream")
    peer.close()
    return "%d answers read, max growth %d kB" % (got, growth)


def case_frame_too_large(server):
    """an RMA frame declaring more than 64 KiB + 64 bytes is closed at its header"""
    peer = Peer(server).start()
    peer.send(frame(READ_REQ, length=65601))
    closed = server.wait_closed(peer.id)
    peer.close()
    expect(closed, "not closed")
    expect(closed[1] == "peer does not speak this transport" and
           closed[2] == "RMA: a frame of 65601 bytes (type 4): more than the 65600 any frame carries",
           "closed as %s" % (closed,))
    return closed[2]


def case_data_frame_claims_4g(server):
    """a data frame claiming 0xFFFFFFFF bytes is not buffered: the line limit cuts it off"""
    peer = Peer(server).start()
    peer.send(frame(DATA, length=0xFFFFFFFF))
    r = flood(server, peer, b"z" * 65536)
    peer.close()
    expect(r["closed"], "not cut off: %s" % describe(r))
    expect(r["closed"][1] == "record longer than the maximum", "closed as %s" % (r["closed"],))
    return describe(r)


def case_long_line_in_data_frame(server):
    """a 300-byte line inside one data frame closes as record_too_long (line limit 256)"""
    peer = Peer(server).start()
    peer.send(frame(DATA, b"y" * 300 + b"\n"))
    closed = server.wait_closed(peer.id)
    peer.close()
    expect(closed, "not closed")
    expect(closed[1] == "record longer than the maximum", "closed as %s" % (closed,))
    return "closed: %s" % (closed,)


def hello_case(server, data, reason):
    peer = Peer(server)
    peer.send(data)
    closed = server.wait_closed(peer.id)
    peer.close()
    expect(closed, "the server did not close the connection")
    error, code, why = closed
    line = "|".join(closed)
    expect(code == "peer does not speak this transport", "closed as %s" % line)
    expect(why.startswith(reason), "the reason: %s (expected %s...)" % (why, reason))
    return why


def case_hello_version_2(server):
    """a hello of version 2 is told the versions, not that RMA is off"""
    return hello_case(server, hello(version=2), REASON_VERSION)


def case_hello_changed_tag(server):
    """a hello of version 1 with a changed tag is told its hello is malformed, not about versions"""
    return hello_case(server, hello(tag=0x0102030405060708), REASON_MALFORMED_HELLO)


def case_no_hello(server):
    """stream bytes where the hello belongs: the peer did not enable RMA"""
    return hello_case(server, b"*1\r\n$4\r\nPING\r\n", REASON_NOT_ENABLED)


def case_bytes_after_end(server):
    """stream bytes after the peer's `end` frame never reach the application: a protocol error"""
    peer = Peer(server).start()
    peer.send(frame(DATA, b"BEFORE\n") + frame(END) + frame(DATA, b"AFTER\n"))
    closed = server.wait_closed(peer.id)
    peer.close()
    expect(closed, "not closed")
    expect(server.find(lambda l: l == "line %d BEFORE" % peer.id), "the line before the end was not delivered")
    expect(server.find(lambda l: l == "eof %d" % peer.id), "on_eof did not run")
    expect(not server.find(lambda l: l == "line %d AFTER" % peer.id), "the application read a line sent after end")
    expect(closed[1] == "peer does not speak this transport" and closed[2].startswith(REASON_AFTER_END),
           "closed as %s" % (closed,))
    return "closed: %s" % (closed,)


def case_rma_after_end(server):
    """after the peer's end its RMA still works; a second end frame is a protocol error"""
    # The server closes on the loop turn after on_eof, flushing its output:
    # what the peer sends behind its end goes in the same send.
    p = Peer(server).start()
    p.send(frame(END) + read_req(1, p.rw["id"], p.rw["key"], 0, 64))
    data, status, why = p.answer(1)
    expect(status == 0 and data == pattern(0, 0, 64), "a read after end: %d %r" % (status, why))
    p.close()
    q = Peer(server).start()
    q.send(frame(END) + frame(END))
    closed = server.wait_closed(q.id)
    q.close()
    expect(server.find(lambda l: l == "eof %d" % q.id), "on_eof did not run")
    expect(closed and closed[1] == "peer does not speak this transport" and closed[2] == REASON_SECOND_END,
           "closed as %s" % (closed,))
    return closed[2]


def refused(status, why):
    return status == -TW_EREMOTEACCESS and why


def case_forged_key_same_connection(server):
    """a key of another exposure on the same connection is refused, the memory untouched"""
    p = Peer(server).start()
    out = []
    for tag, (id_, key) in enumerate([(p.ro["id"], p.rw["key"]), (p.rw["id"], p.ro["key"]), (p.rw["id"], 0),
                                      (p.rw["id"], p.rw["key"] ^ (1 << 63))], start=1):
        p.send(read_req(tag, id_, key, 0, 16))
        data, status, why = p.answer(tag)
        expect(refused(status, why) and not data, "read with id %d and a forged key: %d %r" % (id_, status, why))
        out.append(why)
    p.send(write_data(9, p.rw["id"], p.ro["key"], 0, b"F" * 16))
    _, status, why = p.answer(9)
    expect(refused(status, why), "a write with the other exposure's key: %d %r" % (status, why))
    expect(p.region(0, 0, 16) == pattern(0, 0, 16), "the refused write changed the memory")
    p.close()
    return out[0]


def case_exact_bounds(server):
    """offset + len exactly at the end is served; one past it is refused, the memory untouched"""
    p = Peer(server).start()
    rw = (p.rw["id"], p.rw["key"])
    p.send(read_req(1, *rw, 4000, 96))
    data, status, why = p.answer(1)
    expect(status == 0 and data == pattern(0, 4000, 96), "a read of 4000..4096: %d %r" % (status, why))
    p.send(read_req(2, *rw, 4000, 97))
    data, status, why = p.answer(2)
    expect(refused(status, why) and not data, "a read of 4000..4097: %d %r" % (status, why))
    p.send(read_req(3, *rw, 4096, 1))
    _, status, why = p.answer(3)
    expect(refused(status, why), "a read of 4096..4097: %d %r" % (status, why))
    p.send(write_data(4, *rw, 4000, b"W" * 96))
    _, status, why = p.answer(4)
    expect(status == 0, "a write of 4000..4096: %d %r" % (status, why))
    p.send(write_data(5, *rw, 4000, b"V" * 97))
    _, status, why = p.answer(5)
    expect(refused(status, why), "a write of 4000..4097: %d %r" % (status, why))
    expect(p.region(0, 3990, 106) == pattern(0, 3990, 10) + b"W" * 96, "the memory after the writes")
    p.close()
    return "refused: " + why


def case_memory_given_back(server):
    """after the flooding peers closed, the server's memory returns near its start"""
    # Measured against the first idle connection's (server.base_kb).
    deadline = time.monotonic() + CLOSE_DEADLINE
    while True:
        growth = server.rss_kb() - server.base_kb
        if growth <= RSS_BOUND_KB // 2 or time.monotonic() >= deadline:
            break
        server.wait_for(lambda l: False, 0.2)
    expect(growth <= RSS_BOUND_KB // 2, "the server still holds %d kB more than at the start" % growth)
    return "%d kB over the start" % growth


CASES = [
    ("exact-bounds", case_exact_bounds),
    ("forged-key-same-connection", case_forged_key_same_connection),
    ("long-line-in-data-frame", case_long_line_in_data_frame),
    ("hello-version-2", case_hello_version_2),
    ("hello-changed-tag", case_hello_changed_tag),
    ("no-hello", case_no_hello),
    ("bytes-after-end", case_bytes_after_end),
    ("rma-after-end", case_rma_after_end),
    ("frame-too-large", case_frame_too_large),
    ("reading-peer-resumed", case_reading_peer_resumed),
    ("refused-reads-never-read", case_refused_reads_never_read),
    ("refused-writes-never-read", case_refused_writes_never_read),
    ("empty-writes-never-read", case_empty_writes_never_read),
    ("data-frame-claims-4g", case_data_frame_claims_4g),
    ("memory-given-back", case_memory_given_back),
]


def main():
    if len(sys.argv) < 2:
        print("usage: hostile_peer.py SERVER [CASE...]", file=sys.stderr)
        return 2
    if not os.path.exists("/proc/self/status"):
        print("1..0 # SKIP no /proc to read the server's memory from")
        return 77
    wanted = sys.argv[2:]
    cases = [(n, f) for n, f in CASES if not wanted or n in wanted]
    server = Server(sys.argv[1])
    failed = 0
    try:
        warm = Peer(server).start()  # the first connection's allocations are not growth
        warm.close()
        server.wait_closed(warm.id)
        server.base_kb = server.rss_kb()
        print("1..%d" % len(cases))
        print("# server pid %d on port %d, %d kB resident after one connection" % (server.proc.pid, server.port,
                                                                                  server.base_kb))
        for i, (name, fn) in enumerate(cases, start=1):
            t0 = time.monotonic()
            try:
                detail = fn(server)
                print("ok %d - %s: %s (%.1f s)" % (i, name, fn.__doc__.strip(), time.monotonic() - t0))
                print("#   %s" % detail)
            except (Failed, OSError) as e:
                failed += 1
                print("not ok %d - %s: %s" % (i, name, fn.__doc__.strip()))
                print("#   %s: %s" % (type(e).__name__, e))
            sys.stdout.flush()
            expect_alive = server.alive()
            if not expect_alive:
                print("# the server exited: %s" % server.lines[-5:])
                return 1
    finally:
        server.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
