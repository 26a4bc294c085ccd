#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Server CPU for one hostile request: EXISTS with ~1M arguments (~7 MiB)
# sent in 1000-byte pieces, against twinwire-kvd and redis-server, each on
# its own free port.  The server's user+system CPU comes from /proc before
# and after the request.  A measurement to run by hand, not a test:
#
#   tools/lab/measure-parse-cpu.py --kvd build/tools/kvd/twinwire-kvd [--redis redis-server]
#                                  [--args 1048576] [--piece 1000]
import argparse
import os
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_listening(port, proc):
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit("the server exited at start-up")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the server did not start")


def measure(argv, port, request, piece):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        before = cpu_seconds(proc.pid)
        start = time.monotonic()
        for at in range(0, len(request), piece):
            s.sendall(request[at:at + piece])
            time.sleep(0.0001)  # one read per piece on the server, as over a slow link
        reply = s.recv(100)
        wall = time.monotonic() - start
        used = cpu_seconds(proc.pid) - before
        s.close()
        return used, wall, reply.split(b"\r\n")[0].decode()
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvd", required=True)
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--args", type=int, default=1 << 20)
    ap.add_argument("--piece", type=int, default=1000)
    o = ap.parse_args()
    request = b"*%d\r\n$6\r\nEXISTS\r\n" % o.args + b"$1\r\nk\r\n" * (o.args - 1)
    print("request: EXISTS with %d arguments, %d bytes in %d-byte pieces" % (o.args, len(request), o.piece))
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        kvd = [o.kvd, "--port", str(port), "--transport", "tcp", "--log-file", os.path.join(tmp, "kvd.log")]
        used, wall, reply = measure(kvd, port, request, o.piece)
        print("twinwire-kvd:  %6.2f s CPU (%5.2f s wall), reply %s" % (used, wall, reply))
        port = free_port()
        redis = [o.redis, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", tmp]
        used, wall, reply = measure(redis, port, request, o.piece)
        print("redis-server:  %6.2f s CPU (%5.2f s wall), reply %s" % (used, wall, reply))


if __name__ == "__main__":
    main()
