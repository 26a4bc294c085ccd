#!/usr/bin/env bash
# The guest half of latency-layers.sh: the servers start once, then rounds
# of the eight tools in an order that rotates each round; each client's
# output goes to a file, parsed after it ended (a process starting beside a
# measured run takes the guest's only vCPU from it).
set -uo pipefail
bench=$1 vtable=$2 out=$3 rounds=$4 iters=$5
: "${SOFTROCE_SERVER_DEV:?run me in the SoftRoCE guest (tools/softroce/softroce-run)}"
# Built with -Dlab=true, in the build tree beside tools/bench.
shim=$(dirname "$bench")/../lab/twinwire-event-loop-shim.so
srv_ip=$SOFTROCE_SERVER_IP cli_ip=$SOFTROCE_CLIENT_IP gid=${SOFTROCE_GID_INDEX:-1}
export TWINWIRE_CONNECT_TIMEOUT_MS=10000
export TWINWIRE_PLUGIN_PATH=${TWINWIRE_PLUGIN_PATH:-$(cd "$(dirname "$vtable")/../../rdma_plugin" && pwd)}
# Pinned, the servers to the last vCPU and the clients to the first: an
# unpinned pair jumps between sharing a vCPU and not, round by round.  With
# one vCPU both ends share it, as they must.
last=$(( $(nproc) - 1 ))
srv_pin=(taskset -c "$last") cli_pin=(taskset -c 0)
raw=$out/raw.tsv
printf 'round\ttool\tvalue\n' >"$raw"
status=0
"${srv_pin[@]}" "$bench" server --transport rdma --listen "$srv_ip" --port 7700 >"$out/logs/bench-server.log" 2>&1 &
bench_srv=$!
"${srv_pin[@]}" "$vtable" --child lat-bench-server "$srv_ip" >"$out/logs/vtable-server.out" 2>"$out/logs/vtable-server.err" &
vtable_srv=$!
trap 'kill $bench_srv $vtable_srv 2>/dev/null; wait' EXIT
for t in $(seq 150); do
    grep -q "listening on" "$out/logs/bench-server.log" && grep -q '^[0-9]' "$out/logs/vtable-server.out" && break
    sleep 0.2
done
vport=$(head -1 "$out/logs/vtable-server.out")
[ -n "$vport" ] || { echo "latency-layers: the vtable server did not start:" >&2; cat "$out/logs/vtable-server.err" >&2; exit 1; }

run() { # log tool; prints the one-way p50 in us
    local log=$1
    case $2 in
    ib_send_lat-e*)
        # Both ends wait as an event loop would (the shim says how often).
        local pre=() wait=${2#ib_send_lat-e} once=0
        case $wait in *-once) once=1 wait=${wait%-once} ;; esac
        [ -n "$wait" ] && pre=(env LD_PRELOAD="$shim" TW_SHIM_WAIT="${wait#+}" TW_SHIM_ONCE=$once)
        timeout 300 "${pre[@]}" "${srv_pin[@]}" ib_send_lat -e -d "$SOFTROCE_SERVER_DEV" -x "$gid" -F -s 64 -n "$iters" >"$log.server" 2>&1 &
        local spid=$! t
        for t in $(seq 100); do ss -ltn 2>/dev/null | grep -q ':18515 ' && break; sleep 0.1; done
        timeout 300 "${pre[@]}" "${cli_pin[@]}" ib_send_lat -e -d "$SOFTROCE_CLIENT_DEV" -x "$gid" -F -s 64 -n "$iters" "$srv_ip" >"$log" 2>&1
        wait "$spid"
        if [ -n "$wait" ] && ! grep -q "event_loop_shim: [0-9]* waits (${wait#+})" "$log"; then
            echo "latency-layers: the event-loop shim did not wait in $log" >&2
            return 1
        fi
        # Once per round trip: about half the calls waited in the loop.
        if [ $once = 1 ] && ! awk '$1 == "event_loop_shim:" { w = $2; c = $6 } END { exit !(c > 0 && w > 0.4 * c && w < 0.6 * c) }' "$log"; then
            echo "latency-layers: the event-loop shim did not wait for every second call in $log" >&2
            return 1
        fi
        awk '$1 == 64 && NF >= 5 { v = $5 } END { if (v == "") exit 1; print v }' "$log" ;; # t_typical, the median
    vtable)
        "${cli_pin[@]}" "$vtable" --child lat-bench-client "$srv_ip" "$cli_ip" "$vport" 64 "$iters" >"$log" 2>"$log.err" || return 1
        awk '$1 == "one_way_p50_us" { print $2; ok = 1 } END { exit !ok }' "$log" ;;
    bench | bench-zc)
        local zc=()
        [ "$2" = bench-zc ] && zc=(--zero-copy)
        "${cli_pin[@]}" "$bench" client --transport rdma --host "$srv_ip" --source "$cli_ip" --port 7700 --json --test latency \
            --sizes 64 --iterations "$iters" "${zc[@]}" >"$log" 2>"$log.err" || return 1
        python3 -c "import json,sys; t=open(sys.argv[1]).read(); print(json.loads(t[t.index('{'):])['latency'][0]['one_way_p50_us'])" "$log" ;;
    esac
}

tools=(ib_send_lat-e ib_send_lat-e+epoll ib_send_lat-e+epoll-once ib_send_lat-e+libevent ib_send_lat-e+libevent-once vtable
    bench-zc bench)
for t in vtable bench; do run "$out/logs/warm-$t" "$t" >/dev/null; done # first connects resolve the neighbour
for r in $(seq "$rounds"); do
    for k in "${!tools[@]}"; do
        t=${tools[$(( (k + r - 1) % ${#tools[@]} ))]}
        if v=$(run "$out/logs/$r-$t" "$t"); then
            printf '%s\t%s\t%s\n' "$r" "$t" "$v" >>"$raw"
        else
            echo "latency-layers: $t failed in round $r: see $out/logs/$r-$t*" >&2
            status=1
        fi
    done
done
exit $status
