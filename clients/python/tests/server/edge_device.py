"""An edge device for clients/python/tests/server/test_seed003_edges.py: one OS process, its own
SQLite file, the Python client's EdgeStore (a Snowflake grant and an xid12 grant of the
registry's 'edge' pool). clients/rust/examples/edge_device.rs is its Rust twin: the same
commands, tables and output lines.

    edge_device.py enrol    --db FILE --device NAME --dsn DSN [--lease-days D]
    edge_device.py generate --db FILE --device NAME --rows N [--batch B] [--pause S] [--stall-after K]
    edge_device.py sync     --db FILE --device NAME --dsn DSN

enrol takes both grants (writer = the device name). generate needs no server: it goes on from
the rows already in the file up to N rows in each of events_sf and events_xid, B rows per SQLite
transaction, each row and the ids' new marks committed together; after each commit it prints
"committed FIRST LAST". With --stall-after K it commits K batches, then inserts half of the next
one, prints "uncommitted ..." lines and "stalled", and waits (for a kill -9). When the store
refuses to make an id it prints "refused CLASS MESSAGE" and exits 3. sync reports and releases
both grants. Every line is flushed.

Under libfaketime (FAKETIME_DONT_FAKE_MONOTONIC=1) time.sleep fails with EINVAL, so every wait
goes through select() instead.
"""
import argparse
import datetime as dt
import select
import sqlite3
import sys

from pg_idgen import EdgeError, EdgeStore

KINDS = ("snowflake", "xid12")
TABLES = (
    "CREATE TABLE IF NOT EXISTS events_sf (id INTEGER PRIMARY KEY, origin TEXT NOT NULL, payload TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS events_xid (id BLOB PRIMARY KEY, origin TEXT NOT NULL, payload TEXT NOT NULL)",
)


def say(line: str) -> None:
    print(line, flush=True)


def wait(seconds) -> None:
    select.select([], [], [], seconds)


def stores(db, device):
    return [EdgeStore(db, kind, device=device) for kind in KINDS]


def insert_row(db, sf, xid, device, n):
    """Row n of each table: ids made by the stores (marks written, uncommitted), the payload
    names the id as this client prints it."""
    s, x = sf.next_id(), xid.next_id()
    db.execute("INSERT INTO events_sf VALUES (?, ?, ?)", (s, device, f"{device} sf {n} {s}"))
    db.execute("INSERT INTO events_xid VALUES (?, ?, ?)", (x.bytes, device, f"{device} xid {n} {x}"))
    return s, x


def generate(db, device, rows, batch, pause, stall_after):
    for sql in TABLES:
        db.execute(sql)
    db.commit()
    sf, xid = stores(db, device)
    n = db.execute("SELECT count(*) FROM events_sf").fetchone()[0]
    batches = 0
    while n < rows:
        if stall_after is not None and batches == stall_after:
            # Killed in the middle of a batch: half of it inserted, nothing committed.
            for i in range(n, min(n + max(batch // 2, 1), rows)):
                s, x = insert_row(db, sf, xid, device, i)
                say(f"uncommitted {i} {s} {x}")
            say("stalled")
            while True:
                wait(3600)
        last = min(n + batch, rows)
        for i in range(n, last):
            insert_row(db, sf, xid, device, i)
        db.commit()
        say(f"committed {n} {last - 1}")
        n, batches = last, batches + 1
        if pause:
            wait(pause)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["enrol", "generate", "sync"])
    p.add_argument("--db", required=True)
    p.add_argument("--device", required=True)
    p.add_argument("--dsn")
    p.add_argument("--lease-days", type=float, default=10.0)
    p.add_argument("--rows", type=int, default=100)
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--pause", type=float, default=0.01)
    p.add_argument("--stall-after", type=int)
    a = p.parse_args()
    db = sqlite3.connect(a.db)
    try:
        if a.command == "generate":
            generate(db, a.device, a.rows, a.batch, a.pause, a.stall_after)
            return 0
        import psycopg

        with psycopg.connect(a.dsn, autocommit=True) as pg:
            for store in stores(db, a.device):
                if a.command == "enrol":
                    g = store.enrol(pg, a.device, lease=dt.timedelta(days=a.lease_days))
                    say(f"enrolled {store.kind} {g.grant_id} {g.slot}")
                else:
                    before = store.grant
                    assert store.sync(pg, renew=None) is None
                    say(f"released {store.kind} {before.grant_id}")
        return 0
    except EdgeError as e:
        db.rollback()
        say(f"refused {type(e).__name__} {e}")
        return 3
    finally:
        db.close()


if __name__ == "__main__":
    sys.exit(main())
