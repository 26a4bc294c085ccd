#!/bin/sh
# CMake consumers, as a stranger builds them: install twinwire into a
# temporary directory (meson install --destdir) and, with that tree on
# CMAKE_PREFIX_PATH only, build with cmake (warnings as errors)
#  - framework/examples/echo-daemon (twinwire::twinwire), then run its test
#    over tcp;
#  - plugin_api/examples/unixsock (twinwire::plugin_api, headers only), then
#    run the installed twinwire-conformance on it by its name;
# and check that find_package(twinwire 1.0) finds this build's version while
# 2.0 and 0.9 (another major) and the next minor (newer) are refused.
# usage: check-cmake-consumers.sh BUILD SOURCE PREFIX LIBDIR BINDIR VERSION
set -u
build=$1 src=$2 prefix=$3 libdir=$4 bindir=$5 version=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$src/tests/installed-tree.sh"

command -v cmake >/dev/null || fail "no cmake (tests/debian-packages.txt lists it)"
install_tree "$build" "$prefix" "$libdir" "$bindir"
root=$dest$prefix
export LD_LIBRARY_PATH="$lib"

# cmake_project NAME SOURCE [CMAKE-OPTION...]: configure and build SOURCE in
# $work/NAME against the installed tree only.
cmake_project() {
    name=$1 dir=$2
    shift 2
    cmake -S "$dir" -B "$work/$name" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" \
        >"$work/$name.configure.log" 2>&1 || { cat "$work/$name.configure.log"; fail "cmake cannot configure $name"; }
    found=$(sed -n 's/^twinwire_DIR:PATH=//p' "$work/$name/CMakeCache.txt")
    case $found in "$lib/cmake/twinwire") ;; *) fail "$name found twinwire in '$found', not in the installed tree" ;; esac
    cmake --build "$work/$name" >"$work/$name.build.log" 2>&1 ||
        { cat "$work/$name.build.log"; fail "$name does not build with cmake"; }
    grep -q "$root/include" "$work/$name/compile_commands.json" ||
        fail "$name was not compiled against the installed headers"
}

cmake_project echo "$src/framework/examples/echo-daemon" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror"
needed=$(readelf -d "$work/echo/echo-test" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case $needed in *"libtwinwire.so.${version%%.*} "*) ;; *) fail "echo-test does not need libtwinwire's soname: $needed" ;; esac
case $needed in *libevent*) fail "echo-test links libevent itself: $needed" ;; esac
echo "ok: the echo daemon builds with find_package(twinwire) (twinwire::twinwire), warnings as errors"
mkdir "$work/outside" && cd "$work/outside" || exit 1
TWINWIRE_TRANSPORT=tcp "$work/echo/echo-test" >"$work/echo.log" 2>&1
rc=$?
cat "$work/echo.log"
[ $rc -eq 0 ] || fail "echo-test over tcp exited $rc"
grep -q "echo-test: 4 clients got back every byte they sent over tcp" "$work/echo.log" ||
    fail "echo-test did not say every client got its bytes back over tcp"
echo "ok: the CMake-built echo test passes over tcp"

abi=$(sed -n 's/^#define TW_ABI_MAJOR \([0-9]*\)$/\1/p' "$root/include/twinwire/abi.h")
[ -n "$abi" ] || fail "no TW_ABI_MAJOR in the installed abi.h"
cmake_project unixsock "$src/plugin_api/examples/unixsock" -DCMAKE_C_FLAGS="-Wall -Wextra -Wpedantic -Werror"
plugin=$work/unixsock/twinwire-unixsock-abi$abi.so
[ -f "$plugin" ] || fail "no $plugin (the file name comes from twinwire_ABI_MAJOR)"
grep -q -- '-std=c99' "$work/unixsock/compile_commands.json" || fail "the plugin was not built with -std=c99"
needed=$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case $needed in *twinwire*) fail "the plugin needs a twinwire library: $needed" ;; esac
exported=$(nm -D --defined-only "$plugin" | awk '{ print $3 }')
[ "$exported" = "twinwire_plugin_entry_v$abi" ] || fail "the plugin exports more than its entry point: $exported"
echo "ok: the unixsock plugin builds with find_package(twinwire) (twinwire::plugin_api: headers only), -std=c99 -Wpedantic -Werror"
"$bin/twinwire-conformance" --plugin-path "$work/unixsock" --set "unixsock.dir=$work/sockets" unixsock \
    >"$work/kit.log" 2>&1
rc=$?
cat "$work/kit.log"
[ $rc -eq 0 ] || fail "twinwire-conformance exited $rc on the CMake-built plugin"
grep -q '^FAIL' "$work/kit.log" && fail "a conformance case failed"
grep -Eq '^[0-9]+ passed, 0 failed, [0-9]+ skipped' "$work/kit.log" || fail "no totals line"
echo "ok: the installed twinwire-conformance passes the CMake-built plugin"

# Which versions find_package accepts: the targets and variables for 1.0,
# a refusal that names the installed version otherwise.
mkdir "$work/probe"
cat >"$work/probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(probe CXX)
find_package(twinwire ${WANT} REQUIRED)
get_target_property(lib_type twinwire::twinwire TYPE)
get_target_property(api_type twinwire::plugin_api TYPE)
get_target_property(api_links twinwire::plugin_api INTERFACE_LINK_LIBRARIES)
message(STATUS "probe: version ${twinwire_VERSION}; twinwire::twinwire ${lib_type}; "
                "twinwire::plugin_api ${api_type}, links ${api_links}; abi ${twinwire_ABI_MAJOR}")
EOF
# Asked for: this major's first version and this very one (accepted); the
# next and the previous major, and the next minor, newer than what is
# installed (refused).
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
expected="probe: version $version; twinwire::twinwire SHARED_LIBRARY; twinwire::plugin_api INTERFACE_LIBRARY"
expected="$expected, links api_links-NOTFOUND; abi $abi"
for want in "$major.0" "$version" "$((major + 1)).0" "$((major - 1)).9" "$major.$((minor + 1))"; do
    cmake -S "$work/probe" -B "$work/probe-$want" -DCMAKE_PREFIX_PATH="$root" -DWANT="$want" \
        >"$work/probe-$want.log" 2>&1
    rc=$?
    case $want in
    "$major.0" | "$version")
        [ $rc -eq 0 ] || { cat "$work/probe-$want.log"; fail "find_package(twinwire $want) was refused"; }
        grep -qx -- "-- $expected" "$work/probe-$want.log" ||
            { cat "$work/probe-$want.log"; fail "find_package(twinwire $want) gave other targets"; }
        echo "ok: find_package(twinwire $want) accepted: $(sed -n 's/^-- probe: //p' "$work/probe-$want.log")"
        ;;
    *)
        [ $rc -ne 0 ] || { cat "$work/probe-$want.log"; fail "find_package(twinwire $want) was accepted"; }
        # CMake wraps its messages: read the log as one line.
        said=$(tr -s ' \n' '  ' <"$work/probe-$want.log")
        case $said in
        *"compatible with requested version \"$want\""*"twinwireConfig.cmake, version: $version"*)
            echo "ok: find_package(twinwire $want) refused: the installed version is $version" ;;
        *)
            cat "$work/probe-$want.log"
            fail "find_package(twinwire $want) failed for another reason than the version" ;;
        esac
        ;;
    esac
done
