"""The writer registry's protocol, in one place, for the Registry (``_registry``) and the edge
store (``_edge``): the statements (every name qualified, every argument cast to the extension
function's own type), how the extension's schema is found, how a server error becomes the
RegistryError of its condition (tests/vectors/registry_errors.json), and the window's units
(a grant's id-time as unix microseconds, the edge store's release end). The words of the
errors are ``_words``'.
"""
from __future__ import annotations

import datetime as _dt
from typing import Optional

from . import _words
from ._grant import GrantLost, RegistryError, RegistryFenced, REGISTRY_ERRORS

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_ONE_US = _dt.timedelta(microseconds=1)
#: µs per unit of each kind's id-time (xid12 seconds, Snowflake milliseconds).
UNIT_US = {"xid12": 1_000_000, "snowflake": 1000}


def extension_schema(conn) -> str:
    """The schema of pg_idgen's writer registry on a psycopg 3 connection, quoted for SQL text:
    the native extension's, or the portable edition's (its pg_tle extension, or the plain
    script's schema as ``_catalog.EDITION_QUERY`` finds it: made by the database owner or a
    superuser, never a look-alike another role planted); RegistryError when there is neither."""
    import psycopg

    from ._catalog import EDITION_QUERY

    row = conn.execute(EDITION_QUERY, prepare=False).fetchone()
    if row is None:
        raise RegistryError(_words.not_installed())
    return psycopg.sql.Identifier(row[3]).as_string(conn)


def server_error(e, acquire: bool = False) -> RegistryError:
    """A psycopg error the server raised, as the RegistryError of its SQLSTATE (the message
    with its DETAIL): the class of its condition in tests/vectors/registry_errors.json, a plain
    RegistryError for any other code. ``acquire``: raised by ``idgen_acquire``, which never
    loses a grant: an extension before 0.7.0 raised its fence (and a changed epoch) as 55000,
    which is then a RegistryFenced (no ``until``: its moment was in the server's DateStyle) or
    a plain RegistryError, never a GrantLost, whose handling acquires again."""
    state = e.sqlstate
    diag = e.diag
    primary = diag.message_primary or str(e)
    msg = _words.server_refusal(primary, diag.message_detail)
    if state == "42703" and "lo_t" in primary:
        # idgen_grant's lo_t, hi_t and server_t are new in 0.7.0: an older extension lacks them.
        return RegistryError(_words.needs_0_7_0(primary), state)
    cls = REGISTRY_ERRORS.get(state, RegistryError)
    if acquire and cls is GrantLost:
        cls = RegistryFenced if primary.startswith("the writer registry grants") else RegistryError
    return cls(msg, state)


def id_time_us(kind: str, epoch_ms: Optional[int], t: int) -> int:
    """An id-time of ``kind`` (the grant row's ``lo_t``/``hi_t``: Snowflake ms since
    ``epoch_ms``, xid12 unix seconds) as unix microseconds."""
    return t * UNIT_US[kind] if kind == "xid12" else (epoch_ms + t) * UNIT_US[kind]


def datetime_us(utc: str) -> int:
    """The grant row's ``server_time`` as ``statements`` reads it (UTC, ``YYYY-MM-DD
    HH:MM:SS.ffffff``, whatever the session's DateStyle and TimeZone) as unix microseconds."""
    moment = _dt.datetime.strptime(utc, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=_dt.timezone.utc)
    return (moment - _EPOCH) // _ONE_US


def statements(schema: str) -> dict:
    """The registry's statements on the extension's ``schema`` (quoted). Every parameter is
    cast to the exact type of the function's argument, so that the call matches the
    extension's function exactly and no overload another role added to that schema (public,
    where the extension usually lives) is a better match: psycopg sends a small int as int2
    or int4, and ``idgen_renew(integer, bigint, interval)`` would beat ``(bigint, bigint,
    interval)``. The grant's window is read as the server gives it in id-time (``lo_t``,
    ``hi_t``: the extension 0.7.0's columns), and the server's clock as its UTC text to the
    microsecond (``to_char``: the same in any DateStyle and TimeZone, in text or binary results,
    with any cursor): no arithmetic in SQL, every name qualified."""
    server_time = ("pg_catalog.to_char(pg_catalog.timezone('UTC'::pg_catalog.text, server_time), "
                   "'YYYY-MM-DD HH24:MI:SS.US'::pg_catalog.text)")
    row = f"grant_id, token, kind, slot, epoch_ms, lo_t, hi_t, {server_time}"
    text, int8 = "%s::pg_catalog.text", "%s::pg_catalog.int8"
    interval, tstz = "%s::pg_catalog.interval", "%s::pg_catalog.timestamptz"
    return {
        "acquire": f"SELECT {row} FROM {schema}.idgen_acquire({text}, {text}, {interval}, {text})",
        "acquire_default": f"SELECT {row} FROM {schema}.idgen_acquire({text}, {text}, pool => {text})",
        "renew": f"SELECT {row} FROM {schema}.idgen_renew({int8}, {int8}, {interval})",
        "release": f"SELECT grant_id FROM {schema}.idgen_release({int8}, {int8}, {tstz})",
        "report": f"SELECT {schema}.idgen_report({int8}, {int8}, {text}, {int8}, {tstz}, {int8})",
    }


def lease_param(lease):
    if lease is None or isinstance(lease, (str, _dt.timedelta)):
        return lease
    if isinstance(lease, (int, float)) and not isinstance(lease, bool):
        return _dt.timedelta(seconds=lease)
    raise TypeError(f"a lease is an interval text, a timedelta or seconds, not {type(lease).__name__}")
