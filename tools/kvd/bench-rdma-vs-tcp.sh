#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# twinwire-kvd over RDMA against the same daemon over TCP, inside the
# SoftRoCE guest (tests/softroce): one daemon with transport = auto listens
# on both at one port; twinwire-bench resp drives it, alternating TCP and
# RDMA runs for each load (the first of a pair alternating too), both
# crossing the guest's veth wire.  Writes the
# raw JSON and CSV, a Markdown table of medians and ratios, and a PNG.
#
#   softroce-run --share OUT -- bench-rdma-vs-tcp.sh --kvd KVD --bench BENCH --out OUT
#                [--rounds 3] [--requests 5000] [--clients 50]
#
# --requests is per non-pipelined run; pipelined runs (-P 16) send 16x as many.
set -u

KVD= BENCH= OUT= ROUNDS=3 REQUESTS=5000 CLIENTS=50
while [ $# -gt 0 ]; do
    case $1 in
        --kvd) KVD=$2; shift 2 ;;
        --bench) BENCH=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --requests) REQUESTS=$2; shift 2 ;;
        --clients) CLIENTS=$2; shift 2 ;;
        *) echo "bench-rdma-vs-tcp.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$KVD" ] && [ -n "$BENCH" ] && [ -n "$OUT" ] || { echo "bench-rdma-vs-tcp.sh: give --kvd, --bench and --out" >&2; exit 2; }
if [ -z "${SOFTROCE_SERVER_IP:-}" ]; then
    echo "bench-rdma-vs-tcp.sh: not in the SoftRoCE guest; run it through tests/softroce/softroce-run" >&2
    exit 2
fi
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)

"$KVD" --transport auto --bind "$SOFTROCE_SERVER_IP" --port 0 --log-file "$OUT/kvd.log" &
KVD_PID=$!
trap 'kill -TERM $KVD_PID 2>/dev/null; wait $KVD_PID 2>/dev/null' EXIT
for _ in $(seq 600); do grep -qs ' serving on ' "$OUT/kvd.log" && break; sleep 0.1; done
PORT=$(sed -n 's/.* serving on [^ ]*:\([0-9]*\) over .*/\1/p' "$OUT/kvd.log" | head -1)
if ! grep -q "serving on .* over rdma+tcp (transport rdma" "$OUT/kvd.log"; then
    echo "bench-rdma-vs-tcp.sh: the daemon does not serve RDMA:" >&2
    cat "$OUT/kvd.log" >&2
    exit 1
fi
echo "# $(grep ' serving on ' "$OUT/kvd.log" | sed 's/.*INFO \[kvd\] //')" >&2

RAW=$OUT/raw.csv
echo "round,target,pipeline,test,rps,p99_ms,p50_ms,errors,connections" >"$RAW"
failed=0
for round in $(seq "$ROUNDS"); do
    for pipeline in 1 16; do
        # Which goes first alternates from round to round.
        order="tcp rdma"
        [ $((round % 2)) -eq 0 ] && order="rdma tcp"
        for transport in $order; do
            json=$OUT/round$round-P$pipeline-$transport.json
            "$BENCH" resp --host "$SOFTROCE_SERVER_IP" --port "$PORT" --transport "$transport" \
                --source "$SOFTROCE_CLIENT_IP" --clients "$CLIENTS" --requests $((REQUESTS * pipeline)) \
                --pipeline "$pipeline" --tests set,get --json >"$json" 2>"$OUT/bench.stderr" || failed=1
            python3 - "$json" "$round" "$transport" "$pipeline" >>"$RAW" <<'EOF' || failed=1
import json, sys
path, rnd, transport, pipeline = sys.argv[1:]
doc = json.load(open(path))
conns = ' '.join('%d %s' % (c['count'], c['transport']) for c in doc['connections'])
# Every connection must have used the transport asked for: no silent fallback.
if any(c['transport'] != transport for c in doc['connections']) or doc['errors']:
    sys.stderr.write('%s: wrong transport or errors: %s, %d errors\n' % (path, conns, doc['errors']))
    sys.exit(1)
for t in doc['tests']:
    print('%s,%s,%s,%s,%.1f,%.3f,%.3f,%d,%s' % (rnd, transport, pipeline, t['test'], t['requests_per_s'],
                                                t['p99_ms'], t['p50_ms'], t['errors'], conns))
EOF
            echo "# round $round, -P $pipeline, $transport done" >&2
        done
    done
done
kill -TERM $KVD_PID
wait $KVD_PID
echo "# daemon exit status after SIGTERM: $?" >&2
python3 "$HERE/bench_summary.py" "$RAW" "$OUT" --baseline tcp --label tcp=TCP --label rdma="RDMA (SoftRoCE)" \
    --title "twinwire-kvd in the SoftRoCE guest (TCG): twinwire-bench resp, $CLIENTS clients, $ROUNDS rounds"
exit $failed
