"""Snowflake ids from many connections at once: never a duplicate inside the cluster."""
import threading
import time

import psycopg
import pytest

from servers import connect, run_concurrently, wait_for_setting

CONNECTIONS = 16
PER_CONNECTION = 100_000
BATCH = 10_000


def test_sixteen_connections_100k_each(database, worker_42):
    with connect(dbname=database) as conn:
        conn.execute("DROP TABLE IF EXISTS flakes")
        conn.execute("CREATE UNLOGGED TABLE flakes (conn int, seq int, id bigint)")
    def worker(k: int) -> None:
        with connect(dbname=database) as conn:
            for start in range(0, PER_CONNECTION, BATCH):
                conn.execute(
                    "INSERT INTO flakes SELECT %s, g, gen_snowflake() FROM generate_series(%s::int, %s::int) g",
                    [k, start + 1, start + BATCH],
                )

    run_concurrently(CONNECTIONS, worker)

    with connect(dbname=database) as conn:
        total, distinct = conn.execute("SELECT count(*), count(DISTINCT id) FROM flakes").fetchone()
        assert (total, distinct) == (CONNECTIONS * PER_CONNECTION,) * 2
        # One shared state: within each millisecond the 16 connections' sequence numbers are
        # consecutive, not 16 separate runs.
        gaps = conn.execute(
            "SELECT count(*) FROM (SELECT count(*) n, min(id & 4095) lo, max(id & 4095) hi "
            "FROM flakes GROUP BY id >> 22) s WHERE hi - lo <> n - 1").fetchone()[0]
        assert gaps == 0
        not_increasing = conn.execute(
            "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY conn ORDER BY seq) prev FROM flakes) s "
            "WHERE id <= prev"
        ).fetchone()[0]
        assert not_increasing == 0
        workers = conn.execute("SELECT array_agg(DISTINCT snowflake_worker(id)) FROM flakes").fetchone()[0]
        assert workers == [42]


def test_without_worker_id_is_an_error(database):
    with connect(dbname=database) as conn:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
            conn.execute("SELECT gen_snowflake()")
        assert "pg_idgen.worker_id" in str(err.value)
        assert "ALTER SYSTEM" in err.value.diag.message_hint


def test_without_preload_is_an_error():
    with connect("plain") as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_idgen")
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
            conn.execute("SELECT gen_snowflake()")
        assert "shared_preload_libraries" in str(err.value)


# The epoch moved this much later stands in for a clock stepping back: a call waits about as
# long (at most pg_idgen.snowflake_max_backward_ms, which allows 60 s).
EPOCH_SHIFT_S = 50


def test_a_wait_for_the_clock_is_visible_and_cancellable(database, worker_42):
    """A call that waits for the clock (the epoch moved 50 s later stands in for a clock
    stepping back) waits on its latch: pg_stat_activity shows it, and a cancel ends it, long
    before the clock would have."""
    default_epoch = 1288834974657
    with connect(dbname=database) as waiter, connect(dbname=database) as admin:
        waiter.execute("SET pg_idgen.snowflake_max_backward_ms = 60000")
        issued = time.monotonic()
        waiter.execute("SELECT gen_snowflake()")
        admin.execute(f"ALTER SYSTEM SET pg_idgen.snowflake_epoch = '{default_epoch + EPOCH_SHIFT_S * 1000}'")
        admin.execute("SELECT pg_reload_conf()")
        # Once new sessions read it, the waiter (idle, signalled by the postmaster) applies it
        # before its next statement.
        wait_for_setting("pg_idgen.snowflake_epoch", default_epoch + EPOCH_SHIFT_S * 1000)
        outcome = {}

        def wait() -> None:
            try:
                waiter.execute("SELECT gen_snowflake()")
                outcome["result"] = "returned"
            except psycopg.errors.QueryCanceled:
                outcome["result"] = "canceled"
            outcome["ended"] = time.monotonic()

        thread = threading.Thread(target=wait)
        try:
            thread.start()
            # The wait is seen within 30 s (it shows within milliseconds on an idle machine).
            seen, stop = None, time.monotonic() + 30
            while time.monotonic() < stop:
                seen = admin.execute(
                    "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s AND state = 'active'",
                    [waiter.info.backend_pid]).fetchone()
                if seen and seen[0] == "Extension":
                    break
                time.sleep(0.05)
            assert seen == ("Extension",), f"the waiting call's wait event, 30 s after it started: {seen}"
            cancelled = time.monotonic()
            admin.execute("SELECT pg_cancel_backend(%s)", [waiter.info.backend_pid])
            thread.join(EPOCH_SHIFT_S + 10)
            assert outcome.get("result") == "canceled", outcome
            # The clock would have ended the wait no sooner than EPOCH_SHIFT_S after the first
            # id was issued; the cancel ended it well before (a margin of 10 s for the cancel
            # to land), whenever on a slow machine it was sent.
            clock_end = issued + EPOCH_SHIFT_S
            assert outcome["ended"] < clock_end - 10, (
                f"the call ended {outcome['ended'] - cancelled:.1f} s after the cancel, "
                f"{outcome['ended'] - issued:.1f} s after the first id: not long before the clock would have "
                f"ended it ({EPOCH_SHIFT_S} s; cancel sent {cancelled - issued:.1f} s after the first id)")
        finally:
            thread.join()
            admin.execute("ALTER SYSTEM RESET pg_idgen.snowflake_epoch")
            admin.execute("SELECT pg_reload_conf()")
            wait_for_setting("pg_idgen.snowflake_epoch", default_epoch)
