# SPDX-License-Identifier: MIT
"""Helpers for the kvd Python tests: start twinwire-kvd and redis-server on
free ports, stop them at exit, and print TAP."""
import atexit
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

WORK = tempfile.mkdtemp(prefix='kvd-py.')
_procs = []


def _cleanup():
    for p in _procs:
        if p.poll() is None:
            p.kill()
        p.wait()
    shutil.rmtree(WORK, ignore_errors=True)


atexit.register(_cleanup)


def skip(why):
    print('1..0 # SKIP ' + why)
    sys.exit(77)


def start_kvd(kvd, *args):
    """twinwire-kvd on a port of its choosing; returns the port."""
    return start_kvd_process(kvd, *args)[1]


def start_kvd_process(kvd, *args):
    """twinwire-kvd on a port of its choosing; returns (its Popen, the port, its log file)."""
    log = os.path.join(WORK, 'kvd-%d.log' % len(_procs))
    p = subprocess.Popen([kvd, '--port', '0', '--log-file', log] + list(args))
    _procs.append(p)
    for _ in range(600):
        m = re.search(r' serving on [^ ]*:(\d+) over ', open(log).read() if os.path.exists(log) else '')
        if m:
            return p, int(m.group(1)), log
        if p.poll() is not None:
            break
        time.sleep(0.1)
    sys.exit('twinwire-kvd did not start:\n' + (open(log).read() if os.path.exists(log) else ''))


def start_redis():
    """redis-server (no persistence) on a free port; returns the port."""
    if not shutil.which('redis-server'):
        skip('redis-server is not installed (Debian package redis-server)')
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.Popen(['redis-server', '--port', str(port), '--bind', '127.0.0.1', '--save', '',
                          '--appendonly', 'no', '--logfile', os.path.join(WORK, 'redis.log')])
    _procs.append(p)
    for _ in range(600):
        try:
            socket.create_connection(('127.0.0.1', port)).close()
            return port
        except OSError:
            time.sleep(0.1)
    sys.exit('redis-server did not start')


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = False

    def check(self, description, condition, *details):
        self.n += 1
        print('%s %d - %s' % ('ok' if condition else 'not ok', self.n, description))
        if not condition:
            self.failed = True
            for d in details:
                for line in str(d).splitlines():
                    print('#   ' + line)
        sys.stdout.flush()
        return condition

    def finish(self):
        print('1..%d' % self.n)
        sys.exit(1 if self.failed else 0)
