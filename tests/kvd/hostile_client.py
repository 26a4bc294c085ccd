#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Hostile and ordinary RESP clients for tests/kvd/hostile_clients.sh, each
# printing what it saw on one line ("closed" when the server hung up first).
#
#   hostile_client.py PORT set KEY SIZE       SET KEY to SIZE bytes
#   hostile_client.py PORT mget KEY N         MGET KEY repeated N times (the reply's first line)
#   hostile_client.py PORT ping               PING
#   hostile_client.py PORT headers N          N connections each send only "*1048576\r\n", then PING beside them
#   hostile_client.py PORT fill N             N connections that each get PONG, then one more: its reply
import socket
import sys

HOST = "127.0.0.1"
TIMEOUT = 60


def connect(port):
    s = socket.create_connection((HOST, port), timeout=TIMEOUT)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def encode(*words):
    out = [b"*%d\r\n" % len(words)]
    for w in words:
        w = w if isinstance(w, bytes) else w.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(w), w))
    return b"".join(out)


def first_line(s):
    """The first reply line, or 'closed'."""
    data = b""
    while b"\r\n" not in data:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return "closed"
        if not chunk:
            return "closed"
        data += chunk
    return data.split(b"\r\n", 1)[0].decode(errors="replace")


def closed_after_reply(s):
    """After the first line: does the server close the connection?"""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def command(port, *words):
    with connect(port) as s:
        s.sendall(encode(*words))
        return first_line(s)


def main():
    port, mode, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    if mode == "set":
        print(command(port, "SET", args[0], b"v" * int(args[1])))
    elif mode == "mget":
        print(command(port, "MGET", *([args[0]] * int(args[1]))))
    elif mode == "ping":
        print(command(port, "PING"))
    elif mode == "headers":
        held = []
        for _ in range(int(args[0])):
            s = connect(port)
            s.sendall(b"*1048576\r\n")
            held.append(s)
        print(command(port, "PING"))
        for s in held:
            s.close()
    elif mode == "fill":
        held, pongs = [], 0
        for _ in range(int(args[0])):
            s = connect(port)
            s.sendall(encode("PING"))
            pongs += first_line(s) == "+PONG"
            held.append(s)
        extra = connect(port)
        extra.settimeout(10)
        extra.sendall(encode("PING"))
        line = first_line(extra)
        print("%d PONG; one more: %s; %s" % (pongs, line, "closed" if closed_after_reply(extra) else "left open"))
        for s in held + [extra]:
            s.close()
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    try:
        main()
    except OSError as e:
        print("error: %s" % e)
