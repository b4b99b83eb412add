"""Backfill benchmark: idgen_backfill against one UPDATE, on the same table, in the same run.

Usage: bash scripts/bench.sh [VERSION] backfill [ROWS ...] [--tables indexed,no-index,partitioned]
       (default 1000000 10000000, every table)

For each size and each of three tables, the table is built twice from the same seed; one copy
is filled by `UPDATE t SET xid = gen_xid12(created_at)`, the other by `CALL idgen_backfill(...,
order_by => 'created_at')`. The tables: keyed by a random uuid, created_at spread over a year,
  indexed      with a btree index on created_at (the index walk)
  no index     without one (the sorted walk: one sort into a work table); this run is
               cancelled half way and called again, as the issue that asked for it did
  partitioned  range-partitioned by month of created_at, with a default partition, primary key
               (id, created_at), no index on created_at (the sorted walk over every partition)
While each fill runs, a second connection keeps inserting rows and updating random existing
ones; the longest of its statements is reported. WAL is measured with pg_current_wal_lsn()
around each fill (a CHECKPOINT before each, so both pay the same full-page images); the work
table's largest size is sampled every 0.1 s, and the sort's temporary files are the
database's temp_bytes.
"""
import os
import sys
import threading
import time

import psycopg

HOST = os.environ["PG_IDGEN_HOST"]
PORT = os.environ["PG_IDGEN_PORT"]
DSN = f"host={HOST} port={PORT} user=postgres dbname=postgres"
TABLES = ("indexed", "no index", "partitioned")


def build(conn, rows: int, kind: str) -> None:
    conn.execute("DROP TABLE IF EXISTS bench_backfill")
    if kind == "partitioned":
        conn.execute("""CREATE TABLE bench_backfill (id uuid NOT NULL, created_at timestamptz NOT NULL,
            payload integer NOT NULL DEFAULT 0, PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at)""")
        for month in range(12):
            conn.execute(f"""CREATE TABLE bench_backfill_{month + 1:02} PARTITION OF bench_backfill
                FOR VALUES FROM ('2025-01-01'::timestamptz + interval '{month} months')
                TO ('2025-01-01'::timestamptz + interval '{month + 1} months')""")
        conn.execute("CREATE TABLE bench_backfill_other PARTITION OF bench_backfill DEFAULT")
    else:
        conn.execute("""CREATE TABLE bench_backfill (id uuid PRIMARY KEY, created_at timestamptz NOT NULL,
            payload integer NOT NULL DEFAULT 0)""")
    conn.execute("SELECT setseed(0.42)")
    conn.execute(f"""INSERT INTO bench_backfill
        SELECT gen_random_uuid(), '2025-01-01'::timestamptz + random() * interval '365 days'
        FROM generate_series(1, {rows})""")
    if kind == "indexed":
        conn.execute("CREATE INDEX ON bench_backfill (created_at)")
    conn.execute("VACUUM ANALYZE bench_backfill")
    conn.execute("ALTER TABLE bench_backfill ADD COLUMN xid xid12")
    conn.execute("ALTER TABLE bench_backfill ALTER COLUMN xid SET DEFAULT gen_xid12()")
    conn.execute("CHECKPOINT")


def fill(conn, statements: list[str], cancel_at: int | None = None) -> dict:
    """Runs the statements one after the other while a writer works; with cancel_at, the first
    is cancelled once the progress table shows that many rows done. Returns seconds, WAL bytes,
    the writer's longest statement and its statement count, the work table's largest size and
    the temporary file bytes."""
    sample = [r[0] for r in conn.execute("SELECT id FROM bench_backfill TABLESAMPLE SYSTEM (1) LIMIT 10000")]
    stop = threading.Event()
    waits: list[float] = []
    work_size = [0]

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

    def watcher(pid: int):
        with psycopg.connect(DSN, autocommit=True) as m:
            cancelled = cancel_at is None
            while not stop.is_set():
                size = m.execute("""SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
                    WHERE c.relname ~ '^idgen_backfill_[0-9]+_[0-9]+$' AND c.relkind = 'r'""").fetchone()[0]
                work_size[0] = max(work_size[0], size)
                if not cancelled:
                    done = m.execute("""SELECT rows_done FROM idgen_backfill_progress
                        WHERE relation = 'bench_backfill'::regclass AND pid = %s AND finished_at IS NULL""",
                                     (pid,)).fetchone()
                    if done and done[0] >= cancel_at:
                        m.execute("SELECT pg_cancel_backend(%s)", (pid,))
                        cancelled = True
                time.sleep(0.1)

    wal_before = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    temp_before = conn.execute(
        "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()").fetchone()[0]
    threads = [threading.Thread(target=writer), threading.Thread(target=watcher, args=(conn.info.backend_pid,))]
    for t in threads:
        t.start()
    started = time.perf_counter()
    for k, statement in enumerate(statements):
        try:
            conn.execute(statement)
        except psycopg.errors.QueryCanceled:
            assert k == 0 and cancel_at is not None, "cancelled where no cancel was asked"
    seconds = time.perf_counter() - started
    stop.set()
    for t in threads:
        t.join()
    wal = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)::bigint", (wal_before,)).fetchone()[0]
    # The fill's session reports its temporary files at most once a second, at a transaction's end.
    time.sleep(1.1)
    conn.execute("SELECT 1")
    if conn.info.server_version >= 150000:
        conn.execute("SELECT pg_stat_clear_snapshot()")
    temp = conn.execute(
        "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()").fetchone()[0] - temp_before
    missing = conn.execute("SELECT count(*) FROM bench_backfill WHERE xid IS NULL").fetchone()[0]
    assert missing == 0, f"{missing} rows left unfilled by: {statements}"
    return {"seconds": seconds, "wal": wal, "longest": max(waits), "count": len(waits),
            "work": work_size[0], "temp": temp}


def main() -> None:
    args = sys.argv[1:]
    tables = TABLES
    if "--tables" in args:
        k = args.index("--tables")
        tables = tuple(t.replace("-", " ") for t in args[k + 1].split(","))
        assert set(tables) <= set(TABLES), f"--tables takes some of {','.join(TABLES)} (with - for spaces)"
        del args[k:k + 2]
    sizes = [int(a) for a in args] or [1_000_000, 10_000_000]
    with psycopg.connect(DSN, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_idgen")
        conn.add_notice_handler(lambda d: None)
        version = conn.execute("SELECT current_setting('server_version')").fetchone()[0]
        print(f"backfill benchmark on PostgreSQL {version}: idgen_backfill (batches of 5000, order_by created_at)"
              " against one UPDATE, with a concurrent writer\n")
        call = ("CALL idgen_backfill('bench_backfill', 'xid', 'gen_xid12(created_at)', "
                "order_by => 'created_at', report_every => '1 hour')")
        for rows in sizes:
            for kind in tables:
                build(conn, rows, kind)
                update = fill(conn, ["UPDATE bench_backfill SET xid = gen_xid12(created_at) WHERE xid IS NULL"])
                build(conn, rows, kind)
                if kind == "no index":
                    batched = fill(conn, [call, call], cancel_at=rows // 2)
                else:
                    batched = fill(conn, [call])
                walk = conn.execute("""SELECT walk FROM idgen_backfill_progress
                    WHERE relation = 'bench_backfill'::regclass""").fetchone()[0]
                ratio = batched["seconds"] / update["seconds"]
                verdict = "met" if ratio <= 1.5 else "MISSED"
                label = f"{kind}, {walk} walk" + (", cancelled half way and resumed" if kind == "no index" else "")
                print(f"{rows:>10,} rows, {label}")
                for name, r in (("one UPDATE", update), ("idgen_backfill", batched)):
                    print(f"    {name:<15} {r['seconds']:8.1f} s   WAL {r['wal'] / 2**20:8.0f} MiB   "
                          f"writer's longest statement {r['longest'] * 1000:8.0f} ms ({r['count']} statements)   "
                          f"temp files {r['temp'] / 2**20:6.0f} MiB")
                print(f"    work table at most {batched['work'] / 2**20:.0f} MiB "
                      f"({batched['work'] / rows:.0f} bytes per row)")
                print(f"    time ratio {ratio:.2f} (target <= 1.50: {verdict}), "
                      f"WAL ratio {batched['wal'] / update['wal']:.2f}", flush=True)
                conn.execute("DELETE FROM idgen_backfill_progress WHERE relation = 'bench_backfill'::regclass")
        conn.execute("DROP TABLE bench_backfill")


if __name__ == "__main__":
    main()
