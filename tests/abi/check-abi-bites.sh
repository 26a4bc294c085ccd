#!/bin/sh
# The ABI check bites: the probe library is built from scratch copies of the
# installed plugin headers, each changed the way a careless edit would, and
# compared with the plugin ABI's baseline exactly as check-abi.sh does. A 1.0
# member of tw_transport_ops that changes type, one inserted in the middle
# and one removed must fail, and so must an error code that changes value; a
# member appended at the end, a new error code or flag bit and a new
# exported function (what a new minor adds) must pass.
# usage: check-abi-bites.sh BUILD_ROOT SOURCE_ROOT
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$2/tests/abi/abi-lib.sh"

abi_require_tools
abi_setup "$1" "$2"

# A scratch copy of the installed headers in $work/NAME, HEADER in it changed
# by a perl substitution (the whole file is one string: declarations may span
# lines). Its abi_layout.h is emptied: the pinned offsets and sizes there
# would stop most of these copies from compiling, and what is tried here is
# abidiff, which must catch the change on its own.
scratch() { # NAME [HEADER PERL-SUBSTITUTION]
    mkdir -p "$work/$1"
    cp -R "$inc/twinwire" "$work/$1/twinwire"
    printf '#ifndef TWINWIRE_ABI_LAYOUT_H\n#define TWINWIRE_ABI_LAYOUT_H\n#endif\n' >"$work/$1/twinwire/abi_layout.h"
    [ $# -eq 1 ] && return 0
    perl -0pi -e "$3" "$work/$1/twinwire/$2" || fail "perl on $1's $2"
    cmp -s "$inc/twinwire/$2" "$work/$1/twinwire/$2" &&
        fail "$1: the substitution changed nothing in $2 (has the header changed shape?)"
    return 0
}

# The probe from scratch copy NAME, compared with the baseline.
compare_scratch() { # NAME [CC-ARG...]
    name=$1
    shift
    abi_probe "$work/$name" "$work/$name.abi" "$@"
    abi_compare "the plugin ABI from the scratch copy '$name'" "$plugin_baseline" "$work/$name.abi"
}

passes() { # NAME WHAT [CC-ARG...]
    name=$1 what=$2
    shift 2
    compare_scratch "$name" "$@" >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; fail "$what: the check failed it"; }
    echo "ok: passes: $what"
}

fails() { # NAME WHAT MEMBER: abidiff's report must name MEMBER
    compare_scratch "$1" >"$work/$1.log" 2>&1 && { cat "$work/$1.log"; fail "$2: the check passed it"; }
    grep -q "$3" "$work/$1.log" || { cat "$work/$1.log"; fail "$2: the report does not name $3"; }
    echo "ok: fails: $2 (abidiff's report names $3):"
    sed 's/^/    /' "$work/$1.log"
}

ops='struct tw_transport_ops \{.*?'
# The unchanged headers (layout checks left out as in every copy) pass: each
# failure below is the change's.
scratch unchanged
passes unchanged 'the installed headers, unchanged'

# The change of the issue that made this check: ctrl's type back to its
# pre-1.0 form while the major stays 1.
scratch ctrl-type transport.h "s/(${ops})int \(\*ctrl\)\([^;]*\);/\$1int (*ctrl)(tw_transport *transport, tw_conn *conn, int op, void *data);/s"
fails ctrl-type 'ctrl changing type inside ABI 1.0' ctrl

scratch inserted transport.h "s/(${ops}uint64_t caps;[^\n]*\n)/\$1    void *inserted_in_the_middle;\n/s"
fails inserted 'a member inserted in the middle of tw_transport_ops' inserted_in_the_middle

scratch removed transport.h "s/(${ops})\n[ \t]*int \(\*describe\)\([^;]*\);/\$1/s"
fails removed 'describe removed from tw_transport_ops' describe

appended="s/(${ops})(\n\};)/\$1\n    int (*appended_at_the_end)(tw_conn *conn);\$2/s"
scratch appended transport.h "$appended"
passes appended 'a member appended at the end of tw_transport_ops (a new minor)'

# The appended member does not cover a change made with it.
scratch appended-and-ctrl-type transport.h "$appended;s/(${ops})int \(\*ctrl\)\([^;]*\);/\$1int (*ctrl)(tw_transport *transport, tw_conn *conn, int op, void *data);/s"
fails appended-and-ctrl-type 'a member appended at the end while ctrl changes type' ctrl

cat >"$work/new_function.c" <<'EOC'
#include <twinwire/plugin.h>
TW_EXPORT int tw_abi_probe_new_function(const struct tw_transport_ops *ops);
TW_EXPORT int tw_abi_probe_new_function(const struct tw_transport_ops *ops) { return ops != NULL; }
EOC
scratch new-function
passes new-function 'a new exported function' "$work/new_function.c"

# Enum values: a new error code goes before TW_ELAST, which moves; a new
# capability bit goes last. Neither changes a value a 1.0 party knows.
scratch new-values errors.h 's/(TW_ELAST = )(\d+)/"TW_ENEW_IN_A_MINOR = $2,\n    $1" . ($2 + 1)/e'
perl -0pi -e 's/(enum tw_caps \{.*?)(\n\};)/$1,\n    TW_CAP_NEW_IN_A_MINOR = 1u << 30$2/s' "$work/new-values/twinwire/transport.h"
grep -q TW_CAP_NEW_IN_A_MINOR "$work/new-values/twinwire/transport.h" || fail "new-values: no capability bit added"
passes new-values 'a new error code before TW_ELAST and a new capability bit'

scratch error-value errors.h 's/TW_EABI = \d+/TW_EABI = 10100/'
fails error-value 'an error code that changes value' TW_EABI
