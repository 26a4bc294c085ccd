#!/usr/bin/env bash
# The inside of perftest-compare.sh: runs in the SoftRoCE guest (wire
# topology: rxe0/10.77.0.1 -- veth -- rxe1/10.77.0.2) and alternates perftest
# and twinwire-bench on the same devices, round after round.  Every run's
# output goes to OUT/logs, every figure to OUT/raw.tsv:
#   round  test  tool  metric  value
# usage: perftest-compare-guest.sh BENCH OUT ROUNDS [RMA_TOOL]
# With RMA_TOOL (rdma-tests, perftest-compare.sh --rma): only the one-sided
# rows, RDMA READ / WRITE against ib_read_bw / ib_write_bw.
set -uo pipefail
bench=$1 out=$2 rounds=$3 rma_tool=${4:-}
: "${SOFTROCE_SERVER_DEV:?run me in the SoftRoCE guest (tools/softroce/softroce-run)}"
srv_dev=$SOFTROCE_SERVER_DEV cli_dev=$SOFTROCE_CLIENT_DEV srv_ip=$SOFTROCE_SERVER_IP cli_ip=$SOFTROCE_CLIENT_IP
gid=${SOFTROCE_GID_INDEX:-1}
lat_iters=${COMPARE_LAT_ITERS:-1000}
bw4k_iters=${COMPARE_BW4K_ITERS:-5000}
# Both sizes stream perftest's own default count (5000 messages: 20 MiB at
# 4 KiB, 320 MiB at 64 KiB).  The short row bw64k-500 (500 messages, 32 MiB,
# what runs up to O streamed at 64 KiB) keeps the start of a connection in
# view: there the rings are still growing.
bw64k_iters=${COMPARE_BW64K_ITERS:-5000}
bw64k_short_iters=${COMPARE_BW64K_SHORT_ITERS:-500}
# The second twinwire configuration: 4 MiB rings from the start and no
# growth (the defaults start at a 32 KiB receive ring and a 16 KiB send
# buffer and grow to 16 MiB while the stream waits for them), so that many
# messages are in flight from the first byte, as with perftest's 128-deep
# send queue.  (Busy polling, rdma.busy_poll_us, is left off: in the 2-vCPU
# TCG guest a spinning process starves rxe's kernel work.)
tuned_env=(TWINWIRE_RDMA_RING_SIZE=4M TWINWIRE_RDMA_SEND_BUFFER_SIZE=4M TWINWIRE_RDMA_RING_MAX=4M
    TWINWIRE_RDMA_SEND_BUFFER_MAX=4M)
export TWINWIRE_CONNECT_TIMEOUT_MS=10000

mkdir -p "$out/logs"
raw=$out/raw.tsv
printf 'round\ttest\ttool\tmetric\tvalue\n' >"$raw"
status=0
note() { echo "perftest-compare: $*" >&2; }
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$raw"; }

# Waits until FILE contains TEXT (the server is ready), at most 30 s.
wait_for() {
    local file=$1 text=$2 i
    for i in $(seq 150); do grep -q "$text" "$file" 2>/dev/null && return 0; sleep 0.2; done
    return 1
}

# perftest: the server on rxe1, the client on rxe0, plain verbs over the wire.
# Prints the client's result line (the one that starts with the size).
perftest() { # log tool size iters [extra...]
    local log=$1 tool=$2 size=$3 iters=$4; shift 4
    timeout 300 "$tool" -d "$srv_dev" -x "$gid" -F -s "$size" -n "$iters" "$@" >"$log.server" 2>&1 &
    local spid=$!
    local i
    for i in $(seq 100); do ss -ltn 2>/dev/null | grep -q ':18515 ' && break; sleep 0.1; done
    timeout 300 "$tool" -d "$cli_dev" -x "$gid" -F -s "$size" -n "$iters" "$@" "$srv_ip" >"$log" 2>&1
    local rc=$?
    wait "$spid"
    [ $rc -eq 0 ] || { note "$tool $* failed ($rc): see $log"; return 1; }
    awk -v s="$size" '$1 == s && NF >= 4 { line = $0 } END { if (line == "") exit 1; print line }' "$log"
}

# One twinwire-bench client run; prints its JSON.
twinwire() { # log port env... -- args...
    local log=$1 port=$2; shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" "$bench" client --transport rdma --host "$srv_ip" --port "$port" --source "$cli_ip" \
        --json "$@" >"$log" 2>"$log.err"
    local rc=$?
    [ $rc -eq 0 ] || { note "twinwire-bench $* failed ($rc): see $log.err"; cat "$log.err" >&2; return 1; }
    cat "$log"
}

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

start_server() { # port log env...
    local port=$1 log=$2; shift 2
    env "$@" "$bench" server --transport rdma --listen "$srv_ip" --port "$port" >"$log" 2>&1 &
    servers+=($!)
    wait_for "$log" "listening on" || { note "twinwire-bench server on port $port did not start:"; cat "$log" >&2; exit 1; }
}

servers=()
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; wait' EXIT

# One-sided rows: the plugin's rma_post (DEPTH operations, default 64 = the plugin's
# per-connection limit, in flight on one
# registered buffer, as perftest reuses one buffer) against perftest.
rma_64k_iters=${COMPARE_RMA64K_ITERS:-2000}
rma_1m_iters=${COMPARE_RMA1M_ITERS:-200}
rma_depth=${COMPARE_RMA_DEPTH:-64}
tw_rma_run() { # round test size iters op port
    local r=$1 test=$2 size=$3 iters=$4 op=$5 port=$6 log=$out/logs/$1-$2-twinwire-rma.txt
    "$rma_tool" --child rma-bench-client "$srv_ip" "$cli_ip" "$port" "$op" "$size" "$iters" "$rma_depth" \
        >"$log" 2>"$log.err" || { note "rma-bench-client $op $size failed: see $log.err"; status=1; return; }
    record "$r" "$test" twinwire-rma mb_s "$(awk '$1 == "mib_per_s" { print $2 }' "$log")"
}
# The same transfers through the framework's Connection API: twinwire-bench
# rma (server and client in one process, across the wire), RMA_DEPTH in
# flight, for COMPARE_RMA_SECONDS.
bench_rma_run() { # round test size op
    local r=$1 test=$2 size=$3 op=$4 log=$out/logs/$1-$2-twinwire-bench-rma.txt
    "$bench" rma --transport rdma --listen "$srv_ip" --source "$cli_ip" -t "rma-$op" -s "$size" -w "$rma_depth" \
        -D "${COMPARE_RMA_SECONDS:-2}" >"$log" 2>"$log.err" || { note "twinwire-bench rma $op $size failed: see $log"; status=1; return; }
    record "$r" "$test" twinwire-bench-rma mb_s "$(awk -v t="rma-$op" -v s="$size" '$1 == t && $2 == s { print $3; exit }' "$log")"
}
if [ -n "$rma_tool" ]; then
    "$rma_tool" --child rma-bench-server "$srv_ip" >"$out/logs/rma-server.out" 2>"$out/logs/rma-server.err" &
    servers+=($!)
    wait_for "$out/logs/rma-server.out" '^[0-9]' || { note "rma-bench-server did not start"; cat "$out/logs/rma-server.err" >&2; exit 1; }
    rma_port=$(head -1 "$out/logs/rma-server.out")
    for r in $(seq "$rounds"); do
        note "RMA round $r of $rounds"
        for size in 65536 1048576; do
            iters=$rma_64k_iters k=64k
            [ "$size" = 1048576 ] && iters=$rma_1m_iters k=1m
            for op in read write; do
                line=$(perftest "$out/logs/$r-rma-$op$k-ib_${op}_bw.txt" "ib_${op}_bw" "$size" "$iters") &&
                    record "$r" "rma-$op$k" "ib_${op}_bw" mb_s "$(echo "$line" | awk '{print $4}')" || status=1
                tw_rma_run "$r" "rma-$op$k" "$size" "$iters" "$op" "$rma_port"
                bench_rma_run "$r" "rma-$op$k" "$size" "$op"
            done
        done
    done
    exit $status
fi

start_server 7379 "$out/logs/server-default.log"
start_server 7380 "$out/logs/server-4MiB-rings.log" "${tuned_env[@]}"

# The first rdma_resolve_addr to a peer not yet in the neighbour table can
# wait for its whole timeout (see docs/benchmarks.md); connect until it works.
for try in 1 2 3 4 5; do
    TWINWIRE_CONNECT_TIMEOUT_MS=2000 "$bench" client --transport rdma --host "$srv_ip" --port 7379 --source "$cli_ip" \
        --test latency --sizes 64 --iterations 1 >/dev/null 2>"$out/logs/warmup.err" && break
    note "warm-up connect $try failed; trying again"
done

lat_run() { # round tool-label [perftest flags...]
    local r=$1 label=$2; shift 2
    local line
    line=$(perftest "$out/logs/$r-lat64-$label.txt" ib_send_lat 64 "$lat_iters" "$@") || { status=1; return; }
    # t_min t_max t_typical t_avg ...: half round trips (perftest halves the RTT)
    record "$r" lat64 "$label" t_typical_us "$(echo "$line" | awk '{print $5}')"
    record "$r" lat64 "$label" t_avg_us "$(echo "$line" | awk '{print $6}')"
}

tw_lat_run() { # round label port env...
    local r=$1 label=$2 port=$3; shift 3
    local doc
    doc=$(twinwire "$out/logs/$r-lat64-$label.json" "$port" "$@" -- --test latency --sizes 64 \
        --iterations "$lat_iters") || { status=1; return; }
    # Half the round trip, as perftest reports it.
    record "$r" lat64 "$label" t_typical_us "$(echo "$doc" | json 'd["latency"][0]["one_way_p50_us"]')"
    record "$r" lat64 "$label" t_avg_us "$(echo "$doc" | json 'd["latency"][0]["one_way_mean_us"]')"
}

bw_run() { # round test size iters tool
    local r=$1 test=$2 size=$3 iters=$4 tool=$5
    local line
    line=$(perftest "$out/logs/$r-$test-$tool.txt" "$tool" "$size" "$iters") || { status=1; return; }
    record "$r" "$test" "$tool" mb_s "$(echo "$line" | awk '{print $4}')"
}

tw_bw_run() { # round test size iters label port env...
    local r=$1 test=$2 size=$3 iters=$4 label=$5 port=$6; shift 6
    local doc extra=()
    # The zero-copy row: the sender writes its payload into lent send
    # buffers, the sink counts it in the borrowed receive ring.
    [[ $label == *zero-copy* ]] && extra=(--zero-copy)
    doc=$(twinwire "$out/logs/$r-$test-$label.json" "$port" "$@" -- --test throughput --sizes "$size" \
        --iterations "$iters" "${extra[@]}") || { status=1; return; }
    record "$r" "$test" "$label" mb_s "$(echo "$doc" | json 'd["throughput"][0]["mb_per_s"]')"
    # What the adaptive rings did: registered memory and ring sizes at the end.
    rings_record "$r" "$test" "$label" "$(echo "$doc" | json 'd["throughput"][0].get("rings", {})')"
}

rings_record() { # round test label rings-dict
    local rings=$4
    [ "$rings" = "{}" ] && return
    record "$1" "$2" "$3" registered_kib "$(echo "$rings" | python3 -c 'import ast,sys; print(ast.literal_eval(sys.stdin.read())["registered_bytes"] / 1024)')"
    record "$1" "$2" "$3" rx_ring_kib "$(echo "$rings" | python3 -c 'import ast,sys; print(ast.literal_eval(sys.stdin.read())["rx_ring"] / 1024)')"
}

# An idle connection at the default configuration: connected, one 64 B
# round trip, then its registered memory (the issue 14 goal: <= 64 KiB).
tw_idle_run() { # round port
    local doc
    doc=$(twinwire "$out/logs/$1-idle-twinwire.json" "$2" -- --test latency --sizes 64 --iterations 1) ||
        { status=1; return; }
    rings_record "$1" idle twinwire "$(echo "$doc" | json 'd["latency"][0].get("rings", {})')"
}

for r in $(seq "$rounds"); do
    note "round $r of $rounds"
    tw_idle_run "$r" 7379
    # Latency: perftest polls its CQ; -e makes it wait for completion events as twinwire does by default.
    lat_run "$r" ib_send_lat
    tw_lat_run "$r" twinwire 7379
    lat_run "$r" ib_send_lat-e -e
    tw_lat_run "$r" twinwire-4MiB-rings 7380 "${tuned_env[@]}"
    for size in 4096 65536; do
        test=bw$((size / 1024))k
        iters=$bw4k_iters
        [ "$size" = 65536 ] && iters=$bw64k_iters
        bw_run "$r" "$test" "$size" "$iters" ib_send_bw
        tw_bw_run "$r" "$test" "$size" "$iters" twinwire 7379
        bw_run "$r" "$test" "$size" "$iters" ib_write_bw
        tw_bw_run "$r" "$test" "$size" "$iters" twinwire-zero-copy 7379
        tw_bw_run "$r" "$test" "$size" "$iters" twinwire-4MiB-rings 7380 "${tuned_env[@]}"
    done
    bw_run "$r" bw64k-500 65536 "$bw64k_short_iters" ib_write_bw
    tw_bw_run "$r" bw64k-500 65536 "$bw64k_short_iters" twinwire 7379
done
exit $status
