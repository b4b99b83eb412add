"""Snowflake ids from many connections at once: never a duplicate inside the cluster."""
import time

import psycopg
import pytest

from conftest import connect, run_concurrently

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
