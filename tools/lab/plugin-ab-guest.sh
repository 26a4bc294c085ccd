#!/usr/bin/env bash
# The guest half of plugin-ab.sh: one twinwire-bench server per variant,
# then rounds of anchor + variants (order rotating), each client's output to
# a file and parsed after it ended (a process starting beside a measured run
# takes the guest's only vCPU from it).
set -uo pipefail
bench=$1 out=$2 rounds=$3 test=$4 sizes=$5 iters=$6
shift 6
: "${SOFTROCE_SERVER_DEV:?run me in the SoftRoCE guest (tools/softroce/softroce-run)}"
srv_ip=$SOFTROCE_SERVER_IP cli_ip=$SOFTROCE_CLIENT_IP gid=${SOFTROCE_GID_INDEX:-1}
export TWINWIRE_CONNECT_TIMEOUT_MS=10000
# plugin-ab.sh --set: TWINWIRE_<KEY>=VALUE lines, one per setting.
while IFS= read -r setting; do [ -n "$setting" ] && export "$setting"; done <"$out/settings.env"
raw=$out/raw.tsv
printf 'round\tsize\trun\tvalue\n' >"$raw"
status=0
# A variant is LABEL=DIR[,TWINWIRE_KEY=VALUE]...: its plugin and its own settings.
labels=() dirs=() envs=()
for v in "$@"; do
    IFS=, read -r -a parts <<<"${v#*=}"
    labels+=("${v%%=*}") dirs+=("${parts[0]}") envs+=("${parts[*]:1}")
done
# Latency: servers on the last vCPU, clients on the first (one vCPU: shared).
server_cpu=() client_cpu=()
if [ "$test" = latency ]; then
    server_cpu=(taskset -c $(($(nproc) - 1))) client_cpu=(taskset -c 0)
fi
run_variant() { # index command...: the command with the variant's plugin and settings
    local i=$1
    shift
    # shellcheck disable=SC2086 # envs[i]: space-separated NAME=VALUE words
    env TWINWIRE_PLUGIN_PATH="${dirs[$i]}" ${envs[$i]} "$@"
}
servers=()
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; wait' EXIT
for i in "${!labels[@]}"; do
    run_variant "$i" "${server_cpu[@]}" "$bench" server --transport rdma --listen "$srv_ip" --port $((7500 + i)) \
        >"$out/logs/server-${labels[$i]}.log" 2>&1 &
    servers+=($!)
done
for i in "${!labels[@]}"; do
    for t in $(seq 150); do grep -q "listening on" "$out/logs/server-${labels[$i]}.log" && break; sleep 0.2; done
done

anchor_run() { # log size [polling]
    local tool=ib_write_bw extra=() col=4
    [ "$test" = latency ] && tool=ib_send_lat extra=(-e) col=5 # t_typical, the median
    [ "${3:-}" = polling ] && extra=()
    [ "$test" = bidirectional ] && extra=(-b) # both directions, summed
    timeout 300 "${server_cpu[@]}" "$tool" -d "$SOFTROCE_SERVER_DEV" -x "$gid" -F -s "$2" -n "$iters" "${extra[@]}" >"$1.server" 2>&1 &
    local spid=$! t
    for t in $(seq 100); do ss -ltn 2>/dev/null | grep -q ':18515 ' && break; sleep 0.1; done
    timeout 300 "${client_cpu[@]}" "$tool" -d "$SOFTROCE_CLIENT_DEV" -x "$gid" -F -s "$2" -n "$iters" "${extra[@]}" "$srv_ip" >"$1" 2>&1
    wait "$spid"
    awk -v s="$2" -v c="$col" '$1 == s && NF >= c { v = $c } END { if (v == "") exit 1; print v }' "$1"
}
variant_run() { # log index size
    local how=(--test "$test")
    [ "$test" = bidirectional ] && how=(--test throughput -b)
    run_variant "$2" "${client_cpu[@]}" "$bench" client --transport rdma --host "$srv_ip" --source "$cli_ip" \
        --port $((7500 + $2)) --json "${how[@]}" --sizes "$3" --iterations "$iters" >"$1" 2>"$1.err" || return 1
    python3 -c "import json,sys; t=open(sys.argv[1]).read(); d=json.loads(t[t.index('{'):])
print(d['latency'][0]['one_way_p50_us'] if sys.argv[2] == 'latency' else d['throughput'][0]['mb_per_s'])" "$1" "$test"
}

for i in "${!labels[@]}"; do variant_run "$out/logs/warm-${labels[$i]}" "$i" 4096 >/dev/null; done
anchor=ib_write_bw
[ "$test" = latency ] && anchor=ib_send_lat-e
[ "$test" = bidirectional ] && anchor=ib_write_bw-b
n=${#labels[@]}
for r in $(seq "$rounds"); do
    for size in $sizes; do
        if v=$(anchor_run "$out/logs/$r-$size-$anchor.txt" "$size"); then
            printf '%s\t%s\t%s\t%s\n' "$r" "$size" "$anchor" "$v" >>"$raw"
        else
            echo "plugin-ab: $anchor failed: see $out/logs/$r-$size-$anchor.txt" >&2
            status=1
        fi
        if [ -e "$out/polling-anchor" ]; then
            if v=$(anchor_run "$out/logs/$r-$size-ib_send_lat.txt" "$size" polling); then
                printf '%s\t%s\t%s\t%s\n' "$r" "$size" ib_send_lat "$v" >>"$raw"
            else
                echo "plugin-ab: ib_send_lat failed: see $out/logs/$r-$size-ib_send_lat.txt" >&2
                status=1
            fi
        fi
        for k in $(seq 0 $((n - 1))); do
            i=$(( (k + r - 1) % n ))
            if v=$(variant_run "$out/logs/$r-$size-${labels[$i]}.json" "$i" "$size"); then
                printf '%s\t%s\t%s\t%s\n' "$r" "$size" "${labels[$i]}" "$v" >>"$raw"
            else
                echo "plugin-ab: ${labels[$i]} failed: see $out/logs/$r-$size-${labels[$i]}.json.err" >&2
                status=1
            fi
        done
    done
done
exit $status
