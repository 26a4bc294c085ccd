#!/usr/bin/env python3
"""Cut each struct that crosses the plugin boundary, in an ABI dump (abidw's
XML), back to the size it has in the baseline: members that begin at or past
the baseline's size are dropped and the struct gets the baseline's size.

Appending members at the end of these structs is how a minor grows them
(twinwire/abi.h); everything before that end must stay exactly as it was.
abidiff then compares the cut dump with the baseline and reports any change
to a member the baseline has: its type, its offset, its removal, a member
inserted before the end. (libabigail's own has_data_member_inserted_at
suppression cannot be used for this: it also hides a member that changes
type in a struct that had nothing inserted.) A struct that shrank keeps its
smaller size, which abidiff reports.

usage: keep-baseline-members.py BASELINE CURRENT OUT
"""
import sys
import xml.etree.ElementTree as ET

# Each starts with `uint32_t size`, which says which members its producer has.
CROSSING_STRUCTS = {
    'tw_host', 'tw_transport_ops', 'tw_plugin_info', 'tw_listen_params', 'tw_connect_params', 'tw_buf',
    'tw_conn_stats', 'tw_transport_stats', 'tw_rma_request',
}


def struct_definitions(root):
    """Every definition (not declaration) of a crossing struct in a dump."""
    for decl in root.iter('class-decl'):
        if decl.get('name') in CROSSING_STRUCTS and decl.get('size-in-bits') is not None:
            yield decl


def main(baseline_path, current_path, out_path):
    baseline_sizes = {}
    for decl in struct_definitions(ET.parse(baseline_path).getroot()):
        baseline_sizes.setdefault(decl.get('name'), int(decl.get('size-in-bits')))
    current = ET.parse(current_path)
    for decl in struct_definitions(current.getroot()):
        size = baseline_sizes.get(decl.get('name'))
        if size is None or int(decl.get('size-in-bits')) < size:
            continue
        for member in decl.findall('data-member'):
            if int(member.get('layout-offset-in-bits', '0')) >= size:
                decl.remove(member)
        decl.set('size-in-bits', str(size))
    current.write(out_path)


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
