#!/usr/bin/env bash
# Where a 64 B round trip waits, from the guest kernel's own trace: run in a
# SoftRoCE guest with 2 vCPUs, it alternates the plugin's vtable ping-pong
# (rdma-tests --child lat-bench-*) with ib_send_lat -e waiting in a libevent
# loop turn (twinwire-event-loop-shim.so), servers pinned to vCPU 1 and
# clients to vCPU 0, and records 0.4 s of ftrace in the middle of each run
# (scheduler, idle, interrupt, softirq and syscall events) as DIR/TOOL-K.trace.
# tools/lab/wake_segments.py splits each trace into the segments of a round
# trip.  Not run by meson; results: docs/benchmarks.md.
#
# usage: tools/softroce/softroce-run --cpus 2 --share DIR -- \
#            tools/lab/wake-trace-guest.sh TWINWIRE_BENCH RDMA_TESTS DIR [PAIRS]
set -uo pipefail
bench=$1 vtable=$2 out=$3 pairs=${4:-4}
: "${SOFTROCE_SERVER_DEV:?run me in the SoftRoCE guest (tools/softroce/softroce-run --cpus 2)}"
# Built with -Dlab=true, in the build tree beside tools/bench.
shim=$(dirname "$bench")/../lab/twinwire-event-loop-shim.so
srv_ip=$SOFTROCE_SERVER_IP cli_ip=$SOFTROCE_CLIENT_IP gid=${SOFTROCE_GID_INDEX:-1}
export TWINWIRE_PLUGIN_PATH=${TWINWIRE_PLUGIN_PATH:-$(cd "$(dirname "$vtable")/../../rdma_plugin" && pwd)}
[ -f "$shim" ] || { echo "wake-trace: $shim is not built: configure with -Dlab=true" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "wake-trace: needs 2 vCPUs (softroce-run --cpus 2)" >&2; exit 2; }
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T || exit 1
echo 0 >$T/tracing_on
echo 40000 >$T/buffer_size_kb
: >$T/set_event
for e in sched:sched_switch sched:sched_waking sched:sched_wakeup power:cpu_idle \
    irq:softirq_entry irq:softirq_exit irq:tasklet_entry irq:irq_handler_entry \
    irq_vectors:local_timer_entry irq_vectors:call_function_entry irq_vectors:call_function_single_entry \
    irq_vectors:reschedule_entry syscalls:sys_enter_write syscalls:sys_enter_epoll_wait \
    syscalls:sys_exit_epoll_wait syscalls:sys_enter_read syscalls:sys_enter_ioctl; do
    echo "$e" >>$T/set_event || echo "wake-trace: no event $e in this kernel" >&2
done
"$vtable" --child lat-bench-server "$srv_ip" >"$out/vtable-server.out" 2>"$out/vtable-server.err" &
vsrv=$!
taskset -p -c 1 $vsrv >/dev/null
trap 'kill $vsrv 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q '^[0-9]' "$out/vtable-server.out" && break; sleep 0.2; done
vport=$(head -1 "$out/vtable-server.out")
[ -n "$vport" ] || { echo "wake-trace: the vtable server did not start" >&2; exit 1; }

window() { # name: 0.4 s of trace once the run is well under way
    sleep 2.5
    : >$T/trace
    echo 1 >$T/tracing_on
    sleep 0.4
    echo 0 >$T/tracing_on
    cat $T/trace >"$out/$1.trace"
}
status=0
for k in $(seq "$pairs"); do
    for tool in vtable ib_send_lat-e+libevent; do
        name=$tool-$k
        if [ $tool = vtable ]; then
            taskset -c 0 "$vtable" --child lat-bench-client "$srv_ip" "$cli_ip" "$vport" 64 12000 >"$out/$name.out" 2>&1 &
            cpid=$! spid=
        else
            pre=(env LD_PRELOAD="$shim" TW_SHIM_WAIT=libevent)
            "${pre[@]}" taskset -c 1 ib_send_lat -e -d "$SOFTROCE_SERVER_DEV" -x "$gid" -F -s 64 -n 12000 >"$out/$name.server" 2>&1 &
            spid=$!
            for _ in $(seq 100); do ss -ltn 2>/dev/null | grep -q ':18515 ' && break; sleep 0.1; done
            "${pre[@]}" taskset -c 0 ib_send_lat -e -d "$SOFTROCE_CLIENT_DEV" -x "$gid" -F -s 64 -n 12000 "$srv_ip" >"$out/$name.out" 2>&1 &
            cpid=$!
        fi
        window "$name"
        wait $cpid || { echo "wake-trace: $name failed: see $out/$name.out" >&2; status=1; }
        [ -n "$spid" ] && wait $spid
    done
done
exit $status
