"""The words of the writer registry's errors, of its generators' and of the edge store's, in
one place: ``_grant``'s state machines, ``_registry``'s Registry and generators and ``_edge``'s
EdgeStore take their words from here.

The words are the shared vectors' (``tests/vectors/registry_errors.json`` and
``edge_traces.json``, key ``words``, face ``python``): each function below is named after its
entry and takes that entry's placeholders; ``tests/test_words.py`` renders every template and
compares. Moments are unix microseconds, written to the millisecond as
``datetime.isoformat`` writes them (``2027-01-15T08:00:00.500+00:00``); seconds are floats.
"""
from __future__ import annotations

import datetime as _dt
from typing import Optional

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def iso_us(unix_us: int) -> str:
    """A moment (unix µs) to the millisecond, in the words' form."""
    return (_EPOCH + _dt.timedelta(microseconds=unix_us)).isoformat(timespec="milliseconds")


# --- the registry (registry_errors.json) ------------------------------------------------------

def server_refusal(message: str, detail: Optional[str]) -> str:
    """A server error as the client shows it: the message, and its DETAIL when there is one
    (``server_refusal``, ``server_refusal_no_detail``)."""
    return f"{message} (DETAIL: {detail})" if detail else message


def server_refusal_no_detail(message: str) -> str:
    return server_refusal(message, None)


def needs_0_7_0(message: str) -> str:
    return (f"the writer registry needs the pg_idgen extension 0.7.0 or later "
            f"(ALTER EXTENSION pg_idgen UPDATE): {message}")


def not_installed() -> str:
    return ("the pg_idgen extension is not installed in this database: "
            "CREATE EXTENSION pg_idgen (or the portable edition's script)")


def closed() -> str:
    return "the writer registry is closed"


def unreachable(cause: object) -> str:
    return f"the writer registry could not be reached: {cause}"


def no_answer(timeout: float) -> str:
    return unreachable(f"no answer within {timeout:g} s, the connection was abandoned")


def busy(timeout: float) -> str:
    return unreachable(f"another call to it has not come back within {timeout:g} s")


def no_id(hi: Optional[int]) -> str:
    """What an id call could not do: renew the window ending at ``hi`` (µs), or, with None,
    acquire a grant."""
    if hi is None:
        return "no grant could be acquired, so no id is made"
    return f"the grant's window ended at {iso_us(hi)} and could not be renewed, so no id is made"


def window_unrenewed(hi: int, renew_wait: float) -> str:
    return f"{no_id(hi)}: the writer registry did not answer within {renew_wait:g} s"


def grant_unacquired(renew_wait: float) -> str:
    return f"{no_id(None)}: the writer registry did not answer within {renew_wait:g} s"


def window_unreachable(hi: int, cause: str) -> str:
    return f"{no_id(hi)}: {cause}"


def grant_unreachable(cause: str) -> str:
    return f"{no_id(None)}: {cause}"


def grant_lost_again() -> str:
    return f"{no_id(None)}: the grant was lost again"


def clock_before_window(behind: float, start: int, kind: str, slot: int, max_wait: float) -> str:
    return (f"the clock is {behind:.1f} s behind the grant's window, which starts at "
            f"{iso_us(start)} ({kind} slot {slot}); a writer waits at most {max_wait:g} s for "
            f"its window")


def clock_behind_server(behind: float, inner: str) -> str:
    return f"the clock is {behind:.1f} s behind the registry server's: {inner}"


def clock_ahead_window_later(ahead: float, inner: str) -> str:
    return (f"the clock is {ahead:.1f} s ahead of the registry server's, but the slot's window "
            f"starts later still: {inner}")


def clock_never_reached(max_wait: float, now: int, start: int) -> str:
    return (f"the clock did not reach the grant's window within {max_wait:g} s (it reads "
            f"{iso_us(now)}, the window starts at {iso_us(start)})")


def clock_ahead_of_window(ahead: float, now: int, past: float, hi: int, lease: float) -> str:
    return (f"the clock is {ahead:.1f} s ahead of the registry server's: it reads {iso_us(now)}, "
            f"{past:.3f} s past the end of the grant's window ({iso_us(hi)}) just after renewing "
            f"it for a lease of {lease:.1f} s; a writer runs only while its clock is less than a "
            f"lease ahead of the server's")


# --- the edge store (edge_traces.json) --------------------------------------------------------

def edge_grant(grant_id: int, kind: str, slot: int, lo: int, hi: int, device: str) -> str:
    return (f"grant {grant_id} ({kind} slot {slot}, window {iso_us(lo)} to {iso_us(hi)}) on "
            f"device '{device}'")


def edge_cloned(kept: str) -> str:
    return f"no id is made: {kept}"


def edge_clock_before_window(now: int, grant: str) -> str:
    return (f"the device clock reads {iso_us(now)}, before the window of {grant}: no id is made; "
            f"set the clock right (was it reset?)")


def edge_window_ended(now: int, grant: str) -> str:
    return (f"the device clock reads {iso_us(now)}, at or after the end of the window of "
            f"{grant}: no id is made; sync with the registry to renew it")


def edge_used_up(grant: str, last: int) -> str:
    return (f"the ids of the window of {grant} are used up (the last is of {iso_us(last)}): no id "
            f"is made; sync to renew it")


def edge_kept(message: str, detail: Optional[str]) -> str:
    return server_refusal(message, detail)


def edge_device_conflict(message: str, detail: Optional[str]) -> str:
    return server_refusal(message, detail)


def edge_no_grant(kind: str, device: str) -> str:
    return f"{edge_no_grant_to_sync(kind, device)}: enrol it first"


def edge_no_grant_to_sync(kind: str, device: str) -> str:
    return f"this store holds no {kind} grant on device '{device}'"


def edge_already_enrolled(grant: str) -> str:
    return (f"this store already holds {grant}: sync it, or release it with "
            f"sync(pg_conn, renew=None), before enrolling again")


def edge_sqlite_in_transaction() -> str:
    return ("the SQLite connection is inside a transaction: enrol and sync commit their writes "
            "to the file themselves; call them outside one")


def edge_postgres_in_transaction() -> str:
    return ("the PostgreSQL connection is inside a transaction: an edge store commits its "
            "registry calls itself")
