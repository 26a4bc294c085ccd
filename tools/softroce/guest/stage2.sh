# shellcheck shell=bash
# Guest boot, stage 2 (the host's bash, chrooted into the guest's root by
# stage1.sh): the wire, the caller's environment, then the command itself.
__ctl=/run/softroce/ctl
. $__ctl/config # MTU TOPOLOGY VERBOSE WORKDIR
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Until the command starts, a failure means "no guest possible" (the host
# reads setup-failed).
setup_failed() {
  { echo "$1"; [ -f /run/softroce/setup.log ] && cat /run/softroce/setup.log; } >$__ctl/setup-failed
  exit 1
}

MTU=$MTU TOPOLOGY=$TOPOLOGY bash -e $__ctl/wire.sh >/run/softroce/setup.log 2>&1 ||
  setup_failed "the guest's network and RDMA setup failed:"
[ "$VERBOSE" = 1 ] && { cat /run/softroce/setup.log; rdma link; } >&2

__topology=$TOPOLOGY
__workdir=$WORKDIR
unset MTU TOPOLOGY VERBOSE WORKDIR
. $__ctl/env.sh
. $__ctl/command # __cmd=(...)

export SOFTROCE_VM=1 SOFTROCE_TOPOLOGY=$__topology SOFTROCE_GID_INDEX=1
export SOFTROCE_DEV=rxe0 SOFTROCE_NETDEV=sr0 SOFTROCE_IP=10.77.0.1
if [ "$__topology" = wire ]; then
  export SOFTROCE_SERVER_DEV=rxe1 SOFTROCE_SERVER_NETDEV=sr1 SOFTROCE_SERVER_IP=10.77.0.2
  export SOFTROCE_CLIENT_DEV=rxe0 SOFTROCE_CLIENT_NETDEV=sr0 SOFTROCE_CLIENT_IP=10.77.0.1
else
  export SOFTROCE_SERVER_DEV=rxe0 SOFTROCE_SERVER_NETDEV=sr0 SOFTROCE_SERVER_IP=10.77.0.1
  export SOFTROCE_CLIENT_DEV=rxe0 SOFTROCE_CLIENT_NETDEV=sr0 SOFTROCE_CLIENT_IP=10.77.0.1
fi
export PATH="${PATH:-/usr/sbin:/usr/bin:/sbin:/bin}:/run/softroce/bin"

cd "$__workdir" || setup_failed "cannot enter the working directory $__workdir in the guest"
: >$__ctl/started
unset __topology __workdir __ctl
exec "${__cmd[@]}"
