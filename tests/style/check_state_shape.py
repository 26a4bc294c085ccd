#!/usr/bin/env python3
"""Checks the shape of the product's state: no struct or class defined under
framework/, socket_backend/ or rdma_plugin/ holds more than 30 direct data
members or more than 6 bools (docs/hacking.md, "State has a shape").

It asks clang, not a regular expression: every translation unit of the
build's compile_commands.json whose source lies in the build is parsed with
`clang++ -fsyntax-only -Xclang -ast-dump`, and each record definition located
in a checked directory is counted once.  Exits 77 without clang.

usage: check_state_shape.py SOURCE_ROOT BUILD_DIR [DIR ...]
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

MAX_MEMBERS = 30
MAX_BOOLS = 6

KEEP = re.compile(r"^(-I|-D|-U|-std=|-isystem|-include)")
LOC = re.compile(r"(?:<|, | )((?:/|\.\./|[\w.-]+/)[^\s:<>,']*):\d+:\d+")  # a location that names its file
RECORD = re.compile(r"(CXXRecordDecl|RecordDecl) 0x[0-9a-f]+ (?:\w+ 0x[0-9a-f]+ )*<[^>]*> (?:col|line):[\d:]+ (?:.* )?(struct|class) (\w+) definition")
FIELD = re.compile(r"FieldDecl 0x[0-9a-f]+ (?:\w+ 0x[0-9a-f]+ )*<[^>]*> (?:col|line):[\d:]+ (?:.* )?(\w+) '([^']*)'")


def flags_of(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out, skip = [], False
    for i, a in enumerate(args[1:]):
        if skip:
            out.append(a)
            skip = False
            continue
        if a in ("-I", "-D", "-isystem", "-include"):
            out.append(a)
            skip = True
        elif KEEP.match(a):
            out.append(a)
    return out


def depth(line):
    m = re.search(r"[A-Za-z<]", line)
    return (m.start() if m else 0) // 2


def scan(tu_lines, directory, checked, records):
    current_file = ""
    stack = []  # (depth, key) of the records being counted
    for line in tu_lines:
        d = depth(line)
        while stack and stack[-1][0] >= d:
            stack.pop()
        record = RECORD.search(line)
        field = FIELD.search(line) if not record else None
        # clang names a file only where it differs from the last location it
        # printed: the record's own begin is the line's first location.
        paths = LOC.findall(line)
        begin_file = current_file
        first = re.search(r"<([^\s:<>,]+):\d+", line)
        if first and first.group(1) not in ("line", "col") and paths:
            begin_file = paths[0]
        if paths:
            current_file = paths[-1]
        if record:
            path = os.path.realpath(os.path.join(directory, begin_file))
            if any(path.startswith(c + os.sep) for c in checked):
                key = (path, record.group(3), line.split("<", 1)[1].split(">", 1)[0].split(",")[0])
                # a record is counted once, however many units include it
                new = key not in records
                records.setdefault(key, {"members": 0, "bools": 0, "count": new})
                stack.append((d, key))
            else:
                stack.append((d, None))
            continue
        if field and stack and stack[-1][0] == d - 1 and stack[-1][1] is not None:
            info = records[stack[-1][1]]
            if info["count"]:
                info["members"] += 1
                if field.group(2).split(":")[0].strip() in ("bool", "_Bool"):
                    info["bools"] += 1
    for info in records.values():
        info["count"] = False


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    root, build = os.path.realpath(sys.argv[1]), sys.argv[2]
    dirs = sys.argv[3:] or ["framework", "socket_backend", "rdma_plugin"]
    checked = [os.path.join(root, d) for d in dirs]
    clangxx, clang = shutil.which("clang++"), shutil.which("clang")
    if not clangxx or not clang:
        print("SKIP: clang is not installed (apt-get install clang): it is what reads the records")
        return 77
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    records = {}
    units = 0
    for e in entries:
        src = os.path.realpath(os.path.join(e["directory"], e["file"]))
        if not any(src.startswith(c + os.sep) or "/" + os.path.basename(c) + "/" in src for c in checked):
            continue
        is_c = src.endswith(".c")
        cmd = [clang if is_c else clangxx, "-fsyntax-only", "-w", "-Xclang", "-ast-dump", "-fno-color-diagnostics"]
        cmd += flags_of(e) + [src]
        run = subprocess.run(cmd, cwd=e["directory"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            print(f"clang could not parse {src}:\n{run.stderr[-2000:]}")
            return 1
        scan(run.stdout.splitlines(), e["directory"], checked, records)
        units += 1
    if units == 0:
        print(f"no translation unit of {build}/compile_commands.json lies in {', '.join(dirs)}")
        return 1
    bad = []
    for (path, name, where), info in sorted(records.items()):
        if info["members"] > MAX_MEMBERS or info["bools"] > MAX_BOOLS:
            bad.append(f"{os.path.relpath(path, root)}: {name} has {info['members']} data members "
                       f"({info['bools']} bool); at most {MAX_MEMBERS} ({MAX_BOOLS} bool)")
    for b in bad:
        print(b)
    print(f"{len(records)} records in {units} units of {', '.join(dirs)}; {len(bad)} over the bounds")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
