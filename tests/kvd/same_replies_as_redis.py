#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""twinwire-kvd and redis-server side by side: every line of
default_benchmark_commands.txt (what redis-benchmark's default tests send,
their edge cases and WRONGTYPE) gets the same reply, byte for byte, from
both, as do ZADD's scores out of range, blank-led or infinite; replies whose order Redis leaves open (SMEMBERS, HGETALL, SPOP, KEYS,
SCAN) are compared as sets.  TAP; exit 77 without redis-server.

  same_replies_as_redis.py KVD COMMANDS EXPECTED

EXPECTED is the commands' replies as redis-cli prints them, which
integration.sh checks over every transport: this test also checks that it
is what redis-server answers."""
import os
import socket
import sys

from kvd_servers import Tap, start_kvd, start_redis


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(('127.0.0.1', port))
        self.buf = b''

    def _line(self):
        while b'\r\n' not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError('connection closed')
            self.buf += chunk
        line, self.buf = self.buf.split(b'\r\n', 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError('connection closed')
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def reply(self):
        """One reply as (type, value): '+', '-', ':', '$' (bytes or None), '*' (list or None)."""
        line = self._line()
        kind, rest = chr(line[0]), line[1:]
        if kind in '+-':
            return (kind, rest)
        if kind == ':':
            return (kind, int(rest))
        if kind == '$':
            n = int(rest)
            if n < 0:
                return (kind, None)
            data = self._exact(n + 2)[:-2]
            return (kind, data)
        if kind == '*':
            n = int(rest)
            return (kind, None if n < 0 else [self.reply() for _ in range(n)])
        raise ValueError('bad reply line %r' % line)

    def call(self, *words):
        out = b'*%d\r\n' % len(words)
        for w in words:
            w = w if isinstance(w, bytes) else str(w).encode()
            out += b'$%d\r\n%s\r\n' % (len(w), w)
        self.sock.sendall(out)
        return self.reply()

    def inline(self, line):
        self.sock.sendall(line.encode() + b'\r\n')
        return self.reply()


def cli_text(reply):
    """As redis-cli prints a reply when its output is not a terminal (and kvd-probe)."""
    kind, value = reply
    if kind == '*':
        return '\n'.join(cli_text(e) for e in value) if value else ''
    if value is None:
        return ''
    return value.decode() if isinstance(value, bytes) else str(value)


def members(reply):
    return sorted(v for _, v in reply[1]) if reply[0] == '*' and reply[1] else []


def main():
    kvd, commands, expected = sys.argv[1:4]
    tap = Tap()
    redis = Client(start_redis())
    ours = Client(start_kvd(kvd, '--transport', 'tcp'))

    lines = [l for l in open(commands).read().splitlines() if l and not l.startswith('#')]
    differ = []
    redis_text = []
    for line in lines:
        theirs, mine = redis.inline(line), ours.inline(line)
        redis_text.append(cli_text(theirs))
        if theirs != mine:
            differ.append('%s\n  redis-server: %r\n  twinwire-kvd: %r' % (line[:100], theirs, mine))
    tap.check('all %d lines of %s get the replies redis-server gives' % (len(lines), os.path.basename(commands)),
              not differ, *differ)
    want = open(expected).read().split('\n')[:-1]
    got = '\n'.join(redis_text).split('\n')
    tap.check('%s is what redis-server answers them' % os.path.basename(expected), got == want,
              'first difference at output line %d' % next((i + 1 for i, (a, b) in enumerate(zip(got, want)) if a != b),
                                                      min(len(got), len(want)) + 1))

    # Scores as redis-server reads them (issue 42 F8: kvd stored 1e400 as inf).
    differ = []
    scores = [b'1e400', b'-1e400', b'1e-400', b'4.9e-324', b'2.5e-324', b'1e308', b'inf', b'-inf', b'+inf',
              b'infinity', b'nan', b' 1', b'\n1', b'\x0b1', b'1 ', b'1\n', b'', b'0x10', b'1\x001',
              b'1' + b'0' * 300, b'0.' + b'0' * 400 + b'1']
    # Not -0: redis-server 7 answers ZSCORE 0 in a small set (listpack), -0 in a large one; kvd keeps -0.
    for v in scores:
        for c in (redis, ours):
            c.call('DEL', 'zscores')
        theirs = [redis.call('ZADD', 'zscores', v, 'm'), redis.call('ZSCORE', 'zscores', 'm')]
        mine = [ours.call('ZADD', 'zscores', v, 'm'), ours.call('ZSCORE', 'zscores', 'm')]
        if theirs != mine:
            differ.append('ZADD zscores %r m, ZSCORE\n  redis-server: %r\n  twinwire-kvd: %r' % (v[:40], theirs, mine))
    tap.check('ZADD takes and refuses the same %d scores as redis-server (1e400, 1e-400, inf, blanks, ...)' %
              len(scores), not differ, *differ)

    # Replies whose order (or choice) Redis leaves open.
    for c in (redis, ours):
        c.call('FLUSHALL')
        c.call('SADD', 'set', *['m%d' % i for i in range(100)])
        c.call('HSET', 'hash', *sum([['f%d' % i, 'v%d' % i] for i in range(50)], []))
        c.call('MSET', *sum([['key:%d' % i, 'x'] for i in range(300)], []))
    tap.check('SMEMBERS holds the same members', members(redis.call('SMEMBERS', 'set')) ==
              members(ours.call('SMEMBERS', 'set')))
    pairs = lambda r: sorted(zip(r[1][0::2], r[1][1::2]))
    tap.check('HGETALL holds the same fields and values', pairs(redis.call('HGETALL', 'hash')) ==
              pairs(ours.call('HGETALL', 'hash')))
    for name, c in (('redis-server', redis), ('twinwire-kvd', ours)):
        popped = members(c.call('SPOP', 'set', 30)) + [c.call('SPOP', 'set')[1]]
        rest = members(c.call('SMEMBERS', 'set'))
        tap.check('%s: SPOP takes 31 distinct members, the other 69 stay' % name,
                  len(set(popped)) == 31 and sorted(popped + rest) == sorted(b'm%d' % i for i in range(100)))
    tap.check('KEYS key:1* lists the same keys', members(redis.call('KEYS', 'key:1*')) ==
              members(ours.call('KEYS', 'key:1*')))

    def scan_all(c, *options):
        cursor, seen = b'0', []
        while True:
            reply = c.call('SCAN', cursor, *options)
            if reply[0] != '*':
                return reply
            cur, keys = reply[1]
            seen += [k for _, k in keys[1]]
            cursor = cur[1]
            if cursor == b'0':
                return sorted(seen)
    tap.check('SCAN with COUNT 7 walks the same keys, each once', scan_all(redis, 'COUNT', 7) ==
              scan_all(ours, 'COUNT', 7))
    tap.check('SCAN MATCH key:2? TYPE string walks the same keys', scan_all(redis, 'MATCH', 'key:2?', 'TYPE', 'string')
              == scan_all(ours, 'MATCH', 'key:2?', 'TYPE', 'string'))
    tap.finish()


if __name__ == '__main__':
    main()
