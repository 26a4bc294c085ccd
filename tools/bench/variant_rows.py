"""compare-variants.sh's figures: `rows JSON ROUND LABEL` prints a run's CSV rows (from twinwire-bench --json);
`summary RAW OUT CONDITIONS LABEL...` writes and prints the medians and, per group, the median of per-round ratios
of each variant to the group's first."""
import csv
import json
import statistics
import sys

from compare_rounds import paired_ratio


def group_of(label):
    return label.split("/", 1)[0] if "/" in label else ""


def rows(path, rnd, label):
    doc = json.load(open(path))
    if doc["errors"]:
        sys.exit("%s: %d errors" % (path, doc["errors"]))
    g = group_of(label)
    for r in doc["latency"]:
        print("%s,%s,%s,latency,%d,%.3f,%.3f,,%s" % (rnd, g, label, r["size"], r["p50_us"], r["mean_us"], r["io_path"]))
    for r in doc["throughput"]:
        print("%s,%s,%s,throughput,%d,,,%.2f,%s" % (rnd, g, label, r["size"], r["mb_per_s"], r["io_path"]))


def summary(raw, out, cond, labels):
    data = list(csv.DictReader(open(raw)))
    column = {"latency": "p50_rt_us", "throughput": "mb_per_s"}
    unit = {"latency": "us p50 rt", "throughput": "MB/s"}
    base = {}
    for label in labels:
        base.setdefault(group_of(label), label)
    lines = ["| variant | test | size | median | against | its median | ratio (median of per-round ratios) | io_path |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for test in ("latency", "throughput"):
        sizes = sorted({int(r["size"]) for r in data if r["test"] == test})
        for size in sizes:
            def per_round(label):
                return {r["round"]: float(r[column[test]]) for r in data
                        if r["variant"] == label and r["test"] == test and int(r["size"]) == size}
            for label in labels:
                own, ref = per_round(label), base[group_of(label)]
                if not own or ref == label:
                    continue
                other = per_round(ref)
                paths = sorted({r["io_path"] for r in data if r["variant"] == label and r["test"] == test})
                lines.append("| %s | %s | %d | %.2f %s | %s | %s | **%.2fx** (%d rounds) | %s |" % (
                    label, test, size, statistics.median(own.values()), unit[test], ref,
                    "%.2f" % statistics.median(other.values()) if other else "-",
                    paired_ratio(own, other), len(set(own) & set(other)), "; ".join(paths)))
    lines.append("")
    lines.append("Latency: lower is better (ratio < 1: the variant is faster); throughput: higher is better.")
    lines += [line.strip() for line in open(cond)]
    open(out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "rows":
        rows(*sys.argv[2:5])
    else:
        summary(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
