#!/bin/sh
# Compile every public ABI header on its own: as C99 and C11 with -pedantic
# -Werror, and as C++17 with -pedantic -Werror.  The headers' static asserts
# pin the layout, so a moved member fails here too.
# usage: check_headers.sh CC CXX INCLUDE_DIR
set -eu
cc=$1 cxx=$2 inc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for h in "$inc"/twinwire/*.h; do
    name=$(basename "$h")
    printf '#include <twinwire/%s>\n#include <twinwire/%s>\nint tw_header_check_%s;\n' "$name" "$name" \
        "$(echo "$name" | tr -c 'a-z0-9\n' '_')" > "$work/t.c"
    cp "$work/t.c" "$work/t.cpp"
    for std in c99 c11; do
        if ! $cc -std=$std -pedantic -Wall -Wextra -Werror -I"$inc" -c "$work/t.c" -o "$work/t.o"; then
            echo "FAIL: $name as $std"; status=1
        fi
    done
    if ! $cxx -std=c++17 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$work/t.cpp" -o "$work/t.o"; then
        echo "FAIL: $name as c++17"; status=1
    fi
    [ $status -ne 0 ] || echo "ok: $name (c99, c11, c++17)"
done
exit $status
