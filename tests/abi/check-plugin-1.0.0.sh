#!/bin/sh
# A plugin binary built once against the 1.0.0 headers
# (plugin-1.0.0/twinwire-unixsock-abi1.so, see plugin-1.0.0/README.md) still
# loads and passes the conformance kit of this build, installed as a
# stranger gets it: what a 1.x release promises plugins built before it.
# usage: check-plugin-1.0.0.sh BUILD_ROOT SOURCE_ROOT
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$2/tests/abi/abi-lib.sh"

abi_setup "$1" "$2"
plugin=$abi_src/plugin-1.0.0/twinwire-unixsock-abi1.so
[ -f "$plugin" ] || fail "no $plugin"
[ -x "$bin/twinwire-conformance" ] || fail "twinwire-conformance is not installed in $bin"

# It needs libc alone: nothing of twinwire, nothing of a later build.
needed=$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ "$needed" = libc.so.6 ] || fail "the 1.0.0 plugin needs more than libc: $needed"
exported=$(nm -D --defined-only "$plugin" | awk '{ print $3 }')
[ "$exported" = twinwire_plugin_entry_v1 ] || fail "the 1.0.0 plugin exports more than its entry point: $exported"
echo "ok: the 1.0.0 plugin needs only libc.so.6 and exports twinwire_plugin_entry_v1 alone"

# A plugin directory as the loader's trust checks want it (owner, no group
# or other write), the committed file in it unchanged.
mkdir -p "$work/plugins" "$work/sockets"
cp "$plugin" "$work/plugins/" || fail "copy $plugin"
chmod 0644 "$work/plugins/twinwire-unixsock-abi1.so" || fail "chmod the copy of $plugin"
export LD_LIBRARY_PATH="$lib"
"$bin/twinwire-conformance" --plugin-path "$work/plugins" --set "unixsock.dir=$work/sockets" unixsock \
    >"$work/kit.log" 2>&1
rc=$?
cat "$work/kit.log"
[ $rc -eq 0 ] || fail "the installed twinwire-conformance exited $rc on the 1.0.0 plugin"
grep -q '^FAIL' "$work/kit.log" && fail "a case failed on the 1.0.0 plugin"
grep -Eq '^[1-9][0-9]* passed, 0 failed, [0-9]+ skipped' "$work/kit.log" || fail "no totals line"
echo "ok: the installed twinwire-conformance loads the 1.0.0 plugin by its name and passes it"
