#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The signals a daemon may meet, sent to twinwire-kvd and to redis-server 7
(issue 42 F8: SIGALRM killed kvd, redis-server survives it).  What kvd does
for each is in tools/kvd/README.md:

  SIGALRM, SIGPIPE   ignored, as redis-server
  SIGHUP             kvd reopens its log file; redis-server ignores it: both serve on
  SIGUSR1, SIGUSR2   end the process (the default action), as redis-server
  SIGTERM            a clean stop with status 0, as redis-server

Each signal goes to a fresh daemon; it then answers PING, or it has ended by
that signal.  Without redis-server kvd is checked against the table alone
(said in a TAP comment).  TAP.

  signals_like_redis.py KVD"""
import shutil
import signal
import socket
import subprocess
import sys
import time

from kvd_servers import Tap, WORK, start_kvd_process, start_redis, _procs

BOUND_S = 20.0  # for TSan on a busy machine


def pings(port):
    try:
        with socket.create_connection(('127.0.0.1', port), timeout=BOUND_S) as s:
            s.sendall(b'PING\r\n')
            return s.recv(64).startswith(b'+PONG')
    except OSError:
        return False


def outcome(proc, port, sig):
    """'serves' or 'ended by SIGx' (or what else happened) after `sig`."""
    proc.send_signal(sig)
    try:
        status = proc.wait(timeout=1.0)  # a signal that ends it ends it at once
    except subprocess.TimeoutExpired:
        # Alive: it must still answer (a PING also proves the signal was taken).
        if not pings(port):
            return 'alive but deaf'
        return 'serves' if proc.poll() is None else 'ended after answering PING'
    if status == -sig:
        return 'ended by ' + signal.Signals(sig).name
    return 'ended with status %r' % status


def redis_process():
    port = start_redis()
    return _procs[-1], port


EXPECTED = [
    (signal.SIGALRM, 'serves'),
    (signal.SIGPIPE, 'serves'),
    (signal.SIGHUP, 'serves'),
    (signal.SIGUSR1, 'ended by SIGUSR1'),
    (signal.SIGUSR2, 'ended by SIGUSR2'),
]


def main():
    kvd = sys.argv[1]
    tap = Tap()
    have_redis = shutil.which('redis-server') is not None
    if not have_redis:
        print('# redis-server is not installed: kvd is checked against its documented table only')
    for sig, want in EXPECTED:
        name = signal.Signals(sig).name
        proc, port, log = start_kvd_process(kvd, '--transport', 'tcp')
        got = outcome(proc, port, sig)
        tap.check('%s: twinwire-kvd %s' % (name, want), got == want, 'got: ' + got, open(log).read()[-2000:])
        if have_redis:
            rproc, rport = redis_process()
            rgot = outcome(rproc, rport, sig)
            tap.check('%s: redis-server does the same (%s)' % (name, want), rgot == want, 'got: ' + rgot)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                status = proc.wait(timeout=BOUND_S)
            except subprocess.TimeoutExpired:
                status = None
            tap.check('%s: SIGTERM then stops twinwire-kvd with status 0' % name, status == 0, 'status: %r' % status)
    tap.finish()


if __name__ == '__main__':
    main()
