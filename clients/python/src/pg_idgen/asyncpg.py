"""asyncpg codec for xid12: ``await register(conn)``.

xid12 (and xid12[]) values then decode to :class:`pg_idgen.Xid` in binary format, and an
``Xid``, its text or its 12 bytes encode as xid12, so parameters, ``= ANY($1)`` with a list
and ``copy_records_to_table`` work. Pools: ``asyncpg.create_pool(..., init=register)``.
``register(conn, xid12_as=str)`` decodes them to their 20-character text instead.

``register`` returns which pg_idgen the database has: ``"native"`` or ``"portable"`` (the SQL
edition, where ``xid12`` is a domain over text; ``await edition(conn)`` asks without
registering). On the portable edition there is nothing to register: xid12 values are text and
decode to ``str`` whatever ``xid12_as`` says (``Xid.from_str`` parses them), and asyncpg types
an xid12 parameter as text, so bind ``str(x)`` (asyncpg's text codec takes ``str`` only, and
it allows no codec on a domain).
"""
from __future__ import annotations

from ._catalog import EDITION_QUERY, NATIVE, missing_edition
from ._xid import CHARS, _STD_TO_HEX, Xid, _b32encode, _from_trusted, coerce

__all__ = ["register", "edition"]

def _encode(value) -> bytes:
    return (value if value.__class__ is Xid else coerce(value)).bytes


# The server's xid12_send always gives 12 bytes: the Xid is their text.
_decode = _from_trusted


def _decode_str(data: bytes) -> str:
    return _b32encode(data)[:CHARS].translate(_STD_TO_HEX).decode("ascii")


async def register(conn, xid12_as=Xid) -> str:
    """Registers the binary xid12 codec on an asyncpg connection and returns the edition,
    ``"native"`` or ``"portable"`` (nothing is registered there: xid12 is text). Raises
    ``ExtensionMissingError`` when the database has neither edition of pg_idgen.

    ``xid12_as``: ``Xid`` (the default) or ``str``, what native xid12 values decode to."""
    if xid12_as is Xid:
        decoder = _decode
    elif xid12_as is str:
        decoder = _decode_str
    else:
        raise ValueError(f"xid12_as must be Xid or str, not {xid12_as!r}")
    row = await conn.fetchrow(EDITION_QUERY)
    if row is None:
        raise missing_edition(await conn.fetchval("SELECT pg_catalog.current_database()"))
    if row[0] == NATIVE:
        await conn.set_type_codec(
            "xid12", schema=row[3], encoder=_encode, decoder=decoder, format="binary"
        )
    return row[0]


async def edition(conn):
    """``"native"``, ``"portable"`` or ``None`` (neither): which pg_idgen the database of the
    asyncpg connection has, read from the catalog."""
    return await conn.fetchval(EDITION_QUERY)
