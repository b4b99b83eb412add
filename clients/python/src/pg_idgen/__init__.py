"""pg_idgen's values in Python: xid12 (:class:`Xid`), Snowflake ids and rapkey keys, with
generators that merge with the server's, and adapters for psycopg 3 (``pg_idgen.psycopg``),
asyncpg (``pg_idgen.asyncpg``), SQLAlchemy (``pg_idgen.sqlalchemy``) and Django
(``pg_idgen.django``); each adapter imports its driver only when it is imported itself.
:class:`Registry` gives generators whose worker id / machine id the database hands out
(psycopg 3, imported when a Registry is made). :class:`EdgeStore` keeps an edge device's grant
in its own SQLite file, for ids made offline for days. Pydantic v2 (FastAPI, SQLModel):
``id: Xid`` works in a model, and ``pg_idgen.pydantic`` has the rapkey and Snowflake types.
``json.dumps(data, default=pg_idgen.json_default)`` writes an Xid as its text.
"""
from . import rapkey
from ._snowflake import (
    DEFAULT_EPOCH_MS,
    Snowflake,
    SnowflakeClockError,
    SnowflakeParts,
    snowflake_parts,
    snowflake_sequence,
    snowflake_time,
    snowflake_unix_ms,
    snowflake_worker,
)
from ._xid import Xid, XidGenerator, _default_generator, machine_from_hostname
from ._grant import (
    ClockAheadOfWindow,
    ClockBeforeWindow,
    ClockOutsideWindow,
    CapReached,
    DeviceConflict,
    EpochChanged,
    GrantLost,
    LeaseTooLong,
    PoolNotAllowed,
    RegistryError,
    RegistryFenced,
    RegistryUnavailable,
    ReportOutsideWindow,
    SlotsExhausted,
    WrongToken,
)
from ._registry import Grant, GrantSnowflake, GrantXid, Registry
from ._edge import (
    EdgeClockBeforeWindow,
    EdgeCloned,
    EdgeError,
    EdgeGrant,
    EdgeStore,
    EdgeWindowEnded,
)

__version__ = "0.7.0"


def set_machine_id(machine) -> None:
    """Sets the machine id (an int 0..16777215 or 3 bytes) of later ``Xid.new()`` ids, like
    the server's ``pg_idgen.machine_id``; by default it is md5(host name)'s first 3 bytes."""
    _default_generator().set_machine(machine)


def json_default(value):
    """For ``json.dumps(data, default=pg_idgen.json_default)``: an :class:`Xid` as its
    20-character text (json writes no bytes, and an Xid is bytes); anything else raises json's
    own TypeError. Snowflake ids are ints and rapkeys are str: json writes them as they are."""
    if isinstance(value, Xid):
        return str(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


__all__ = [
    "Xid",
    "json_default",
    "XidGenerator",
    "machine_from_hostname",
    "set_machine_id",
    "Snowflake",
    "SnowflakeClockError",
    "SnowflakeParts",
    "DEFAULT_EPOCH_MS",
    "snowflake_parts",
    "snowflake_sequence",
    "snowflake_time",
    "snowflake_unix_ms",
    "snowflake_worker",
    "rapkey",
    "Registry",
    "Grant",
    "GrantSnowflake",
    "GrantXid",
    "RegistryError",
    "RegistryUnavailable",
    "RegistryFenced",
    "PoolNotAllowed",
    "CapReached",
    "LeaseTooLong",
    "EpochChanged",
    "ReportOutsideWindow",
    "GrantLost",
    "SlotsExhausted",
    "WrongToken",
    "DeviceConflict",
    "ClockOutsideWindow",
    "ClockBeforeWindow",
    "ClockAheadOfWindow",
    "EdgeStore",
    "EdgeGrant",
    "EdgeError",
    "EdgeClockBeforeWindow",
    "EdgeWindowEnded",
    "EdgeCloned",
]
