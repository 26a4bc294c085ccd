# SPDX-License-Identifier: MIT
# Simulate a host without a shared library (sourced by test scripts): in a
# private mount namespace an empty file is bind-mounted over every copy of
# the soname that the dynamic loader's cache lists, so dlopen of it fails.
# Defines functions only.

# in_private_mount_namespace SCRIPT ARGS...: re-run SCRIPT in a private mount
# namespace (unshare -m, or -r -m without root) unless already there.
# Returns 1 when no namespace can be made (the caller skips); otherwise it
# does not return in the outer process.
in_private_mount_namespace() {
    [ -n "${TW_PRIVATE_MOUNT_NS:-}" ] && return 0
    local how
    for how in "-m" "-r -m"; do
        # shellcheck disable=SC2086
        if unshare $how --propagation private true 2>/dev/null; then
            # shellcheck disable=SC2086
            TW_PRIVATE_MOUNT_NS=1 exec unshare $how --propagation private "$@"
        fi
    done
    return 1
}

# library_files SONAME: the files the loader would open for SONAME.
library_files() {
    ldconfig -p | awk -v s="$1" '$1 == s { print $NF }' | xargs -r readlink -f | sort -u
}

# hide_library SONAME EMPTY_FILE: bind-mount EMPTY_FILE over each copy.
# Prints what it hid; returns 1 (with the reason on stderr) when it cannot.
hide_library() {
    local files f
    files=$(library_files "$1")
    if [ -z "$files" ]; then
        echo "ldconfig -p lists no $1" >&2
        return 1
    fi
    for f in $files; do
        mount --bind "$2" "$f" || { echo "cannot bind-mount over $f" >&2; return 1; }
        echo "$f"
    done
}

# unhide_library SONAME: undo hide_library.
unhide_library() {
    local f
    for f in $(library_files "$1"); do umount "$f" 2>/dev/null; done
}
