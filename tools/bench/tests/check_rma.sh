#!/bin/sh
# `twinwire-bench rma` over tcp and pair (the host's RMA emulation): every
# test ran, every transfer was checked (a read compared with the exposure, a
# write slot by the server) and found nothing wrong, the figures are not zero.
# usage: check_rma.sh TWINWIRE_BENCH   (TWINWIRE_PLUGIN_PATH: pair)
set -eu
bench=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for transport in tcp pair; do
    status=0
    "$bench" rma --transport "$transport" -D 1 --sizes 4k,1M >"$out/$transport.txt" 2>"$out/$transport.err" || status=$?
    if [ "$status" != 0 ]; then
        echo "FAIL: rma over $transport exited with status $status"
        cat "$out/$transport.err" "$out/$transport.txt"
        exit 1
    fi
    for test in stream rma-write rma-read; do
        for size in 4096 1048576; do
            line=$(awk -v t="$test" -v s="$size" '$1 == t && $2 == s { print; exit }' "$out/$transport.txt")
            [ -n "$line" ] || { echo "FAIL: $transport: no $test row for $size"; cat "$out/$transport.txt"; exit 1; }
            echo "$line" | grep -q FAILED && { echo "FAIL: $transport: $line"; exit 1; }
            echo "$line" | awk '{ exit !($3 > 0 && $4 > 0) }' ||
                { echo "FAIL: $transport: a zero figure: $line"; exit 1; }
        done
    done
    grep -q "x stream" "$out/$transport.txt" || { echo "FAIL: $transport: no ratio to stream"; exit 1; }
    echo "ok: rma over $transport: $(grep -c . "$out/$transport.txt") lines, every transfer checked"
done
