# SPDX-License-Identifier: MIT
# TAP helpers for the kvd test scripts (sourced).  Call `finish` at the end.

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1)); failed=1
    echo "not ok $n - $1"
    shift
    printf '%s\n' "$@" | sed 's/^/#   /'
}
# same DESCRIPTION ACTUAL EXPECTED
same() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $(printf %q "$3")" "got:      $(printf %q "$2")"; fi
}
# has DESCRIPTION TEXT REGEX: bash ERE over the whole text (^ and $ anchor
# the text, not lines; '.' crosses lines).
has() {
    if [[ $2 =~ $3 ]]; then ok "$1"; else not_ok "$1" "no match for /$3/ in:" "$2"; fi
}
# until_true SECONDS COMMAND...: poll a condition, never a timing assertion.
until_true() {
    local limit=$(($1 * 10)); shift
    for _ in $(seq "$limit"); do "$@" && return 0; sleep 0.1; done
    return 1
}
# serving_port LOG: the port from the daemon's "serving on ADDR:PORT over ..." line.
serving_port() { sed -n 's/.* serving on [^ ]*:\([0-9]*\) over .*/\1/p' "$1" | head -1; }
# await_daemon NAME PID: the daemon just started in the background as NAME
# (log in $WORK/NAME.log, stderr in $WORK/NAME.stderr) serves.  Adds PID to
# PIDS, sets PID_<NAME> and PORT_<NAME>; returns 1 (saying why) when it did
# not come up.
await_daemon() {
    local name=$1 pid=$2 log=$WORK/$1.log
    PIDS+=("$pid")
    printf -v "PID_$name" %s "$pid"
    if ! until_true 60 grep -qs ' serving on ' "$log"; then
        echo "# $name did not start:"; sed 's/^/#   /' "$log" "$WORK/$name.stderr" 2>/dev/null
        return 1
    fi
    printf -v "PORT_$name" %s "$(serving_port "$log")"
}
finish() {
    echo "1..$n"
    exit $failed
}
