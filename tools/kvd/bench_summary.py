#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Medians and ratios of alternating benchmark runs, as a Markdown table and a PNG.

  bench_summary.py RAW.csv OUTDIR --baseline NAME [--label NAME=TEXT ...] [--title TEXT]

RAW.csv columns: round,target,pipeline,test,rps,p99_ms (more are ignored).
Ratios are medians of per-round ratios: runs of one round are next to each
other in time, so drift in the machine's load cancels out of each ratio.
Writes OUTDIR/table.md, OUTDIR/medians.dat and OUTDIR/plot.png (gnuplot,
`set terminal png`: pngcairo is missing from gnuplot-nox) and prints the table.
"""
import argparse
import csv
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('raw')
    ap.add_argument('out')
    ap.add_argument('--baseline', required=True)
    ap.add_argument('--label', action='append', default=[])
    ap.add_argument('--title', default='')
    a = ap.parse_args()
    labels = dict(l.split('=', 1) for l in a.label)

    rows = list(csv.DictReader(open(a.raw)))
    targets = [a.baseline]
    for r in rows:
        if r['target'] not in targets:
            targets.append(r['target'])
    loads = sorted({(int(r['pipeline']), r['test']) for r in rows}, key=lambda k: (k[0], k[1] != 'SET'))

    def runs(target, pipeline, test):
        return [r for r in rows if (r['target'], int(r['pipeline']), r['test']) == (target, pipeline, test)]

    med = {}
    for t in targets:
        for p, test in loads:
            sel = runs(t, p, test)
            if sel:
                med[(t, p, test)] = (statistics.median(float(r['rps']) for r in sel),
                                     statistics.median(float(r['p99_ms']) for r in sel), len(sel))

    def paired_ratio(target, pipeline, test, column):
        base = {r['round']: float(r[column]) for r in runs(a.baseline, pipeline, test)}
        ratios = [float(r[column]) / base[r['round']] for r in runs(target, pipeline, test)
                  if base.get(r['round'], 0) > 0]
        return statistics.median(ratios) if ratios else None

    lines = ['| load | %s | runs | requests/s (median) | p99 ms (median) | requests/s vs %s | p99 vs %s |'
             % ('server' if a.baseline == 'redis' else 'transport', labels.get(a.baseline, a.baseline),
                labels.get(a.baseline, a.baseline)),
             '| --- | --- | --- | --- | --- | --- | --- |']
    plot = []
    for p, test in loads:
        base = med.get((a.baseline, p, test))
        for t in targets:
            if (t, p, test) not in med:
                continue
            rps, p99, n = med[(t, p, test)]
            ratio = pratio = ''
            if t != a.baseline and base:
                r, pr = paired_ratio(t, p, test, 'rps'), paired_ratio(t, p, test, 'p99_ms')
                ratio = '**%.2fx**' % r if r is not None else ''
                pratio = '%.2fx' % pr if pr is not None else ''
            lines.append('| %s -P %d | %s | %d | %.0f | %.3f | %s | %s |'
                         % (test, p, labels.get(t, t), n, rps, p99, ratio, pratio))
        plot.append('"%s -P %d" ' % (test, p) + ' '.join('%.0f' % med.get((t, p, test), (0,))[0] for t in targets))
    lines.append('')
    lines.append('Ratios: median over rounds of (run / %s run of the same round).' % labels.get(a.baseline, a.baseline))
    table = '\n'.join(lines) + '\n'
    open(a.out + '/table.md', 'w').write(table)
    open(a.out + '/medians.dat', 'w').write('\n'.join(plot) + '\n')

    columns = []
    for i, t in enumerate(targets):
        spec = ("'%s/medians.dat' using %d:xtic(1)" % (a.out, i + 2)) if i == 0 else ("'' using %d" % (i + 2))
        columns.append("%s title '%s'" % (spec, labels.get(t, t)))
    script = '\n'.join([
        'set terminal png size 900,480',
        "set output '%s/plot.png'" % a.out,
        "set title '%s'" % a.title.replace("'", ''),
        "set ylabel 'requests per second (median)'",
        'set style data histogram',
        'set style histogram cluster gap 1',
        'set style fill solid 0.8 border -1',
        'set key top left',
        'set yrange [0:*]',
        'set grid ytics',
        'plot ' + ', '.join(columns),
    ])
    subprocess.run(['gnuplot'], input=script.encode(), check=True)
    print(table, end='')


if __name__ == '__main__':
    main()
