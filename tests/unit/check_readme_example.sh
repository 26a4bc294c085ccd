#!/bin/sh
# The daemon example in README.md must compile against the framework and run:
# it starts, listens, and exits 0 on SIGTERM after draining; when it cannot
# start (the port is taken, a stray TWINWIRE_ variable) it prints why and
# exits 1 - never terminate() and a core (exit 134).
# usage: check_readme_example.sh README CXX SOURCE_ROOT LIBDIR [CXXFLAGS]
# (CXXFLAGS: e.g. the -fsanitize= the library was built with)
set -u
readme=$1 cxx=$2 src=$3 libdir=$4 flags=${5:-}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
pid=
awk '/^```cpp$/ { on = 1; next } /^```$/ { if (on) exit } on' "$readme" > "$work/example.cpp"
[ -s "$work/example.cpp" ] || { echo "FAIL: no \`\`\`cpp block in $readme"; exit 1; }
$cxx -std=c++17 -Wall -Wextra -Werror $flags -I"$src/framework/include" -I"$src/plugin_api/include" \
    "$work/example.cpp" -L"$libdir" -ltwinwire -o "$work/example" || { echo "FAIL: the example does not compile"; exit 1; }
TWINWIRE_TRANSPORT=tcp TWINWIRE_LISTEN_PORT=0 LD_LIBRARY_PATH=$libdir "$work/example" > "$work/log" 2>&1 &
pid=$!
i=0
until grep -q 'listening on' "$work/log"; do
    i=$((i + 1))
    [ $i -lt 100 ] || { echo "FAIL: the example did not listen"; cat "$work/log"; exit 1; }
    sleep 0.1
done
port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\) over.*/\1/p' "$work/log" | head -1)
[ -n "$port" ] || { echo "FAIL: no port in the log"; cat "$work/log"; exit 1; }

# Start-up failures: a clear message and exit 1 (the first one still holds the port).
fails_cleanly() { # NAME EXPECTED-TEXT ENV...
    name=$1 expected=$2
    shift 2
    env "$@" LD_LIBRARY_PATH=$libdir "$work/example" > "$work/fail.log" 2>&1
    rc=$?
    if [ $rc -ne 1 ] || ! grep -q "$expected" "$work/fail.log"; then
        echo "FAIL: $name: exit $rc (expected 1 and a line with '$expected'):"
        cat "$work/fail.log"
        return 1
    fi
    echo "ok: $name: exit 1 and '$(grep "$expected" "$work/fail.log" | head -1)'"
}
fails_cleanly "the port is taken" "Address already in use" \
    TWINWIRE_TRANSPORT=tcp TWINWIRE_LISTEN_PORT="$port" || exit 1
fails_cleanly "a stray TWINWIRE_FOO=1" "TWINWIRE_FOO" TWINWIRE_TRANSPORT=tcp TWINWIRE_FOO=1 || exit 1

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || { echo "FAIL: the example exited $rc on SIGTERM"; cat "$work/log"; exit 1; }
echo "ok: the README example compiles, listens and stops cleanly on SIGTERM"
