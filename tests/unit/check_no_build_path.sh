#!/bin/sh
# No binary that `meson install` installs may carry this build tree's path:
# an installed program must never look for plugins (or anything) there.
# Debug information (DW_AT_comp_dir and file names) is stripped first: it
# names the sources for a debugger and is never read by the program.
# usage: check_no_build_path.sh BUILD_ROOT FILE...
set -u
root=$1; shift
command -v strip >/dev/null && command -v strings >/dev/null ||
    { echo "SKIP: strip and strings (binutils) are needed"; exit 77; }
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
status=0
for f in "$@"; do
    strip --strip-debug -o "$tmp" "$f" || { echo "FAIL: cannot strip $f"; status=1; continue; }
    found=$(strings -a "$tmp" | grep -F "$root")
    if [ -n "$found" ]; then
        echo "FAIL: $f contains the build path:"; echo "$found" | sed 's/^/  /'; status=1
    else
        echo "ok: $f has no build path"
    fi
done
exit $status
