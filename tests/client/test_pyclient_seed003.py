"""Seed 003 end to end: two edge SQLite databases key their rows with the Python client's
Snowflake (workers 1 and 2) and Xid generators (machine ids of their own) while the central
PostgreSQL keys its own rows with gen_snowflake() (worker 3) and gen_xid12(); the edges' rows
are then merged into the central tables by binary COPY through the psycopg adapter, under
unique indexes."""
import sqlite3
import threading

import pytest

import pg_idgen.psycopg
from pg_idgen import Snowflake, Xid, XidGenerator

from conftest import cluster_worker_id, connect, fresh_database

ROWS = 3000  # per writer and table, in ROUNDS rounds of 100
EDGES = {"edge-1": (1, 0xE00001), "edge-2": (2, 0xE00002)}


@pytest.fixture
def worker_3():
    with cluster_worker_id(3):
        yield


ROUNDS = 30
ROUND = threading.Barrier(3, timeout=120)  # the three writers go round by round, so their ids interleave


def edge(path, name, worker, machine):
    """An edge device: its own SQLite file, ids made in the application."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE events_sf (id INTEGER PRIMARY KEY, origin TEXT NOT NULL, payload TEXT NOT NULL)")
    db.execute("CREATE TABLE events_xid (id BLOB PRIMARY KEY, origin TEXT NOT NULL, payload TEXT NOT NULL)")
    snowflake, xids = Snowflake(worker), XidGenerator(machine)
    for i in range(ROWS):
        if i % (ROWS // ROUNDS) == 0:
            db.commit()
            ROUND.wait()
        db.execute("INSERT INTO events_sf VALUES (?, ?, ?)", (snowflake.next_id(), name, f"{name} sf {i}"))
        db.execute("INSERT INTO events_xid VALUES (?, ?, ?)", (xids.new().bytes, name, f"{name} xid {i}"))
    db.commit()
    db.close()


def central(dbname):
    with connect(dbname=dbname) as conn:
        for i in range(ROWS // 100):
            ROUND.wait()
            conn.execute("INSERT INTO events_sf (origin, payload) SELECT 'central', 'central sf ' || g FROM generate_series(%s::int, %s::int) g",
                         [i * 100, i * 100 + 99])
            conn.execute("INSERT INTO events_xid (origin, payload) SELECT 'central', 'central xid ' || g FROM generate_series(%s::int, %s::int) g",
                         [i * 100, i * 100 + 99])


def test_edges_merge_into_central_without_conflict(tmp_path, worker_3):
    dbname = fresh_database("pyclient_seed003", extension=True)
    with connect(dbname=dbname) as conn:
        conn.execute("CREATE TABLE events_sf (id bigint PRIMARY KEY DEFAULT gen_snowflake(), origin text NOT NULL, payload text NOT NULL)")
        conn.execute("CREATE TABLE events_xid (id xid12 PRIMARY KEY DEFAULT gen_xid12(), origin text NOT NULL, payload text NOT NULL)")
        central_machine = conn.execute("SELECT xid12_current_machine()").fetchone()[0]
    assert central_machine not in {m.to_bytes(3, "big") for _, m in EDGES.values()}

    # The edges and the central database write at the same time: ids of the same milliseconds.
    errors = []

    def writer(target, *args):
        def run():
            try:
                target(*args)
            except Exception as e:  # reported below
                errors.append(e)
                ROUND.abort()
        return threading.Thread(target=run)

    ROUND.reset()
    threads = [writer(edge, tmp_path / f"{name}.db", name, w, m) for name, (w, m) in EDGES.items()]
    threads.append(writer(central, dbname))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors

    edge_rows = {}
    with connect(dbname=dbname) as conn:
        pg_idgen.psycopg.register(conn)
        for name in EDGES:
            lite = sqlite3.connect(tmp_path / f"{name}.db")
            sf = lite.execute("SELECT id, origin, payload FROM events_sf ORDER BY id").fetchall()
            xid = [(Xid.from_bytes(i), o, p) for i, o, p in lite.execute("SELECT id, origin, payload FROM events_xid ORDER BY id")]
            lite.close()
            edge_rows[name] = (sf, xid)
            with conn.transaction(), conn.cursor() as cur:
                with cur.copy("COPY events_sf (id, origin, payload) FROM STDIN (FORMAT binary)") as copy:
                    copy.set_types(["int8", "text", "text"])
                    for row in sf:
                        copy.write_row(row)
                with cur.copy("COPY events_xid (id, origin, payload) FROM STDIN (FORMAT binary)") as copy:
                    copy.set_types(["xid12", "text", "text"])
                    for row in xid:
                        copy.write_row(row)

        # No conflict: every row of every writer is there once.
        assert conn.execute("SELECT count(*), count(DISTINCT id) FROM events_sf").fetchone() == (3 * ROWS, 3 * ROWS)
        assert conn.execute("SELECT count(*), count(DISTINCT id) FROM events_xid").fetchone() == (3 * ROWS, 3 * ROWS)
        # Each id decodes (on the server) to its writer's worker and machine.
        workers = conn.execute("SELECT origin, array_agg(DISTINCT snowflake_worker(id)) FROM events_sf GROUP BY 1 ORDER BY 1").fetchall()
        assert workers == [("central", [3]), ("edge-1", [1]), ("edge-2", [2])]
        machines = dict(conn.execute("SELECT origin, array_agg(DISTINCT xid12_machine(id)) FROM events_xid GROUP BY 1").fetchall())
        assert machines == {"central": [central_machine], "edge-1": [b"\xe0\x00\x01"], "edge-2": [b"\xe0\x00\x02"]}
        # Byte-identical: the rows read back, and the ids' bytes as the server sees them.
        cur = conn.cursor(binary=True)
        for name, (sf, xid) in edge_rows.items():
            assert cur.execute("SELECT id, origin, payload FROM events_sf WHERE origin = %s ORDER BY id", [name]).fetchall() == sf
            back = cur.execute("SELECT id, origin, payload, id::bytea, id::text FROM events_xid WHERE origin = %s ORDER BY 1", [name]).fetchall()
            assert [r[:3] for r in back] == xid
            assert [(bytes(r[3]), r[4]) for r in back] == [(x.bytes, str(x)) for x, _, _ in xid]
        # The ids of all three writers interleave in time: the merge mixes, it does not append.
        spans = conn.execute("SELECT origin, min(snowflake_time(id)), max(snowflake_time(id)) FROM events_sf GROUP BY 1").fetchall()
        latest_start = max(s for _, s, _ in spans)
        earliest_end = min(e for _, _, e in spans)
        assert latest_start <= earliest_end, spans
