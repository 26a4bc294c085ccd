#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""transport = pair serves only the daemon's own process (docs/test-transports.md):
kvd's "serving on" line and its notify STATUS must say so, where they named
an address and port as if anyone could connect (issue 42 F8).  Over tcp the
line stays as it was.  TAP; exit 77 without the pair plugin.

  pair_serving_line.py KVD        (TWINWIRE_PLUGIN_PATH finds the pair plugin)"""
import glob
import os
import re
import sys

from kvd_servers import Tap, skip, start_kvd_process

NOTE = 'pair is in-process only: no other process can connect to it'


def serving_line(log):
    m = re.search(r'.* serving on .*', open(log).read())
    return m.group(0) if m else ''


def main():
    kvd = sys.argv[1]
    path = os.environ.get('TWINWIRE_PLUGIN_PATH', '')
    if not any(glob.glob(os.path.join(d, 'twinwire-pair-abi*.so')) for d in path.split(':') if d):
        skip('the pair plugin is not on TWINWIRE_PLUGIN_PATH (%r)' % path)
    tap = Tap()
    proc, port, log = start_kvd_process(kvd, '--transport', 'pair')
    line = serving_line(log)
    tap.check('over pair the serving line says that no other process can connect', NOTE in line, line)
    proc, port, log = start_kvd_process(kvd, '--transport', 'tcp')
    line = serving_line(log)
    tap.check('over tcp it says nothing of the kind', line and 'in-process' not in line, line)
    tap.finish()


if __name__ == '__main__':
    main()
