#!/usr/bin/env python3
"""Split the round trips of a pinned ping-pong into segments, from an ftrace
text dump written by tools/lab/wake-trace-guest.sh (client on CPU 0, server
on CPU 1, each posting one doorbell write() per message).

    python3 tools/lab/wake_segments.py DIR/*.trace

For every round trip, from one client doorbell to the next:
  send->waking     client's write() until the server's task is woken
  waking->cpu1     until CPU 1 leaves idle (the halted vCPU's wake-up)
  cpu1->run        until the server runs
  run->send        the server's work up to its own write()
  send->waking     ... and the same on the way back, ending at the client
A segment whose event did not occur (the CPU was not idle) counts as zero.
Prints the median and mean of each, in microseconds.
"""
import re
import statistics
import sys
from collections import Counter

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+)[:(]\s*(.*)$')
WRITES = ('sys_write', 'sys_writev', 'sys_sendto', 'sys_sendmsg')
STEPS = ['client send', 'server waking', 'cpu1 awake', 'server runs', 'server send', 'client waking',
         'cpu0 awake', 'client runs', 'client send']


def events(path):
    for line in open(path, errors='replace'):
        m = LINE.match(line)
        if m:
            yield float(m[4]), int(m[3]), m[5], m[6], int(m[2])


def writer(evs, cpu):
    count = Counter(pid for t, c, name, detail, pid in evs if name in WRITES and c == cpu)
    return count.most_common(1)[0][0] if count else None


def marks(evs, client, server):
    for t, cpu, name, detail, pid in evs:
        if name in WRITES and pid in (client, server):
            yield t, 'client send' if pid == client else 'server send'
        elif name == 'sched_waking':
            woken = int(re.search(r'pid=(\d+)', detail)[1])
            if woken in (client, server):
                yield t, 'client waking' if woken == client else 'server waking'
        elif name == 'sched_switch':
            nxt = int(re.search(r'next_pid=(\d+)', detail)[1])
            if nxt in (client, server):
                yield t, 'client runs' if nxt == client else 'server runs'
        elif name == 'cpu_idle' and 'state=4294967295' in detail:
            yield t, f'cpu{cpu} awake'


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        evs = list(events(path))
        client, server = writer(evs, 0), writer(evs, 1)
        if client is None or server is None:
            print(f'== {path}: no doorbell writes on CPU 0 and CPU 1')
            continue
        seq = list(marks(evs, client, server))
        starts = [i for i, (t, kind) in enumerate(seq) if kind == 'client send']
        segments = [[] for _ in STEPS[1:]]
        trips = []
        for a, b in zip(starts, starts[1:]):
            stamps = [seq[a][0]]
            for want in STEPS[1:-1]:
                found = next((t for t, kind in seq[a + 1:b] if kind == want and t >= stamps[-1]), stamps[-1])
                stamps.append(found)
            stamps.append(seq[b][0])
            for i, (x, y) in enumerate(zip(stamps, stamps[1:])):
                segments[i].append((y - x) * 1e6)
            trips.append((seq[b][0] - seq[a][0]) * 1e6)
        if not trips:
            print(f'== {path}: no complete round trip')
            continue
        print(f'== {path}: {len(trips)} round trips, median {statistics.median(trips):.1f} us, '
              f'mean {statistics.mean(trips):.1f} us')
        for (x, y), values in zip(zip(STEPS, STEPS[1:]), segments):
            print(f'   {x:>13} -> {y:<13} median {statistics.median(values):7.1f} us   '
                  f'mean {statistics.mean(values):7.1f} us')


if __name__ == '__main__':
    main()
