#!/usr/bin/env python3
"""Draws the plots of docs/benchmarks.md from the raw figures in docs/data.

usage: plot_benchmarks.py [--data DIR] [--out DIR]

Writes, with gnuplot (Debian: gnuplot-nox; `set terminal png`, pngcairo is
not in gnuplot-nox):
  rdma-streaming-rounds.png  twinwire / ib_write_bw per round, runs P to S
  rdma-latency-rounds.png    each layer / ib_send_lat -e per round
  tcp-latency.png            64 B one-way latency against sockperf and libevent
  zero-copy.png              zero copy / copying path, per transport and size
Each plot shows every round, not only the medians: round by round is what the
goals of issue 14 are stated in.  The bench suite runs it on docs/data
(tests/check_plots.sh); the plots are shown in docs/benchmarks.md.
"""
import argparse
import collections
import csv
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def read_rows(path):
    delimiter = '\t' if path.endswith('.tsv') else ','
    with open(path) as f:
        return list(csv.DictReader(f, delimiter=delimiter))


def gnuplot(script):
    # noenhanced: tool names keep their underscores (no subscripts).
    script = script.replace('set terminal png ', 'set terminal png noenhanced ', 1)
    subprocess.run(['gnuplot'], input=(script + '\n').encode(), check=True)


def rounds_plot(out, title, ylabel, goal, groups, tmp):
    """groups: [(label, [ratio per round])]; one column of points per group,
    its median as a bar, the goal as a line."""
    points, medians = [], []
    for i, (label, ratios) in enumerate(groups):
        # Spread a group's rounds a little so equal ratios stay visible, within its column.
        step = min(0.04, 0.8 / max(len(ratios), 1))
        for k, r in enumerate(ratios):
            points.append('%.3f %.4f' % (i + (k - (len(ratios) - 1) / 2) * step, r))
        medians.append('%d %.4f "%s"' % (i, statistics.median(ratios), label.replace(', ', '\\n')))
    pfile, mfile = os.path.join(tmp, out + '.pts'), os.path.join(tmp, out + '.med')
    open(pfile, 'w').write('\n'.join(points) + '\n')
    open(mfile, 'w').write('\n'.join(medians) + '\n')
    top = max(max(r) for _, r in groups)
    gnuplot('\n'.join([
        'set terminal png size 1100,500',
        "set output '%s'" % os.path.join(args.out, out),
        "set title '%s'" % title,
        "set ylabel '%s'" % ylabel,
        'set xrange [-0.6:%f]' % (len(groups) - 0.4),
        'set yrange [0:%f]' % (max(top, goal) * 1.1),
        'set xtics nomirror',
        'set bmargin 4',
        'set grid ytics',
        'set key outside top center horizontal',
        'set style fill solid 0.25 border -1',
        'set boxwidth 0.5',
        "plot '%s' using 1:2:xtic(3) with boxes title 'median of rounds', \\" % mfile,
        "     '%s' using 1:2 with points pt 7 ps 1 title 'one round', \\" % pfile,
        "     %f with lines lw 2 dt 2 title 'goal %.2fx'" % (goal, goal),
    ]))


def per_round_ratio(rows, key, tool, anchor, value='value'):
    """rows: dicts with 'round', key and value; the ratio tool / anchor per round."""
    by_round = collections.defaultdict(dict)
    for r in rows:
        by_round[r['round']][r[key]] = float(r[value])
    return [v[tool] / v[anchor] for _, v in sorted(by_round.items())
            if tool in v and anchor in v and v[anchor] > 0]


def streaming(tmp):
    groups = []
    for cpus, runs in (('1 vCPU', 'PR'), ('2 vCPUs', 'QS')):
        for test, label in (('bw4k', '4 KiB'), ('bw64k', '64 KiB'), ('bw64k-500', '64 KiB, first 32 MiB')):
            ratios = []
            for run in runs:
                rows = [r for r in read_rows(os.path.join(args.data, 'perftest-run-%s.tsv' % run))
                        if r['test'] == test and r['metric'] == 'mb_s']
                ratios += per_round_ratio(rows, 'tool', 'twinwire', 'ib_write_bw')
            groups.append(('%s, %s (%s)' % (label, cpus, '+'.join(runs)), ratios))
    rounds_plot('rdma-streaming-rounds.png', 'RDMA streaming at the default configuration: twinwire / ib_write_bw',
                'ratio per round (higher is better)', 0.95, groups, tmp)


def latency(tmp):
    groups = []
    tools = (('ib_send_lat-e+epoll', 'ib_send_lat -e, in epoll_wait'),
             ('ib_send_lat-e+epoll-once', 'ib_send_lat -e, in epoll_wait, once per round trip'),
             ('ib_send_lat-e+libevent', 'ib_send_lat -e, in libevent'),
             ('ib_send_lat-e+libevent-once', 'ib_send_lat -e, in libevent, once per round trip'),
             ('vtable', 'plugin vtable, its loop'), ('bench-zc', 'twinwire-bench, zero copy'),
             ('bench', 'twinwire-bench'))
    rows = []
    # Four runs (the last two with the once-per-round-trip waits): keep their rounds apart.
    for run, name in (('a', 'latency-layers-event-loop-1vcpu-a.tsv'), ('b', 'latency-layers-event-loop-1vcpu-b.tsv'),
                      ('c', 'latency-layers-once-1vcpu-a.tsv'), ('d', 'latency-layers-once-1vcpu-b.tsv')):
        rows += [dict(r, round='%s%03d' % (run, int(r['round']))) for r in read_rows(os.path.join(args.data, name))]
    for tool, label in tools:
        groups.append((label, per_round_ratio(rows, 'tool', tool, 'ib_send_lat-e')))
    rounds_plot('rdma-latency-rounds.png', 'RDMA 64 B latency, 1 vCPU: each layer / ib_send_lat -e (one-way p50)',
                'ratio per round (lower is better)', 1.10, groups, tmp)


def tcp(tmp):
    rows = read_rows(os.path.join(args.data, 'tcp-compare-run3.tsv'))
    tools = ('twinwire', 'libevent', 'sockperf', 'sockperf-epoll')
    titles = ('twinwire', 'raw libevent bufferevent', 'sockperf pp', 'sockperf pp -F e (epoll)')
    metrics = (('ow_p50_us', 'p50'), ('ow_mean_us', 'mean'), ('ow_p99_us', 'p99'))

    def median(placement, tool, metric):
        return statistics.median(float(r['value']) for r in rows
                                 if r['placement'] == placement and r['tool'] == tool and r['metric'] == metric)

    panels = []
    for placement, where in (('one', 'both ends on one CPU'), ('two', 'one CPU each')):
        dat = os.path.join(tmp, 'tcp-%s.dat' % placement)
        open(dat, 'w').write(''.join('%s %s\n' % (what, ' '.join('%.3f' % median(placement, t, metric) for t in tools))
                                     for metric, what in metrics))
        cols = ["'%s' using 2:xtic(1) title '%s'" % (dat, titles[0])] + [
            "'' using %d title '%s'" % (i + 2, t) for i, t in enumerate(titles) if i]
        panels += ["set title '%s'" % where, 'plot ' + ', '.join(cols)]
    gnuplot('\n'.join([
        'set terminal png size 1100,460',
        "set output '%s'" % os.path.join(args.out, 'tcp-latency.png'),
        "set multiplot layout 1,2 title 'TCP 64 B ping-pong on the host, one-way latency in us (medians of rounds, run 3)'",
        "set ylabel 'microseconds (lower is better)'",
        'set style data histogram', 'set style histogram cluster gap 1', 'set style fill solid 0.8 border -1',
        'set key top left', 'set yrange [0:*]', 'set offsets 0, 0, graph 0.5, 0', 'set grid ytics',
    ] + panels + ['unset multiplot']))


def zero_copy(tmp):
    lines = []
    for name, where in (('zero-copy-bench-host-tcp.csv', 'host'), ('zero-copy-bench-guest.csv', 'guest')):
        rows = [r for r in read_rows(os.path.join(args.data, name)) if r['test'] == 'throughput']
        for transport in sorted({r['transport'] for r in rows}):
            for size in sorted({int(r['size']) for r in rows}):
                ratios = per_round_ratio([r for r in rows if r['transport'] == transport and int(r['size']) == size
                                          and r['mb_per_s']], 'path', 'zero-copy', 'copy', value='mb_per_s')
                if ratios:
                    label = '%s %s %s' % (transport.upper(), where, '%d KiB' % (size // 1024) if size >= 1024 else '%d B' % size)
                    lines.append('"%s" %.4f' % (label, statistics.median(ratios)))
    dat = os.path.join(tmp, 'zc.dat')
    open(dat, 'w').write('\n'.join(lines) + '\n')
    gnuplot('\n'.join([
        'set terminal png size 960,500',
        "set output '%s'" % os.path.join(args.out, 'zero-copy.png'),
        "set title 'twinwire-bench throughput: zero copy / copying path (median of per-round ratios)'",
        "set ylabel 'ratio (higher is better)'",
        'set style data histogram', 'set style fill solid 0.8 border -1', 'set boxwidth 0.6',
        'set xtics rotate by -20 nomirror', 'set bmargin 5', 'set yrange [0:*]', 'set grid ytics', 'unset key',
        "plot '%s' using 2:xtic(1), 1 with lines lw 2 dt 2" % dat,
    ]))


def main():
    global args
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--data', default=os.path.join(ROOT, 'docs', 'data'))
    p.add_argument('--out', default=os.path.join(ROOT, 'docs'))
    args = p.parse_args()
    try:
        os.makedirs(args.out, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            streaming(tmp)
            latency(tmp)
            tcp(tmp)
            zero_copy(tmp)
    except (OSError, subprocess.CalledProcessError, KeyError, statistics.StatisticsError) as e:
        # A missing or malformed data file, or gnuplot missing or failing.
        sys.exit('plot_benchmarks: %s' % e)


if __name__ == '__main__':
    main()
