#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# twinwire-bench --zero-copy beside the copying path, alternating round by
# round (which path goes first alternates too): `twinwire-bench local`
# (server and client in one process) for each transport, latency and
# throughput at each size.  Writes OUT/raw.csv (every figure, with the
# io_path each run reported), OUT/logs/, and OUT/summary.md: medians per
# path and the median of per-round ratios zero-copy / copy.
#
# Host (loopback, pinned to one CPU):
#   tools/bench/zero-copy-compare.sh --bench build/tools/bench/twinwire-bench --out OUT --pin 1 --transports tcp
# SoftRoCE guest (both ends of the veth wire):
#   tools/softroce/softroce-run --share $PWD -- tools/bench/zero-copy-compare.sh --bench ... --out OUT \
#       --transports rdma,tcp --listen 10.77.0.2 --source 10.77.0.1
#
# [--rounds 5] [--sizes 64,4k,64k,1m] [--duration 1]
set -uo pipefail
BENCH= OUT= ROUNDS=5 SIZES=64,4k,64k,1m DURATION=1 TRANSPORTS=tcp LISTEN=127.0.0.1 SOURCE= PIN=
while [ $# -gt 0 ]; do
    case $1 in
        --bench) BENCH=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --sizes) SIZES=$2; shift 2 ;;
        --duration) DURATION=$2; shift 2 ;;
        --transports) TRANSPORTS=$2; shift 2 ;;
        --listen) LISTEN=$2; shift 2 ;;
        --source) SOURCE=$2; shift 2 ;;
        --pin) PIN=$2; shift 2 ;;
        *) echo "zero-copy-compare: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$BENCH" ] && [ -n "$OUT" ] || { echo "zero-copy-compare: give --bench and --out" >&2; exit 2; }
mkdir -p "$OUT/logs"
pin=()
[ -n "$PIN" ] && pin=(taskset -c "$PIN")
source_arg=()
[ -n "$SOURCE" ] && source_arg=(--source "$SOURCE")

RAW=$OUT/raw.csv
echo "round,transport,path,test,size,p50_rt_us,mean_rt_us,mb_per_s,io_path" >"$RAW"
{ echo "# $(date -u +%FT%TZ) $(uname -n), uptime: $(uptime)"; echo "# pin: ${PIN:-none}"; } >"$OUT/conditions.txt"
failed=0
for round in $(seq "$ROUNDS"); do
    order="copy zero-copy"
    [ $((round % 2)) -eq 0 ] && order="zero-copy copy"
    for transport in ${TRANSPORTS//,/ }; do
        for path in $order; do
            flag=()
            [ "$path" = zero-copy ] && flag=(--zero-copy)
            json=$OUT/logs/round$round-$transport-$path.json
            "${pin[@]}" "$BENCH" local --transport "$transport" --listen "$LISTEN" "${source_arg[@]}" \
                --sizes "$SIZES" --duration "$DURATION" "${flag[@]}" --json >"$json" 2>"$OUT/logs/round$round-$transport-$path.err" ||
                failed=1
            python3 - "$json" "$round" "$transport" "$path" >>"$RAW" <<'PY' || failed=1
import json, sys
path, rnd, transport, wanted = sys.argv[1:]
doc = json.load(open(path))
if doc["errors"]:
    sys.exit("%s: %d errors" % (path, doc["errors"]))
for r in doc["latency"]:
    print("%s,%s,%s,latency,%d,%.3f,%.3f,,%s" % (rnd, transport, wanted, r["size"], r["p50_us"], r["mean_us"], r["io_path"]))
for r in doc["throughput"]:
    print("%s,%s,%s,throughput,%d,,,%.2f,%s" % (rnd, transport, wanted, r["size"], r["mb_per_s"], r["io_path"]))
PY
        done
    done
    echo "# round $round done" >&2
done
echo "# after: $(uptime)" >>"$OUT/conditions.txt"
python3 - "$RAW" "$OUT/summary.md" "$OUT/conditions.txt" <<'PY'
import csv, statistics, sys
raw, out, cond = sys.argv[1:]
rows = list(csv.DictReader(open(raw)))
keys = sorted({(r["transport"], r["test"], int(r["size"])) for r in rows})
col = {"latency": "p50_rt_us", "throughput": "mb_per_s"}
lines = ["| transport | test | size | copy (median) | zero-copy (median) | zero-copy / copy (median of per-round ratios) | zero-copy io_path |",
         "| --- | --- | --- | --- | --- | --- | --- |"]
for t, test, size in keys:
    sel = [r for r in rows if (r["transport"], r["test"], int(r["size"])) == (t, test, size)]
    by = {p: {r["round"]: float(r[col[test]]) for r in sel if r["path"] == p} for p in ("copy", "zero-copy")}
    ratios = [by["zero-copy"][k] / by["copy"][k] for k in by["copy"] if k in by["zero-copy"] and by["copy"][k] > 0]
    paths = sorted({r["io_path"] for r in sel if r["path"] == "zero-copy"})
    unit = "us p50 rt" if test == "latency" else "MB/s"
    med = lambda d: "%.2f %s" % (statistics.median(d.values()), unit) if d else "-"
    lines.append("| %s | %s | %d | %s | %s | **%.2fx** (%d rounds) | %s |" % (
        t, test, size, med(by["copy"]), med(by["zero-copy"]), statistics.median(ratios) if ratios else float("nan"),
        len(ratios), "; ".join(paths)))
lines.append("")
lines.append("Latency: lower is better (ratio < 1 = zero copy faster); throughput: higher is better.")
lines += [l.strip() for l in open(cond)]
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
exit $failed
