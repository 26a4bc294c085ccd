#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --config of twinwire-kvd, twinwire-bench server and twinwire-info, given
# what is not a configuration file (issue 42 F5, F6, F8): a FIFO with no
# writer, /dev/zero, a 2 MiB file, a 64 MB line, a long value of control
# bytes.  Each tool exits non-zero without hanging, naming the reason, with
# a few hundred bytes of printable stderr.  TAP output.
#
#   check_config_input.sh KVD BENCH INFO
set -u
KVD=$1 BENCH=$2 INFO=$3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/config-input.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; printf '%s\n' "$@" | sed 's/^/#   /'; }

mkfifo "$WORK/fifo"
head -c $((2 << 20)) /dev/zero | tr '\0' '#' >"$WORK/2mib.conf"
{ printf 'listen_port = '; head -c $((64 << 20)) /dev/zero | tr '\0' 7; echo; } >"$WORK/64mb-line.conf"
# Under the 1 MiB cap: the value itself reaches the error message.
{ printf 'listen_port = \033[31m\001'; head -c 900000 /dev/zero | tr '\0' x; echo; } >"$WORK/long-value.conf"

# A regression must not take the machine's memory with it: the address space
# is bounded where no sanitizer's shadow memory needs it.
limit=(prlimit --as=$((2 << 30)) --)
if grep -qE '__(asan|tsan|msan)_init' "$KVD"; then limit=(); fi

# check TOOL FILE REGEX COMMAND...: COMMAND (with --config FILE) exits non-zero
# within the bound, its stderr under 1000 bytes, printable, matching REGEX.
check() {
    local tool=$1 file=$2 regex=$3; shift 3
    local err=$WORK/stderr start end status size
    start=$(date +%s)
    # 60 s: a hang (a FIFO's open) or an endless read, never a slow start under TSan.
    timeout 60 "${limit[@]}" "$@" --config "$file" >/dev/null 2>"$err"
    status=$? end=$(date +%s)
    size=$(wc -c <"$err")
    local what="$tool --config $(basename "$file") exits at once, naming why"
    if [ "$status" -eq 124 ]; then
        not_ok "$what" "still running after 60 s"
    elif [ "$status" -eq 0 ]; then
        not_ok "$what" "exit status 0"
    elif [ "$size" -ge 1000 ]; then
        not_ok "$what" "$size bytes on stderr (exit $status), starting: $(head -c 200 "$err" | cat -v)"
    elif LC_ALL=C grep -q '[^[:print:]]' "$err"; then
        not_ok "$what" "stderr holds bytes outside printable ASCII: $(cat -v "$err")"
    elif ! grep -Eq "$regex" "$err"; then
        not_ok "$what" "no match for /$regex/ in (exit $status):" "$(cat "$err")"
    else
        ok "$what (exit $status, $((end - start)) s, $size bytes of stderr)"
    fi
}

regular='a configuration file must be a regular file'
cap='a configuration file must be at most 1 MiB \(1048576 bytes\)'
for tool in kvd bench info; do
    case $tool in
    kvd) cmd=("$KVD" --port 0 --transport tcp) ;;
    bench) cmd=("$BENCH" server --port 0 --transport tcp) ;;
    info) cmd=("$INFO") ;;
    esac
    check "$tool" "$WORK/fifo" "fifo: is a FIFO; $regular" "${cmd[@]}"
    check "$tool" /dev/zero "/dev/zero: is a character device; $regular" "${cmd[@]}"
    check "$tool" "$WORK/2mib.conf" "2mib.conf: is 2097152 bytes; $cap" "${cmd[@]}"
    check "$tool" "$WORK/64mb-line.conf" "64mb-line.conf: is 67108879 bytes; $cap" "${cmd[@]}"
    check "$tool" "$WORK/long-value.conf" \
        "long-value.conf:1: bad value '\\\\x1b\\[31m\\\\x01x{58}'\\.\\.\\. \\(900006 bytes\\) for 'listen_port'" "${cmd[@]}"
done
echo "1..$n"
exit $failed
