"""SQLAlchemy column types: ``Xid12`` for xid12 (``Column("id", Xid12, primary_key=True,
server_default=text("gen_xid12()"))``) and ``Rapkey`` for the rapkey domain.

Values load as :class:`pg_idgen.Xid`. Bound parameters are cast to xid12 in the SQL, so
comparisons with an ``Xid`` or its text work with every driver (a plain ``String`` would bind
varchar: ``operator does not exist: xid12 = character varying``). Importing this module also
makes reflection recognise xid12 columns.

``Rapkey`` makes ``rapkey`` columns (DDL), values are ``str``: the server checks them (its
domain's CHECK); binds are plain text, so ``key == "..."`` and ``key >= lo`` (the "C"
collation of the domain) work, and a comparison with an invalid key matches nothing.
"""
from __future__ import annotations

from typing import Optional

from sqlalchemy import cast
from sqlalchemy.dialects.postgresql.base import PGDialect
from sqlalchemy.types import UserDefinedType

from ._catalog import qualified
from ._xid import Xid, coerce

__all__ = ["Xid12", "Rapkey"]


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


# Reflection: the PostgreSQL dialects (psycopg, psycopg2, asyncpg, pg8000) share this map.
PGDialect.ischema_names["xid12"] = Xid12
