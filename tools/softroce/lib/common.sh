# shellcheck shell=bash
# Messages and exit statuses shared by the softroce-run pieces (sourced).
#
# Exit statuses of softroce-run, so that callers can tell a failed command
# from a machine that cannot run a guest at all:
#   the command's own status   the command ran in the guest
#   77  (Meson SKIP)           no guest is possible here (reason printed)
#   124                        timed out: a hang is a failure, never a skip
#   125                        softroce-run itself failed (bad usage, the guest
#                              died while the command ran, or a guest was
#                              required with --required but is not possible)
#   130 / 143                  interrupted by SIGINT / SIGTERM

readonly EXIT_SKIP=77
readonly EXIT_TIMEOUT=124
readonly EXIT_RUNNER=125

# The name it was called by: softroce-run in the tree, twinwire-softroce-run
# installed.
PROG=$(basename "$0")
QUIET=${QUIET:-0}
REQUIRED=${REQUIRED:-0}

msg() { [ "$QUIET" = 1 ] || printf '%s: %s\n' "$PROG" "$*" >&2; }

# A problem of softroce-run itself or of its caller.
die() {
  printf '%s: error: %s\n' "$PROG" "$*" >&2
  exit "$EXIT_RUNNER"
}

# Skips are always explained, even with --quiet: a test that cannot run
# must say why.
skip() {
  printf '%s: SKIP: %s\n' "$PROG" "$*" >&2
  exit "$EXIT_SKIP"
}

# No guest is possible on this machine: skip, unless the caller insists.
no_guest() {
  if [ "$REQUIRED" = 1 ]; then
    printf '%s: error: no SoftRoCE guest possible here, and one is required (--required): %s\n' "$PROG" "$*" >&2
    exit "$EXIT_RUNNER"
  fi
  skip "no SoftRoCE guest possible here: $*"
}

is_root() { [ "$(id -u)" = 0 ]; }
