"""Edge devices: a grant of the writer registry kept in the device's own SQLite file, so that a
phone or an IoT box makes ids offline for days and merges its rows into PostgreSQL later.

``EdgeStore(sqlite_conn, kind)`` keeps one grant per kind in the table ``pg_idgen_edge`` of
that file, with the generator's high-water mark (the last id made). ``enrol`` takes a grant of
the registry's ``'edge'`` pool (weeks long); ``next_id`` makes the next id inside its window and
writes the new mark without committing, so the caller's transaction that stores the row keyed
by the id commits both, and a reopened file never repeats a committed id; ``sync`` reports to
the registry (``idgen_report``, which finds a copy of the file used by a second device) and
renews or releases the grant. The clock decides only whether an id can be made: outside the
window, ``next_id`` refuses.
"""
from __future__ import annotations

import datetime as _dt
import os
import secrets
import socket
import sqlite3
import time as _time
from typing import Callable, NamedTuple, Optional, TypeVar, Union

from . import _words
from ._grant import DeviceConflict, RegistryError
from ._registry import (
    _extension_schema,
    _id_time_us,
    _lease_param,
    _server_error,
    _statements,
)
from ._snowflake import MAX_TIMESTAMP, _TIMESTAMP_SHIFT, _WORKER_SHIFT, snowflake_step
from ._xid import BYTES, MAX_COUNTER, MAX_PID, Xid, _bytes_new, xid_step

__all__ = ["EdgeStore", "EdgeGrant", "EdgeError", "EdgeClockBeforeWindow", "EdgeWindowEnded",
           "EdgeCloned"]

_T = TypeVar("_T")
_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_US = {"xid12": 1_000_000, "snowflake": 1000}  # µs per unit of the kind's id-time

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pg_idgen_edge (
    kind text PRIMARY KEY CHECK (kind IN ('xid12', 'snowflake')),
    grant_id integer NOT NULL,
    token integer NOT NULL,
    slot integer NOT NULL,
    lo_us integer NOT NULL,  -- the window [lo, hi) in unix microseconds
    hi_us integer NOT NULL,
    epoch_ms integer,        -- the Snowflake epoch of the grant; NULL for xid12
    writer text NOT NULL,
    syncs integer NOT NULL DEFAULT 0,  -- the count the registry gave at the last report
    last_id,                 -- the high-water mark: the last id made (xid12 text, Snowflake int)
    last_id_us integer,      -- its id-time in unix microseconds
    cloned text,             -- set when the registry found this state on another device
    attempt integer          -- the number of the report being sent, kept until its reply arrives
)"""
_COLUMNS = "grant_id, token, slot, lo_us, hi_us, epoch_ms, writer, syncs, last_id, last_id_us, cloned, attempt"
_ENROL = ("INSERT INTO pg_idgen_edge (kind, grant_id, token, slot, lo_us, hi_us, epoch_ms, writer) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
# The three statements above are tests/vectors/edge_store.json's, which the Rust client's EdgeStore
# runs too: the same file works with either client.


class EdgeError(RegistryError):
    """An edge store cannot do what was asked (no id is made)."""


class EdgeClockBeforeWindow(EdgeError):
    """The device clock reads a time before the grant's window (a clock reset, say to 2000)."""


class EdgeWindowEnded(EdgeError):
    """The device clock is at or after the end of the grant's window, or the window's ids are
    used up: sync (renew) before making more."""


class EdgeCloned(EdgeError, DeviceConflict):
    """SQLSTATE 23505 from ``idgen_report`` (the registry's ``DeviceConflict``): this file's
    grant is used by two devices (the file is a copy of a state another device continued).
    ``detail`` names both devices."""

    sqlstate = "23505"

    def __init__(self, message: str, detail: Optional[str] = None, hint: Optional[str] = None):
        super().__init__(_words.edge_device_conflict(message, detail))
        self.detail, self.hint = detail, hint


class EdgeGrant(NamedTuple):
    """The grant an edge store holds (the token is not shown)."""

    grant_id: int
    kind: str
    slot: int
    lo: _dt.datetime
    hi: _dt.datetime
    epoch_ms: Optional[int]
    writer: str
    syncs: int
    last_id: Union["Xid", int, None]
    last_id_time: Optional[_dt.datetime]


def default_device() -> str:
    """The host name, and /etc/machine-id when it can be read."""
    try:
        with open("/etc/machine-id") as f:
            machine = f.read().strip()
    except OSError:
        machine = ""
    host = socket.gethostname()
    return f"{host} (machine-id {machine[:32]})" if machine else host


def _moment(us: Optional[int]) -> Optional[_dt.datetime]:
    return None if us is None else _EPOCH + _dt.timedelta(microseconds=us)


class EdgeStore:
    """The registry grant of one edge device, of one ``kind`` (``'xid12'``, recommended, or
    ``'snowflake'``), kept in ``sqlite_conn``'s database (table ``pg_idgen_edge``, created if
    missing). ``device`` names this device in the registry's reports and in messages (default:
    host name and /etc/machine-id). ``clock``: unix seconds, for tests (default the system's).
    """

    def __init__(self, sqlite_conn: sqlite3.Connection, kind: str = "xid12", *,
                 device: Optional[str] = None, clock: Optional[Callable[[], float]] = None):
        if kind not in _US:
            raise ValueError(f"an edge store's kind is 'xid12' or 'snowflake', not {kind!r}")
        self.db = sqlite_conn
        self.kind = kind
        self.device = device or default_device()
        self._clock = clock
        sqlite_conn.execute(_SCHEMA)

    def _now_us(self) -> int:
        return _time.time_ns() // 1000 if self._clock is None else round(self._clock() * 1e6)

    def _outside_sqlite_transaction(self) -> None:
        """enrol and sync commit their own writes: inside the caller's transaction they would
        commit its unfinished rows and marks with them, even when the server call then fails."""
        if self.db.in_transaction:
            raise EdgeError(_words.edge_sqlite_in_transaction())

    def _row(self):
        return self.db.execute(f"SELECT {_COLUMNS} FROM pg_idgen_edge WHERE kind = ?",
                               (self.kind,)).fetchone()

    @property
    def grant(self) -> Optional[EdgeGrant]:
        """The grant this store holds (None before ``enrol`` and after a releasing ``sync``)."""
        r = self._row()
        if r is None:
            return None
        last = r[8] if r[8] is None or self.kind == "snowflake" else Xid(r[8])
        return EdgeGrant(r[0], self.kind, r[2], _moment(r[3]), _moment(r[4]), r[5], r[6], r[7],
                         last, _moment(r[9]))

    def _what(self, r) -> str:
        return _words.edge_grant(r[0], self.kind, r[2], r[3], r[4], self.device)

    # --- enrolment ----------------------------------------------------------------------
    def enrol(self, pg_conn, writer: Optional[str] = None, lease=_dt.timedelta(days=28),
              pool: str = "edge") -> EdgeGrant:
        """Acquires a grant of ``pool`` for ``lease`` (``idgen_acquire``, on a psycopg 3
        connection outside a transaction) and keeps it in the SQLite file (committed).
        ``writer`` defaults to the device name. Refuses while the file holds a live grant (one
        whose window has not ended on this clock, and not found cloned)."""
        self._outside_sqlite_transaction()
        r = self._row()
        if r is not None and r[10] is None and self._now_us() < r[4]:
            raise EdgeError(_words.edge_already_enrolled(self._what(r)))
        writer = writer or self.device
        g = self._server(pg_conn, lambda sql: pg_conn.execute(
            sql["acquire"], (self.kind, writer, _lease_param(lease), pool),
            prepare=False).fetchone(),
            acquire=True)
        self._keep(g, writer)
        return self.grant

    def _keep(self, g: tuple, writer: str) -> None:
        """Stores a grant row as ``_statements`` reads it: (grant_id, token, kind, slot,
        epoch_ms, lo_t, hi_t, server_time), the window in the kind's id-time, kept in unix µs;
        the mark starts empty, the count at 0."""
        grant_id, token, kind, slot, epoch_ms, lo_t, hi_t, _ = g
        lo_us, hi_us = _id_time_us(kind, epoch_ms, lo_t), _id_time_us(kind, epoch_ms, hi_t)
        with self.db:
            self.db.execute("DELETE FROM pg_idgen_edge WHERE kind = ?", (kind,))
            self.db.execute(_ENROL, (kind, grant_id, token, slot, lo_us, hi_us, epoch_ms, writer))

    # --- ids ----------------------------------------------------------------------------
    def next_id(self) -> Union[Xid, int]:
        """The next id (an :class:`Xid`, or an int for Snowflake), of the grant's slot, inside
        its window, greater than the stored mark. The new mark is written on the SQLite
        connection, uncommitted: commit it with the row the id keys. Raises
        :class:`EdgeClockBeforeWindow`, :class:`EdgeWindowEnded` or :class:`EdgeCloned`
        instead of making an id outside the window or from a copied state."""
        while True:
            r = self._row()
            if r is None:
                raise EdgeError(_words.edge_no_grant(self.kind, self.device))
            grant_id, _, slot, lo_us, hi_us, epoch_ms, _, _, last, last_us, cloned, _ = r
            if cloned is not None:
                raise EdgeCloned(_words.edge_cloned(cloned))
            now_us = self._now_us()
            if now_us < lo_us:
                raise EdgeClockBeforeWindow(_words.edge_clock_before_window(now_us, self._what(r)))
            if now_us >= hi_us:
                raise EdgeWindowEnded(_words.edge_window_ended(now_us, self._what(r)))
            if self.kind == "xid12":
                n, t = self._next_xid(slot, now_us, last)
                new = _bytes_new(Xid, n.to_bytes(BYTES, "big"))
                stored = str(new)
            else:
                new, t = self._next_snowflake(slot, epoch_ms, now_us, last)
                stored = new
            if t >= hi_us:
                raise EdgeWindowEnded(_words.edge_used_up(self._what(r), last_us))
            # Compare-and-set: another connection to the file that moved the mark or shrank the
            # window (a release) in between makes this one read it again (or wait for its
            # lock), never reuse a mark or make an id past a window's new end.
            if self.db.execute(
                "UPDATE pg_idgen_edge SET last_id = ?, last_id_us = ? "
                "WHERE kind = ? AND grant_id = ? AND last_id IS ? AND hi_us = ?",
                (stored, t, self.kind, grant_id, last, hi_us),
            ).rowcount == 1:
                return new

    __call__ = next_id

    @staticmethod
    def _first_pid_counter():
        """The pid and counter of an xid12 id made with no mark: the low 16 bits of the process
        id and a random 24-bit counter. (A test seam: tests/vectors/edge_traces.json's runner
        sets it on the store to give the vectors' pid and counter.)"""
        return os.getpid() & MAX_PID, int.from_bytes(os.urandom(3), "big")

    def _next_xid(self, slot: int, now_us: int, last: Optional[str]):
        """(the id as a 96-bit number, its time in µs): the clock's second, or the mark's when
        the clock went back; the mark's pid and next counter (the next second when it wraps)."""
        if last is None:
            n_last = -1
            pid, counter = self._first_pid_counter()
        else:
            n_last = int.from_bytes(Xid(last), "big")
            pid, counter = n_last >> 24 & MAX_PID, (n_last + 1) & MAX_COUNTER
        n = xid_step(n_last, now_us // 1_000_000, slot << 40 | pid << 24 | counter)
        return n, (n >> 64) * 1_000_000

    @staticmethod
    def _next_snowflake(slot: int, epoch_ms: int, now_us: int, last: Optional[int]):
        """(the id, its time in µs): the clock's millisecond, or after the mark's when the clock
        went back (its next sequence, else the next millisecond: never a wait)."""
        last = -1 if last is None else last
        bits = slot << _WORKER_SHIFT
        id, wait = snowflake_step(last, now_us // 1000, epoch_ms, bits, MAX_TIMESTAMP)
        if id is None:  # the mark's millisecond is used up: the next one, ahead of the clock
            id, _ = snowflake_step(last, wait, epoch_ms, bits, MAX_TIMESTAMP)
        return id, (epoch_ms + (id >> _TIMESTAMP_SHIFT)) * 1000

    # --- sync ---------------------------------------------------------------------------
    def sync(self, pg_conn, renew=_dt.timedelta(days=28)) -> Optional[EdgeGrant]:
        """Back online: reports to the registry (``idgen_report``: this device, its count and
        its last id's time), then renews the grant for ``renew`` from the server's clock, or
        with ``renew=None`` releases it (``idgen_release``: the id-time after the last id is
        freed) and forgets it. Both in one server transaction (``pg_conn``, psycopg 3, outside
        a transaction); then the count and the window are committed to SQLite. Raises
        :class:`EdgeCloned` when the registry shows this state continued on another device
        (the store then makes no more ids of this grant); other server errors as the
        registry's (:class:`RegistryError` subclasses with ``sqlstate``)."""
        self._outside_sqlite_transaction()
        r = self._row()
        if r is None:
            raise EdgeError(_words.edge_no_grant_to_sync(self.kind, self.device))
        grant_id, token, _, _, _, _, _, syncs, _, last_us, _, attempt = r
        last_time = _moment(last_us)
        if attempt is None:
            # This report's number, kept until its reply arrives: when the reply is lost, the
            # next sync sends the same report again, and the registry answers it as before.
            attempt = secrets.randbits(63) or 1
            with self.db:
                self.db.execute("UPDATE pg_idgen_edge SET attempt = ? WHERE kind = ?", (attempt, self.kind))
        if renew is None:
            # Before the server frees the id-time after the last id, this file stops using it:
            # the end computed from the mark as it is in the same statement (another
            # connection's id made meanwhile is below it), and that mark is the one reported.
            with self.db:
                self.db.execute("UPDATE pg_idgen_edge SET hi_us = min(hi_us, "
                                "coalesce(last_id_us + ?, lo_us)) WHERE kind = ?",
                                (_US[self.kind], self.kind))
                last_us = self._row()[9]
            last_time = _moment(last_us)

        def calls(sql):
            count = pg_conn.execute(sql["report"], (grant_id, token, self.device, syncs,
                                                    last_time, attempt), prepare=False).fetchone()[0]
            if renew is None:
                pg_conn.execute(sql["release"], (grant_id, token, last_time or "-infinity"),
                                prepare=False)
                return count, None
            row = pg_conn.execute(sql["renew"], (grant_id, token, _lease_param(renew)),
                                  prepare=False).fetchone()
            return count, _id_time_us(row[2], row[4], row[6])  # hi_t, as unix µs

        count, hi_us = self._server(pg_conn, calls)
        with self.db:
            if hi_us is None:
                self.db.execute("DELETE FROM pg_idgen_edge WHERE kind = ?", (self.kind,))
            else:
                self.db.execute("UPDATE pg_idgen_edge SET syncs = ?, hi_us = ?, attempt = NULL WHERE kind = ?",
                                (count, hi_us, self.kind))
        return self.grant

    def _server(self, pg_conn, run: Callable[[dict], _T], acquire: bool = False) -> _T:
        """Runs ``run(statements)`` (on the extension's schema) in one server transaction,
        committed; server errors as the registry's, 23505 as :class:`EdgeCloned` (remembered
        in the file, so no more ids are made)."""
        import psycopg

        if pg_conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            raise EdgeError(_words.edge_postgres_in_transaction())
        try:
            with pg_conn.transaction():
                return run(_statements(_extension_schema(pg_conn)))
        except psycopg.Error as e:
            if e.sqlstate == "23505":
                err = EdgeCloned(e.diag.message_primary or str(e), e.diag.message_detail,
                                 e.diag.message_hint)
                with self.db:
                    self.db.execute("UPDATE pg_idgen_edge SET cloned = ? WHERE kind = ?",
                                    (str(err), self.kind))
                raise err from e
            if e.sqlstate is None:
                raise
            raise _server_error(e, acquire=acquire) from e
