"""Backfill benchmark: idgen_backfill against one UPDATE, on the same table, in the same run.

Usage: bash scripts/bench.sh [VERSION] backfill [ROWS ...]   (default 1000000 10000000)

For each size, a table keyed by a random uuid with created_at spread over a year is built twice
from the same seed; one copy is filled by `UPDATE t SET xid = gen_xid12(created_at)`, the other
by `CALL idgen_backfill(..., order_by => 'created_at')`. While each runs, a second connection
keeps inserting rows and updating random existing ones; the longest of its statements is
reported. WAL is measured with pg_current_wal_lsn() around each fill (a CHECKPOINT before each,
so both pay the same full-page images).
"""
import os
import statistics
import sys
import threading
import time

import psycopg

HOST = os.environ["PG_IDGEN_HOST"]
PORT = os.environ["PG_IDGEN_PORT"]
DSN = f"host={HOST} port={PORT} user=postgres dbname=postgres"


def build(conn, rows: int) -> None:
    conn.execute("DROP TABLE IF EXISTS bench_backfill")
    conn.execute("""CREATE TABLE bench_backfill (id uuid PRIMARY KEY, created_at timestamptz NOT NULL,
        payload integer NOT NULL DEFAULT 0)""")
    conn.execute("SELECT setseed(0.42)")
    conn.execute(f"""INSERT INTO bench_backfill
        SELECT gen_random_uuid(), '2025-01-01'::timestamptz + random() * interval '365 days'
        FROM generate_series(1, {rows})""")
    conn.execute("CREATE INDEX ON bench_backfill (created_at)")
    conn.execute("VACUUM ANALYZE bench_backfill")
    conn.execute("ALTER TABLE bench_backfill ADD COLUMN xid xid12")
    conn.execute("ALTER TABLE bench_backfill ALTER COLUMN xid SET DEFAULT gen_xid12()")
    conn.execute("CHECKPOINT")


def fill(conn, statement: str) -> tuple[float, int, float, int]:
    """Runs statement while a writer works; returns seconds, WAL bytes, the writer's longest
    statement in seconds and its statement count."""
    sample = [r[0] for r in conn.execute("SELECT id FROM bench_backfill TABLESAMPLE SYSTEM (1) LIMIT 10000")]
    stop = threading.Event()
    waits: list[float] = []

    def writer():
        with psycopg.connect(DSN, autocommit=True) as w:
            k = 0
            while not stop.is_set():
                started = time.perf_counter()
                w.execute("INSERT INTO bench_backfill (id, created_at) VALUES (gen_random_uuid(), now())")
                w.execute("UPDATE bench_backfill SET payload = payload + 1 WHERE id = %s", (sample[k % len(sample)],))
                waits.append(time.perf_counter() - started)
                k += 1
                time.sleep(0.005)

    wal_before = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    thread = threading.Thread(target=writer)
    thread.start()
    started = time.perf_counter()
    conn.execute(statement)
    seconds = time.perf_counter() - started
    stop.set()
    thread.join()
    wal = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)::bigint", (wal_before,)).fetchone()[0]
    missing = conn.execute("SELECT count(*) FROM bench_backfill WHERE xid IS NULL").fetchone()[0]
    assert missing == 0, f"{missing} rows left unfilled by: {statement}"
    return seconds, wal, max(waits), len(waits)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000_000, 10_000_000]
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_idgen")
        version = conn.execute("SELECT current_setting('server_version')").fetchone()[0]
        print(f"backfill benchmark on PostgreSQL {version}: idgen_backfill (batches of 5000, order_by created_at)"
              " against one UPDATE, with a concurrent writer\n")
        for rows in sizes:
            build(conn, rows)
            update = fill(conn, "UPDATE bench_backfill SET xid = gen_xid12(created_at) WHERE xid IS NULL")
            build(conn, rows)
            conn.add_notice_handler(lambda d: None)
            batched = fill(conn, "CALL idgen_backfill('bench_backfill', 'xid', 'gen_xid12(created_at)', "
                                 "order_by => 'created_at', report_every => '1 hour')")
            ratio = batched[0] / update[0]
            verdict = "met" if ratio <= 1.5 else "MISSED"
            print(f"{rows:>10,} rows")
            for name, (seconds, wal, longest, count) in (("one UPDATE", update), ("idgen_backfill", batched)):
                print(f"    {name:<15} {seconds:8.1f} s   WAL {wal / 2**20:8.0f} MiB   "
                      f"writer's longest statement {longest * 1000:8.0f} ms ({count} statements)")
            print(f"    time ratio {ratio:.2f} (target <= 1.50: {verdict}), WAL ratio {batched[1] / update[1]:.2f}")
        conn.execute("DROP TABLE bench_backfill")


if __name__ == "__main__":
    main()
