#!/usr/bin/env bash
# Checks that every C and C++ file git tracks is formatted as .clang-format
# says, with Debian 12's clang-format 14 (another version formats
# differently). Prints each file that differs and the command that fixes it.
set -uo pipefail
root=${1:?usage: check-format.sh SOURCE_ROOT}
cd "$root" || exit 1
cf=$(command -v clang-format-14) || { echo "SKIP: clang-format-14 is not installed (apt-get install clang-format-14)"; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: $root is not a git work tree: no list of the tracked files"; exit 77; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
[ "${#files[@]}" -gt 0 ] || { echo "no C or C++ file found under $root"; exit 1; }
# One run over every file; its warnings name the files that differ.
out=$("$cf" --style=file --dry-run "${files[@]}" 2>&1) || { echo "$out" | head -20; echo "clang-format-14 failed"; exit 1; }
mapfile -t bad < <(sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' <<<"$out" | sort -u)
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'not formatted as .clang-format says: %s\n' "${bad[@]}"
  echo "fix: clang-format-14 -i ${bad[*]}"
  exit 1
fi
echo "${#files[@]} files formatted as .clang-format says"
