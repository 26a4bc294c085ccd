#!/bin/sh
# Log lines carry the program's name (or log_ident) and, when stderr is the
# journal (JOURNAL_STREAM names its device and inode), an sd-daemon priority
# prefix instead of the time and name the journal records itself.
# usage: check_log_format.sh LOG_PROBE
set -u
probe=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/err" 2>/dev/null; exit 1; }
name=$(basename "$probe")

env -u JOURNAL_STREAM "$probe" 2> "$work/err" > /dev/null || fail "the probe failed"
grep -q " $name\[[0-9]*\] ERROR \[probe\] an error line$" "$work/err" || fail "no line names the program '$name'"
grep -q 'twinwire\[' "$work/err" && fail "a line still says 'twinwire['"
grep -q '^<' "$work/err" && fail "a priority prefix without the journal"
echo "ok: by default lines carry the program's name ($name)"

env -u JOURNAL_STREAM TWINWIRE_LOG_IDENT=mydaemon "$probe" 2> "$work/err" > /dev/null || fail "the probe failed"
grep -q ' mydaemon\[[0-9]*\] INFO \[probe\] an info line$' "$work/err" || fail "log_ident = mydaemon is not used"
echo "ok: log_ident = mydaemon names the lines"

env TWINWIRE_LOG_IDENT='bad name' "$probe" 2> "$work/err" > /dev/null && fail "log_ident with a space was accepted"
grep -q "log_ident" "$work/err" || fail "the refusal does not name log_ident"
echo "ok: a log_ident with a space is refused"

# stderr is the file whose dev:ino JOURNAL_STREAM names: as under systemd.
: > "$work/journal"
stream=$(stat -c '%d:%i' "$work/journal")
JOURNAL_STREAM=$stream "$probe" 2>> "$work/journal" > "$work/out" || fail "the probe failed"
cp "$work/journal" "$work/err"
grep -q '^journal: yes$' "$work/out" || fail "writing_to_journal() is not true"
for expected in '<3>ERROR \[probe\] an error line' '<4>WARN \[probe\] a warning line' \
                '<6>INFO \[probe\] an info line' '<7>DEBUG \[probe\] a debug line'; do
    grep -qx "$expected" "$work/journal" || fail "no line '$expected' for the journal"
done
echo "ok: to the journal, lines start with their priority (<3> to <7>)"

# A JOURNAL_STREAM inherited by a process whose stderr is elsewhere: plain lines.
JOURNAL_STREAM=$stream "$probe" 2> "$work/err" > "$work/out" || fail "the probe failed"
grep -q '^journal: no$' "$work/out" || fail "writing_to_journal() is true for another stderr"
grep -q '^<' "$work/err" && fail "a priority prefix on a stderr that is not the journal"
grep -q " $name\[[0-9]*\] ERROR" "$work/err" || fail "no plain line"
echo "ok: an inherited JOURNAL_STREAM that is not stderr changes nothing"
