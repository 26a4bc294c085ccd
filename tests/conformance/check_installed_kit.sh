#!/bin/sh
# A stranger's plugin against the installed kit only: install twinwire into a
# temporary directory, build plugin_api/examples/unixsock with its own
# meson.build against the installed headers (pkg-config twinwire-plugin),
# compile every C snippet of docs/writing-a-plugin.md the same way, and run
# the installed twinwire-conformance on the plugin by its name.
# usage: check_installed_kit.sh BUILD_ROOT SOURCE_ROOT PREFIX LIBDIR BINDIR CC...
set -u
. "$(dirname "$0")/installed_kit_setup.sh"

# Every C snippet of the guide, the same way (each block is one file).
awk -v dir="$work" '/^```c$/ { n++; on = 1; next } /^```$/ { on = 0 } on { print > (dir "/snippet" n ".c") }' \
    "$src/docs/writing-a-plugin.md"
ls "$work"/snippet*.c >/dev/null 2>&1 || fail "no C snippet in docs/writing-a-plugin.md"
for f in "$work"/snippet*.c; do
    $cc -std=c99 -Wall -Wextra -pedantic -Werror -fPIC -shared -fvisibility=hidden $cflags "$f" -o "${f%.c}.so" ||
        fail "the guide's snippet $(basename "$f") does not compile"
done
echo "ok: every C snippet of docs/writing-a-plugin.md compiles"
# The skeleton loads and refuses init with its reason (exit 2).
"$bin/twinwire-conformance" "$work/snippet1.so" >"$work/skeleton.log" 2>&1
rc=$?
grep -q 'not written yet' "$work/skeleton.log" && [ $rc -eq 2 ] ||
    { cat "$work/skeleton.log"; fail "the skeleton should load and refuse init (exit 2), got $rc"; }
echo "ok: the guide's skeleton loads and refuses init with its reason"

# The installed runner, the plugin found by its name.
"$bin/twinwire-conformance" --plugin-path "$work/example" --set "unixsock.dir=$work/sockets" unixsock \
    >"$work/kit.log" 2>&1
rc=$?
cat "$work/kit.log"
[ $rc -eq 0 ] || fail "twinwire-conformance exited $rc on the example"
grep -q '^FAIL' "$work/kit.log" && fail "a case failed"
grep -q '^SKIP  zero-copy buffers' "$work/kit.log" || fail "the zero-copy case was not reported as skipped"
grep -Eq '^[0-9]+ passed, 0 failed, [1-9][0-9]* skipped' "$work/kit.log" || fail "no totals line"
echo "ok: the installed twinwire-conformance passes the example by name, optional cases skipped"
