#!/bin/sh
# Issue 11 item 3: in a setuid program (AT_SECURE) no TWINWIRE_* variable is
# taken, whatever the case of its name, and one log line names what was
# ignored.  A copy of PROBE owned by nobody with the setuid bit, run by
# root, gets AT_SECURE=1.
# usage: check_setuid.sh PROBE
set -u
probe=$1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to make a setuid copy owned by another user"; exit 77; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$probe" "$dir/probe" && chown 65534 "$dir/probe" && chmod 4755 "$dir/probe" || exit 1
status=0
fail() { echo "not ok - $*"; printf '%s\n' "$out" | sed 's/^/#   /'; status=1; }
echo "1..3"

out=$(cd "$dir" && env TWINWIRE_plugin_path=/tmp/evil-lower TWINWIRE_PLUGIN_PATH=/tmp/evil \
    TWINWIRE_LOG_FILE=/tmp/evil.log TWINWIRE_LISTEN_PORT=1 "$dir/probe" 2>&1)
echo "$out" | grep -q '^secure=1$' || { fail "the setuid copy does not run with AT_SECURE=1"; exit 1; }
if echo "$out" | grep -q '^set '; then fail "a TWINWIRE_* variable was taken under AT_SECURE"
else echo "ok - no TWINWIRE_* variable is taken under AT_SECURE, whatever the case of its name"; fi
if echo "$out" | grep -q '^search /tmp/evil' || ! echo "$out" | grep -q '(installed plugin directory)$'; then
    fail "the plugin search used the environment"
else echo "ok - the plugin search is the installed directory only"; fi
line=$(echo "$out" | grep 'ignored in a setuid/setgid program')
if [ "$(echo "$line" | grep -c .)" = 1 ] && echo "$line" | grep -q 'TWINWIRE_LOG_FILE' &&
    echo "$line" | grep -q 'TWINWIRE_plugin_path' && echo "$line" | grep -q 'TWINWIRE_PLUGIN_PATH' &&
    echo "$line" | grep -q 'TWINWIRE_LISTEN_PORT'; then
    echo "ok - one log line names every variable ignored"
else fail "no single log line naming every variable ignored"; fi
exit $status
