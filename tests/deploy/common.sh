# shellcheck shell=bash
# What the deploy tests share: their verdicts and waiting. A test prints
# "ok: ..." or "FAIL: ..." per check and exits 0, 1, or 77 (SKIP, why).
failed=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failed=1; }
# A failure the rest of the test cannot go on from.
die() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
finish() { exit "$failed"; }

# Polls COMMAND every 0.2 s for up to SECONDS.
until_true() { # seconds command...
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

# The port of kvd's "serving on ADDR:PORT" log line.
serving_port() { # log
    sed -n 's/.* serving on [^ ]*:\([0-9][0-9]*\) over .*/\1/p' "$1" | head -n1
}

# The program that `in_root ROOT PROGRAM &` started: the child of unshare,
# which is the child of the background shell $!.
started_in_root() { # pid-of-background-job
    pgrep -P "$(pgrep -P "$1" -x unshare)"
}
