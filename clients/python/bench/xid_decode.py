"""What an Xid whose base is its text (0.7.0) costs against the bytes-based Xid of 0.6.0, in
the same run: decoding a result's xid12 values (binary: 12 bytes, as the psycopg and asyncpg
loaders get them; text: the server's 20 characters, validated), making ids, and reading the
12 bytes back. The "before" paths are rebuilt here as they were (a bytes subclass made by
bytes.__new__); the "now" paths are the package's own loaders.

    python clients/python/bench/xid_decode.py [N]      # N ids per round, default 200,000
"""
import functools
import os
import sys
import timeit

from pg_idgen import _xid
from pg_idgen.psycopg import XidBinaryLoader, XidTextLoader


class BytesXid(bytes):
    """The Xid of 0.6.0: its 12 bytes, its text made when asked."""

    __slots__ = ()

    def __str__(self):
        return _xid._b32encode(self)[:20].translate(_xid._STD_TO_HEX).decode("ascii")


_before_binary = functools.partial(bytes.__new__, BytesXid)  # 0.6.0's XidBinaryLoader.load


def _parse_text(text):  # 0.6.0's, which its text loader called
    if len(text) == 20 and text.isascii() and text.isalnum():
        try:
            n = int(text, 32)
        except ValueError:
            pass
        else:
            if not n & 0xF:
                return (n >> 4).to_bytes(12, "big")
    raise ValueError(text)


def _before_text(data):  # 0.6.0's XidTextLoader.load
    return _before_binary(_parse_text(bytes(data).decode("ascii")))


def best(fn, items, rounds=5):
    """The fastest of `rounds` passes over items, in ns per item."""
    def run():
        for x in items:
            fn(x)
    return min(timeit.repeat(run, number=1, repeat=rounds)) / len(items) * 1e9


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    raw = [os.urandom(12) for _ in range(n)]
    texts = [_xid._text_of(b).encode("ascii") for b in raw]
    now_binary, now_text = XidBinaryLoader.load, XidTextLoader(0).load
    assert [now_binary(b).bytes for b in raw[:1000]] == raw[:1000]
    assert [bytes(_before_text(t)) for t in texts[:1000]] == raw[:1000]
    ints = [int.from_bytes(b, "big") for b in raw]
    rows = [
        ("decode binary (12 bytes)", best(_before_binary, raw), best(now_binary, raw)),
        ("decode text (20 chars)", best(_before_text, texts), best(now_text, texts)),
        ("make from a 96-bit int", best(lambda i: _before_binary(i.to_bytes(12, "big")), ints),
         best(_xid._from_int, ints)),
    ]
    before = [_before_binary(b) for b in raw]
    now = [now_binary(b) for b in raw]
    rows.append(("read the 12 bytes", best(bytes, before), best(lambda x: x.bytes, now)))
    rows.append(("str() of an id", best(str, before), best(str, now)))
    print(f"{n:,} ids per round, best of 5, ns per id (Python {sys.version.split()[0]})")
    print(f"{'':28} {'bytes Xid':>10} {'str Xid':>10} {'ratio':>7}")
    for name, a, b in rows:
        print(f"{name:28} {a:10.0f} {b:10.0f} {b / a:6.2f}x")


if __name__ == "__main__":
    main()
