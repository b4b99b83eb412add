"""asyncpg codec for xid12: ``await register(conn)``.

xid12 (and xid12[]) values then decode to :class:`pg_idgen.Xid` in binary format, and an
``Xid``, its text or its 12 bytes encode as xid12, so parameters, ``= ANY($1)`` with a list
and ``copy_records_to_table`` work. Pools: ``asyncpg.create_pool(..., init=register)``.
``register(conn, xid12_as=str)`` decodes them to their 20-character text instead.
"""
from __future__ import annotations

from ._catalog import missing
from ._xid import CHARS, _STD_TO_HEX, Xid, _b32encode, _from_trusted, coerce

__all__ = ["register"]

# Every relation and operator named with its schema: nothing resolves through search_path.
_QUERY = """
SELECT n.nspname
FROM pg_catalog.pg_extension e
JOIN pg_catalog.pg_type t ON t.typnamespace OPERATOR(pg_catalog.=) e.extnamespace
 AND t.typname OPERATOR(pg_catalog.=) 'xid12'::pg_catalog.name
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace
WHERE e.extname OPERATOR(pg_catalog.=) 'pg_idgen'::pg_catalog.name
"""


def _encode(value) -> bytes:
    return value if value.__class__ is Xid else coerce(value)


# The server's xid12_send always gives 12 bytes: a C call makes the Xid of them.
_decode = _from_trusted


def _decode_str(data: bytes) -> str:
    return _b32encode(data)[:CHARS].translate(_STD_TO_HEX).decode("ascii")


async def register(conn, xid12_as=Xid) -> None:
    """Registers the binary xid12 codec on an asyncpg connection. Raises
    ``ExtensionMissingError`` when the database has no pg_idgen extension.

    ``xid12_as``: ``Xid`` (the default) or ``str``, what xid12 values decode to."""
    if xid12_as is Xid:
        decoder = _decode
    elif xid12_as is str:
        decoder = _decode_str
    else:
        raise ValueError(f"xid12_as must be Xid or str, not {xid12_as!r}")
    schema = await conn.fetchval(_QUERY)
    if schema is None:
        raise missing(await conn.fetchval("SELECT pg_catalog.current_database()"))
    await conn.set_type_codec(
        "xid12", schema=schema, encoder=_encode, decoder=decoder, format="binary"
    )
