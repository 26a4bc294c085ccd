# shellcheck shell=bash
# Turns what the guest left in $RUN/ctl into softroce-run's exit status
# (sourced by softroce-run after the guest has stopped).

show_console_tail() {
  if [ -s "$RUN/console.log" ]; then
    echo "--- guest console (last 30 lines) ---"
    tail -n 30 "$RUN/console.log"
  fi
  if [ -s "$RUN/qemu.log" ]; then
    echo "--- qemu ---"
    cat "$RUN/qemu.log"
  fi
} >&2

exit_with_outcome() {
  local c=$RUN/ctl
  if [ "$TIMED_OUT" = 1 ]; then
    if [ -f "$c/started" ]; then
      msg "error: timed out after ${TIMEOUT}s; the command was still running"
    else
      msg "error: timed out after ${TIMEOUT}s before the command started (guest boot hung)"
      show_console_tail
    fi
    exit "$EXIT_TIMEOUT"
  fi
  if [ -f "$c/rc" ]; then
    exit "$(cat "$c/rc")"
  fi
  if [ -f "$c/started" ]; then
    msg "error: the guest stopped while the command ran, without its exit status (qemu status $QEMU_RC)"
    show_console_tail
    exit "$EXIT_RUNNER"
  fi
  # The command never started: this machine cannot give us a guest.
  show_console_tail
  if [ -f "$c/setup-failed" ]; then
    sed 's/^/  /' "$c/setup-failed" >&2
    no_guest "guest setup failed: $(head -n1 "$c/setup-failed")"
  elif [ -f "$c/booted" ]; then
    no_guest "the guest booted but stopped before the command started"
  elif [ -s "$RUN/console.log" ]; then
    no_guest "the guest kernel did not reach its init (qemu status $QEMU_RC)"
  else
    no_guest "qemu could not start a guest (qemu status $QEMU_RC)"
  fi
}
