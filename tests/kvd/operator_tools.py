#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""redis-cli's operator tools against twinwire-kvd and redis-server holding
the same data of every type kvd has: --bigkeys prints the same summary (the
biggest key of each type with its size, the totals), --memkeys names the same
biggest key of each type (the byte figures are each server's own estimate),
--scan and --scan --pattern list the same keys, --hotkeys gets the same
refusal (no LFU policy on either), --stat, --latency and --latency-history
print the same kind of lines, and INFO has every field --stat reads.
TAP; exit 77 without redis-server or redis-cli.

  operator_tools.py KVD"""
import random
import re
import shutil
import socket
import subprocess
import sys
import threading

from kvd_servers import Tap, skip, start_kvd, start_redis

CLI_TIMEOUT = 60  # seconds for a tool that ends by itself; it takes well under one here


def command(*words):
    out = b'*%d\r\n' % len(words)
    for w in words:
        w = w if isinstance(w, bytes) else str(w).encode()
        out += b'$%d\r\n%s\r\n' % (len(w), w)
    return out


def dataset():
    """The same commands for both servers: every type, sizes drawn from a
    fixed seed, and one clearly biggest key per type (so either server's
    memory estimate must rank it first)."""
    rng = random.Random(40)
    cmds = []
    for i in range(120):
        cmds.append(('SET', 'str:%d' % i, 'x' * rng.randrange(0, 900)))
    cmds.append(('SET', 'str:big', 'y' * 20000))
    cmds.append(('SET', 'counter', '123456'))
    cmds.append(('SET', 'volatile', 'soon', 'EX', '100000'))
    for i in range(40):
        n = rng.randrange(1, 30)
        cmds.append(('RPUSH', 'list:%d' % i) + tuple('item%d' % j for j in range(n)))
        cmds.append(('SADD', 'set:%d' % i) + tuple('member%d' % j for j in range(n)))
        cmds.append(('HSET', 'hash:%d' % i) + tuple(w for j in range(n) for w in ('f%d' % j, 'v%d' % j)))
        cmds.append(('ZADD', 'zset:%d' % i) + tuple(w for j in range(n) for w in (str(j), 'z%d' % j)))
    big = 2000
    cmds.append(('RPUSH', 'list:big') + tuple('element-%d' % j for j in range(big)))
    cmds.append(('SADD', 'set:big') + tuple('member-%d' % j for j in range(big)))
    cmds.append(('HSET', 'hash:big') + tuple(w for j in range(big) for w in ('field-%d' % j, 'value-%d' % j)))
    cmds.append(('ZADD', 'zset:big') + tuple(w for j in range(big) for w in (str(j * 1.5), 'zmember-%d' % j)))
    return cmds


def load(port, cmds):
    """Pipeline the commands; every reply must be a success."""
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(b''.join(command(*c) for c in cmds))
    s.settimeout(60)
    data = b''
    while data.count(b'\r\n') < len(cmds):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    lines = data.split(b'\r\n')[:len(cmds)]
    return [l for l in lines if not l.startswith((b'+', b':'))]


def cli(port, *args):
    """redis-cli with a tool option that ends by itself: (exit status, stdout, stderr)."""
    p = subprocess.run(['redis-cli', '-p', str(port)] + list(args), capture_output=True, text=True,
                       timeout=CLI_TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def cli_lines(port, args, enough):
    """Lines of a tool that runs until stopped (line-buffered, as redis-cli's
    stdout to a pipe is not), until enough(lines) or the time bound."""
    p = subprocess.Popen(['stdbuf', '-oL', 'redis-cli', '-p', str(port)] + list(args), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    lines = []
    bound = threading.Timer(CLI_TIMEOUT, p.kill)  # a tool that goes quiet ends the read too
    bound.start()
    try:
        while not enough(lines):
            line = p.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip('\n'))
    finally:
        bound.cancel()
        p.kill()
        p.wait()
    return lines


def summary(out):
    """--bigkeys/--memkeys output from its summary on (the progress lines
    before it follow SCAN's order, which differs between servers)."""
    return out[out.find('-------- summary -------'):] if '-------- summary -------' in out else ''


def biggest(out):
    """{type: (key, size, unit)} from the summary's "Biggest" lines."""
    return {m.group(1): (m.group(2), int(m.group(3)), m.group(4))
            for m in re.finditer(r"^Biggest +(\w+) found '\"([^\"]*)\"' has (\d+) (\w+)$", summary(out), re.M)}


def main():
    kvd = sys.argv[1]
    for tool in ('redis-cli', 'stdbuf'):
        if not shutil.which(tool):
            skip('%s is not installed (Debian package %s)' % (tool, 'redis-tools' if tool == 'redis-cli'
                                                                  else 'coreutils'))
    tap = Tap()
    servers = [('redis-server', start_redis()), ('twinwire-kvd', start_kvd(kvd, '--transport', 'tcp'))]
    cmds = dataset()
    for name, port in servers:
        failed = load(port, cmds)
        tap.check('%s: the %d commands that load the data succeed' % (name, len(cmds)), not failed, *failed[:5])

    # --bigkeys: sizes from STRLEN, LLEN, SCARD, HLEN, ZCARD, which are exact on both.
    big = {name: cli(port, '--bigkeys') for name, port in servers}
    for name, (rc, out, err) in big.items():
        tap.check('%s: --bigkeys ends with status 0, no warnings' % name, rc == 0 and not err.strip(), err[:2000])
    theirs, ours = big['redis-server'][1], big['twinwire-kvd'][1]
    tap.check('--bigkeys finds the same biggest key of every type, with the same size',
              biggest(theirs) == biggest(ours) and len(biggest(ours)) == 5,
              'redis-server: %r' % biggest(theirs), 'twinwire-kvd: %r' % biggest(ours))
    tap.check('--bigkeys prints the same summary (keys sampled, key lengths, counts and totals per type)',
              summary(theirs) == summary(ours) and summary(ours), 'redis-server:', summary(theirs),
              'twinwire-kvd:', summary(ours))
    tap.check('--bigkeys reports no string as 0 bytes on twinwire-kvd',
              not re.search(r"string found .* with 0 bytes", ours) and biggest(ours).get('string', ('', 0))[1] > 0,
              ours[:3000])

    # --memkeys: MEMORY USAGE is each server's own estimate; the ranking of a clearly biggest key is not.
    for samples in ([], ['--memkeys-samples', '0']):
        mem = {name: cli(port, '--memkeys', *samples) for name, port in servers}
        label = '--memkeys ' + ' '.join(samples)
        for name, (rc, out, err) in mem.items():
            sizes = biggest(out)
            tap.check('%s: %s ends with status 0, no warnings, a size above 0 bytes for every type' %
                      (name, label.strip()), rc == 0 and not err.strip() and len(sizes) == 5 and
                      all(s > 0 and unit == 'bytes' for _, s, unit in sizes.values()), err[:2000], out[-3000:])
        names = {name: {t: k for t, (k, _, _) in biggest(out).items()} for name, (_, out, _) in mem.items()}
        tap.check('%s names the same biggest key of every type on both' % label.strip(),
                  names['redis-server'] == names['twinwire-kvd'], repr(names))

    # --scan, with and without --pattern.
    for pattern in ([], ['--pattern', 'list:*'], ['--pattern', 'h?sh:1*'], ['--pattern', '*:big'],
                    ['--pattern', 'str:[0-3]?'], ['--pattern', 'nothing*']):
        keys = {}
        for name, port in servers:
            rc, out, err = cli(port, '--scan', *pattern)
            keys[name] = (rc, sorted(out.split()), err)
        label = ('--scan ' + ' '.join(pattern)).strip()
        theirs, ours = keys['redis-server'], keys['twinwire-kvd']
        tap.check('%s lists the same %d keys, each once' % (label, len(theirs[1])),
                  theirs == ours and len(set(ours[1])) == len(ours[1]) and (ours[1] or 'nothing' in label),
                  'redis-server: %r' % (theirs,), 'twinwire-kvd: %r' % (ours,))

    # --hotkeys needs an LFU maxmemory policy; neither server has one here.
    hot = {name: cli(port, '--hotkeys') for name, port in servers}
    theirs, ours = hot['redis-server'], hot['twinwire-kvd']
    tap.check('--hotkeys gets the same refusal (no LFU policy): status 1 and the same error',
              theirs[0] == ours[0] == 1 and theirs[2] == ours[2] and 'LFU' in ours[2],
              'redis-server: %r' % ((theirs[0], theirs[2]),), 'twinwire-kvd: %r' % ((ours[0], ours[2]),))

    # INFO: the fields --stat reads.
    stat_fields = ['db0:keys', 'used_memory', 'connected_clients', 'blocked_clients', 'total_commands_processed',
                   'total_connections_received', 'bgsave_in_progress', 'aof_rewrite_in_progress', 'loading']
    for name, port in servers:
        rc, out, err = cli(port, 'INFO')
        missing = [f for f in stat_fields if not re.search(r'(^|_)%s[:=]' % re.escape(f), out, re.M)]
        tap.check('%s: INFO has every field --stat reads' % name, rc == 0 and not missing, 'missing: %r' % missing)

    # --stat: a header, then rows of keys, memory, clients, blocked, requests, connections.
    row = re.compile(r'^(\d+) +[\d.]+[BKMGT] +\d+ +(\d+) +\d+ \(\+\d+\) +\d+ *$')
    header = ['------- data ------ --------------------- load -------------------- - child -',
              'keys       mem      clients blocked requests            connections          ']
    dbsize = len({c[1] for c in cmds})
    for name, port in servers:
        lines = cli_lines(port, ['--stat', '-i', '0.2'], lambda ls: len(ls) >= 5)
        rows = [row.match(l) for l in lines[2:]]
        tap.check('%s: --stat prints its header and rows of %d keys, 0 blocked clients, nothing in "child"' %
                  (name, dbsize), lines[:2] == header and len(rows) >= 3 and
                  all(m and int(m.group(1)) == dbsize and m.group(2) == '0' for m in rows), *lines)

    # --latency (one summary line when not on a terminal) and --latency-history.
    sample = re.compile(r'^\d+ \d+ \d+\.\d\d \d+$')
    for name, port in servers:
        rc, out, err = cli(port, '--latency')
        tap.check('%s: --latency prints "min max avg samples" and ends with status 0' % name,
                  rc == 0 and sample.match(out.strip()) and int(out.split()[3]) > 0, out, err)
        lines = cli_lines(port, ['--latency-history', '-i', '1'],
                          lambda ls: sum(l.startswith(' -- ') for l in ls) >= 2)
        ranges = [l for l in lines if re.match(r'^ -- \d+\.\d\d seconds range$', l)]
        tap.check('%s: --latency-history prints samples and two "-- N seconds range" lines' % name,
                  len(ranges) == 2 and all(sample.match(l) or l in ranges for l in lines), *lines[-5:])
    tap.finish()


if __name__ == '__main__':
    main()
