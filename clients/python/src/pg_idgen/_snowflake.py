"""Snowflake ids: 64-bit, time-ordered, non-negative integers, the server's layout.

| 1 bit: 0 | 41 bits: ms since the epoch | 10 bits: worker | 12 bits: sequence |
"""
from __future__ import annotations

import datetime as _dt
import threading
import time as _time
from typing import Callable, NamedTuple, Optional

__all__ = [
    "Snowflake",
    "SnowflakeClockError",
    "SnowflakeParts",
    "DEFAULT_EPOCH_MS",
    "snowflake_parts",
    "snowflake_time",
    "snowflake_unix_ms",
    "snowflake_worker",
    "snowflake_sequence",
]

MAX_WORKER = 1023
MAX_SEQUENCE = 4095
MAX_TIMESTAMP = (1 << 41) - 1
#: The server's default ``pg_idgen.snowflake_epoch``: 2010-11-04 01:42:54.657 UTC.
DEFAULT_EPOCH_MS = 1288834974657
MAX_EPOCH_MS = (1 << 63) - 1 - MAX_TIMESTAMP
#: The server's default ``pg_idgen.snowflake_max_backward_ms``.
DEFAULT_MAX_BACKWARD_MS = 1000
_TIMESTAMP_SHIFT = 22
_WORKER_SHIFT = 12
_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)


class SnowflakeClockError(RuntimeError):
    """The clock is further behind the last issued id than the generator's bound."""


class SnowflakeParts(NamedTuple):
    ms_since_epoch: int
    worker: int
    sequence: int


def _check_epoch(epoch_ms: int) -> int:
    if not isinstance(epoch_ms, int) or not 0 <= epoch_ms <= MAX_EPOCH_MS:
        raise ValueError(f"snowflake epoch {epoch_ms!r} ms is outside 0 .. {MAX_EPOCH_MS}")
    return epoch_ms


def _check_id(id: int) -> int:
    if not isinstance(id, int) or isinstance(id, bool):
        raise TypeError(f"a snowflake id is an int, not {type(id).__name__}")
    if id < 0:
        raise ValueError(f"invalid snowflake id {id}: snowflake ids are never negative")
    if id > (1 << 63) - 1:
        raise ValueError(f"snowflake id {id} does not fit in a bigint")
    return id


def snowflake_parts(id: int) -> SnowflakeParts:
    """Splits an id into (ms since the epoch, worker, sequence)."""
    _check_id(id)
    return SnowflakeParts(id >> _TIMESTAMP_SHIFT, (id >> _WORKER_SHIFT) & MAX_WORKER,
                          id & MAX_SEQUENCE)


def snowflake_worker(id: int) -> int:
    return (_check_id(id) >> _WORKER_SHIFT) & MAX_WORKER


def snowflake_sequence(id: int) -> int:
    return _check_id(id) & MAX_SEQUENCE


def snowflake_unix_ms(id: int, epoch_ms: int = DEFAULT_EPOCH_MS) -> int:
    return _check_epoch(epoch_ms) + (_check_id(id) >> _TIMESTAMP_SHIFT)


def snowflake_time(id: int, epoch_ms: int = DEFAULT_EPOCH_MS) -> _dt.datetime:
    """The id's millisecond as an aware UTC datetime (SQL ``snowflake_time``)."""
    return _EPOCH + _dt.timedelta(milliseconds=snowflake_unix_ms(id, epoch_ms))


def _wall_clock_ms() -> int:
    return _time.time_ns() // 1_000_000


def snowflake_step(last: int, now_unix_ms: int, epoch_ms: int, worker_bits: int,
                   max_backward_ms: int):
    """One step of the server's Snowflake state machine, pure: the last issued id (-1: none),
    the clock in unix ms, the epoch, the worker id shifted into place (``worker << 12``) and the
    bound on waiting for a clock that stepped back. Returns ``(id, None)`` (the next id, which
    the caller records as the new last id) or ``(None, unix_ms)`` (wait until that millisecond
    and try again); raises ``SnowflakeClockError`` when the clock is more than
    ``max_backward_ms`` behind the last id, ``ValueError`` outside the 41-bit range."""
    ms = now_unix_ms - epoch_ms
    if ms < 0:
        raise ValueError(
            f"the clock ({now_unix_ms} unix ms) is before the snowflake epoch ({epoch_ms} ms)"
        )
    if ms > MAX_TIMESTAMP:
        raise ValueError(
            f"snowflake timestamp out of range: {ms} ms since the epoch does not fit in 41 bits"
        )
    base = ms << _TIMESTAMP_SHIFT | worker_bits
    if last < base:
        return base, None
    if last - base < MAX_SEQUENCE:
        return last + 1, None
    last_ms = last >> _TIMESTAMP_SHIFT
    highest = last_ms << _TIMESTAMP_SHIFT | worker_bits | MAX_SEQUENCE
    target_ms = last_ms if highest > last else last_ms + 1
    if target_ms > MAX_TIMESTAMP:
        raise ValueError(
            f"snowflake timestamp out of range: {target_ms} ms since the epoch does not fit in 41 bits"
        )
    behind = last_ms - ms if last_ms > ms else 0
    if behind > max_backward_ms:
        raise SnowflakeClockError(
            f"the clock moved back {behind} ms behind the last snowflake id "
            f"(at most {max_backward_ms} ms is waited out)"
        )
    return None, epoch_ms + target_ms


_step = snowflake_step


class Snowflake:
    """A Snowflake generator for one worker id, with the server's layout and rules.

    ``next_id()`` returns an int strictly greater than every id this generator issued before:
    when the 4096 ids of a millisecond are used up it waits for the next millisecond, and when
    the clock steps back it waits up to ``max_backward_ms`` for it to catch up, beyond that it
    raises :class:`SnowflakeClockError`, never issuing a duplicate. Thread-safe.

    ``clock`` returns unix milliseconds (an int); ``sleep`` takes seconds. Both are for tests.
    """

    def __init__(
        self,
        worker_id: int,
        epoch_ms: int = DEFAULT_EPOCH_MS,
        *,
        max_backward_ms: int = DEFAULT_MAX_BACKWARD_MS,
        clock: Optional[Callable[[], int]] = None,
        sleep: Optional[Callable[[float], None]] = None,
    ):
        if not isinstance(worker_id, int) or isinstance(worker_id, bool):
            raise TypeError(f"worker_id is an int, not {type(worker_id).__name__}")
        if not 0 <= worker_id <= MAX_WORKER:
            raise ValueError(f"snowflake worker id {worker_id} is outside the range 0 .. {MAX_WORKER}")
        if not isinstance(max_backward_ms, int) or max_backward_ms < 0:
            raise ValueError(f"max_backward_ms {max_backward_ms!r} must be a non-negative int")
        self.worker_id = worker_id
        self.epoch_ms = _check_epoch(epoch_ms)
        self.max_backward_ms = max_backward_ms
        self._clock = clock or _wall_clock_ms
        self._sleep = sleep or _time.sleep
        self._worker_bits = worker_id << _WORKER_SHIFT
        self._last = -1  # the last issued id; -1: none yet
        self._lock = threading.Lock()

    def _step(self, now_unix_ms: int):
        """One step of the server's state machine: (id, None) or (None, unix_ms to wait until)."""
        return snowflake_step(self._last, now_unix_ms, self.epoch_ms, self._worker_bits,
                              self.max_backward_ms)

    def next_id(self) -> int:
        with self._lock:
            while True:
                now = self._clock()
                id, wait_until = _step(self._last, now, self.epoch_ms, self._worker_bits,
                                       self.max_backward_ms)
                if id is not None:
                    self._last = id
                    return id
                # Wait the whole millisecond out: never issue an id of a used-up millisecond.
                self._sleep(max(wait_until - now, 0) / 1000)

    __call__ = next_id

    # Decoders with this generator's epoch.
    def time(self, id: int) -> _dt.datetime:
        return snowflake_time(id, self.epoch_ms)

    def unix_ms(self, id: int) -> int:
        return snowflake_unix_ms(id, self.epoch_ms)

    worker = staticmethod(snowflake_worker)
    sequence = staticmethod(snowflake_sequence)
    parts = staticmethod(snowflake_parts)
