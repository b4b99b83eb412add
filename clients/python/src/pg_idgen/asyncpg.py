"""asyncpg codec for xid12: ``await register(conn)``.

xid12 (and xid12[]) values then decode to :class:`pg_idgen.Xid` in binary format, and an
``Xid``, its text or its 12 bytes encode as xid12, so parameters, ``= ANY($1)`` with a list
and ``copy_records_to_table`` work. Pools: ``asyncpg.create_pool(..., init=register)``.
"""
from __future__ import annotations

from ._catalog import missing
from ._xid import Xid, _from_trusted, coerce

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


async def register(conn) -> None:
    """Registers the binary xid12 codec on an asyncpg connection. Raises
    ``ExtensionMissingError`` when the database has no pg_idgen extension."""
    schema = await conn.fetchval(_QUERY)
    if schema is None:
        raise missing(await conn.fetchval("SELECT pg_catalog.current_database()"))
    await conn.set_type_codec(
        "xid12", schema=schema, encoder=_encode, decoder=_decode, format="binary"
    )
