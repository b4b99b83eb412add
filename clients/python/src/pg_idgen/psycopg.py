"""psycopg 3 adapters for xid12: ``register(conn)`` (sync or async connection).

After registration xid12 and xid12[] values load as :class:`pg_idgen.Xid` (lists for arrays)
in text and binary results, and an ``Xid`` (or a list of them) binds as xid12 (xid12[]) with
``%s``, ``%b`` and in binary ``COPY`` (``copy.set_types(["xid12", ...])``, which also takes
the text or the 12 bytes of an id). Pools: ``ConnectionPool(..., configure=register)``.

``register(conn, xid12_as=str)`` loads xid12 values as their 20-character text (``str``)
instead, for code that wants plain text (pandas ``to_json``, json, templates); binds are the
same in both modes.

The rapkey domain is registered too, so ``copy.set_types(["rapkey", "rapkey[]"])`` works in
text and binary COPY (values are ``str``, as for text; the server checks them), and rapkey[]
results load as lists. A rapkey result needed nothing: the server describes a domain's column
by its base type, text.
"""
from __future__ import annotations

from typing import Any

import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo
from psycopg.types.string import StrBinaryDumper, StrDumper, TextBinaryLoader, TextLoader

from ._catalog import TYPE_QUERY, missing, qualified
from ._xid import CHARS, _STD_TO_HEX, Xid, _b32encode, _from_trusted, _parse_text, coerce

__all__ = ["register", "register_async", "XidTextLoader", "XidBinaryLoader",
           "XidStrTextLoader", "XidStrBinaryLoader"]


class XidTextLoader(Loader):
    format = Format.TEXT

    def load(self, data) -> Xid:
        return _from_trusted(_parse_text(bytes(data).decode("ascii")))


class XidBinaryLoader(Loader):
    format = Format.BINARY

    # The server's xid12_send always gives 12 bytes: a C call makes the Xid of them.
    load = staticmethod(_from_trusted)


class XidStrTextLoader(Loader):
    """xid12 as its text: the server's output is already the canonical lowercase text."""

    format = Format.TEXT

    def load(self, data) -> str:
        return bytes(data).decode("ascii")


class XidStrBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data) -> str:
        return _b32encode(bytes(data))[:CHARS].translate(_STD_TO_HEX).decode("ascii")


def _loaders(xid12_as) -> tuple:
    if xid12_as is Xid:
        return XidTextLoader, XidBinaryLoader
    if xid12_as is str:
        return XidStrTextLoader, XidStrBinaryLoader
    raise ValueError(f"xid12_as must be Xid or str, not {xid12_as!r}")


class _XidTextDumper(Dumper):
    format = Format.TEXT

    def dump(self, obj: Any) -> bytes:
        x = obj if obj.__class__ is Xid else coerce(obj)
        return _b32encode(x)[:CHARS].translate(_STD_TO_HEX)


class _XidBinaryDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        return obj if obj.__class__ is Xid else coerce(obj)


def _install(conn, row, loaders) -> TypeInfo:
    oid, array_oid, schema, visible = row
    # Known as "xid12" (what copy.set_types() and users say) and by its qualified name.
    info = TypeInfo("xid12", oid, array_oid, regtype="xid12" if visible else qualified(schema))
    info.register(conn)  # the type and its array's loaders and dumpers
    adapters = conn.adapters
    for loader in loaders:
        adapters.register_loader(oid, loader)
    # The binary dumper last: %s of an Xid then binds its 12 bytes, as psycopg does for UUID.
    for base in (_XidTextDumper, _XidBinaryDumper):
        dumper = type(base.__name__.lstrip("_"), (base,), {"oid": oid})
        adapters.register_dumper(Xid, dumper)
        adapters.register_dumper(None, dumper)  # by oid: COPY with set_types
    return info


def _install_rapkey(conn, row) -> None:
    oid, array_oid, schema, visible = row
    info = TypeInfo("rapkey", oid, array_oid, regtype="rapkey" if visible else qualified(schema, "rapkey"))
    info.register(conn)
    adapters = conn.adapters
    adapters.register_loader(oid, TextLoader)
    adapters.register_loader(oid, TextBinaryLoader)
    # By oid only (COPY with set_types): a str parameter stays what psycopg makes of it.
    for base in (StrDumper, StrBinaryDumper):
        adapters.register_dumper(None, type("Rapkey" + base.__name__, (base,), {"oid": oid}))


def register(conn, xid12_as=Xid):
    """Registers the xid12 adapters on a psycopg ``Connection`` (returns the TypeInfo) or an
    ``AsyncConnection`` (returns a coroutine: ``await register(aconn)``). Raises
    ``ExtensionMissingError`` when the database has no pg_idgen extension.

    ``xid12_as``: ``Xid`` (the default) or ``str``, what xid12 results load as."""
    loaders = _loaders(xid12_as)
    if isinstance(conn, psycopg.AsyncConnection):
        return register_async(conn, xid12_as)
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(TYPE_QUERY, ("xid12",))
        row = cur.fetchone()
        rapkey_row = cur.execute(TYPE_QUERY, ("rapkey",)).fetchone() if row else None
    if row is None:
        raise missing(conn.info.dbname)
    if rapkey_row is not None:
        _install_rapkey(conn, rapkey_row)
    return _install(conn, row, loaders)


async def register_async(conn: psycopg.AsyncConnection, xid12_as=Xid) -> TypeInfo:
    loaders = _loaders(xid12_as)
    async with conn.transaction():
        async with conn.cursor() as cur:
            await cur.execute(TYPE_QUERY, ("xid12",))
            row = await cur.fetchone()
            rapkey_row = None
            if row is not None:
                await cur.execute(TYPE_QUERY, ("rapkey",))
                rapkey_row = await cur.fetchone()
    if row is None:
        raise missing(conn.info.dbname)
    if rapkey_row is not None:
        _install_rapkey(conn, rapkey_row)
    return _install(conn, row, loaders)
