#!/bin/sh
# The ABI major is written in one place (plugin_api/include/twinwire/abi.h):
# build a plugin and a loader probe with TW_ABI_MAJOR=2 (tests/unit/abi_major)
# and check that the entry symbol, the version script and the file name all
# followed, and that the plugin exports that one symbol and nothing else.
# usage: check_abi_major.sh SOURCE_ROOT
set -eu
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
meson setup "$work/b" "$root/tests/unit/abi_major" -Dtwinwire_root="$root" -Dmajor=2 >"$work/setup.log" 2>&1 ||
    { cat "$work/setup.log"; exit 1; }
meson compile -C "$work/b" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }
"$work/b/loader-probe" "$work/b"
exports=$(nm -D --defined-only "$work/b/twinwire-probe-abi2.so" | awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }')
if [ "$exports" != "twinwire_plugin_entry_v2" ]; then
    echo "FAIL: twinwire-probe-abi2.so exports: $exports"
    exit 1
fi
echo "ok: twinwire-probe-abi2.so exports twinwire_plugin_entry_v2 and nothing else"
