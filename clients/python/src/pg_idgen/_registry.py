"""Writers whose identity comes from the database: ``Registry`` hands out Snowflake and xid12
generators bound to grants of the extension's writer registry (``idgen_acquire``,
``idgen_renew``, ``idgen_release``).

A grant gives this writer one slot (a Snowflake worker id or an xid12 machine id) for a window
of id-time ``[lo, hi)``; the generator makes only ids of that slot inside that window (the rules
are in ``_grant.py``), so two writers never make the same id whatever their clocks do. The
registry renews each grant in a background thread at about half its lease (counted on the
server's clock), and at once when the window runs out; a grant that another writer continued is
replaced by a new one; a writer that cannot reach the registry when it must renew raises instead
of going on.

No call waits on the network past its bounds. Only the background thread talks to the registry
for ``next_id()``/``new()``: at the window's end they wait at most ``renew_wait`` seconds (1 s by
default) for it to bring a renewed window, then raise :class:`RegistryUnavailable`; they never wait
for a connection lock held by a call stuck in a read. Every statement is abandoned after
``timeout`` seconds (5 s by default: its socket is shut down), a connection made from a DSN gets
``connect_timeout``, TCP keepalives and ``tcp_user_timeout`` (unless the DSN sets them), and
``close()`` gives up on releases it cannot finish within ``timeout`` (their windows just end).

Needs psycopg 3 (imported when a Registry is made). Every call is one autocommit statement,
prepared never (``prepare_threshold=None``), with no session state and no advisory locks, so a
PgBouncer in transaction mode in between is fine.
"""
from __future__ import annotations

import datetime as _dt
import os
import socket
import threading
import time as _time
import weakref
from typing import Callable, Optional, Union

from ._grant import (
    REGISTRY_ERRORS,
    ClockAheadOfWindow,
    ClockBeforeWindow,
    GrantLost,
    RegistryError,
    RegistryFenced,
    RegistryUnavailable,
    SnowflakeGrantState,
    XidGrantState,
)
from . import _words
from ._snowflake import (
    _TIMESTAMP_SHIFT,
    snowflake_parts,
    snowflake_sequence,
    snowflake_step as _snowflake_step,
    snowflake_time,
    snowflake_unix_ms,
    snowflake_worker,
)
from ._xid import BYTES, MAX_COUNTER, MAX_PID, Xid, _bytes_new
from ._xid import _time_ns, xid_step as _xid_step

__all__ = ["Registry", "GrantSnowflake", "GrantXid", "Grant"]

_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_ONE_US = _dt.timedelta(microseconds=1)
_monotonic = _time.monotonic
# Set on a connection the Registry makes from a DSN, unless the DSN (or, for connect_timeout,
# PGCONNECT_TIMEOUT) sets them: a dead link is found by TCP too, not only by the statement
# watchdog. Seconds, except tcp_user_timeout (ms); filled in from ``timeout`` in _dsn_params.
_TCP_DEFAULTS = {"keepalives": "1", "keepalives_idle": "10", "keepalives_interval": "2",
                 "keepalives_count": "3"}
# Every live Registry, for the fork handler.
_REGISTRIES: "weakref.WeakSet[Registry]" = weakref.WeakSet()
# Connections a forked child inherited: kept referenced (and their sockets pointed at
# /dev/null) so that nothing in the child ever writes to its parent's session.
_INHERITED: list = []


def _default_writer() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


_iso_us = _words.iso_us


class Grant:
    """One grant as the registry returned it: ``lo``/``hi`` in the kind's id-time (Snowflake:
    ms since ``epoch_ms``; xid12: unix seconds); ``server_us`` the server's clock (unix µs)
    when it answered; ``wall_us`` and ``mono`` this process's clocks when the answer came."""

    __slots__ = ("grant_id", "token", "kind", "slot", "lo", "hi", "epoch_ms", "lo_us", "hi_us",
                 "server_us", "wall_us", "mono", "rtt", "sent")

    def __repr__(self) -> str:
        return (f"Grant(grant_id={self.grant_id}, kind={self.kind!r}, slot={self.slot}, "
                f"lo={_iso_us(self.lo_us)}, hi={_iso_us(self.hi_us)})")

    @property
    def lease_s(self) -> float:
        """What was left of the window when the server answered, in seconds."""
        return (self.hi_us - self.server_us) / 1e6

    def offset_s(self) -> float:
        """This writer's clock minus the server's, estimated at the answer (half the round
        trip taken off), in seconds."""
        return (self.wall_us - self.server_us - self.rtt * 1e6 / 2) / 1e6


class Registry:
    """The writer registry of one database.

    ``dsn_or_factory``: a libpq connection string, or a callable without arguments that returns
    a psycopg 3 connection (the registry sets it to autocommit and never prepares statements).
    ``writer``: this writer's name in the registry (default ``"<host name>:<pid>"``, a forked
    child's own pid). ``pool``: the registry pool grants come from (default ``'app'``).
    ``max_wait``: seconds a generator waits for a window that starts a little after its clock,
    and (Snowflake) for a clock stepped back behind its last id; beyond that it raises.
    ``renew_wait``: seconds ``next_id()``/``new()`` wait at the window's end (or without a grant)
    for the background thread to bring a window before raising ``RegistryUnavailable``.
    ``timeout``: seconds one statement may take before it is abandoned (its connection shut
    down) and, for a DSN, the connect and TCP timeouts (``connect_timeout`` = max(2, timeout),
    ``tcp_user_timeout`` = timeout, keepalives after 10 s idle, 3 probes 2 s apart) unless the
    DSN sets them. A connection factory should set those itself (for example
    ``psycopg.connect(dsn, connect_timeout=5, keepalives=1, keepalives_idle=10,
    keepalives_interval=2, keepalives_count=3, tcp_user_timeout=5000)``); the statement
    watchdog applies to it too. ``close()`` takes at most about ``timeout`` seconds.

    ``snowflake()`` and ``xid12()`` return generators bound to grants (acquired at once);
    ``close()`` (or leaving a ``with`` block) releases them. Thread-safe and fork-safe: a forked
    child never uses its parent's grants, its generators acquire their own at their first id.
    """

    def __init__(
        self,
        dsn_or_factory: Union[str, Callable[[], object]],
        writer: Optional[str] = None,
        *,
        pool: str = "app",
        max_wait: float = 5.0,
        renew_wait: float = 1.0,
        timeout: float = 5.0,
        clock_ms: Optional[Callable[[], int]] = None,
        clock_s: Optional[Callable[[], float]] = None,
        sleep: Optional[Callable[[float], None]] = None,
    ):
        import psycopg  # noqa: F401  (fail here, not at the first id, without the driver)

        if not isinstance(dsn_or_factory, str) and not callable(dsn_or_factory):
            raise TypeError("Registry takes a DSN string or a function returning a psycopg connection")
        self._source = dsn_or_factory
        self._writer = writer
        self.pool = pool
        self.max_wait = float(max_wait)
        self.renew_wait = float(renew_wait)
        self.timeout = float(timeout)
        if not self.timeout > 0 or not self.renew_wait >= 0:
            raise ValueError("timeout must be positive and renew_wait not negative")
        self._clock_ms = clock_ms
        self._clock_s = clock_s
        self._sleep = sleep or _time.sleep
        self._conn = None
        self._sql = None  # the statements, schema-qualified
        self._generators: "weakref.WeakSet[_GrantGenerator]" = weakref.WeakSet()
        self._closed = False
        self._thread: Optional[threading.Thread] = None
        self._new_locks()
        _REGISTRIES.add(self)

    def _new_locks(self) -> None:
        self._conn_lock = threading.RLock()
        self._cond = threading.Condition(threading.Lock())

    @property
    def writer(self) -> str:
        return self._writer if self._writer is not None else _default_writer()

    # --- generators ---------------------------------------------------------------------
    def snowflake(self, lease=None) -> "GrantSnowflake":
        """A Snowflake generator bound to a grant (``next_id()``). ``lease``: an interval
        (``'10 minutes'``, a ``timedelta`` or seconds); None: the server's default."""
        return self._add(GrantSnowflake(self, lease))

    def xid12(self, lease=None) -> "GrantXid":
        """An xid12 generator bound to a grant (``new()`` returns ``pg_idgen.Xid``)."""
        return self._add(GrantXid(self, lease))

    def _add(self, gen: "_GrantGenerator") -> "_GrantGenerator":
        self._check_open()
        self._generators.add(gen)
        try:
            with gen._lock:
                gen._acquire()
        except BaseException:
            self._generators.discard(gen)
            raise
        return gen

    def _check_open(self) -> None:
        if self._closed:
            raise RegistryError(_words.closed())

    # --- closing ------------------------------------------------------------------------
    def close(self) -> None:
        """Releases every grant (each with the time of the last id made under it) and closes
        the connection. Errors reaching the registry are ignored: a grant not released ends
        with its window."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
        deadline = _monotonic() + self.timeout
        gens = list(self._generators)
        for gen in gens:
            gen._wake()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout=max(deadline - _monotonic(), 0))

        def release_all():
            for gen in gens:
                try:
                    gen._release()
                except RegistryUnavailable:
                    for rest in gens:  # unreachable: the other windows simply end
                        rest._drop_locked()
                    break
                except RegistryError:
                    pass
            if self._conn_lock.acquire(timeout=max(deadline - _monotonic(), 0)):
                try:
                    if self._conn is not None:
                        conn, self._conn = self._conn, None
                        try:
                            conn.close()
                        except Exception:
                            pass
                finally:
                    self._conn_lock.release()

        # In a thread of its own, so that close() returns by its deadline whatever the network
        # does: a release that cannot finish is abandoned and its grant ends with its window.
        r = threading.Thread(target=release_all, name="pg_idgen registry close", daemon=True)
        r.start()
        r.join(timeout=max(deadline - _monotonic(), 0) + 0.05)

    def __enter__(self) -> "Registry":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the database -------------------------------------------------------------------
    def _connect(self):
        import psycopg

        if isinstance(self._source, str):
            conn = psycopg.connect(**_dsn_params(self._source, self.timeout), autocommit=True,
                                   prepare_threshold=None)
        else:
            conn = self._source()
            if not conn.autocommit:
                conn.autocommit = True
            conn.prepare_threshold = None
        if self._sql is None:
            try:
                self._sql = _statements(_extension_schema(conn))
            except RegistryError:
                conn.close()
                raise
        return conn

    def _call(self, name: str, params: tuple):
        """Runs one statement and returns its row; a lost connection is reconnected and the
        statement run once more (acquire, renew and release may all be repeated safely: a
        repeated acquire at worst leaves one unused grant to end with its lease)."""
        import psycopg

        if not self._conn_lock.acquire(timeout=self.timeout):
            raise RegistryUnavailable(_words.busy(self.timeout))
        try:
            for attempt in (1, 2):
                watchdog = None
                try:
                    if self._conn is None or self._conn.closed:
                        self._conn = self._connect()
                    watchdog = _Watchdog(self._conn, self.timeout)
                    sent = _monotonic()
                    try:
                        row = self._conn.execute(self._sql[name], params).fetchone()
                    finally:
                        watchdog.stop()
                    return row, _monotonic() - sent
                except psycopg.Error as e:
                    fired = watchdog is not None and watchdog.fired
                    state = getattr(e, "sqlstate", None)
                    if state is not None and not state.startswith(("08", "57P")) and not fired:
                        raise _server_error(e, acquire=name.startswith("acquire")) from e
                    conn, self._conn = self._conn, None
                    if conn is not None:
                        try:
                            conn.close()
                        except Exception:
                            pass
                    if fired:  # no answer within the bound: a dead link, not a stale session
                        raise RegistryUnavailable(_words.no_answer(self.timeout)) from e
                    if attempt == 2:
                        raise RegistryUnavailable(_words.unreachable(e)) from e
        finally:
            self._conn_lock.release()

    def _grant(self, row, rtt: float, wall_us: int) -> Grant:
        g = Grant()
        (g.grant_id, g.token, g.kind, g.slot, g.epoch_ms, g.lo, g.hi, server_time) = row
        g.lo_us = _id_time_us(g.kind, g.epoch_ms, g.lo)
        g.hi_us = _id_time_us(g.kind, g.epoch_ms, g.hi)
        g.server_us = _datetime_us(server_time)
        g.wall_us, g.mono, g.rtt = wall_us, _monotonic(), rtt
        # The server's clock read server_us after the statement was sent: hi is at least
        # (hi - server) after the send on this process's monotonic clock.
        g.sent = g.mono - rtt
        return g

    def _acquire(self, gen: "_GrantGenerator") -> Grant:
        self._check_open()
        for attempt in range(5):
            try:
                if gen._lease is None:
                    row, rtt = self._call("acquire_default", (gen.kind, self.writer, self.pool))
                else:
                    row, rtt = self._call("acquire", (gen.kind, self.writer, gen._lease, self.pool))
                return self._grant(row, rtt, gen._wall_us())
            except RegistryError as e:
                # 55P03: concurrent acquires took every candidate first ("Try again").
                if e.sqlstate != "55P03" or attempt == 4:
                    raise

    def _renew(self, gen: "_GrantGenerator", g: Grant) -> Grant:
        self._check_open()
        row, rtt = self._call("renew", (g.grant_id, g.token, gen._lease))
        return self._grant(row, rtt, gen._wall_us())

    def _release(self, g: Grant, last_id_time) -> None:
        self._call("release", (g.grant_id, g.token, last_id_time))

    # --- background renewal ------------------------------------------------------------
    def _schedule(self, gen: "_GrantGenerator", due: Optional[float]) -> None:
        gen._renew_due = due
        if due is None:
            return
        self._start_renewer()

    def _start_renewer(self) -> None:
        with self._cond:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=_renewer, args=(weakref.ref(self),),
                                                name="pg_idgen registry renewal", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _after_fork_in_child(self) -> None:
        self._new_locks()
        self._thread = None
        conn, self._conn = self._conn, None
        if conn is not None:
            _INHERITED.append(conn)
            try:
                fd = conn.pgconn.socket
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, fd)
                os.close(devnull)
            except Exception:
                pass
        for gen in list(self._generators):
            gen._after_fork_in_child()


class _Watchdog:
    """Shuts a connection's socket down if a statement has not come back after ``seconds``: a
    read blocked on a dead link then fails at once (psycopg raises OperationalError)."""

    def __init__(self, conn, seconds: float):
        self._lock = threading.Lock()
        self._done = False
        self.fired = False
        try:
            self._fd = conn.pgconn.socket
        except Exception:
            self._fd = None
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._done or self._fd is None:
                return
            self.fired = True
            try:
                s = socket.socket(fileno=os.dup(self._fd))
                try:
                    s.shutdown(socket.SHUT_RDWR)
                finally:
                    s.close()
            except OSError:
                pass

    def stop(self) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()


def _dsn_params(dsn: str, timeout: float) -> dict:
    """The DSN's parameters with the connect and TCP timeouts added where it sets none."""
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(dsn)
    extra = dict(_TCP_DEFAULTS, tcp_user_timeout=str(max(int(timeout * 1000), 1)))
    if "PGCONNECT_TIMEOUT" not in os.environ:
        extra["connect_timeout"] = str(max(2, int(-(-timeout // 1))))
    for key, value in extra.items():
        params.setdefault(key, value)
    return params


def _extension_schema(conn) -> str:
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


def _server_error(e, acquire: bool = False) -> RegistryError:
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


def _id_time_us(kind: str, epoch_ms: Optional[int], t: int) -> int:
    """An id-time of ``kind`` (the grant row's ``lo_t``/``hi_t``: Snowflake ms since
    ``epoch_ms``, xid12 unix seconds) as unix microseconds."""
    return t * 1_000_000 if kind == "xid12" else (epoch_ms + t) * 1000


def _datetime_us(utc: str) -> int:
    """The grant row's ``server_time`` as ``_statements`` reads it (UTC, ``YYYY-MM-DD
    HH:MM:SS.ffffff``, whatever the session's DateStyle and TimeZone) as unix microseconds."""
    moment = _dt.datetime.strptime(utc, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=_dt.timezone.utc)
    return (moment - _EPOCH) // _ONE_US


def _statements(schema: str) -> dict:
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


def _renewer(ref) -> None:
    """The background thread: renews each generator's grant when it is due (about half its
    lease after the last renewal, on the server's clock), or at once when an id waits for it;
    it holds the registry only weakly between rounds."""
    while True:
        reg = ref()
        if reg is None:
            return
        with reg._cond:
            if reg._closed:
                return
            now = _monotonic()
            dues = [g._renew_due for g in list(reg._generators) if g._renew_due is not None]
            first = min(dues) if dues else None
            if first is None or first > now:
                reg._cond.wait(60.0 if first is None else min(first - now, 60.0))
                continue
        for gen in list(reg._generators):
            due = gen._renew_due
            if due is not None and due <= _monotonic() and not reg._closed:
                try:
                    gen._background_renew()
                except Exception as e:  # never let the thread die: the next id renews, or raises
                    gen._renew_due = _monotonic() + 1.0
                    gen._finished(RegistryError(f"the renewal failed: {e!r}"))
        del reg


def _lease_param(lease):
    if lease is None or isinstance(lease, (str, _dt.timedelta)):
        return lease
    if isinstance(lease, (int, float)) and not isinstance(lease, bool):
        return _dt.timedelta(seconds=lease)
    raise TypeError(f"a lease is an interval text, a timedelta or seconds, not {type(lease).__name__}")


class _GrantGenerator:
    kind = ""

    def __init__(self, registry: Registry, lease):
        self._registry = registry
        self._lease = _lease_param(lease)
        self._new_lock()
        self._grant: Optional[Grant] = None
        self._last_at_bind = -1
        self._renew_due: Optional[float] = None
        self._binds = 0  # windows bound so far
        self._attempts = 0  # background renewals or acquires finished so far
        self._error: Optional[RegistryError] = None  # how the last one failed

    def _new_lock(self) -> None:
        self._lock = threading.Lock()
        # An id that waits for the background thread waits on this, releasing the lock.
        self._changed = threading.Condition(self._lock)

    @property
    def grant(self) -> Optional[Grant]:
        """The grant this generator uses now (None before its first, after a fork or close)."""
        return self._grant

    @property
    def slot(self) -> Optional[int]:
        g = self._grant
        return None if g is None else g.slot

    # Under self._lock:
    def _bind(self, g: Grant, renewal: bool) -> None:
        if renewal:
            g.lo = self._grant.lo
            g.hi = max(g.hi, self._grant.hi)
        else:
            self._last_at_bind = self._state.last
        self._grant = g
        self._state.bind(g.slot, g.lo, g.hi)
        self._binds += 1
        # From the server's clock: half of what was left of the window when the server answered,
        # counted from when the statement was sent (the server read its clock after that), so a
        # slow link's round trip does not eat into the time left to renew.
        self._registry._schedule(self, g.sent + max(g.lease_s / 2, 0.05))

    def _drop(self) -> None:
        self._grant = None
        self._state.unbind()
        self._renew_due = None

    def _drop_locked(self) -> None:
        with self._lock:
            self._drop()

    def _acquire(self) -> None:
        self._bind(self._registry._acquire(self), renewal=False)

    def _renew_or_replace(self) -> None:
        """Under self._lock: renews the grant now, in this thread (when it was lost, acquires a
        new one, never keeping the old). Not the id path's (that waits for the background
        thread, bounded): for a caller that wants a renewal done before going on."""
        g = self._grant
        if g is None:
            return self._acquire()
        try:
            self._bind(self._registry._renew(self, g), renewal=True)
        except GrantLost:
            self._drop()
            self._acquire()

    def _finished(self, error: Optional[RegistryError]) -> None:
        with self._lock:
            self._error = error
            self._attempts += 1
            self._changed.notify_all()

    def _wake(self) -> None:
        # Bounded: a next_id() waiting for its window to start holds the lock (it then sees
        # the registry closed at its next step).
        if self._lock.acquire(timeout=0.1):
            try:
                self._changed.notify_all()
            finally:
                self._lock.release()

    def _await_window(self) -> None:
        """Under self._lock, at the window's end or without a grant: asks the background thread
        for a renewal (or a new grant) and waits for it at most renew_wait seconds, releasing
        the lock meanwhile. Never touches the connection itself: a renewal stuck in a read on
        a dead link delays nothing but this bounded wait. Raises what the renewal raised, or
        RegistryUnavailable when none came back in time."""
        reg = self._registry
        binds, attempts = self._binds, self._attempts
        start = _monotonic()
        deadline = start + reg.renew_wait
        self._renew_due = 0.0  # due now
        reg._start_renewer()
        while self._binds == binds:
            reg._check_open()
            if self._attempts != attempts and self._error is not None:
                e = self._error
                if isinstance(e, RegistryUnavailable):
                    raise RegistryUnavailable(f"{self._what()}: {e}") from e  # *_unreachable
                raise type(e)(str(e), e.sqlstate) from e
            left = deadline - _monotonic()
            if left <= 0:
                g = self._grant
                raise RegistryUnavailable(
                    _words.grant_unacquired(reg.renew_wait) if g is None
                    else _words.window_unrenewed(g.hi_us, reg.renew_wait))
            self._changed.wait(left)

    def _what(self) -> str:
        g = self._grant
        return _words.no_id(None if g is None else g.hi_us)

    def _make(self, now):
        """The slow path of making an id: waits, renewals, new grants, errors with offsets."""
        st = self._state
        tried = False  # renewed or acquired during this call
        waited_until = _monotonic() + self._registry.max_wait + 1.0
        while True:
            try:
                value, wait = st.step(now)
            except ClockBeforeWindow as e:
                raise self._with_offset(e) from None
            if value is not None:
                return value
            if wait is not None:
                if _monotonic() > waited_until:
                    raise ClockBeforeWindow(_words.clock_never_reached(
                        self._registry.max_wait, self._us(now), self._grant.lo_us))
                self._registry._sleep(max(self._seconds(wait - now), 0.0005))
            else:
                if tried and self._grant is not None:
                    raise self._ahead(now)
                if tried:
                    raise RegistryUnavailable(_words.grant_lost_again())
                tried = True
                self._registry._check_open()
                self._await_window()
            now = self._clock()

    def _ahead(self, now) -> ClockAheadOfWindow:
        g = self._grant
        past = self._seconds(now) - g.hi_us / 1e6
        return ClockAheadOfWindow(_words.clock_ahead_of_window(
            g.offset_s(), self._us(now), past, g.hi_us, g.lease_s))

    def _with_offset(self, e: ClockBeforeWindow) -> ClockBeforeWindow:
        behind = -self._grant.offset_s()
        if behind >= 0:
            return ClockBeforeWindow(_words.clock_behind_server(behind, str(e)))
        return ClockBeforeWindow(_words.clock_ahead_window_later(-behind, str(e)))

    def _background_renew(self) -> None:
        """In the background thread: renews the grant (or, without one, acquires one), with
        every call to the registry made without the lock, so an id never waits on the network."""
        reg = self._registry
        # Read without the lock: a next_id() waiting for its window to start holds it.
        g = self._grant
        renewal = g is not None
        try:
            if g is None:
                new = reg._acquire(self)
            else:
                try:
                    new = reg._renew(self, g)
                except GrantLost:
                    with self._lock:
                        if self._grant is not g:
                            return self._finished_locked(None)
                        self._drop()  # never used again, whatever the new acquire does
                    g, renewal = None, False
                    new = reg._acquire(self)
        except RegistryError as e:
            with self._lock:
                if self._grant is g and g is not None:
                    # Unreachable for now: try again soon; the window holds until its end.
                    self._renew_due = _monotonic() + min(max(g.lease_s / 8, 0.05), 5.0)
                elif self._grant is None:
                    self._renew_due = None  # the next id asks again
                self._finished_locked(e)
            return
        with self._lock:
            if self._grant is g:
                self._bind(new, renewal=renewal)
            # else: released or replaced meanwhile; a new grant left unused ends with its lease
            self._finished_locked(None)

    def _finished_locked(self, error: Optional[RegistryError]) -> None:
        self._error = error
        self._attempts += 1
        self._changed.notify_all()

    def _release(self) -> None:
        with self._lock:
            g = self._grant
            if g is None:
                return
            last = self._state.last
            made = last != self._last_at_bind
            self._drop()
        # Without the lock: a release stuck on the network holds up no id.
        self._registry._release(g, self._last_id_time(last) if made else "-infinity")

    def release(self) -> None:
        """Releases this generator's grant now (the next id acquires a new one)."""
        self._release()

    def _after_fork_in_child(self) -> None:
        self._new_lock()
        self._drop()


class GrantSnowflake(_GrantGenerator):
    """A Snowflake generator bound to a grant of the writer registry: ``next_id()`` makes ids
    whose worker id is the grant's slot and whose time is inside the grant's window, strictly
    increasing (across renewals and new grants too). Thread-safe."""

    kind = "snowflake"

    def __init__(self, registry: Registry, lease):
        super().__init__(registry, lease)
        self._clock_in = registry._clock_ms
        self._clock = registry._clock_ms or _wall_clock_ms
        self._state = SnowflakeGrantState(max_wait=int(registry.max_wait * 1000))
        self.epoch_ms: Optional[int] = None

    def _bind(self, g: Grant, renewal: bool) -> None:
        self.epoch_ms = g.epoch_ms
        self._state.set_epoch(g.epoch_ms)
        super()._bind(g, renewal)

    def next_id(self) -> int:
        with self._lock:
            clock = self._clock_in
            now = _time_ns() // 1_000_000 if clock is None else clock()
            st = self._state
            # The state machine's common case, inline (st.step(now) would return the same id):
            # the clock inside the window and the plain generator's id inside it too.
            if st.lo_unix <= now < st.hi_unix:
                id, wait = _snowflake_step(st.last, now, st.epoch_ms, st._worker_bits,
                                           st.max_backward_ms)
                if id is not None and id < st.hi_id:
                    st.last = id
                    return id
            return self._make(now)

    __call__ = next_id

    def _wall_us(self) -> int:
        return self._clock() * 1000

    @staticmethod
    def _seconds(clock_value) -> float:
        return clock_value / 1000

    @staticmethod
    def _us(clock_value) -> int:
        return clock_value * 1000

    def _last_id_time(self, last: int) -> _dt.datetime:
        return _EPOCH + _dt.timedelta(milliseconds=self._state.epoch_ms + (last >> _TIMESTAMP_SHIFT))

    # Decoders with the grant's epoch.
    def time(self, id: int) -> _dt.datetime:
        return snowflake_time(id, self.epoch_ms)

    def unix_ms(self, id: int) -> int:
        return snowflake_unix_ms(id, self.epoch_ms)

    worker = staticmethod(snowflake_worker)
    sequence = staticmethod(snowflake_sequence)
    parts = staticmethod(snowflake_parts)


class GrantXid(_GrantGenerator):
    """An xid12 generator bound to a grant of the writer registry: ``new()`` makes
    :class:`pg_idgen.Xid` ids whose machine id is the grant's slot and whose second is inside
    the grant's window, strictly increasing. Thread-safe."""

    kind = "xid12"

    def __init__(self, registry: Registry, lease):
        super().__init__(registry, lease)
        self._clock_in = registry._clock_s
        self._clock = registry._clock_s or _wall_clock_s
        self._state = XidGrantState(pid=os.getpid() & MAX_PID,
                                    counter_start=int.from_bytes(os.urandom(3), "big"),
                                    max_wait=int(registry.max_wait))

    def new(self) -> Xid:
        with self._lock:
            clock = self._clock_in
            t = _time_ns() // 1_000_000_000 if clock is None else int(clock() // 1)
            st = self._state
            # The state machine's common case, inline (st.step would return the same id).
            if st.lo <= t < st.hi:
                counter = st.counter
                n = _xid_step(st.last, t, st._middle | counter)
                if n < st.hi_n:
                    st.last = n
                    st.counter = (counter + 1) & MAX_COUNTER
                    return _bytes_new(Xid, n.to_bytes(BYTES, "big"))
            n = self._make(self._clock())
        return _bytes_new(Xid, n.to_bytes(BYTES, "big"))

    __call__ = new

    def _wall_us(self) -> int:
        return int(self._clock() * 1_000_000)

    @staticmethod
    def _seconds(clock_value) -> float:
        return clock_value

    @staticmethod
    def _us(clock_value) -> int:
        return int(clock_value * 1_000_000)

    def _last_id_time(self, last: int) -> _dt.datetime:
        return _EPOCH + _dt.timedelta(seconds=last >> 64)

    def _after_fork_in_child(self) -> None:
        super()._after_fork_in_child()
        self._state.set_pid(os.getpid())
        self._state.counter = int.from_bytes(os.urandom(3), "big") & MAX_COUNTER


def _wall_clock_ms() -> int:
    return _time.time_ns() // 1_000_000


def _wall_clock_s() -> float:
    return _time.time_ns() / 1_000_000_000


def _after_fork_in_child() -> None:
    for reg in list(_REGISTRIES):
        reg._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
