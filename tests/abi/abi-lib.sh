# shellcheck shell=sh
# Shared by check-abi.sh, check-abi-bites.sh and update-baselines.sh: how
# the two ABIs are written (abidw) and compared (abidiff), so that the
# baselines and the build compared with them are made the same way.
# Needs $work and fail(); defines functions only.

# abi_require_tools: exit 77 (skip) where libabigail's tools are missing.
abi_require_tools() {
    for t in abidw abidiff python3 perl objdump readelf; do
        command -v "$t" >/dev/null 2>&1 ||
            { echo "SKIP: $t is not installed (apt-get install abigail-tools, see tests/debian-packages.txt)"; exit 77; }
    done
}

# abi_setup BUILD_ROOT SOURCE_ROOT: install the build into $work/root as a
# stranger would get it and set cc (the build's C compiler), inc (the
# installed include directory), libso (the installed libtwinwire), soname,
# major (the plugin ABI's) and the two baselines' paths for them.
abi_setup() {
    build=$1 src=$2
    abi_src=$src/tests/abi
    # prefix, libdir, bindir, includedir and cc, written by tests/abi/meson.build.
    [ -f "$build/tests/abi/abi-build.sh" ] || fail "$build is not a configured twinwire build (no tests/abi/abi-build.sh)"
    . "$build/tests/abi/abi-build.sh"
    . "$src/tests/installed-tree.sh"
    install_tree "$build" "$prefix" "$libdir" "$bindir"
    case $includedir in /*) inc=$dest$includedir ;; *) inc=$dest$prefix/$includedir ;; esac
    [ -f "$inc/twinwire/plugin.h" ] || fail "no twinwire/plugin.h installed in $inc"
    libso=$(readlink -f "$lib/libtwinwire.so") || fail "no libtwinwire.so installed in $lib"
    soname=$(objdump -p "$libso" | awk '$1 == "SONAME" { print $2 }')
    [ -n "$soname" ] || fail "$libso has no SONAME"
    major=$(sed -n 's/^abi_major=//p' "$lib/pkgconfig/twinwire-plugin.pc")
    [ -n "$major" ] || fail "the installed twinwire-plugin.pc has no abi_major"
    lib_baseline=$abi_src/baselines/$soname.abi
    plugin_baseline=$abi_src/baselines/plugin-abi$major.abi
}

# abi_require_debug_info ELF: without DWARF, abidiff compares symbols only.
abi_require_debug_info() {
    readelf -S "$1" | grep -q '\.debug_info' || {
        echo "SKIP: $1 has no debug information (a build with -Ddebug=false): abidiff would compare symbols only"
        exit 77
    }
}

# abidw's options for both ABIs: the exported functions and variables and
# the types they reach, each type the installed headers only declare kept as
# a declaration (--drop-private-types: Connection::Impl and the like are not
# part of it); type ids from the types themselves and source locations by
# file name, so that a dump made again differs only where the ABI does;
# nothing of the machine or the libraries the dump was made with.
abi_dump() { # ELF HEADERS_DIR OUT
    abidw --headers-dir "$2" --drop-private-types --exported-interfaces-only --type-id-style hash --short-locs \
        --no-corpus-path --no-comp-dir-path --no-elf-needed \
        --out-file "$3" "$1" >"$work/abidw.log" 2>&1 || { cat "$work/abidw.log"; fail "abidw $1"; }
}

# abi_probe INCLUDE_DIR OUT [CC-ARG...]: the plugin ABI's probe library
# (probe/plugin_abi_probe.c) built from the headers under INCLUDE_DIR, with
# debug information, and its ABI written to OUT.
abi_probe() {
    probe_inc=$1 probe_out=$2
    shift 2
    # shellcheck disable=SC2086 # $cc is a command line (e.g. "ccache cc")
    $cc -std=c99 -g -O0 -fPIC -shared -fvisibility=hidden -Wall -Wextra -pedantic -Werror -I"$probe_inc" \
        "$abi_src/probe/plugin_abi_probe.c" "$@" -o "$probe_out.so" >"$work/probe.log" 2>&1 ||
        { cat "$work/probe.log"; fail "the probe library does not compile against $probe_inc"; }
    abi_dump "$probe_out.so" "$probe_inc/twinwire" "$probe_out"
}

# abi_dump_current DIR: both ABIs of the installed build, in DIR under the
# baselines' file names.
abi_dump_current() {
    mkdir -p "$1"
    abi_dump "$libso" "$inc/twinwire" "$1/$soname.abi"
    abi_probe "$inc" "$1/plugin-abi$major.abi"
}

# abi_compare WHAT BASELINE CURRENT: 0 when CURRENT is BASELINE plus what a
# minor may add; otherwise abidiff's report, a FAIL line, 1. What a minor
# may add: members appended at the end of the structs that cross the plugin
# boundary (keep-baseline-members.py cuts them off before the comparison)
# and new functions and variables (compatible-growth.suppr). abidiff's exit
# status is a bit field (man abidiff, RETURN VALUES): 1 error, 2 usage
# error, 4 ABIDIFF_ABI_CHANGE (a change a person must judge), 8
# ABIDIFF_ABI_INCOMPATIBLE_CHANGE (a removed symbol...). Any of them fails.
abi_compare() {
    [ -f "$2" ] || { echo "FAIL: no baseline $2 for $1 (tests/abi/update-baselines.sh makes it; docs/abi.md)"; return 1; }
    python3 "$abi_src/keep-baseline-members.py" "$2" "$3" "$3.compared" ||
        { echo "FAIL: keep-baseline-members.py $2 $3"; return 1; }
    abidiff --no-default-suppression --suppressions "$abi_src/compatible-growth.suppr" "$2" "$3.compared" \
        >"$work/abidiff.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "ok: $1 matches its baseline ${2#"$abi_src"/} (appended members and new functions allowed)"
        return 0
    fi
    cat "$work/abidiff.out"
    if [ $((rc & 1)) -ne 0 ]; then
        echo "FAIL: abidiff could not compare $1 with ${2#"$abi_src"/} (exit status $rc)"
    elif [ $((rc & 8)) -ne 0 ]; then
        echo "FAIL: $1: an incompatible ABI change against ${2#"$abi_src"/} (abidiff exit status $rc)"
    else
        echo "FAIL: $1: an ABI change the growth rules do not allow, against ${2#"$abi_src"/} (abidiff exit status $rc)"
    fi
    return 1
}
