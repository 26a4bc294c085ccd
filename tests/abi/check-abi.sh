#!/bin/sh
# The ABI check: the installed libtwinwire and the plugin ABI (the probe
# library built from the installed headers) against the baselines in
# tests/abi/baselines, with abidiff. Prints abidiff's report and fails on
# any change but the compatible additions of compatible-growth.suppr.
# usage: check-abi.sh BUILD_ROOT SOURCE_ROOT
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$2/tests/abi/abi-lib.sh"

abi_require_tools
abi_setup "$1" "$2"
abi_require_debug_info "$libso"
abi_dump_current "$work/current"
status=0
abi_compare "libtwinwire ($soname)" "$lib_baseline" "$work/current/$soname.abi" || status=1
abi_compare "the plugin ABI (major $major)" "$plugin_baseline" "$work/current/plugin-abi$major.abi" || status=1
[ $status -eq 0 ] || echo "an intended change of a new minor or major: docs/abi.md says what to do"
exit $status
