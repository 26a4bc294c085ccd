#!/bin/sh
# The daemon example in README.md must compile against the framework and run:
# it starts, listens, and exits 0 on SIGTERM after draining.
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
    "$work/example.cpp" -L"$libdir" -ltwinwire -levent_core -o "$work/example" || { echo "FAIL: the example does not compile"; exit 1; }
TWINWIRE_TRANSPORT=tcp TWINWIRE_LISTEN_PORT=0 LD_LIBRARY_PATH=$libdir "$work/example" > "$work/log" 2>&1 &
pid=$!
i=0
until grep -q 'listening on' "$work/log"; do
    i=$((i + 1))
    [ $i -lt 100 ] || { echo "FAIL: the example did not listen"; cat "$work/log"; exit 1; }
    sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || { echo "FAIL: the example exited $rc on SIGTERM"; cat "$work/log"; exit 1; }
echo "ok: the README example compiles, listens and stops cleanly on SIGTERM"
