#!/bin/sh
# `twinwire-bench local --zero-copy` over tcp, pair and fault (1 ms receive latency,
# so fault lends its own queue, cut to 7-byte pieces: echoes arrive in pieces): every test ran the zero-copy path
# (the JSON says so and the transport's zero-copy counters moved), every
# echo was checked byte for byte (no errors), every round trip counted.
# usage: check_zero_copy.sh TWINWIRE_BENCH   (TWINWIRE_PLUGIN_PATH: pair, fault)
set -eu
bench=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() { # NAME SIZES, then the transport options
    name=$1 sizes=$2
    shift 2
    status=0
    "$bench" local "$@" --zero-copy --iterations 300 --sizes "$sizes" --json >"$out/$name.json" 2>"$out/$name.err" ||
        status=$?
    if [ "$status" != 0 ]; then
        echo "FAIL: $name: local --zero-copy exited with status $status"
        cat "$out/$name.err" "$out/$name.json"
        exit 1
    fi
    python3 - "$name" "$out/$name.json" <<'PY' || { cat "$out/$name.err"; exit 1; }
import json, sys
name, path = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
bad = []
if doc["errors"]:
    bad.append("errors: %s" % [r["errors"] for r in doc["latency"] + doc["throughput"]])
for test in ("latency", "throughput"):
    if len(doc[test]) != 3:
        bad.append("%d %s results, expected 3 sizes" % (len(doc[test]), test))
    for r in doc[test]:
        s = r["transport_stats"]
        where = "%s %s %d" % (name, test, r["size"])
        if r["io_path"] != "zero-copy":
            bad.append("%s: io_path %r" % (where, r["io_path"]))
        if not s["zero_copy_sends"] or not s["zero_copy_recvs"]:
            bad.append("%s: zero-copy counters sends %d recvs %d" % (where, s["zero_copy_sends"], s["zero_copy_recvs"]))
        if test == "latency" and r["round_trips"] != 300:
            bad.append("%s: %d round trips, expected 300" % (where, r["round_trips"]))
        if test == "throughput" and r["bytes"] != 300 * r["size"]:
            bad.append("%s: %d bytes acknowledged, expected %d" % (where, r["bytes"], 300 * r["size"]))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
    echo "ok: $name: every test zero-copy, every echo verified"
}

run tcp 64,64k,1M --transport tcp
run pair 64,64k,1M --transport pair
printf 'transport = fault\nfault.max_read = 7\nfault.rx_latency_ms = 1\nfault.seed = 1\n' >"$out/fault.conf"
run fault 64,1000,4k --config "$out/fault.conf"
