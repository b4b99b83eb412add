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

The portable SQL edition (``xid12`` a domain over text) is found too: ``register(conn)``
returns an :class:`XidTypeInfo` whose ``edition`` is ``"native"`` or ``"portable"``
(``edition(conn)`` asks without registering). There xid12 columns are text on the wire (the
server describes a domain's column by its base type), so they load as ``str`` (parse with
``Xid.from_str``); an ``Xid`` parameter binds as text, in text and binary formats, and the
server converts it to the column's domain (``WHERE id = %s``, ``id > %s``, INSERT).
"""
from __future__ import annotations

from typing import Any

import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo
from psycopg.types.string import StrBinaryDumper, StrDumper, TextBinaryLoader, TextLoader

from ._catalog import EDITION_QUERY, NATIVE, PORTABLE, RAPKEY_QUERY, missing_edition, qualified
from ._xid import CHARS, _STD_TO_HEX, Xid, _b32encode, _canonical_text, _from_trusted, _str_new, coerce

__all__ = ["register", "register_async", "edition", "XidTypeInfo", "XidTextLoader", "XidBinaryLoader",
           "XidStrTextLoader", "XidStrBinaryLoader"]


class XidTextLoader(Loader):
    format = Format.TEXT

    def load(self, data) -> Xid:
        return _str_new(Xid, _canonical_text(bytes(data).decode("ascii")))


class XidBinaryLoader(Loader):
    format = Format.BINARY

    # The server's xid12_send always gives 12 bytes: the Xid is their text.
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
        return x.encode("ascii")


class _XidBinaryDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        return (obj if obj.__class__ is Xid else coerce(obj)).bytes


def _install(conn, row, loaders) -> "XidTypeInfo":
    edition, oid, array_oid, schema, visible = row[:5]
    if edition == PORTABLE:
        return _install_portable(conn, row, loaders)
    # Known as "xid12" (what copy.set_types() and users say) and by its qualified name.
    info = XidTypeInfo("xid12", oid, array_oid, regtype="xid12" if visible else qualified(schema))
    info.edition = NATIVE
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


class _XidTextBytesDumper(_XidTextDumper):
    """The portable edition's binary format: a domain over text sends and receives text."""

    format = Format.BINARY


class _PortableBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data) -> Xid:
        return _str_new(Xid, _canonical_text(bytes(data).decode("ascii")))


class _PortableStrBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data) -> str:
        return bytes(data).decode("ascii")


def _install_portable(conn, row, loaders) -> "XidTypeInfo":
    _, oid, array_oid, schema, visible = row[:5]
    info = XidTypeInfo("xid12", oid, array_oid, regtype="xid12" if visible else qualified(schema))
    info.edition = PORTABLE
    info.register(conn)  # xid12[] results (their oid is the domain's array type)
    adapters = conn.adapters
    # The server describes an xid12 column by its base type, text: scalar results stay str.
    # The domain's oid only reaches elements of xid12[] results, and COPY with set_types.
    text_loader, _ = loaders
    binary_loader = _PortableBinaryLoader if text_loader is XidTextLoader else _PortableStrBinaryLoader
    adapters.register_loader(oid, text_loader)
    adapters.register_loader(oid, binary_loader)
    # An Xid parameter binds as text (no native xid12 oid here; binary text is text too): the
    # server converts it to the column's domain. The text dumper last: %s sends text.
    text_oid = adapters.types["text"].oid
    for base in (_XidTextBytesDumper, _XidTextDumper):
        adapters.register_dumper(Xid, type("PortableXid" + base.__name__.lstrip("_"), (base,),
                                           {"oid": text_oid}))
        adapters.register_dumper(None, type("PortableXid12" + base.__name__.lstrip("_"), (base,),
                                            {"oid": oid}))  # by oid: COPY with set_types
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


class XidTypeInfo(TypeInfo):
    """What :func:`register` returns: psycopg's ``TypeInfo`` of xid12, and ``edition``, which
    pg_idgen the database has: ``"native"`` (the extension's base type) or ``"portable"`` (the
    SQL edition's domain over text)."""

    edition: str = NATIVE


def register(conn, xid12_as=Xid):
    """Registers the xid12 adapters on a psycopg ``Connection`` (returns an
    :class:`XidTypeInfo`, whose ``edition`` is ``"native"`` or ``"portable"``) or an
    ``AsyncConnection`` (returns a coroutine: ``await register(aconn)``). Raises
    ``ExtensionMissingError`` when the database has neither edition of pg_idgen.

    ``xid12_as``: ``Xid`` (the default) or ``str``, what xid12 results load as. On the
    portable edition xid12 columns are text on the wire and load as ``str`` whatever
    ``xid12_as`` says (``Xid.from_str`` parses them); xid12[] elements follow ``xid12_as``."""
    loaders = _loaders(xid12_as)
    if isinstance(conn, psycopg.AsyncConnection):
        return register_async(conn, xid12_as)
    with conn.transaction(), conn.cursor() as cur:
        row = cur.execute(EDITION_QUERY).fetchone()
        rapkey_row = cur.execute(RAPKEY_QUERY, (row[5],)).fetchone() if row else None
    if row is None:
        raise missing_edition(conn.info.dbname)
    if rapkey_row is not None:
        _install_rapkey(conn, rapkey_row)
    return _install(conn, row, loaders)


async def register_async(conn: psycopg.AsyncConnection, xid12_as=Xid) -> XidTypeInfo:
    loaders = _loaders(xid12_as)
    async with conn.transaction():
        async with conn.cursor() as cur:
            await cur.execute(EDITION_QUERY)
            row = await cur.fetchone()
            rapkey_row = None
            if row is not None:
                await cur.execute(RAPKEY_QUERY, (row[5],))
                rapkey_row = await cur.fetchone()
    if row is None:
        raise missing_edition(conn.info.dbname)
    if rapkey_row is not None:
        _install_rapkey(conn, rapkey_row)
    return _install(conn, row, loaders)


def edition(conn):
    """Which pg_idgen the database of ``conn`` has: ``"native"``, ``"portable"`` or ``None``
    (neither), read from the catalog; for an ``AsyncConnection`` a coroutine. Needs no
    registration (``register(conn).edition`` says the same)."""
    if isinstance(conn, psycopg.AsyncConnection):
        return _edition_async(conn)
    with conn.transaction(), conn.cursor() as cur:
        row = cur.execute(EDITION_QUERY).fetchone()
    return row[0] if row else None


async def _edition_async(conn: psycopg.AsyncConnection):
    async with conn.transaction():
        async with conn.cursor() as cur:
            await cur.execute(EDITION_QUERY)
            row = await cur.fetchone()
    return row[0] if row else None
