#!/bin/sh
# twinwire-kvd --check-config validates every transport's keys whatever the
# transport (issue 11 item 7), refuses a directory as --config, and --help
# lists the TCP keys.  PLUGIN is a test plugin named rdma whose check_config
# accepts rdma.window = 1..64 and whose init finds no device.
# With RDMA_PLUGIN_DIR (the real plugin's directory), issue 13 item 2 as a
# user saw it: each of tcp.nodelay=maybe, tcp.bogus=1, rdma.bogus=1,
# rdma.ring_size=1000 is refused by --check-config in every transport mode
# on this host (which has no RDMA device), and --help lists the rdma.* keys.
# usage: check_config_keys.sh KVD PLUGIN [RDMA_PLUGIN_DIR]
set -u
kvd=$1 plugin=$2 rdma_dir=${3:-}
status=0
n=0
expect() { # expect STATUS TEXT ARGS...
    want=$1 text=$2; shift 2
    n=$((n + 1))
    out=$("$kvd" "$@" 2>&1); got=$?
    if [ "$got" -ne "$want" ] || ! printf '%s' "$out" | grep -qF -- "$text"; then
        echo "not ok $n - twinwire-kvd $*: status $got (expected $want, with '$text')"
        printf '%s\n' "$out" | sed 's/^/#   /'
        status=1
    else
        echo "ok $n - twinwire-kvd $* -> $got, '$text'"
    fi
}
expect 1 "rdma.window: bad value '0' (command line --set): expected 1..64 (rdma transport)" \
    --check-config --transport tcp --set "plugin_path=$plugin" --set rdma.window=0
expect 1 "rdma.window: bad value 'x'" --check-config --transport auto --set "plugin_path=$plugin" --set rdma.window=x
expect 1 "unknown key(s) for the rdma transport: rdma.windw (command line --set)" \
    --check-config --transport tcp --set "plugin_path=$plugin" --set rdma.windw=8
expect 0 "rdma.window = 8" --check-config --transport tcp --set "plugin_path=$plugin" --set rdma.window=8
expect 1 "keys of transport 'foo', whose plugin cannot be loaded to check them" \
    --check-config --transport tcp --set plugin_path=/nonexistent --set foo.window=1
expect 1 "/tmp: is a directory; a configuration file must be a regular file" --check-config --config /tmp
expect 0 "tcp.*: tcp.nodelay, tcp.linger_ms" --help
if [ -n "$rdma_dir" ]; then
    for mode in tcp auto rdma; do
        expect 1 "tcp.nodelay = 'maybe' (from command line --set): expected yes/no" \
            --check-config --transport $mode --set "plugin_path=$rdma_dir" --set tcp.nodelay=maybe
        expect 1 "unknown key(s) for the tcp transport: tcp.bogus" \
            --check-config --transport $mode --set "plugin_path=$rdma_dir" --set tcp.bogus=1
        expect 1 "unknown key(s) for the rdma transport: rdma.bogus" \
            --check-config --transport $mode --set "plugin_path=$rdma_dir" --set rdma.bogus=1
        expect 1 "rdma.ring_size = 1000 (command line --set): must be between 4 KiB and 256 MiB" \
            --check-config --transport $mode --set "plugin_path=$rdma_dir" --set rdma.ring_size=1000
    done
    expect 0 "rdma.*: rdma.ring_size, rdma.ring_max, rdma.send_buffer_size" --help --set "plugin_path=$rdma_dir"
    # Start-up refuses the typo too, on this host without RDMA (a daemon that
    # started anyway would serve: the timeout ends it and the case fails).
    n=$((n + 1))
    out=$(timeout 20 "$kvd" --port 0 --transport auto --set "plugin_path=$rdma_dir" --set rdma.bogus=1 2>&1); got=$?
    if [ "$got" -eq 1 ] && printf '%s' "$out" | grep -qF "cannot serve: unknown key(s) for the rdma transport: rdma.bogus"; then
        echo "ok $n - start-up in auto mode without RDMA refuses rdma.bogus=1"
    else
        echo "not ok $n - start-up in auto mode without RDMA refuses rdma.bogus=1: status $got"
        printf '%s\n' "$out" | sed 's/^/#   /'
        status=1
    fi
fi
echo "1..$n"
exit $status
