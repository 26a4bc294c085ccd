#!/bin/sh
# A stranger's plugin against the installed kit only: install twinwire into a
# temporary directory, build plugin_api/examples/unixsock with its own
# meson.build against the installed headers (pkg-config twinwire-plugin),
# compile every C snippet of docs/writing-a-plugin.md the same way, and run
# the installed twinwire-conformance on the plugin by its name.
# usage: check_installed_kit.sh BUILD_ROOT SOURCE_ROOT PREFIX LIBDIR BINDIR CC...
set -u
build=$1 src=$2 prefix=$3 libdir=$4 bindir=$5
shift 5
cc=$*
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

dest=$work/root
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "meson install --destdir"; }
case $libdir in /*) lib=$dest$libdir ;; *) lib=$dest$prefix/$libdir ;; esac
case $bindir in /*) bin=$dest$bindir ;; *) bin=$dest$prefix/$bindir ;; esac
[ -x "$bin/twinwire-conformance" ] || fail "twinwire-conformance is not installed in $bin"
export LD_LIBRARY_PATH="$lib"
# Only the installed .pc files, their paths moved under the destdir.
export PKG_CONFIG_LIBDIR="$lib/pkgconfig" PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR="$dest"
cflags=$(pkg-config --cflags twinwire-plugin) || fail "pkg-config finds no twinwire-plugin"
case $cflags in *"$dest"*) ;; *) fail "twinwire-plugin's cflags ($cflags) do not point into the install" ;; esac
abi=$(pkg-config --variable=abi_major twinwire-plugin)

# The example, with its own meson.build, warnings as errors.
meson setup "$work/example" "$src/plugin_api/examples/unixsock" -Dwerror=true >"$work/setup.log" 2>&1 ||
    { cat "$work/setup.log"; fail "meson setup of the example"; }
meson compile -C "$work/example" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; fail "the example does not build"; }
grep -q -- '-std=c99' "$work/example/compile_commands.json" || fail "the example was not built with -std=c99"
plugin=$work/example/twinwire-unixsock-abi$abi.so
[ -f "$plugin" ] || fail "no $plugin"
exported=$(nm -D --defined-only "$plugin" | awk '{ print $3 }')
[ "$exported" = "twinwire_plugin_entry_v$abi" ] || fail "the example exports more than its entry point: $exported"
echo "ok: the example builds against the installed headers (-std=c99 -Wall -Wextra -Wpedantic -Werror)"

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
