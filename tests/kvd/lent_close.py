#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A client that closes while a large GET reply goes out from lent send
buffers (kvd.zero_copy, the default) must cost kvd that connection only
(issue 42 F1: a failed lent write left LentReplies::send_in_place looping
forever, at 100 % CPU, deaf to every client and to SIGTERM).

Each case sends its GETs and closes at once (a FIN, not a reset: nothing
has arrived to leave unread), as the issue's repro does; the reply then
meets the client kernel's reset part way.  After each case kvd (one loop
thread, so a spinning loop answers nobody) must answer PING, must not
burn CPU while idle, and SIGTERM must end it with status 0.  TAP.

  lent_close.py KVD"""
import os
import signal
import socket
import sys
import time

from kvd_servers import Tap, start_kvd_process

# Generous for TSan on a busy 2-core machine; a spinning kvd never answers.
ANSWER_BOUND_S = 20.0
# Idle kvd wakes 10 times a second for its expiry sweep; a spinning one
# takes whatever CPU the machine gives it.  Measured, not waited on.
IDLE_WINDOW_S = 2.0


def command(*words):
    out = b'*%d\r\n' % len(words)
    for w in words:
        out += b'$%d\r\n%s\r\n' % (len(w), w)
    return out


def answer(port, request, want_prefix):
    """`request` on a new connection; True when the reply starts with want_prefix within the bound."""
    deadline = time.monotonic() + ANSWER_BOUND_S
    try:
        s = socket.create_connection(('127.0.0.1', port), timeout=ANSWER_BOUND_S)
    except OSError:
        return False
    with s:
        s.sendall(request)
        got = b''
        while len(got) < len(want_prefix) and time.monotonic() < deadline:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            got += chunk
        return got.startswith(want_prefix)


def cpu_seconds(pid):
    fields = open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def get_and_close(port, request):
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(request)
    s.close()  # nothing received yet: a FIN


def main():
    kvd = sys.argv[1]
    tap = Tap()
    proc, port, log = start_kvd_process(kvd, '--transport', 'tcp', '--threads', '1', '--set', 'kvd.zero_copy=yes')
    sizes = {b'v128k': 128 << 10, b'v140k': 140 << 10, b'v1m': 1 << 20}
    for key, size in sizes.items():
        tap.check('SET %s (%d bytes)' % (key.decode(), size),
                  answer(port, command(b'SET', key, b'v' * size), b'+OK\r\n'))

    cases = [
        ('a GET of a 128 KiB value, closed at once, 5 times', [command(b'GET', b'v128k')] * 5),
        ('a GET of a 140 KiB value, closed at once, 3 times', [command(b'GET', b'v140k')] * 3),
        ('a GET of a 1 MiB value, closed at once, 3 times', [command(b'GET', b'v1m')] * 3),
        ('50 pipelined GETs of the 128 KiB value, closed at once', [command(b'GET', b'v128k') * 50]),
        ('50 pipelined GETs of the 1 MiB value, closed at once', [command(b'GET', b'v1m') * 50]),
    ]
    deaf = False  # once kvd answers nobody, the later cases fail without waiting again
    for name, requests in cases:
        for r in requests:
            if not deaf:
                get_and_close(port, r)
        deaf = not tap.check('%s: kvd then answers PING within %.0f s' % (name, ANSWER_BOUND_S),
                             not deaf and answer(port, b'PING\r\n', b'+PONG\r\n'))

    tap.check('the value is still served whole to a client that reads it',
              not deaf and answer(port, command(b'GET', b'v1m'), b'$1048576\r\n' + b'v' * (1 << 20) + b'\r\n'))

    before = cpu_seconds(proc.pid)
    time.sleep(IDLE_WINDOW_S)
    used = cpu_seconds(proc.pid) - before
    tap.check('idle afterwards, kvd used %.2f s of CPU in %.0f s (a spinning loop uses all it gets)' %
              (used, IDLE_WINDOW_S), used < 0.1 * IDLE_WINDOW_S + 0.05)

    proc.send_signal(signal.SIGTERM)
    try:
        status = proc.wait(timeout=ANSWER_BOUND_S)
    except Exception:
        status = None
    tap.check('SIGTERM ends kvd with status 0 within %.0f s' % ANSWER_BOUND_S, status == 0,
              'exit status: %r' % status, open(log).read()[-3000:])
    tap.finish()


if __name__ == '__main__':
    main()
