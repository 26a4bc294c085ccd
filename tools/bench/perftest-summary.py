#!/usr/bin/env python3
"""Medians and ratios of perftest-compare.sh's raw figures (raw.tsv).

usage: perftest-summary.py RAW_TSV > summary.md
Latency ratios are twinwire / perftest (goal <= 1.10); bandwidth ratios are
twinwire / perftest (goal >= 0.95).  Medians over the rounds.
"""
import statistics
import sys

from compare_rounds import load_rounds, paired_ratio

LAT_GOAL = 1.10
BW_GOAL = 0.95

# (test, metric, twinwire run, perftest run): the comparisons reported.
COMPARISONS = [
    ("lat64", "t_typical_us", "twinwire", "ib_send_lat"),
    ("lat64", "t_typical_us", "twinwire", "ib_send_lat-e"),
    ("lat64", "t_avg_us", "twinwire", "ib_send_lat"),
    ("lat64", "t_avg_us", "twinwire", "ib_send_lat-e"),
    ("bw4k", "mb_s", "twinwire", "ib_send_bw"),
    ("bw4k", "mb_s", "twinwire", "ib_write_bw"),
    ("bw4k", "mb_s", "twinwire-4MiB-rings", "ib_send_bw"),
    ("bw4k", "mb_s", "twinwire-4MiB-rings", "ib_write_bw"),
    ("bw4k", "mb_s", "twinwire-zero-copy", "ib_write_bw"),
    ("bw64k", "mb_s", "twinwire", "ib_send_bw"),
    ("bw64k", "mb_s", "twinwire", "ib_write_bw"),
    ("bw64k", "mb_s", "twinwire-4MiB-rings", "ib_send_bw"),
    ("bw64k", "mb_s", "twinwire-4MiB-rings", "ib_write_bw"),
    ("bw64k", "mb_s", "twinwire-zero-copy", "ib_write_bw"),
    ("bw64k-500", "mb_s", "twinwire", "ib_write_bw"),
]
# perftest-compare.sh --rma: one-sided READ/WRITE against ib_read_bw / ib_write_bw.
RMA_COMPARISONS = [
    ("rma-read64k", "mb_s", "twinwire-rma", "ib_read_bw"),
    ("rma-read1m", "mb_s", "twinwire-rma", "ib_read_bw"),
    ("rma-write64k", "mb_s", "twinwire-rma", "ib_write_bw"),
    ("rma-write1m", "mb_s", "twinwire-rma", "ib_write_bw"),
    # The same through the framework's Connection API (twinwire-bench rma).
    ("rma-read64k", "mb_s", "twinwire-bench-rma", "ib_read_bw"),
    ("rma-read1m", "mb_s", "twinwire-bench-rma", "ib_read_bw"),
    ("rma-write64k", "mb_s", "twinwire-bench-rma", "ib_write_bw"),
    ("rma-write1m", "mb_s", "twinwire-bench-rma", "ib_write_bw"),
]
LABELS = {"lat64": "64 B latency", "bw4k": "4 KiB streaming", "bw64k": "64 KiB streaming",
          "bw64k-500": "64 KiB streaming, 500 messages (rings still growing)",
          "rma-read64k": "64 KiB RDMA READ", "rma-read1m": "1 MiB RDMA READ",
          "rma-write64k": "64 KiB RDMA WRITE", "rma-write1m": "1 MiB RDMA WRITE"}
UNITS = {"t_typical_us": "us, median (half RTT)", "t_avg_us": "us, mean (half RTT)", "mb_s": "MB/s (2^20)",
         "registered_kib": "KiB registered by the client's connection at its end",
         "rx_ring_kib": "KiB of the client's receive ring at its end"}
LABELS["idle"] = "idle connection"
IDLE_GOAL_KIB = 8  # an idle connection: its block (issue 41), the shared receives aside


def load(path):
    """(test, tool, metric) -> {round: value}"""
    return load_rounds(path, ("test", "tool", "metric"))


def tick_bound(us):
    """A latency at the guest's 4 ms timer tick (HZ=250): a wake-up waited for the tick."""
    return 3500 <= us <= 4500


def main():
    values = load(sys.argv[1])
    out = ["| test | metric | run | n | median | min | max |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for (test, tool, metric), by_round in sorted(values.items()):
        v = list(by_round.values())
        out.append(f"| {LABELS.get(test, test)} | {UNITS.get(metric, metric)} | {tool} | {len(v)} | "
                   f"{statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} |")
    out += ["", "| test | metric | twinwire run | against | ratio of medians | median of per-round ratios | goal | met |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    missing = 0
    rma_run = any(test.startswith("rma-") for (test, _, _) in values)
    comparisons = RMA_COMPARISONS if rma_run else COMPARISONS
    for test, metric, tw, pt in comparisons:
        a, b = values.get((test, tw, metric)), values.get((test, pt, metric))
        if not a or not b:
            out.append(f"| {LABELS[test]} | {UNITS[metric]} | {tw} | {pt} | (no data) | | | |")
            missing += 1
            continue
        ratio = statistics.median(a.values()) / statistics.median(b.values())
        paired = paired_ratio(a, b)
        if metric == "mb_s":
            goal, met = f">= {BW_GOAL}", "yes" if ratio >= BW_GOAL else "no"
        else:
            goal, met = f"<= {LAT_GOAL}", "yes" if ratio <= LAT_GOAL else "no"
            if any(tick_bound(statistics.median(x.values())) for x in (a, b)):
                met = "n/a (a median is the 4 ms tick)"
        out.append(f"| {LABELS[test]} | {UNITS[metric]} | {tw} | {pt} | {ratio:.2f} | {paired:.2f} | {goal} | {met} |")
    idle = values.get(("idle", "twinwire", "registered_kib"))
    if idle:
        worst = max(idle.values())
        out += ["", f"Idle connection at the default configuration: at most {worst:.1f} KiB registered "
                f"(goal <= {IDLE_GOAL_KIB} KiB): {'met' if worst <= IDLE_GOAL_KIB else 'missed'}."]
    ticks = [tool for (test, tool, metric), v in values.items()
             if metric == "t_typical_us" and any(tick_bound(x) for x in v.values())]
    if ticks:
        out += ["", "Note: some 64 B latency rounds of " + ", ".join(sorted(set(ticks))) + " sit at about 4000 us: "
                "that is the guest's 4 ms timer tick (a wake-up waited for it), not the transport; compare the "
                "rounds that are below it (docs/benchmarks.md explains)."]
    print("\n".join(out))
    return 1 if missing == len(comparisons) else 0


if __name__ == "__main__":
    sys.exit(main())
