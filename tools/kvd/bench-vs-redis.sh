#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# twinwire-kvd against redis-server on loopback under the same redis-benchmark
# load, in alternating runs (redis, kvd threads=1, kvd threads=2, then the
# next round starting one further along), so drift in the machine's load and
# the place in the round hit every side alike.  Prints a Markdown
# table of medians and ratios; writes the raw CSV, the table and a PNG plot
# (bench_summary.py).
#
#   bench-vs-redis.sh [--kvd PATH] [--rounds N] [--requests N] [--clients N]
#                     [--keyspace N] [--threads "1 2"] [--tests set,get] [--out DIR]
#                     [--tls]
#
# --tests takes redis-benchmark's -t names (lpush,sadd,hset,zadd,lrange_100,
# mset, ...); every test of the list becomes a load in the table.
# --requests is per non-pipelined run; pipelined runs (-P 16) send 16x as many.
# --tls: both servers serve TLS only (redis-server on its tls-port, kvd over the
# tls transport), with the same certificate made for the run
# (tests/tls/make-certs.sh), and redis-benchmark runs with --tls.
set -u

KVD=
ROUNDS=9
REQUESTS=200000
CLIENTS=50
KEYSPACE=100000
THREADS="1 2"
TESTS=set,get
OUT=
TLS=
while [ $# -gt 0 ]; do
    case $1 in
        --kvd) KVD=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --requests) REQUESTS=$2; shift 2 ;;
        --clients) CLIENTS=$2; shift 2 ;;
        --keyspace) KEYSPACE=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --tests) TESTS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --tls) TLS=1; shift ;;
        -h | --help) sed -n '3,17p' "$0"; exit 0 ;;
        *) echo "bench-vs-redis.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$KVD" ]; then
    KVD=$(command -v twinwire-kvd) || { echo "bench-vs-redis.sh: give --kvd PATH" >&2; exit 2; }
fi
for tool in redis-server redis-benchmark gnuplot; do
    command -v $tool >/dev/null || { echo "bench-vs-redis.sh: $tool is missing (redis-server, redis-tools, gnuplot-nox)" >&2; exit 77; }
done
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kvd-vs-redis.XXXXXX")}
mkdir -p "$OUT"
RAW=$OUT/raw.csv

# CLIENT_TLS: what redis-cli and redis-benchmark add to reach a server;
# REDIS_LISTEN / KVD_LISTEN: how each server listens on port $1.
CLIENT_TLS=()
REDIS_LISTEN() { echo --port "$1"; }
KVD_LISTEN() { echo --transport tcp --port "$1"; }
if [ -n "$TLS" ]; then
    C=$OUT/certs
    sh "$(dirname "$0")/../../tests/tls/make-certs.sh" "$C" || exit 1
    CLIENT_TLS=(--tls --cacert "$C/ca.pem")
    REDIS_LISTEN() { echo --port 0 --tls-port "$1" --tls-cert-file "$C/server.pem" --tls-key-file "$C/server.key" \
        --tls-ca-cert-file "$C/ca.pem" --tls-auth-clients no; }
    KVD_LISTEN() { echo --transport tls --port "$1" --set "tls.cert_file=$C/server.pem" --set "tls.key_file=$C/server.key"; }
fi

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ping() { for _ in $(seq 100); do [ "$(redis-cli "${CLIENT_TLS[@]}" -p "$1" PING 2>/dev/null)" = PONG ] && return 0; sleep 0.1; done; return 1; }

declare -A PORT
PORT[redis]=$(free_port)
# shellcheck disable=SC2046 # word-split on purpose: the listen arguments
redis-server $(REDIS_LISTEN "${PORT[redis]}") --bind 127.0.0.1 --save "" --appendonly no --logfile "$OUT/redis.log" &
PIDS+=($!)
TARGETS=(redis)
for t in $THREADS; do
    PORT[kvd$t]=$(free_port)
    # shellcheck disable=SC2046
    "$KVD" $(KVD_LISTEN "${PORT[kvd$t]}") --threads "$t" --log-file "$OUT/kvd$t.log" &
    PIDS+=($!)
    TARGETS+=("kvd$t")
done
for target in "${TARGETS[@]}"; do
    wait_ping "${PORT[$target]}" || { echo "bench-vs-redis.sh: $target does not answer" >&2; exit 1; }
done

echo "round,target,pipeline,test,rps,p99_ms,avg_ms,p50_ms" >"$RAW"
echo "# $(redis-server --version | cut -d' ' -f1-3); $("$KVD" --version); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for round in $(seq "$ROUNDS"); do
    for pipeline in 1 16; do
        n=$((REQUESTS * pipeline))
        for k in "${!TARGETS[@]}"; do
            target=${TARGETS[$(( (k + round) % ${#TARGETS[@]} ))]}
            redis-cli "${CLIENT_TLS[@]}" -p "${PORT[$target]}" FLUSHALL >/dev/null
            # CSV: "test","rps","avg","min","p50","p95","p99","max"
            redis-benchmark "${CLIENT_TLS[@]}" -h 127.0.0.1 -p "${PORT[$target]}" -c "$CLIENTS" -n "$n" -P "$pipeline" \
                -r "$KEYSPACE" -t "$TESTS" -q --csv 2>/dev/null | tr -d '"' | grep -v '^test,' |
                while IFS=, read -r test rps avg _min p50 _p95 p99 _max; do
                    echo "$round,$target,$pipeline,$test,$rps,$p99,$avg,$p50"
                done >>"$RAW"
            echo "# round $round, -P $pipeline, $target done" >&2
        done
    done
done

labels=(--label redis=redis-server)
for t in $THREADS; do labels+=(--label "kvd$t=twinwire-kvd threads=$t"); done
python3 "$(dirname "$0")/bench_summary.py" "$RAW" "$OUT" --baseline redis "${labels[@]}" \
    --title "redis-benchmark${TLS:+ --tls} on loopback, $CLIENTS clients, median of $ROUNDS alternating runs"
echo "# raw runs: $RAW; table: $OUT/table.md; plot: $OUT/plot.png" >&2
