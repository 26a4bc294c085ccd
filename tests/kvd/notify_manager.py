#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Plays the service manager of a Type=notify service: binds an AF_UNIX
# datagram socket, starts COMMAND with NOTIFY_SOCKET naming it, prints each
# datagram received (newlines shown as '|'), sends SIGTERM once READY=1 came
# and prints the exit status.  Output lines: pid=N, datagram=...,
# sigterms=N (how many were sent), exit=N.
#
# --resend S: send SIGTERM again every S seconds until STOPPING=1 comes.  Only
# for a daemon built with gcc 12's ThreadSanitizer, whose run-time drops a
# few in a hundred SIGTERMs sent right after the READY datagram to a busy
# single-threaded libevent loop (a 30-line libevent program without twinwire
# shows the same; without TSan none was lost in hundreds of runs).
#
#   notify_manager.py [--resend S] WORKDIR COMMAND [ARGS...]
import os
import signal
import socket
import subprocess
import sys

args = sys.argv[1:]
resend = None
if args[0] == "--resend":
    resend, args = float(args[1]), args[2:]
work, command = args[0], args[1:]
path = os.path.join(work, "notify")
manager = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
manager.bind(path)
manager.settimeout(60)
child = subprocess.Popen(command, env=dict(os.environ, NOTIFY_SOCKET=path), stderr=subprocess.DEVNULL)
print("pid=%d" % child.pid, flush=True)
sigterms = 0
try:
    for _ in range(2):  # READY=1, then STOPPING=1
        while True:
            try:
                message = manager.recv(4096).decode()
                break
            except socket.timeout:
                if not sigterms or resend is None or sigterms * resend >= 60:
                    raise
                child.send_signal(signal.SIGTERM)
                sigterms += 1
        print("datagram=" + message.replace("\n", "|"), flush=True)
        if message.startswith("READY=1"):
            child.send_signal(signal.SIGTERM)
            sigterms += 1
            if resend is not None:
                manager.settimeout(resend)
except socket.timeout:
    print("timeout: no datagram within 60 s", flush=True)
    child.kill()
print("sigterms=%d" % sigterms, flush=True)
print("exit=%d" % child.wait(timeout=60))
