#!/usr/bin/env python3
"""Medians, per-round ratios and the syscall table of a tcp-compare.sh run.

usage: tcp-compare-summary.py OUT > summary.md
OUT/raw.tsv: placement, round, tool, metric, value (one-way latency in us).
OUT/strace/TOOL.{client,server}.strace: `strace -c -f` counts, and
TOOL.round_trips what they divide by.
Ratios are twinwire / anchor; goals: <= 1.10 against sockperf on one CPU,
< 1.00 (ahead) against raw libevent.
"""
import os
import statistics
import sys

from compare_rounds import load_rounds, paired_ratio

TOOLS = ["twinwire", "sockperf", "libevent", "sockperf-epoll"]
METRICS = [("ow_p50_us", "p50"), ("ow_mean_us", "mean"), ("ow_p99_us", "p99")]


def verdict(anchor, placement, paired):
    """(goal, met) of the issue's goals, on the median of per-round ratios: within 1.10x of sockperf on one
    CPU, ahead of raw libevent everywhere; sockperf-epoll is a reference (the same program as an event loop)."""
    if anchor == "libevent":
        return "< 1.00", "yes" if paired < 1.0 else "no"
    if anchor == "sockperf" and placement == "one":
        return "<= 1.10", "yes" if paired <= 1.10 else "no"
    return "(reference)", ""


PLACEMENTS = {"one": "one CPU (server and client on the same CPU)", "two": "two CPUs (server on one, client on the other)"}


def load(path):
    """(placement, tool, metric) -> {round: value}"""
    return load_rounds(path, ("placement", "tool", "metric"))


def latency_tables(values):
    out = []
    for placement in [p for p in PLACEMENTS if any(k[0] == p for k in values)]:
        out += [f"### {PLACEMENTS[placement]}", "",
                "One-way latency (us, half the round trip), median over the rounds [min .. max]:", "",
                "| tool | n | p50 | mean | p99 |", "| --- | --- | --- | --- | --- |"]
        for tool in TOOLS:
            cells = []
            n = 0
            for metric, _ in METRICS:
                v = list(values.get((placement, tool, metric), {}).values())
                n = max(n, len(v))
                cells.append(f"{statistics.median(v):.2f} [{min(v):.2f} .. {max(v):.2f}]" if v else "(no data)")
            out.append(f"| {tool} | {n} | " + " | ".join(cells) + " |")
        loads = list(values.get((placement, "host", "load1"), {}).values())
        if loads:
            out += ["", f"Host load average (1 min) at the start of each round: {min(loads):.2f} .. {max(loads):.2f}."]
        out += ["", "| twinwire against | metric | ratio of medians | median of per-round ratios | goal | met |",
                "| --- | --- | --- | --- | --- | --- |"]
        for anchor in ("sockperf", "libevent", "sockperf-epoll"):
            for metric, label in METRICS:
                a, b = values.get((placement, "twinwire", metric)), values.get((placement, anchor, metric))
                if not a or not b:
                    out.append(f"| {anchor} | {label} | (no data) | | | |")
                    continue
                ratio = statistics.median(a.values()) / statistics.median(b.values())
                paired = paired_ratio(a, b)
                goal_text, met = verdict(anchor, placement, paired)
                out.append(f"| {anchor} | {label} | {ratio:.2f} | {paired:.2f} | {goal_text} | {met} |")
        out.append("")
    return out


def read_strace(path):
    """syscall -> calls, from `strace -c` output."""
    calls = {}
    try:
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) < 5 or fields[-1] == "total" or fields[-1] == "syscall":
                    continue
                try:
                    float(fields[0])
                    calls[fields[-1]] = int(fields[3])
                except ValueError:
                    continue
    except OSError:
        pass
    return calls


def strace_table(out_dir):
    per_trip = {}
    for tool in TOOLS:
        try:
            with open(os.path.join(out_dir, "strace", tool + ".round_trips")) as f:
                trips = int(f.read().strip())
        except (OSError, ValueError):
            continue
        for side in ("client", "server"):
            calls = read_strace(os.path.join(out_dir, "strace", f"{tool}.{side}.strace"))
            per_trip[(tool, side)] = {name: n / trips for name, n in calls.items()}
    if not per_trip:
        return []
    columns = [(t, s) for t in TOOLS for s in ("client", "server") if (t, s) in per_trip]
    # Only what happens per round trip (>= 0.01 calls each): setup calls drop out.
    names = sorted({n for c in columns for n, v in per_trip[c].items() if v >= 0.01})
    out = ["### Syscalls per round trip (one CPU, strace -c -f)", "",
           "| syscall | " + " | ".join(f"{t} {s}" for t, s in columns) + " |",
           "| --- |" + " --- |" * len(columns)]
    for name in names:
        out.append(f"| {name} | " + " | ".join(f"{per_trip[c].get(name, 0):.2f}" for c in columns) + " |")
    totals = [sum(v for v in per_trip[c].values() if v >= 0.01) for c in columns]
    out.append("| **total** | " + " | ".join(f"**{t:.2f}**" for t in totals) + " |")
    return out + [""]


def main():
    out_dir = sys.argv[1]
    values = load(os.path.join(out_dir, "raw.tsv"))
    out = latency_tables(values) + strace_table(out_dir)
    try:
        with open(os.path.join(out_dir, "host.txt")) as f:
            out += ["Host: " + " / ".join(line.strip("# \n") for line in f)]
    except OSError:
        pass
    print("\n".join(out))
    return 0 if values else 1


if __name__ == "__main__":
    sys.exit(main())
