"""Shared by the comparison summaries (perftest-summary.py, tcp-compare-summary.py): figures per round, read from
a script's raw TSV, and the median of per-round ratios."""
import csv
import statistics
from collections import defaultdict


def load_rounds(path, key_columns):
    """(row[k] for k in key_columns) -> {round: value}, from a TSV with columns round, value and key_columns."""
    values = defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            try:
                values[tuple(row[k] for k in key_columns)][row["round"]] = float(row["value"])
            except ValueError:
                pass  # a run that printed no figure: its absence shows in n
    return values


def paired_ratio(a, b):
    """Median over the rounds of a / b in the same round (robust to drifting load)."""
    ratios = [a[r] / b[r] for r in a if r in b and b[r] > 0]
    return statistics.median(ratios) if ratios else float("nan")
