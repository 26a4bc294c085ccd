#!/usr/bin/env bash
# twinwire-bench --transport tcp beside `sockperf pp` and a raw libevent
# bufferevent ping-pong (twinwire-libevent-pingpong) on loopback: 64 B
# ping-pong, server and client pinned with taskset, both on ONE CPU and on
# TWO, the tools alternating round after round (the order rotates each
# round).  Then, on one CPU, `strace -c -f` of each tool's client and server
# for the syscalls per round trip.  Writes OUT/raw.tsv (every figure),
# OUT/logs/ (every run's output), OUT/strace/ and OUT/summary.md (medians,
# medians of per-round ratios, the syscall table), and prints the summary.
# `meson test -C build --benchmark --suite bench` runs it on the build tree
# (OUT = build/tools/bench/tcp-compare).  About 2 minutes with the defaults.
#
# usage: tcp-compare.sh [--rounds N] [--duration S] [--cpus A,B] [--out DIR]
#                       [--no-strace] TWINWIRE_BENCH LIBEVENT_PINGPONG
# Exit: 0 done; 1 a run failed (the summary still shows the rest); 77 a
# tool is missing (the reason is printed).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
rounds=5
duration=2
cpus=
out=
strace_on=1
strace_iters=20000
while [ $# -gt 2 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --no-strace) strace_on=0; shift ;;
        *) echo "tcp-compare: unknown option $1" >&2; exit 2 ;;
    esac
done
usage="usage: tcp-compare.sh [--rounds N] [--duration S] [--cpus A,B] [--out DIR] [--no-strace] TWINWIRE_BENCH LIBEVENT_PINGPONG"
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
case $rounds in '' | *[!0-9]* | 0) echo "tcp-compare: --rounds wants a positive number" >&2; exit 2 ;; esac
case $duration in '' | *[!0-9]* | 0) echo "tcp-compare: --duration wants whole seconds, at least 1" >&2; exit 2 ;; esac
abs() { echo "$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")"; }
bench=$(abs "$1")
pingpong=$(abs "$2")
out=${out:-$PWD/tcp-compare}

for tool in sockperf taskset ss python3; do
    command -v "$tool" >/dev/null ||
        { echo "SKIP: $tool is not installed (Debian: apt-get install sockperf util-linux iproute2 python3)"; exit 77; }
done
if [ $strace_on -eq 1 ] && ! command -v strace >/dev/null; then
    echo "SKIP: strace is not installed (Debian: apt-get install strace; or pass --no-strace)"
    exit 77
fi
for exe in "$bench" "$pingpong"; do
    [ -x "$exe" ] || { echo "tcp-compare: $exe is not an executable" >&2; exit 2; }
done

# Two CPUs this process may use: the first hosts both ends in the one-CPU
# placement and the server in the two-CPU one.
if [ -z "$cpus" ]; then
    cpus=$(python3 -c 'import os; print(",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2]))')
fi
cpu_a=${cpus%%,*}
cpu_b=${cpus#*,}
[ "$cpu_b" = "$cpus" ] && cpu_b=
placements="one"
if [ -n "$cpu_b" ]; then
    placements="one two"
else
    echo "tcp-compare: only one CPU available ($cpus): the two-CPU placement is left out" >&2
fi

rm -rf "$out"
mkdir -p "$out/logs" "$out/strace"
raw=$out/raw.tsv
printf 'placement\tround\ttool\tmetric\tvalue\n' >"$raw"
status=0
note() { echo "tcp-compare: $*" >&2; }
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$raw"; }

# A fresh port per run (a run's connection may still be in TIME_WAIT).
port=$(( 20000 + $$ % 20000 ))
next_port() { port=$(( port + 1 )); }

wait_listening() { # port
    local i
    for i in $(seq 100); do ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0; sleep 0.05; done
    return 1
}

# sockperf-epoll: sockperf with its epoll multiplexer at both ends (-F e
# needs a feed file): the same program as an event loop would run it.
feed_file() { # port -> the path of a one-line sockperf feed file
    local feed=$out/logs/feed-$1
    echo "T:127.0.0.1:$1" >"$feed"
    echo "$feed"
}

server_cmd() { # tool port -> the server's argv in srv[]
    case $1 in
        twinwire) srv=("$bench" server --transport tcp --listen 127.0.0.1 --port "$2") ;;
        sockperf) srv=(sockperf server --tcp -i 127.0.0.1 -p "$2") ;;
        sockperf-epoll) srv=(sockperf server -f "$(feed_file "$2")" -F e) ;;
        libevent) srv=("$pingpong" server --listen 127.0.0.1 --port "$2") ;;
    esac
}

client_cmd() { # tool port -> the client's argv in cli[] (runs for $duration s)
    case $1 in
        twinwire) cli=("$bench" client --transport tcp --host 127.0.0.1 --port "$2" --test latency --sizes 64
                       --duration "$duration" --csv) ;;
        sockperf) cli=(sockperf ping-pong --tcp -i 127.0.0.1 -p "$2" -m 64 -t "$duration") ;;
        sockperf-epoll) cli=(sockperf ping-pong -f "$(feed_file "$2")" -F e -m 64 -t "$duration") ;;
        libevent) cli=("$pingpong" client --host 127.0.0.1 --port "$2" --size 64 --duration "$duration" --csv) ;;
    esac
}

# Prints "p50 mean p99 count" (one-way us) from a client's output.
parse_result() { # tool log
    case $1 in
        sockperf*)
            awk '/avg-latency=/ { sub(/.*avg-latency=/, ""); sub(/ .*/, ""); mean = $0 }
                 /percentile 50.000 =/ { p50 = $NF } /percentile 99.000 =/ { p99 = $NF }
                 /Valid Duration/ { sub(/.*ReceivedMessages=/, ""); n = $0 }
                 END { if (p50 == "" || mean == "" || p99 == "") exit 1; print p50, mean, p99, n }' "$2" ;;
        *)
            awk -F, '$1 == "latency" { print $14, $13, $15, $4; found = 1 } END { exit !found }' "$2" ;;
    esac
}

stop_server() { # pid
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

run_one() { # placement round tool
    local placement=$1 round=$2 tool=$3 server_cpu=$cpu_a client_cpu=$cpu_a
    [ "$placement" = two ] && client_cpu=$cpu_b
    local log=$out/logs/$placement-round$round-$tool
    next_port
    server_cmd "$tool" "$port"
    client_cmd "$tool" "$port"
    taskset -c "$server_cpu" "${srv[@]}" >"$log.server" 2>&1 &
    local spid=$!
    if ! wait_listening "$port"; then
        note "$tool server did not listen on port $port: see $log.server"
        stop_server "$spid"
        return 1
    fi
    timeout $(( duration + 30 )) taskset -c "$client_cpu" "${cli[@]}" >"$log" 2>"$log.err"
    local rc=$?
    stop_server "$spid"
    local figures
    if [ $rc -ne 0 ] || ! figures=$(parse_result "$tool" "$log"); then
        note "$tool ($placement CPU, round $round) failed ($rc): see $log"
        return 1
    fi
    set -- $figures
    record "$placement" "$round" "$tool" ow_p50_us "$1"
    record "$placement" "$round" "$tool" ow_mean_us "$2"
    record "$placement" "$round" "$tool" ow_p99_us "$3"
    record "$placement" "$round" "$tool" round_trips "$4"
}

tools=(twinwire sockperf libevent sockperf-epoll)
started=$(date +%s)
echo "# $(date -u +%FT%TZ) $(uname -r), CPUs $cpus; uptime before: $(uptime)" >"$out/host.txt"
for placement in $placements; do
    for round in $(seq "$rounds"); do
        record "$placement" "$round" host load1 "$(cut -d' ' -f1 /proc/loadavg)"
        for i in "${!tools[@]}"; do
            tool=${tools[$(( (round - 1 + i) % ${#tools[@]} ))]}
            run_one "$placement" "$round" "$tool" || status=1
        done
    done
done

# Syscalls per round trip, one CPU: strace -c -f of each client and server.
# The server runs under strace until the client is done; then the server
# (strace's child) is ended and strace writes its count.
strace_one() { # tool
    local tool=$1 log=$out/strace/$tool
    next_port
    server_cmd "$tool" "$port"
    client_cmd "$tool" "$port"
    case $tool in
        sockperf) cli=(sockperf ping-pong --tcp -i 127.0.0.1 -p "$port" -m 64 -t 1) ;;
        sockperf-epoll) cli=(sockperf ping-pong -f "$(feed_file "$port")" -F e -m 64 -t 1) ;;
        twinwire) cli=("$bench" client --transport tcp --host 127.0.0.1 --port "$port" --test latency --sizes 64
                       --iterations "$strace_iters" --csv) ;;
        libevent) cli=("$pingpong" client --host 127.0.0.1 --port "$port" --iterations "$strace_iters" --csv) ;;
    esac
    taskset -c "$cpu_a" strace -c -f -o "$log.server.strace" "${srv[@]}" >"$log.server" 2>&1 &
    local spid=$!
    wait_listening "$port" || { note "$tool server (strace) did not listen"; stop_server "$spid"; return 1; }
    timeout 120 taskset -c "$cpu_a" strace -c -f -o "$log.client.strace" "${cli[@]}" >"$log" 2>"$log.err"
    local rc=$?
    local child
    for child in $(ps -o pid= --ppid "$spid"); do kill "$child" 2>/dev/null; done
    wait "$spid" 2>/dev/null
    [ $rc -eq 0 ] || { note "$tool under strace failed ($rc): see $log"; return 1; }
    # Round trips the counts divide by: every message the client sent,
    # warm-up included (sockperf: its [Total Run] line).
    local trips
    case $tool in
        sockperf*) trips=$(sed -n 's/.*\[Total Run\].*SentMessages=\([0-9]*\).*/\1/p' "$log") ;;
        *) trips=$(( strace_iters + 10 )) ;;
    esac
    echo "$trips" >"$log.round_trips"
}
if [ $strace_on -eq 1 ]; then
    for tool in "${tools[@]}"; do strace_one "$tool" || status=1; done
fi
echo "# uptime after: $(uptime)" >>"$out/host.txt"

note "took $(( $(date +%s) - started )) s, status $status; raw figures in $raw"
python3 -B "$here/tcp-compare-summary.py" "$out" >"$out/summary.md" || status=1
cat "$out/summary.md"
exit $status
