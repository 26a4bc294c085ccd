# Shared by check_installed_kit.sh and check_installed_tools.sh: install
# twinwire into a temporary directory and build plugin_api/examples/unixsock
# there with its own meson.build against the installed headers only.
# Sourced with BUILD_ROOT SOURCE_ROOT PREFIX LIBDIR BINDIR CC... as "$@";
# leaves $work, $bin, $lib, $abi, $cflags, $cc, $src and $plugin set.
set -u
build=$1 src=$2 prefix=$3 libdir=$4 bindir=$5
shift 5
cc=$*
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

. "$src/tests/installed-tree.sh"
install_tree "$build" "$prefix" "$libdir" "$bindir"
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

