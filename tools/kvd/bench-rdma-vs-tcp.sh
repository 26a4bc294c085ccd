#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# twinwire-kvd over RDMA against the same daemon over TCP, inside the
# SoftRoCE guest (tools/softroce): one daemon with transport = auto listens
# on both at one port; twinwire-bench resp drives it, alternating TCP and
# RDMA runs for each load (the first of a pair alternating too), both
# crossing the guest's veth wire.  A second daemon with kvd.zero_copy = no
# (the copying path: input and reply buffers) is driven over RDMA in the same
# rounds ("rdma-copy"), and a third load SETs and GETs 64 KiB values on 100
# keys, where GET replies go out from lent send buffers.  Writes the raw JSON and CSV, Markdown tables
# of medians and ratios (vs TCP in OUT/vs-tcp, vs the copying path in
# OUT/vs-copy), and PNGs.
#
#   softroce-run --share OUT -- bench-rdma-vs-tcp.sh --kvd KVD --bench BENCH --out OUT
#                [--rounds 3] [--requests 5000] [--clients 50] [--loads "1:3 16:3 1:65536"]
#
# --requests is per non-pipelined run; pipelined runs (-P 16) send 16x as many,
# 64 KiB runs a fifth.  --loads: PIPELINE:VALUE_BYTES pairs.
set -u

KVD= BENCH= OUT= ROUNDS=3 REQUESTS=5000 CLIENTS=50 LOADS="1:3 16:3 1:65536"
while [ $# -gt 0 ]; do
    case $1 in
        --kvd) KVD=$2; shift 2 ;;
        --bench) BENCH=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --requests) REQUESTS=$2; shift 2 ;;
        --clients) CLIENTS=$2; shift 2 ;;
        --loads) LOADS=$2; shift 2 ;;
        *) echo "bench-rdma-vs-tcp.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$KVD" ] && [ -n "$BENCH" ] && [ -n "$OUT" ] || { echo "bench-rdma-vs-tcp.sh: give --kvd, --bench and --out" >&2; exit 2; }
if [ -z "${SOFTROCE_SERVER_IP:-}" ]; then
    echo "bench-rdma-vs-tcp.sh: not in the SoftRoCE guest; run it through tools/softroce/softroce-run" >&2
    exit 2
fi
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)

"$KVD" --transport auto --bind "$SOFTROCE_SERVER_IP" --port 0 --log-file "$OUT/kvd.log" &
KVD_PID=$!
"$KVD" --transport auto --bind "$SOFTROCE_SERVER_IP" --port 0 --set kvd.zero_copy=no --log-file "$OUT/kvd-copy.log" &
COPY_PID=$!
trap 'kill -TERM $KVD_PID $COPY_PID 2>/dev/null; wait $KVD_PID $COPY_PID 2>/dev/null' EXIT
port_of() { # LOG: the daemon's port, once it serves RDMA
    for _ in $(seq 600); do grep -qs ' serving on ' "$1" && break; sleep 0.1; done
    if ! grep -q "serving on .* over rdma+tcp (transport rdma" "$1"; then
        echo "bench-rdma-vs-tcp.sh: the daemon does not serve RDMA:" >&2
        cat "$1" >&2
        exit 1
    fi
    echo "# $(grep ' serving on ' "$1" | sed 's/.*INFO \[kvd\] //')" >&2
    sed -n 's/.* serving on [^ ]*:\([0-9]*\) over .*/\1/p' "$1" | head -1
}
PORT=$(port_of "$OUT/kvd.log") || exit 1
COPY_PORT=$(port_of "$OUT/kvd-copy.log") || exit 1

RAW=$OUT/raw.csv
echo "round,target,pipeline,test,rps,p99_ms,p50_ms,errors,connections" >"$RAW"
failed=0
for round in $(seq "$ROUNDS"); do
    # Loads: pipeline depth and value size (64 KiB values: GET replies lent).
    for load in $LOADS; do
        pipeline=${load%:*} size=${load#*:}
        requests=$((REQUESTS * pipeline)) keyspace=100000
        # Large values: few requests, on 100 keys, so nearly every GET finds its value.
        [ "$size" -gt 3 ] && requests=$((REQUESTS / 5)) keyspace=100
        # Which goes first alternates from round to round.
        order="tcp rdma rdma-copy"
        [ $((round % 2)) -eq 0 ] && order="rdma-copy rdma tcp"
        for target in $order; do
            transport=${target%-copy} port=$PORT
            [ "$target" = rdma-copy ] && port=$COPY_PORT
            json=$OUT/round$round-P$pipeline-d$size-$target.json
            "$BENCH" resp --host "$SOFTROCE_SERVER_IP" --port "$port" --transport "$transport" \
                --source "$SOFTROCE_CLIENT_IP" --clients "$CLIENTS" --requests "$requests" --data-size "$size" --keyspace "$keyspace" \
                --pipeline "$pipeline" --tests set,get --json >"$json" 2>"$OUT/bench.stderr" || failed=1
            python3 - "$json" "$round" "$target" "$pipeline" "$size" >>"$RAW" <<'EOF' || failed=1
import json, sys
path, rnd, target, pipeline, size = sys.argv[1:]
transport = target.replace('-copy', '')
doc = json.load(open(path))
conns = ' '.join('%d %s' % (c['count'], c['transport']) for c in doc['connections'])
# Every connection must have used the transport asked for: no silent fallback.
if any(c['transport'] != transport for c in doc['connections']) or doc['errors']:
    sys.stderr.write('%s: wrong transport or errors: %s, %d errors\n' % (path, conns, doc['errors']))
    sys.exit(1)
for t in doc['tests']:
    test = t['test'] if size == '3' else '%s %dKiB' % (t['test'], int(size) // 1024)
    print('%s,%s,%s,%s,%.1f,%.3f,%.3f,%d,%s' % (rnd, target, pipeline, test, t['requests_per_s'],
                                                t['p99_ms'], t['p50_ms'], t['errors'], conns))
EOF
            echo "# round $round, -P $pipeline -d $size, $target done" >&2
        done
    done
done
kill -TERM $KVD_PID $COPY_PID
wait $KVD_PID
echo "# daemon exit status after SIGTERM: $?" >&2
wait $COPY_PID
echo "# copying daemon exit status after SIGTERM: $?" >&2
mkdir -p "$OUT/vs-tcp" "$OUT/vs-copy"
labels=(--label tcp=TCP --label rdma="RDMA (SoftRoCE)" --label rdma-copy="RDMA, kvd.zero_copy = no")
title="twinwire-kvd in the SoftRoCE guest (TCG): twinwire-bench resp, $CLIENTS clients, $ROUNDS rounds"
python3 "$HERE/bench_summary.py" "$RAW" "$OUT/vs-tcp" --baseline tcp "${labels[@]}" --title "$title" || failed=1
python3 "$HERE/bench_summary.py" "$RAW" "$OUT/vs-copy" --baseline rdma-copy "${labels[@]}" --title "$title" || failed=1
exit $failed
