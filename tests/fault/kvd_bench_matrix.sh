#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# twinwire-kvd and twinwire-bench under each kind of fault, over the fault
# transport (inner tcp) on both ends.  TAP output.
#
#   kvd_bench_matrix.sh KVD PROBE BENCH [SEED]
#
# kvd rule: nothing acknowledged is lost (every SET that got +OK reads back),
# every error a client sees is a clean connection error (never a malformed
# reply), and the daemon neither crashes nor hangs: it answers after every
# fault kind and stops on SIGTERM within its shutdown timeout.
# bench rule: every echo is verified; a run either passes or fails with a
# connection error, never with an echo that differs.
set -u
KVD=$1 PROBE=$2 BENCH=$3
SEED=${4:-${FAULT_MATRIX_SEED:-$(( $(date +%s) % 100000 ))}}
echo "# fault.seed $SEED (repeat with: $0 $KVD $PROBE $BENCH $SEED)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/fault-matrix.XXXXXX")
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
. "$(dirname "$0")/../kvd/tap.sh"

# Each kind: the fault.* keys, as KEY=VALUE words.
KINDS=(
    "flaky:profile=flaky"
    "fragments:max_write=7 max_read=3"
    "slow:profile=slow"
    "stall:stall_probability=0.05 stall_ms=100"
    "reset_after_bytes:reset_after_bytes=200 target=one-in:2"
    "lossy:profile=lossy reset_probability=0.01"
    "connect_timeout:connect_timeout_probability=0.5"
    "chaos:profile=chaos"
)

# Kinds whose faults never end a connection (splits, delays, stalls): every
# SET is acknowledged and every bench run passes there.  Elsewhere a client
# may lose its connection, but a matrix that acknowledges nothing fails.
LOSSLESS=" flaky fragments slow stall "
matrix_acked=0

# fault_env KEYS...: the environment that selects fault with those keys.
fault_env() {
    FENV=(TWINWIRE_TRANSPORT=fault TWINWIRE_FAULT_SEED="$SEED" TWINWIRE_CONNECT_TIMEOUT_MS=500)
    for kv in "$@"; do
        local key=${kv%%=*}
        FENV+=("TWINWIRE_FAULT_${key^^}=${kv#*=}")
    done
}

# clean_error STDERR_FILE: the probe's failure is a connection error.
clean_error() {
    grep -Eq 'kvd-probe: (connection closed after|cannot connect|no complete answer within|connection error)' "$1" &&
        ! grep -q 'malformed reply' "$1"
}

# verify PORT KEYFILE: GET each key over plain TCP (the daemon's side still
# faults), retrying from the first key not yet answered; prints mismatches.
verify() {
    local port=$1 keys=$2 done=0 total attempt out
    total=$(wc -l <"$keys")
    for attempt in $(seq 40); do
        [ "$done" -ge "$total" ] && return 0
        tail -n +"$((done + 1))" "$keys" | sed 's/^/GET /' >"$WORK/get.in"
        out=$("$PROBE" --host 127.0.0.1 --port "$port" --transport tcp --timeout-ms 5000 --stdin \
            --replies "$((total - done))" <"$WORK/get.in" 2>/dev/null)
        local i=0 line
        while IFS= read -r line; do
            i=$((i + 1))
            local key
            key=$(sed -n "$((done + 1))p" "$keys")
            if [ "$line" != "val-$key" ]; then
                echo "$key: got '$line'"
                return 1
            fi
            done=$((done + 1))
        done <<<"$out"
    done
    echo "only $done of $total keys could be read back in 40 attempts"
    return 1
}

for entry in "${KINDS[@]}"; do
    kind=${entry%%:*}
    echo "# $kind: ${entry#*:} ($(date +%T))"
    read -r -a keys <<<"${entry#*:}"
    fault_env "${keys[@]}"
    log=$WORK/$kind.log
    env "${FENV[@]}" "$KVD" --port 0 --bind 127.0.0.1 --log-file "$log" --pidfile "$WORK/$kind.pid" \
        2>"$WORK/$kind.stderr" &
    if ! await_daemon "$kind" $!; then
        not_ok "$kind: twinwire-kvd starts over fault"
        continue
    fi
    pid_var=PID_$kind port_var=PORT_$kind
    pid=${!pid_var} port=${!port_var}

    # Three clients, one after another, each pipelining 100 SETs over fault.
    : >"$WORK/$kind.acked"
    bad=
    for round in 1 2 3; do
        for i in $(seq 100); do echo "SET k$round-$i val-k$round-$i"; done >"$WORK/set.in"
        # Each client its own seed: with one seed every process's first connection is alike.
        env "${FENV[@]}" TWINWIRE_FAULT_SEED=$((SEED + round)) "$PROBE" --host 127.0.0.1 --port "$port" --transport fault --timeout-ms 10000 \
            --stdin --replies 100 <"$WORK/set.in" >"$WORK/set.out" 2>"$WORK/set.err"
        status=$?
        if grep -qv '^OK$' "$WORK/set.out"; then
            bad="round $round: a reply other than OK: $(grep -v '^OK$' "$WORK/set.out" | head -3)"
            break
        fi
        acked=$(wc -l <"$WORK/set.out")
        if [ "$status" -ne 0 ] && ! clean_error "$WORK/set.err"; then
            bad="round $round: exit $status without a clean connection error: $(cat "$WORK/set.err")"
            break
        fi
        # Replies come in order: the first $acked SETs were acknowledged.
        for i in $(seq "$acked"); do echo "k$round-$i"; done >>"$WORK/$kind.acked"
    done
    acked=$(wc -l <"$WORK/$kind.acked")
    matrix_acked=$((matrix_acked + acked))
    if [ -n "$bad" ]; then not_ok "$kind: every client error is a clean connection error" "$bad"
    else ok "$kind: every client error is a clean connection error ($acked of 300 SETs acknowledged)"; fi
    if [[ $LOSSLESS == *" $kind "* ]]; then
        same "$kind: every SET is acknowledged (no fault of this kind ends a connection)" "$acked" 300
    fi

    if [ "$acked" -eq 0 ]; then
        ok "$kind: every acknowledged SET reads back # SKIP no SET was acknowledged under this fault: nothing to read back"
    elif msg=$(verify "$port" "$WORK/$kind.acked"); then ok "$kind: every acknowledged SET reads back ($acked)"
    else not_ok "$kind: every acknowledged SET reads back" "$msg"; fi

    if kill -0 "$pid" 2>/dev/null; then ok "$kind: twinwire-kvd is still running"
    else not_ok "$kind: twinwire-kvd is still running" "$(tail -5 "$log" "$WORK/$kind.stderr")"; fi
    kill -TERM "$pid" 2>/dev/null
    if until_true 15 sh -c "! kill -0 $pid 2>/dev/null"; then
        wait "$pid"
        same "$kind: twinwire-kvd stops on SIGTERM within its shutdown timeout, exit status 0" "$?" 0
    else
        not_ok "$kind: twinwire-kvd stops on SIGTERM within its shutdown timeout" "still running after 15 s"
    fi

    # twinwire-bench: server and client in one process, every echo compared.
    env "${FENV[@]}" "$BENCH" local --transport fault --test latency --sizes 64,16k --iterations 30 \
        --connections 2 --stall-timeout 20 >"$WORK/bench.out" 2>"$WORK/bench.err"
    status=$?
    if grep -q 'differs from what was sent\|bytes for a' "$WORK/bench.out" "$WORK/bench.err"; then
        not_ok "$kind: twinwire-bench verifies every echo" "$(grep 'differs\|bytes for a' "$WORK/bench.out" "$WORK/bench.err")"
    elif [ "$status" -eq 0 ]; then
        ok "$kind: twinwire-bench verifies every echo (all passed)"
    elif [ "$status" -eq 1 ] && [[ $LOSSLESS == *" $kind "* ]]; then
        not_ok "$kind: twinwire-bench verifies every echo" "exit 1 under a fault that ends no connection" \
            "$(tail -5 "$WORK/bench.err")"
    elif [ "$status" -eq 1 ]; then
        ok "$kind: twinwire-bench verifies every echo # SKIP a connection failed under this fault (exit 1): the run stopped before every echo was compared"
    else
        not_ok "$kind: twinwire-bench verifies every echo" "exit $status" "$(tail -5 "$WORK/bench.err")"
    fi
done
# A matrix in which nothing was acknowledged checked nothing it names.
if [ "$matrix_acked" -gt 0 ]; then ok "SETs were acknowledged across the matrix ($matrix_acked)"
else not_ok "SETs were acknowledged across the matrix" "none of $((300 * ${#KINDS[@]}))"; fi
finish
