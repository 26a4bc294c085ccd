#!/usr/bin/env python3
# Write a copy of the plugin_api headers as a later ABI 1.x would have them:
# every growable struct gets an extra trailing member and TW_ABI_MINOR goes
# up by one.  A plugin built against the copy is a plugin from the future,
# for the loader's growth tests.  usage: make_future_headers.py SRC_DIR OUT_DIR
import pathlib
import re
import sys

src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
(out / 'twinwire').mkdir(parents=True, exist_ok=True)  # OUT_DIR/twinwire/*.h

EXTRA = {
    'tw_host': 'void (*future_service)(const struct tw_host *host);',
    'tw_transport_ops': 'int (*future_op)(tw_transport *transport, uint64_t arg);',
    'tw_plugin_info': 'const char *future_field;',
    'tw_listen_params': 'uint64_t future_field;',
    'tw_connect_params': 'uint64_t future_field;',
    'tw_buf': 'uint64_t future_field;',
}

texts = {h.name: h.read_text() for h in sorted((src / 'twinwire').glob('*.h'))}
grown = []
for name, member in EXTRA.items():
    for file, text in texts.items():
        texts[file], n = re.subn(r'(\nstruct %s \{\n.*?)(\n\};)' % name,
                                 lambda m: m.group(1) + '\n    ' + member + ' /* from the future */' + m.group(2),
                                 text, count=1, flags=re.S)
        if n:
            grown.append(name)
for file, text in texts.items():
    # A grown struct's pinned total size no longer holds (the checks live in
    # abi_layout.h, apart from the structs); the member offsets still do.
    for name in grown:
        text = re.sub(r'TW_ABI_ASSERT\(sizeof\(struct %s\) == .*\n' % name, '', text)
    text, n = re.subn(r'#define TW_ABI_MINOR (\d+)', lambda m: '#define TW_ABI_MINOR %d' % (int(m.group(1)) + 1), text)
    (out / 'twinwire' / file).write_text(text)
