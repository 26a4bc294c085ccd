#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Plays the service manager of a Type=notify service: binds an AF_UNIX
# datagram socket, starts COMMAND with NOTIFY_SOCKET naming it, prints each
# datagram received (newlines shown as '|'), sends SIGTERM once READY=1 came
# and prints the exit status.  Output lines: pid=N, datagram=..., exit=N.
#
#   notify_manager.py WORKDIR COMMAND [ARGS...]
import os
import signal
import socket
import subprocess
import sys

work, command = sys.argv[1], sys.argv[2:]
path = os.path.join(work, "notify")
manager = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
manager.bind(path)
manager.settimeout(60)
child = subprocess.Popen(command, env=dict(os.environ, NOTIFY_SOCKET=path), stderr=subprocess.DEVNULL)
print("pid=%d" % child.pid, flush=True)
try:
    for _ in range(2):  # READY=1, then STOPPING=1
        message = manager.recv(4096).decode()
        print("datagram=" + message.replace("\n", "|"), flush=True)
        if message.startswith("READY=1"):
            child.send_signal(signal.SIGTERM)
except socket.timeout:
    print("timeout: no datagram within 60 s", flush=True)
    child.kill()
print("exit=%d" % child.wait(timeout=60))
