#!/bin/sh
# Writes the ABI baselines (tests/abi/baselines) from a build: its
# libtwinwire and the probe library built from its installed headers, the
# same way check-abi.sh dumps the build it checks. Run it when the ABI has
# changed on purpose (docs/abi.md), then review and commit the difference.
# usage: tests/abi/update-baselines.sh [BUILD_DIR]   (default: build)
set -u
src=$(cd "$(dirname "$0")/../.." && pwd -P)
build=$(cd "${1:-build}" && pwd -P) || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$src/tests/abi/abi-lib.sh"

abi_require_tools
# What `meson install` installs, built (at low priority) and nothing else.
installed=$(meson introspect "$build" --targets | python3 -c 'import json, os, sys
for t in json.load(sys.stdin):
    if t.get("installed"):
        print("\n".join(os.path.relpath(f, sys.argv[1]) for f in t["filename"]))' "$build") ||
    fail "meson introspect $build"
# shellcheck disable=SC2086 # one target per word
nice -n 15 ninja -C "$build" $installed >"$work/compile.log" 2>&1 || { tail -30 "$work/compile.log"; fail "building $build"; }
abi_setup "$build" "$src"
readelf -S "$libso" | grep -q '\.debug_info' || fail "$libso has no debug information: configure $build with debug info"
abi_dump_current "$work/current"
for f in "$soname.abi" "plugin-abi$major.abi"; do
    cp "$work/current/$f" "$abi_src/baselines/$f"
    echo "wrote tests/abi/baselines/$f"
done
