#!/bin/bash
# One real boot (TAP): the command's exit status, stdout and stderr come back
# from the guest apart, files it writes in the shared directory (the current
# one) land on the host, and writes anywhere else stay in the guest.
#   check-guest-exit-status.sh RUNNER [RUNNER-OPTIONS...]
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$shared"' EXIT
shared=$PWD/softroce-guest-wrote-this.$$
private=/etc/softroce-guest-wrote-this.$$
rm -f "$shared"

"$@" -- bash -c 'echo "to stdout"; echo "to stderr" >&2; echo "$SOFTROCE_VM" >"$1"; touch "$2"; exit 7' \
  _ "$shared" "$private" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 77 ]; then
  echo "1..0 # SKIP $(sed -n 's/.*SKIP: //p' "$tmp/err" | tail -n1)"
  exit 0
fi

n=0
failed=0
check() { # description, then a test command
  local what=$1
  shift
  n=$((n + 1))
  if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; failed=1; fi
}
echo "1..5"
check "the command's exit status 7 comes back (got $rc)" [ $rc = 7 ]
check "its stdout comes back on stdout alone" [ "$(cat "$tmp/out")" = "to stdout" ]
check "its stderr comes back on stderr" grep -qx "to stderr" "$tmp/err"
check "a file it writes in the shared directory is on the host" [ "$(cat "$shared" 2>/dev/null)" = 1 ]
check "a file it writes elsewhere stays in the guest" [ ! -e "$private" ]
[ $failed = 0 ] || { sed 's/^/# stdout: /' "$tmp/out"; sed 's/^/# stderr: /' "$tmp/err"; }
exit $failed
