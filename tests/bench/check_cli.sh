#!/bin/sh
# Bad arguments exit 2 with a message naming the problem; --help exits 0.
# usage: check_cli.sh TWINWIRE_BENCH
set -u
bench=$1
status=0
expect() { # expect STATUS TEXT ARGS...
    want=$1 text=$2; shift 2
    out=$("$bench" "$@" 2>&1); got=$?
    if [ "$got" -ne "$want" ] || ! printf '%s' "$out" | grep -qF -- "$text"; then
        echo "FAIL: twinwire-bench $*: status $got (expected $want), output:"; printf '%s\n' "$out"; status=1
    else
        echo "ok: twinwire-bench $* -> $got, '$text'"
    fi
}
expect 0 "Usage:" --help
expect 0 "Usage: twinwire-bench client" client --help
expect 0 "-d,--data-size N" resp --help
expect 0 "twinwire-bench " --version
expect 2 "no mode given"
expect 2 "unknown mode 'fly'" fly
expect 2 "client: --host is required" client --port 1
expect 2 "--sizes: '3q' has an unknown unit" client --host h --port 1 --sizes 3q
expect 2 "--transport: 'i/b': expected auto, tcp, a transport name" local --transport i/b
expect 1 "transport = ib (--transport) but plugin 'ib' not loaded" local --transport ib
expect 2 "give --duration or --iterations, not both" local --duration 1 --iterations 3
expect 2 "resp: unknown option --nope" resp --nope
expect 2 "cannot open configuration file" local --config /nonexistent/twinwire.conf
expect 1 "Connection refused" client --host 127.0.0.1 --port 1 --transport tcp --iterations 1 --sizes 64 --test latency
exit $status
