# shellcheck shell=bash
# The per-run control share: what the guest's boot stages read (sourced by
# softroce-run; the guest mounts $RUN/ctl as /ctl).

# A value quoted for both busybox sh and bash.
sh_quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# The caller's exported environment, minus what belongs to this host session.
write_environment() {
  declare -px | grep -vE '^declare -[a-zA-Z]*r' |
    grep -vE '^declare -x (PWD|OLDPWD|SHLVL|_|TERM_PROGRAM[A-Z_]*|SSH_[A-Z_]*|DISPLAY|WAYLAND_DISPLAY|DBUS_SESSION_BUS_ADDRESS|XDG_RUNTIME_DIR)='
}

write_control() { # command args...
  local c=$RUN/ctl
  cp "$SOFTROCE_DIR/guest/stage1.sh" "$SOFTROCE_DIR/guest/stage2.sh" "$SOFTROCE_DIR/guest/wire.sh" "$c/"
  {
    echo "KVER=$(sh_quote "$(cat "$CACHE/current/kver")")"
    echo "BOOT_MODULES=$(sh_quote "$BOOT_MODULES")"
    echo "VERBOSE=$VERBOSE"
    echo "MTU=$MTU"
    echo "TOPOLOGY=$TOPOLOGY"
    echo "WORKDIR=$(sh_quote "$(pwd -P)")"
  } >"$c/config"
  if [ ${#SHARES[@]} -gt 0 ]; then printf '%s\n' "${SHARES[@]}"; fi >"$c/shares"
  write_environment >"$c/env.sh"
  local __cmd=("$@")
  declare -p __cmd >"$c/command"
}
