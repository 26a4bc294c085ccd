#!/usr/bin/env python3
"""Every C++ snippet of a guide compiles against the public headers and links
with libtwinwire.

The convention (docs/using-the-framework.md follows it; so must every new
section):

  ```cpp            a whole translation unit: it has its own #include lines.
                    With a main() it is linked as a program; without one it is
                    linked with an empty main(), so every call it makes must
                    exist in libtwinwire.
  ```cpp fragment   statements, compiled as the body of a function that has
                    these names in scope (and nothing else of the guide):
                        twinwire::Runtime &runtime;
                        twinwire::ConnectionPtr conn;   (a std::shared_ptr)
                        twinwire::Loop &loop;
                    with every public header and <csignal> included, `using namespace
                    twinwire;` and std::chrono_literals.  All fragments share
                    one translation unit, each in its own function.

Markdown renders only the first word of the info string, so readers see plain
C++ either way.  Every block is compiled with -std=c++17 -Wall -Wextra -Werror
(unused names in fragments excepted); a failure names the block's line.
usage: check_guide_snippets.py GUIDE.md CXX SOURCE_ROOT LIBDIR [CXXFLAGS]
"""
import pathlib
import re
import subprocess
import sys
import tempfile

guide, cxx, src, libdir = sys.argv[1:5]
extra = sys.argv[5].split() if len(sys.argv) > 5 and sys.argv[5] else []

FRAGMENT_PRELUDE = '''\
#include <twinwire/buffer.hpp>
#include <twinwire/config.hpp>
#include <twinwire/connection.hpp>
#include <twinwire/log.hpp>
#include <twinwire/loop.hpp>
#include <twinwire/rdma.h>
#include <twinwire/runtime.hpp>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

using namespace twinwire;
using namespace std::chrono_literals;
'''


def blocks(path):
    """(line, kind, code) for every ```cpp block; kind is '' or 'fragment'."""
    found, current = [], None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if current is None:
            m = re.match(r'^```cpp(?:\s+(\S+))?\s*$', line)
            if m:
                current = (number, m.group(1) or '', [])
        elif line.strip() == '```':
            found.append((current[0], current[1], '\n'.join(current[2]) + '\n'))
            current = None
        else:
            current[2].append(line)
    if current is not None:
        sys.exit('FAIL: %s:%d: a ```cpp block never ends' % (path, current[0]))
    return found


def compile_and_link(source, name, work):
    exe = work / name
    cmd = [cxx, '-std=c++17', '-Wall', '-Wextra', '-Werror', *extra,
           '-I' + src + '/framework/include', '-I' + src + '/plugin_api/include',
           '-I' + src + '/rdma_plugin/include',
           str(source), '-L' + libdir, '-ltwinwire', '-o', str(exe)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    return result.returncode == 0, result.stderr


def main():
    path = pathlib.Path(guide)
    found = blocks(path)
    if not found:
        sys.exit('FAIL: no ```cpp block in %s' % path)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        fragments = [FRAGMENT_PRELUDE]
        jobs = []
        for line, kind, code in found:
            if kind == 'fragment':
                fragments.append('[[maybe_unused]] static void fragment_at_line_%d('
                                 '[[maybe_unused]] Runtime &runtime, [[maybe_unused]] ConnectionPtr conn, '
                                 '[[maybe_unused]] Loop &loop)\n{\n#line %d "%s"\n%s}\n'
                                 % (line, line + 1, path.name, code))
            elif kind == '':
                unit = '#line %d "%s"\n%s' % (line + 1, path.name, code)
                if not re.search(r'\bint\s+main\s*\(', code):
                    unit += '\nint main() {}\n'
                jobs.append((line, 'block_at_line_%d' % line, unit))
            else:
                print('FAIL: %s:%d: unknown block kind "%s" (use ```cpp or ```cpp fragment)' % (path, line, kind))
                failures += 1
        if len(fragments) > 1:
            jobs.append((0, 'fragments', ''.join(fragments) + '\nint main() {}\n'))
        for line, name, unit in jobs:
            source = work / (name + '.cpp')
            source.write_text(unit)
            ok, errors = compile_and_link(source, name, work)
            what = 'the fragments' if name == 'fragments' else 'the block at line %d' % line
            if ok:
                print('ok: %s %s' % (what, 'compile and link' if name == 'fragments' else 'compiles and links'))
            else:
                failures += 1
                print('FAIL: %s does not compile or link:\n%s' % (what, errors))
    count = len(found)
    if failures:
        sys.exit('FAIL: %d of the %d compile jobs for %d snippets in %s failed' % (failures, len(jobs), count, path))
    print('ok: all %d C++ snippets of %s compile and link' % (count, path.name))


main()
