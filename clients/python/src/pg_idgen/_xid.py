"""The rs/xid layout (PostgreSQL's xid12) and an in-process generator.

Bytes, big-endian: 0-3 unix seconds, 4-6 machine id, 7-8 process id, 9-11 counter. Byte order
is sort order is creation-second order. The text form is 20 characters of lowercase base32hex
(``0-9a-v``); the last character carries one bit and four zero bits, so only ``0`` and ``g``
end a canonical text.
"""
from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import os
import socket
import threading
import unicodedata as _unicodedata
from time import time_ns as _time_ns
from typing import Callable, Optional, Union

__all__ = ["Xid", "XidGenerator", "machine_from_hostname"]

BYTES = 12
CHARS = 20
MAX_TIME = 0xFFFF_FFFF
MAX_MACHINE = 0xFF_FFFF
MAX_PID = 0xFFFF
MAX_COUNTER = 0xFF_FFFF

_ALPHABET = "0123456789abcdefghijklmnopqrstuv"
# base64's RFC 4648 base32 alphabet to base32hex, lowercase (C speed for the text form).
_STD_TO_HEX = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", _ALPHABET.encode())
_b32encode = base64.b32encode
_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_RANGE_TEXT = "1970-01-01 00:00:00 .. 2106-02-07 06:28:15 UTC"


# Unicode White_Space, what the server's trim takes away.
_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
QUOTED_CHARS = 40


def _quoted(value: str) -> str:
    """A value as a message quotes it (the server's rule, tests/vectors/README.md): whole, or
    past 40 characters its first 40 and its length."""
    if len(value) <= QUOTED_CHARS:
        return f'"{value}"'
    return f'"{value[:QUOTED_CHARS]}..." ({len(value)} characters)'


def _shown_char(c: str) -> str:
    """A character as a message shows it: quoted, a control character escaped (e.g. '\\u{a}')."""
    if _unicodedata.category(c) == "Cc":
        return "'\\u{%x}'" % ord(c)
    return f"'{c}'"


def _invalid_input(type_name: str, text: str) -> str:
    return f"invalid input syntax for type {type_name}: {_quoted(text)}"


def _why_not_text(text: str) -> str:
    """Why a str is not an xid12 text (the server's DETAIL, in characters)."""
    if text.strip(_WHITESPACE) != text:
        return "Leading and trailing spaces are not allowed."
    if len(text) != CHARS:
        return f"An xid12 is {CHARS} base32hex characters; the text has {len(text)} characters."
    for i, c in enumerate(text):
        if not c.isascii() or c.lower() not in _ALPHABET:
            return f"Character {i + 1} is outside the base32hex alphabet 0-9, a-v."
    return "The last character must be 0 or g: its low 4 bits are unused and must be zero."


def _canonical_text(text: str) -> str:
    """The canonical (lowercase) text of an xid12 text, or a ValueError that says why not."""
    if len(text) == CHARS and text.isascii() and text.isalnum():
        try:
            n = int(text, 32)
        except ValueError:
            pass
        else:
            if not n & 0xF:
                return text.lower()
    raise ValueError(f"{_invalid_input('xid12', text)}: {_why_not_text(text)}")


def _wrong_length(n: int) -> ValueError:
    return ValueError(f"invalid binary xid12 value: An xid12 is exactly {BYTES} bytes; got {n}.")


def _unix_second(dt: _dt.datetime, what: str) -> int:
    if not isinstance(dt, _dt.datetime):
        raise TypeError(f"{what} takes a datetime, not {type(dt).__name__}")
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError(f"{what} needs an aware datetime (a naive one has no time zone)")
    # Fractions round down, as the server's do (also before 1970).
    return (dt - _EPOCH) // _dt.timedelta(seconds=1)


def _time_field(seconds: int) -> int:
    if not 0 <= seconds <= MAX_TIME:
        raise ValueError(
            f"timestamp out of range for xid12: unix second {seconds} is outside {_RANGE_TEXT}"
        )
    return seconds


def _machine_bytes(machine: Union[int, bytes, bytearray, memoryview]) -> bytes:
    if isinstance(machine, int) and not isinstance(machine, bool):
        if not 0 <= machine <= MAX_MACHINE:
            raise ValueError(f"xid12 machine id {machine} is outside the range 0 .. {MAX_MACHINE}")
        return machine.to_bytes(3, "big")
    if isinstance(machine, (bytes, bytearray, memoryview)):
        b = bytes(machine)
        if len(b) != 3:
            raise ValueError(f"xid12 machine id must be 3 bytes, got {len(b)}")
        return b
    raise TypeError(f"a machine id is an int or 3 bytes, not {type(machine).__name__}")


def machine_from_hostname(hostname: Optional[str] = None) -> bytes:
    """rs/xid's and the server's default machine id: the first 3 bytes of md5(host name)."""
    if hostname is None:
        hostname = socket.gethostname()
    return hashlib.md5(hostname.encode()).digest()[:3]


class Xid(str):
    """An xid12 value: its canonical 20-character text (a ``str`` subclass, so immutable,
    hashed, and ordered by that text, which is byte order, the server's order), with its 12
    bytes one attribute away. Anything that meets an ``Xid`` without knowing its type (json,
    pandas, FastAPI, templates, logging) writes the text.

    ``Xid(text)`` parses the 20-character text (either case), ``Xid(b)`` takes the 12 bytes;
    anything else is a ``ValueError`` (bad text or length, saying why) or a ``TypeError``.
    ``str(x)`` is the lowercase text; ``x.bytes`` or ``bytes(x)`` the 12 bytes.
    """

    __slots__ = ()

    def __new__(cls, value: Union[str, bytes, bytearray, memoryview]):
        if isinstance(value, str):
            if value.__class__ is cls:
                return value
            return _str_new(cls, _canonical_text(value))
        if isinstance(value, (bytes, bytearray, memoryview)):
            b = bytes(value)
            if len(b) != BYTES:
                raise _wrong_length(len(b))
            return _str_new(cls, _text_of(b))
        raise TypeError(f"an Xid is made from str or bytes, not {type(value).__name__}")

    # --- constructors -------------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data) -> "Xid":
        """The Xid of exactly 12 bytes (bytes, bytearray or memoryview)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"xid12 bytes are bytes, not {type(data).__name__}")
        b = bytes(data)
        if len(b) != BYTES:
            raise _wrong_length(len(b))
        return _str_new(cls, _text_of(b))

    @classmethod
    def from_str(cls, text: str) -> "Xid":
        if not isinstance(text, str):
            raise TypeError(f"xid12 text is a str, not {type(text).__name__}")
        return _str_new(cls, _canonical_text(text))

    @classmethod
    def from_parts(cls, time: Union[int, _dt.datetime], machine, pid: int, counter: int) -> "Xid":
        """Like SQL ``xid12_from_parts``: time (unix second or aware datetime), machine
        (3 bytes or an int), pid (0..65535), counter (0..16777215)."""
        seconds = time if isinstance(time, int) else _unix_second(time, "Xid.from_parts")
        t = _time_field(seconds)
        m = _machine_bytes(machine)
        if not 0 <= pid <= MAX_PID:
            raise ValueError(f"xid12 pid {pid} is outside the range 0 .. {MAX_PID}")
        if not 0 <= counter <= MAX_COUNTER:
            raise ValueError(f"xid12 counter {counter} is outside the range 0 .. {MAX_COUNTER}")
        return _str_new(cls, _text_of(
            t.to_bytes(4, "big") + m + pid.to_bytes(2, "big") + counter.to_bytes(3, "big")))

    @classmethod
    def min_for(cls, dt: _dt.datetime) -> "Xid":
        """The smallest id of ``dt``'s second (SQL ``xid12_min``)."""
        t = _time_field(_unix_second(dt, "Xid.min_for"))
        return _str_new(cls, _text_of(t.to_bytes(4, "big") + b"\x00" * 8))

    @classmethod
    def max_for(cls, dt: _dt.datetime) -> "Xid":
        """The largest id of ``dt``'s second (SQL ``xid12_max``)."""
        t = _time_field(_unix_second(dt, "Xid.max_for"))
        return _str_new(cls, _text_of(t.to_bytes(4, "big") + b"\xff" * 8))

    @staticmethod
    def new() -> "Xid":
        """A new id from this process's default generator (see :class:`XidGenerator`)."""
        return (_DEFAULT or _default_generator()).new()

    # --- accessors ----------------------------------------------------------------------
    @property
    def bytes(self) -> bytes:
        """The 12 bytes (the binary form, the bytea cast)."""
        return (int(self, 32) >> 4).to_bytes(BYTES, "big")

    def __bytes__(self) -> bytes:
        return (int(self, 32) >> 4).to_bytes(BYTES, "big")

    def __repr__(self) -> str:
        return f"Xid('{self}')"

    @property
    def unix_seconds(self) -> int:
        # The first 7 characters hold the 32 bits of the time and 3 of the machine id.
        return int(self[:7], 32) >> 3

    @property
    def time(self) -> _dt.datetime:
        """The creation second as an aware UTC datetime."""
        return _EPOCH + _dt.timedelta(seconds=int(self[:7], 32) >> 3)

    @property
    def machine(self) -> bytes:
        return (int(self, 32) >> 44 & MAX_MACHINE).to_bytes(3, "big")

    @property
    def pid(self) -> int:
        return int(self, 32) >> 28 & MAX_PID

    @property
    def counter(self) -> int:
        return int(self, 32) >> 4 & MAX_COUNTER

    # --- Pydantic v2 (``id: Xid`` in a model); pydantic is imported only when it asks ------
    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        from .pydantic import _xid_core_schema

        return _xid_core_schema()

    @classmethod
    def __get_pydantic_json_schema__(cls, schema, handler):
        from .pydantic import _xid_json_schema

        return _xid_json_schema(handler.mode)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


_str_new = str.__new__


# Two base32hex characters for each 10 bits: the text of 96 bits (and 4 zero bits) is ten
# lookups (base64.b32encode is pure Python before 3.13, several times slower).
_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]


def _text_of_int(n: int, t=_PAIRS) -> str:
    """The canonical text of a 96-bit number."""
    n <<= 4
    return "".join([t[n >> 90], t[n >> 80 & 1023], t[n >> 70 & 1023], t[n >> 60 & 1023],
                    t[n >> 50 & 1023], t[n >> 40 & 1023], t[n >> 30 & 1023], t[n >> 20 & 1023],
                    t[n >> 10 & 1023], t[n & 1023]])


def _text_of(b: bytes, _int=int.from_bytes) -> str:
    """The canonical text of 12 bytes."""
    return _text_of_int(_int(b, "big"))


def _from_trusted(b: bytes, _int=int.from_bytes) -> Xid:
    """The Xid of bytes already known to be 12 (the binary adapters' hot path)."""
    return _str_new(Xid, _text_of_int(_int(b, "big")))


def _from_int(n: int) -> Xid:
    """The Xid of a 96-bit number (the generators')."""
    return _str_new(Xid, _text_of_int(n))


def coerce(value) -> Xid:
    """An Xid from an Xid, its text or its 12 bytes (what adapters accept as a parameter)."""
    if value.__class__ is Xid:
        return value
    return Xid(value)


def xid_step(last: int, now: int, rest: int) -> int:
    """One step of the xid12 generator, pure: the last id as a 96-bit number (-1: none), the
    clock in whole unix seconds, and the id's low 64 bits (machine, pid, counter). Returns the
    next id as a 96-bit number, strictly greater than ``last``: a clock that steps back keeps
    the last second, and a counter that wraps within a second moves the time on by one second
    (so the result's second can be after ``now``). ValueError beyond 2106."""
    if last < 0:
        return _time_field(now) << 64 | rest
    last_time = last >> 64
    # A clock that steps back keeps the last second.
    n = (now if now > last_time else last_time) << 64 | rest
    if n <= last:
        # Same second and the counter wrapped (or a lower machine id): borrow the next second.
        n = (last_time + 1) << 64 | rest
    if n >> 64 > MAX_TIME:
        _time_field(n >> 64)
    return n


class XidGenerator:
    """Generates rs/xid-format ids in this process, like the server's ``gen_xid12()``.

    machine: 3 bytes or an int (0..16777215); default: the first 3 bytes of md5(host name),
    the server's and rs/xid's default. pid: default the low 16 bits of this process's id
    (updated in a forked child). counter_start: default random. clock: returns unix seconds
    (default ``time.time``).

    Every id is strictly greater than the one before: a clock that steps back keeps the last
    second, and when the 24-bit counter wraps within a second the time moves on by one second.
    Thread-safe.
    """

    def __init__(
        self,
        machine=None,
        *,
        pid: Optional[int] = None,
        counter_start: Optional[int] = None,
        clock: Optional[Callable[[], float]] = None,
    ):
        m = machine_from_hostname() if machine is None else _machine_bytes(machine)
        self._machine = m
        self._fixed_pid = pid is not None
        if pid is not None and not 0 <= pid <= MAX_PID:
            raise ValueError(f"xid12 pid {pid} is outside the range 0 .. {MAX_PID}")
        self._set_pid(pid if pid is not None else os.getpid() & MAX_PID)
        if counter_start is None:
            counter_start = int.from_bytes(os.urandom(3), "big")
        self._counter = counter_start & MAX_COUNTER
        self._clock = clock  # None: the system clock
        self._last = -1  # the last id as a 96-bit number; -1: none yet
        self._lock = threading.Lock()

    def _set_pid(self, pid: int) -> None:
        self._pid = pid
        # machine and pid as bits 24..63 of the 96-bit number
        self._middle = int.from_bytes(self._machine, "big") << 40 | pid << 24

    @property
    def machine(self) -> bytes:
        return self._machine

    def set_machine(self, machine) -> None:
        """Changes the machine id of later ids; they still sort after the earlier ones (a
        lower machine id moves the time on by one second, as the server does)."""
        m = _machine_bytes(machine)
        with self._lock:
            self._machine = m
            self._set_pid(self._pid)

    @property
    def pid(self) -> int:
        return self._pid

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        if not self._fixed_pid:
            self._set_pid(os.getpid() & MAX_PID)

    def new(self) -> Xid:
        with self._lock:
            counter = self._counter
            self._counter = (counter + 1) & MAX_COUNTER
            clock = self._clock
            now = _time_ns() // 1_000_000_000 if clock is None else int(clock() // 1)
            n = xid_step(self._last, now, self._middle | counter)
            self._last = n
        return _from_int(n)

    __call__ = new


_DEFAULT: Optional[XidGenerator] = None
_DEFAULT_LOCK = threading.Lock()


def _default_generator() -> XidGenerator:
    global _DEFAULT
    g = _DEFAULT
    if g is None:
        with _DEFAULT_LOCK:
            if _DEFAULT is None:
                _DEFAULT = XidGenerator()
            g = _DEFAULT
    return g


def _reset_after_fork() -> None:
    if _DEFAULT is not None:
        _DEFAULT._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
