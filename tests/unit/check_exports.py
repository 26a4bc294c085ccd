#!/usr/bin/env python3
"""libtwinwire exports its public C++ API and nothing else.

The allow-list is read from the public headers: every class or struct
declared `TW_API` (all its members, typeinfo and vtable) and every function
declared `TW_API`.  Each exported symbol (nm -D --defined-only, demangled)
that names a twinwire entity must name one of those; any other exported
name that is not a C++ standard-library instantiation is a leak (a C symbol
such as tw_socket_backend_entry, an internal such as HostServices).
usage: check_exports.py LIBTWINWIRE.so PUBLIC_HEADER_DIR
"""
import pathlib
import re
import subprocess
import sys

lib, header_dir = sys.argv[1], pathlib.Path(sys.argv[2])



def strip_templates(text):
    """Drop <...> (nested) so that only names and parameter lists remain."""
    out, depth = [], 0
    for ch in text:
        if ch == '<':
            depth += 1
        elif ch == '>' and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return ''.join(out)


def drop_decltype_return(symbol):
    """A template's return type written `decltype (...)` (unoptimised builds
    export such standard-library instantiations): the symbol after it."""
    if not symbol.startswith('decltype ('):
        return symbol
    depth = 0
    for i, ch in enumerate(symbol):
        depth += {'(': 1, ')': -1}.get(ch, 0)
        if ch == ')' and depth == 0:
            return symbol[i + 1:].lstrip()
    return symbol


def returned_pointer_name(symbol):
    """A function returning a pointer to a function or member is demangled
    `R (C::* name<...>(args))(params)` (clang exports std::forward so): its
    name, or None."""
    m = re.match(r'[\w:\s]*\((?:[\w:]*::)?\*+&*\s*([\w:~]+)\(', strip_templates(symbol))
    return m.group(1) if m else None


def entity(symbol):
    """The defined name of a demangled symbol: up to its parameter list."""
    symbol = drop_decltype_return(symbol)
    named = returned_pointer_name(symbol)
    if named:
        return named
    depth = 0
    for i, ch in enumerate(symbol):
        if ch == '<':
            depth += 1
        elif ch == '>':
            depth -= 1
        elif ch == '(' and depth == 0 and not symbol[:i].endswith('operator'):
            return symbol[:i]
    return symbol


classes, functions = set(), set()
for header in sorted(header_dir.glob('*.hpp')):
    text = header.read_text()
    classes.update(re.findall(r'\b(?:class|struct)\s+TW_API\s+(\w+)', text))
    for decl in re.findall(r'\bTW_API\s+([^;{]*)', text):
        decl = strip_templates(decl)
        if '(' in decl and not decl.startswith(('class ', 'struct ')):
            functions.add(decl[:decl.index('(')].split()[-1].lstrip('*&'))
if not classes or not functions:
    sys.exit('FAIL: no TW_API declarations found in %s' % header_dir)

out = subprocess.run(['nm', '-D', '--defined-only', '-C', lib], check=True, capture_output=True, text=True).stdout
symbols = [line.split(' ', 2)[2] for line in out.splitlines() if line.count(' ') >= 2]

LINKER = {'_init', '_fini', '_edata', '_end', '__bss_start'}
STD = ('std::', '__gnu_cxx::', 'operator new', 'operator delete')
PREFIXES = ('typeinfo name for ', 'typeinfo for ', 'vtable for ', 'VTT for ', 'guard variable for ',
            'construction vtable for ', 'non-virtual thunk to ', 'virtual thunk to ')

def entity_ok(path):
    """path: the components after 'twinwire::', e.g. ['Runtime', 'start']."""
    if path[0] in classes:
        return True
    # Free functions, also in nested namespaces (twinwire::log::write).
    while path and path[0] not in functions:
        path = path[1:]
    return bool(path) and len(path) <= 2  # name, or name + a lambda/local inside it

leaks = []
for sym in symbols:
    name = sym
    for p in PREFIXES:
        if name.startswith(p):
            name = name[len(p):]
    # The typeinfo of a function type, `void (int)`: clang's UBSan
    # (-fsanitize=function) emits one for each type called through a pointer.
    if sym.startswith('typeinfo') and name.endswith(')'):
        continue
    if name in LINKER:
        continue
    name = entity(name)
    refs = re.findall(r'twinwire::((?:\w+::)*\w+)', name)
    if not refs and not re.search(r'(^|[\s<,(])(std|__gnu_cxx)::', name) and not name.startswith(STD):
        leaks.append(sym)  # a C symbol or a non-twinwire C++ one
        continue
    for ref in refs:
        if not entity_ok(ref.split('::')):
            leaks.append(sym)
            break

exported = '\n'.join(symbols)
missing = [c for c in ('Runtime', 'Config', 'Connection', 'Loop', 'ConfigError') if 'twinwire::' + c not in exported]

print('%d exported symbols; public classes: %s' % (len(symbols), ', '.join(sorted(classes))))
for sym in leaks:
    print('LEAK: ' + sym)
for c in missing:
    print('MISSING: nothing of twinwire::%s is exported' % c)
sys.exit(1 if leaks or missing else 0)
