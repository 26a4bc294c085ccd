#!/bin/sh
# A program built with `pkg-config --cflags --libs twinwire` against an
# installed tree links libtwinwire and nothing of libevent: no public header
# needs libevent, so it is in Requires.private (static links still get it).
# usage: check_pkgconfig_link.sh BUILD_ROOT SOURCE_ROOT PREFIX LIBDIR CXX [CXXFLAGS]
set -u
build=$1 src=$2 prefix=$3 libdir=$4 cxx=$5 flags=${6:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

dest=$work/root
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "meson install --destdir"; }
case $libdir in /*) lib=$dest$libdir ;; *) lib=$dest$prefix/$libdir ;; esac
# The installed .pc first, its prefix moved under the destdir; libevent's from the system.
export PKG_CONFIG_PATH="$lib/pkgconfig"
pkgconf() { pkg-config --define-variable=prefix="$dest$prefix" "$@"; }
pc=$(pkgconf --cflags --libs twinwire) || fail "pkg-config finds no twinwire"
case $pc in *"$dest"*) ;; *) fail "twinwire's flags ($pc) do not point into the install" ;; esac
echo "pkg-config --cflags --libs twinwire: $pc"
case $pc in *event*) fail "libevent is in what every program links: $pc" ;; esac
static=$(pkgconf --libs --static twinwire)
case $static in *-levent_core*) ;; *) fail "a static link would miss libevent: $static" ;; esac

awk '/^```cpp$/ { on = 1; next } /^```$/ { if (on) exit } on' "$src/README.md" > "$work/daemon.cpp"
# shellcheck disable=SC2086 # word splitting of pkg-config's output is wanted
$cxx -std=c++17 $flags "$work/daemon.cpp" $pc -o "$work/daemon" || fail "the README example does not build with pkg-config"
needed=$(readelf -d "$work/daemon" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "DT_NEEDED: $needed"
case $needed in *libtwinwire.so*) ;; *) fail "the program does not need libtwinwire" ;; esac
case $needed in *libevent*) fail "the program needs libevent directly: $needed" ;; esac
LD_LIBRARY_PATH=$lib TWINWIRE_TRANSPORT=tcp TWINWIRE_BOGUS=1 "$work/daemon" >"$work/run.log" 2>&1
[ $? -eq 1 ] || { cat "$work/run.log"; fail "the program did not run against the installed library"; }
echo "ok: a program built with pkg-config links libtwinwire alone and runs"
