"""SQLAlchemy column types: ``Xid12`` for xid12 (``Column("id", Xid12, primary_key=True,
server_default=text("gen_xid12()"))``) and ``Rapkey`` for the rapkey domain.

Values load as :class:`pg_idgen.Xid`. Bound parameters are cast to xid12 in the SQL, so
comparisons with an ``Xid`` or its text work with every driver (a plain ``String`` would bind
varchar: ``operator does not exist: xid12 = character varying``). Importing this module also
makes reflection recognise xid12 columns.

``Rapkey`` makes ``rapkey`` columns (DDL), values are ``str``: the server checks them (its
domain's CHECK); binds are plain text, so ``key == "..."`` and ``key >= lo`` (the "C"
collation of the domain) work, and a comparison with an invalid key matches nothing.

``register(engine)`` (right after ``create_engine``) registers the driver's xid12 adapters on
each new connection (psycopg 3 and asyncpg), so xid12 values of plain SQL (``text()``,
``pandas.read_sql``) load as ``Xid`` too; ``register(engine, xid12_as=str)`` makes every xid12
result of the engine, ``Xid12`` columns included, the 20-character text instead (pandas
``to_json``, json).

On pg_idgen's portable edition (``xid12`` a domain over text) the same types work: the server
sends xid12 columns as text and ``Xid12``'s result processor parses it into ``Xid``; plain SQL
gives ``str`` there (``Xid.from_str``). Name the domain's schema, ``Xid12(schema="idgen")``,
when it is not on the ``search_path``.
"""
from __future__ import annotations

from typing import Optional

from sqlalchemy import cast, event
from sqlalchemy.dialects.postgresql.base import PGDialect
from sqlalchemy.types import UserDefinedType

from ._catalog import qualified
from ._xid import Xid, coerce

__all__ = ["Xid12", "Rapkey", "register"]

# What register(engine, xid12_as=...) sets on the engine's dialect.
_AS_ATTR = "_pg_idgen_xid12_as"


class Xid12(UserDefinedType):
    """The xid12 type; ``schema`` names the extension's schema when it is not on the
    search_path."""

    cache_ok = True

    def __init__(self, schema: Optional[str] = None):
        self.schema = schema

    def get_col_spec(self, **kw) -> str:
        return qualified(self.schema) if self.schema else "xid12"

    @property
    def python_type(self):
        return Xid

    def bind_processor(self, dialect):
        def process(value):
            if value is None:
                return None
            return str(value if value.__class__ is Xid else coerce(value))

        return process

    def bind_expression(self, bindvalue):
        return cast(bindvalue, self)

    def result_processor(self, dialect, coltype):
        if getattr(dialect, _AS_ATTR, Xid) is str:
            def as_text(value):
                if value is None or value.__class__ is str:
                    return value  # the server's text, already canonical
                if isinstance(value, (bytes, bytearray, memoryview)):
                    return str(Xid.from_bytes(value))
                return str(coerce(value))

            return as_text

        def process(value):
            if value is None or value.__class__ is Xid:
                return value
            if isinstance(value, (bytes, bytearray, memoryview)):
                return Xid.from_bytes(value)
            return Xid.from_str(value)

        return process

    def literal_processor(self, dialect):
        def process(value):
            return f"'{coerce(value)}'::{self.get_col_spec()}"

        return process


class Rapkey(UserDefinedType):
    """The rapkey domain (text, "C" collation, checked by the server); ``schema`` names the
    extension's schema when it is not on the search_path."""

    cache_ok = True

    def __init__(self, schema: Optional[str] = None):
        self.schema = schema

    def get_col_spec(self, **kw) -> str:
        return qualified(self.schema, "rapkey") if self.schema else "rapkey"

    @property
    def python_type(self):
        return str

    def literal_processor(self, dialect):
        def process(value):
            return "'" + str(value).replace("'", "''") + "'::" + self.get_col_spec()

        return process


def register(engine, xid12_as=Xid):
    """Makes xid12 results of ``engine`` (an ``Engine`` or ``AsyncEngine``) load as ``Xid`` (the
    default) or as their text (``xid12_as=str``), in ``Xid12`` columns and in plain SQL: with
    psycopg 3 and asyncpg it registers that driver's adapters on each new connection (psycopg2
    and pg8000 give the text of plain SQL anyway). Call it before the engine's first
    connection: connections already in its pool, and result types it has already cached, keep
    what they had."""
    if xid12_as is not Xid and xid12_as is not str:
        raise ValueError(f"xid12_as must be Xid or str, not {xid12_as!r}")
    sync_engine = getattr(engine, "sync_engine", engine)
    dialect = sync_engine.dialect
    setattr(dialect, _AS_ATTR, xid12_as)
    driver, is_async = dialect.driver, getattr(dialect, "is_async", False)

    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_conn, _record):
        if driver == "psycopg" and not is_async:
            from . import psycopg as adapter

            adapter.register(dbapi_conn, xid12_as)
        elif driver == "psycopg":  # psycopg_async: the adapted connection runs the coroutine
            from . import psycopg as adapter

            dbapi_conn.run_async(lambda conn: adapter.register_async(conn, xid12_as))
        elif driver == "asyncpg":
            from . import asyncpg as adapter

            dbapi_conn.run_async(lambda conn: adapter.register(conn, xid12_as))


# Reflection: the PostgreSQL dialects (psycopg, psycopg2, asyncpg, pg8000) share this map.
PGDialect.ischema_names["xid12"] = Xid12
