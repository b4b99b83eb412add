"""The grant-bound generators' rules, pure (no I/O, an injected clock reading): the same state
machine as the Rust core's ``grant.rs``, checked against the shared traces in
``tests/vectors/grant_traces.json``.

A generator bound to a grant of slot ``slot`` for the id-time window ``[lo, hi)`` (Snowflake:
ms since its epoch; xid12: unix seconds) makes only ids whose slot is ``slot`` and whose
id-time is in the window, each greater than the one before. ``step(now)`` with a clock reading
(Snowflake: unix ms; xid12: unix seconds) returns one of

- ``(id, None)``: the next id (already recorded as the high-water mark);
- ``(None, t)``: wait until the clock reads ``t`` (same unit as ``now``, before ``hi``), then
  step again;
- ``(None, None)``: renew the grant (or acquire a new one), ``bind`` it, then step again;

or raises :class:`ClockBeforeWindow` (the clock is further before the window than ``max_wait``)
or the plain generator's own error. ``bind`` keeps the high-water mark, so ids keep increasing
across renewals and new slots.
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import Optional

from ._snowflake import (
    DEFAULT_EPOCH_MS,
    MAX_WORKER,
    _TIMESTAMP_SHIFT,
    _WORKER_SHIFT,
    snowflake_step,
)
from . import _words
from ._xid import MAX_COUNTER, MAX_MACHINE, MAX_PID, xid_step

__all__ = [
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
    "SnowflakeGrantState",
    "XidGrantState",
]

_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)


class RegistryError(RuntimeError):
    """An error of the writer registry or of a generator bound to one of its grants.
    ``sqlstate`` is the server's SQLSTATE when the server raised it, else None."""

    sqlstate: Optional[str] = None

    def __init__(self, message: str, sqlstate: Optional[str] = None):
        super().__init__(message)
        if sqlstate is not None:
            self.sqlstate = sqlstate


class RegistryUnavailable(RegistryError):
    """The registry could not be reached (connection refused or lost)."""


# The registry's refusals, one class per condition of tests/vectors/registry_errors.json
# (docs/formats.md, "Writer registry: errors"): a program tells them apart by class alone.

class RegistryFenced(RegistryError):
    """SQLSTATE IG001, from ``idgen_acquire``: after a failover, a point-in-time recovery or a
    restore, the registry grants nothing of this kind in this pool until every grant it may
    have lost must have ended. ``until`` is that moment (an aware UTC ``datetime``), read from
    the message, or None when the message names none. Writers whose grants are live renew
    them meanwhile; a new one can try again at ``until``."""

    sqlstate = "IG001"

    def __init__(self, message: str, sqlstate: Optional[str] = None,
                 until: Optional[_dt.datetime] = None):
        super().__init__(message, sqlstate)
        self.until = until if until is not None else fence_until(message)


class PoolNotAllowed(RegistryError):
    """SQLSTATE IG002: this role may not take grants in this pool (the DBA allows it with
    ``idgen_pool_allow``)."""

    sqlstate = "IG002"


class CapReached(RegistryError):
    """SQLSTATE IG003: this role holds its cap of live grants in this pool (release unused
    ones, or wait for one to end; the DBA sets the cap with ``idgen_pool_allow``)."""

    sqlstate = "IG003"


class LeaseTooLong(RegistryError):
    """SQLSTATE IG004: the lease asked for is longer than the pool allows for this kind (the
    HINT, in the message, names the longest)."""

    sqlstate = "IG004"


class EpochChanged(RegistryError):
    """SQLSTATE IG005: ``pg_idgen.snowflake_epoch`` differs from the epoch of the registry's
    Snowflake grants (ids of two epochs cannot be told apart)."""

    sqlstate = "IG005"


class ReportOutsideWindow(RegistryError):
    """SQLSTATE IG006, from ``idgen_report``: an edge device reports an id outside its
    grant's window."""

    sqlstate = "IG006"


class GrantLost(RegistryError):
    """SQLSTATE 55000 (or 42704, no such grant): the grant cannot be renewed: it was released,
    it had ended before a fence, or its slot's next id-time went to another writer (42704: the
    registry was restored from before it was made). The generator acquires a new grant."""

    sqlstate = "55000"


class SlotsExhausted(RegistryError):
    """SQLSTATE 53400: every slot of the pool for this kind is held; the message's DETAIL says
    how many and when the first frees up."""

    sqlstate = "53400"


class WrongToken(RegistryError):
    """SQLSTATE 42501: a wrong token, a grant of another role, or a reservation (which has no
    token)."""

    sqlstate = "42501"


class DeviceConflict(RegistryError):
    """SQLSTATE 23505, from ``idgen_report``: one grant is used by two edge devices (a copied
    device state). The edge store raises its subclass ``EdgeCloned``."""

    sqlstate = "23505"


# The server's SQLSTATE -> the class of its condition (tests/vectors/registry_errors.json).
# Any other code is a plain RegistryError.
REGISTRY_ERRORS = {
    "IG001": RegistryFenced,
    "IG002": PoolNotAllowed,
    "IG003": CapReached,
    "IG004": LeaseTooLong,
    "IG005": EpochChanged,
    "IG006": ReportOutsideWindow,
    "55000": GrantLost,
    "42704": GrantLost,
    "42501": WrongToken,
    "53400": SlotsExhausted,
    "23505": DeviceConflict,
}

# An IG001 message ends "until <RFC 3339 UTC, with microseconds>Z" (its DETAIL, when the
# client appends it, follows in parentheses).
_UNTIL = re.compile(r"\buntil (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6})Z(?=$| \(DETAIL: )")


def fence_until(message: str) -> Optional[_dt.datetime]:
    """The moment a fenced message names (an aware UTC ``datetime``), or None when it names
    none in the contract's form."""
    m = _UNTIL.search(message)
    if m is None:
        return None
    try:
        return _dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=_UTC)
    except ValueError:  # a form that matches but is no date (month 13)
        return None


class ClockOutsideWindow(RegistryError):
    """This writer's clock is outside its grant's window and cannot be brought into it: the
    message names by how much."""


class ClockBeforeWindow(ClockOutsideWindow):
    """The clock is further before the grant's window than the generator waits."""


class ClockAheadOfWindow(ClockOutsideWindow):
    """The clock is past the end of the grant's window even just after a renewal (it is more
    than a lease ahead of the registry server's)."""


class SnowflakeGrantState:
    """The grant-bound Snowflake state machine. Times: ``now`` in unix ms; ``lo``, ``hi`` in
    ms since ``epoch_ms``; ``max_wait`` in ms: how far a clock before the window, or stepped
    back behind the last id, is waited out (the plain generator's ``max_backward_ms``); beyond
    it the former raises :class:`ClockBeforeWindow`, the latter ``SnowflakeClockError``."""

    __slots__ = ("epoch_ms", "max_wait", "max_backward_ms", "last", "slot", "lo", "hi",
                 "_worker_bits", "lo_unix", "hi_unix", "hi_id")

    def __init__(self, epoch_ms: int = DEFAULT_EPOCH_MS, *, max_wait: int = 5000,
                 last: int = -1):
        self.epoch_ms = epoch_ms
        self.max_wait = max_wait
        self.max_backward_ms = max_wait
        self.last = last  # the high-water mark: the last id made; -1: none
        self.unbind()

    def bind(self, slot: int, lo: int, hi: int) -> None:
        if not 0 <= slot <= MAX_WORKER:
            raise ValueError(f"snowflake slot {slot} is outside 0 .. {MAX_WORKER}")
        if lo > hi:
            raise ValueError(f"a grant's window [{lo}, {hi}) ends before it starts")
        self.slot, self.lo, self.hi = slot, lo, hi
        self._worker_bits = slot << _WORKER_SHIFT
        self._derive()

    def unbind(self) -> None:
        """No grant: every step says renew."""
        self.slot, self.lo, self.hi, self._worker_bits = None, 0, 0, 0
        self._derive()

    def set_epoch(self, epoch_ms: int) -> None:
        self.epoch_ms = epoch_ms
        self._derive()

    def _derive(self) -> None:
        # For a caller's inline fast path: the window in clock units, and the first id past it.
        self.lo_unix = self.epoch_ms + self.lo
        self.hi_unix = self.epoch_ms + self.hi
        self.hi_id = self.hi << _TIMESTAMP_SHIFT

    def step(self, now: int):
        t = now - self.epoch_ms
        if t >= self.hi:
            return None, None
        if t < self.lo:
            if self.lo - t <= self.max_wait:
                return None, self.epoch_ms + self.lo
            raise ClockBeforeWindow(_words.clock_before_window(
                (self.lo - t) / 1000, (self.epoch_ms + self.lo) * 1000, "snowflake", self.slot,
                self.max_wait / 1000))
        id, wait = snowflake_step(self.last, now, self.epoch_ms, self._worker_bits,
                                  self.max_backward_ms)
        if id is None:
            # A wait for the window's end or later (its last millisecond used up): renew.
            return (None, wait) if wait - self.epoch_ms < self.hi else (None, None)
        if id >> _TIMESTAMP_SHIFT >= self.hi:
            return None, None
        self.last = id
        return id, None

    def id_time(self, id: int) -> int:
        """An id's id-time (ms since the epoch)."""
        return id >> _TIMESTAMP_SHIFT


class XidGrantState:
    """The grant-bound xid12 state machine. Times: ``now`` in unix seconds (an int, or a float
    that is rounded down); ``lo``, ``hi`` and ``max_wait`` in seconds. The machine id is the
    slot; ``pid`` and the counter (from ``counter_start``) fill the rest. Ids are 96-bit ints
    (``int.from_bytes(xid, 'big')``)."""

    __slots__ = ("pid", "counter", "max_wait", "last", "slot", "lo", "hi", "_middle", "hi_n")

    def __init__(self, *, pid: int, counter_start: int, max_wait: int = 5, last: int = -1):
        if not 0 <= pid <= MAX_PID:
            raise ValueError(f"xid12 pid {pid} is outside the range 0 .. {MAX_PID}")
        self.pid = pid
        self.counter = counter_start & MAX_COUNTER
        self.max_wait = max_wait
        self.last = last
        self.unbind()

    def bind(self, slot: int, lo: int, hi: int) -> None:
        if not 0 <= slot <= MAX_MACHINE:
            raise ValueError(f"xid12 slot {slot} is outside 0 .. {MAX_MACHINE}")
        if lo > hi:
            raise ValueError(f"a grant's window [{lo}, {hi}) ends before it starts")
        self.slot, self.lo, self.hi = slot, lo, hi
        self._middle = slot << 40 | self.pid << 24
        self.hi_n = hi << 64  # for a caller's inline fast path: the first id past the window

    def unbind(self) -> None:
        self.slot, self.lo, self.hi, self._middle, self.hi_n = None, 0, 0, 0, 0

    def set_pid(self, pid: int) -> None:
        self.pid = pid & MAX_PID
        if self.slot is not None:
            self._middle = self.slot << 40 | self.pid << 24

    def step(self, now):
        t = now if now.__class__ is int else int(now // 1)
        if t >= self.hi:
            return None, None
        if t < self.lo:
            if self.lo - t <= self.max_wait:
                return None, self.lo
            raise ClockBeforeWindow(_words.clock_before_window(
                self.lo - now, self.lo * 1_000_000, "xid12", self.slot, self.max_wait))
        counter = self.counter
        n = xid_step(self.last, t, self._middle | counter)
        if n >> 64 >= self.hi:
            return None, None
        self.last = n
        self.counter = (counter + 1) & MAX_COUNTER
        return n, None

    def id_time(self, n: int) -> int:
        """An id's id-time (unix seconds)."""
        return n >> 64
