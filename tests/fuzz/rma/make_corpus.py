#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the seed corpus of fuzz-rma-wire (tests/fuzz/rma/fuzz_rma_wire.cpp):
# well-formed frame sequences of every type, refusals, exact bounds, and a
# few malformed starts.  Run it again after changing the frames:
#   tests/fuzz/rma/make_corpus.py tests/fuzz/rma/corpus
import os
import struct
import sys

HELLO, DATA, END, READ_REQ, READ_DATA, READ_DONE, WRITE_DATA, WRITE_DONE = range(1, 9)
LAST = 1
# Control byte 0 (see the target): hello, expose, post, peer reads, revoke, repeat, fail.
F_HELLO, F_EXPOSE, F_POST, F_READS, F_REVOKE, F_REPEAT, F_FAIL = (1 << i for i in range(7))
# Control byte 2: bits 0-3 repeat 2^n times, bits 4-6 the output limit 4 KiB << n (7: none).
LIMIT_4K, LIMIT_64K, NO_LIMIT = 0x00, 0x40, 0x70
KEY_RW, KEY_RO, KEY_WO = b"KEY#RW##", b"KEY#RO##", b"KEY#WO##"


def frame(kind, payload=b"", tag=0, flags=0, length=None):
    n = len(payload) if length is None else length
    return struct.pack("<IBBHQ", n, kind, flags, 0, tag) + payload


def hello(version=1, tag=0):
    return frame(HELLO, struct.pack("<II", 0x414D5254, version), tag=tag)


def read_req(tag, id_, key, offset, n):
    return frame(READ_REQ, struct.pack("<Q", id_) + key + struct.pack("<QQ", offset, n), tag=tag)


def write_data(tag, id_, key, offset, data, last=True):
    return frame(WRITE_DATA, struct.pack("<Q", id_) + key + struct.pack("<Q", offset) + data, tag=tag,
                 flags=LAST if last else 0)


def seeds():
    e = F_HELLO | F_EXPOSE
    yield "stream-and-end", bytes([F_HELLO, 0, 0]) + frame(DATA, b"GET key\r\n") + frame(END)
    yield "read-whole", bytes([e, 0, 0]) + read_req(1, 1, KEY_RW, 0, 4096)
    yield "read-pieces", bytes([e | F_READS, 7, 0]) + read_req(1, 1, KEY_RW, 100, 200) + read_req(2, 2, KEY_RO, 0, 512)
    yield "read-exact-bound", bytes([e, 0, 0]) + read_req(1, 1, KEY_RW, 4000, 96)
    yield "read-one-past", bytes([e, 0, 0]) + read_req(1, 1, KEY_RW, 4000, 97)
    yield "read-near-2-64", bytes([e, 0, 0]) + read_req(1, 1, KEY_RW, 2**64 - 8, 16)
    yield "read-forged-key", bytes([e, 0, 0]) + read_req(1, 1, KEY_RO, 0, 16) + read_req(2, 3, KEY_WO, 0, 16)
    yield "read-empty", bytes([e, 0, 0]) + read_req(1, 1, KEY_RW, 0, 0)
    yield "write-whole", bytes([e, 0, 0]) + write_data(1, 1, KEY_RW, 0, b"w" * 4096)
    yield "write-chunks", bytes([e, 3, 0]) + write_data(1, 3, KEY_WO, 0, b"a" * 100, False) + \
        write_data(1, 3, KEY_WO, 100, b"b" * 156)
    yield "write-read-only", bytes([e, 0, 0]) + write_data(1, 2, KEY_RO, 0, b"nope")
    yield "write-refused-chunks", bytes([e, 0, 0]) + write_data(5, 1, KEY_RW, 4090, b"x" * 10, False) + \
        write_data(5, 1, KEY_RW, 0, b"y" * 10)
    yield "write-empty-flood", bytes([e | F_REPEAT, 0, LIMIT_4K | 6]) + write_data(9, 1, KEY_RW, 0, b"")
    yield "write-empty-flood-no-limit", bytes([e | F_REPEAT, 0, NO_LIMIT | 12]) + write_data(9, 1, KEY_RW, 0, b"")
    yield "read-refused-flood", bytes([e | F_REPEAT, 0, LIMIT_4K | 8]) + read_req(9, 2, KEY_RO, 0, 513)
    yield "read-refused-flood-reading", bytes([e | F_REPEAT | F_READS, 200, LIMIT_4K | 10]) + \
        read_req(9, 2, KEY_RO, 0, 513) + frame(DATA, b"x")
    yield "read-flood-64k", bytes([e | F_REPEAT, 0, LIMIT_64K | 9]) + read_req(9, 1, KEY_RW, 0, 4096)
    yield "revoke-during-read", bytes([e | F_REVOKE, 0, 0]) + read_req(1, 1, KEY_RW, 0, 4096) + \
        write_data(2, 1, KEY_RW, 0, b"late")
    p = F_HELLO | F_POST
    yield "answers", bytes([p, 0, 0]) + frame(READ_DATA, struct.pack("<Q", 0) + b"r" * 1000, tag=1) + \
        frame(READ_DONE, struct.pack("<I", 0), tag=1) + frame(WRITE_DONE, struct.pack("<I", 0), tag=2)
    yield "answers-refused", bytes([p | F_FAIL, 0, 0]) + \
        frame(READ_DONE, struct.pack("<I", 2**32 - 71) + b"refused", tag=1)
    yield "read-data-past-end", bytes([p, 0, 0]) + frame(READ_DATA, struct.pack("<Q", 990) + b"r" * 11, tag=1)
    yield "short-read-done", bytes([p, 0, 0]) + frame(READ_DATA, struct.pack("<Q", 0) + b"r" * 10, tag=1) + \
        frame(READ_DONE, struct.pack("<I", 0), tag=1)
    yield "data-claims-4g", bytes([F_HELLO | F_REPEAT, 0, 15]) + frame(DATA, length=0xFFFFFFFF) + b"z" * 64
    yield "frame-too-large", bytes([F_HELLO, 0, 0]) + frame(READ_REQ, length=65 * 1024)
    yield "hello-version-2", bytes([0, 0, 0]) + hello(version=2)
    yield "hello-tag-changed", bytes([0, 0, 0]) + hello(tag=1 << 40)
    yield "no-hello", bytes([0, 0, 0]) + b"*1\r\n$4\r\nPING\r\n"
    yield "bytes-after-end", bytes([F_HELLO, 0, 0]) + frame(END) + frame(DATA, b"after the end")
    yield "rma-after-end", bytes([e, 0, 0]) + frame(END) + read_req(1, 1, KEY_RW, 0, 16) + frame(END)
    yield "second-hello", bytes([F_HELLO, 0, 0]) + hello()
    yield "unknown-type", bytes([F_HELLO, 0, 0]) + frame(99, b"?")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
