"""Seed 003 end to end: two edge SQLite databases key their rows with the Python client's
EdgeStore (a Snowflake worker id and an xid12 machine id granted by the registry's 'edge' pool,
kept in each SQLite file) while the central PostgreSQL keys its own rows with gen_snowflake()
(worker 3) and gen_xid12(); back online, each edge reports and releases its grants, its rows
go by binary COPY through the psycopg adapter into staging tables, idgen_verify finds every id
covered by a grant, and then they meet the unique indexes."""
import sqlite3
import threading

import pytest

import pg_idgen.psycopg
from pg_idgen import EdgeStore, Xid

from servers import cluster_worker_id, connect, fresh_database

ROWS = 3000  # per writer and table, in ROUNDS rounds of 100
EDGES = ("edge-1", "edge-2")


@pytest.fixture
def worker_3():
    with cluster_worker_id(3):
        yield


ROUNDS = 30
ROUND = threading.Barrier(3, timeout=120)  # the three writers go round by round, so their ids interleave


def edge(path, name, dbname):
    """An edge device: its own SQLite file, its grants enrolled once online, then ids made
    offline, each committed with its row."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE events_sf (id INTEGER PRIMARY KEY, origin TEXT NOT NULL, payload TEXT NOT NULL)")
    db.execute("CREATE TABLE events_xid (id BLOB PRIMARY KEY, origin TEXT NOT NULL, payload TEXT NOT NULL)")
    snowflake, xids = EdgeStore(db, "snowflake", device=name), EdgeStore(db, "xid12", device=name)
    with connect(dbname=dbname) as pg:
        snowflake.enrol(pg, name)
        xids.enrol(pg, name)
    for i in range(ROWS):
        if i % (ROWS // ROUNDS) == 0:
            db.commit()
            ROUND.wait()
        db.execute("INSERT INTO events_sf VALUES (?, ?, ?)", (snowflake.next_id(), name, f"{name} sf {i}"))
        db.execute("INSERT INTO events_xid VALUES (?, ?, ?)", (xids.next_id().bytes, name, f"{name} xid {i}"))
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
        conn.execute("CREATE TABLE staging_sf (LIKE events_sf)")
        conn.execute("CREATE TABLE staging_xid (LIKE events_xid)")
        central_machine = conn.execute("SELECT xid12_current_machine()").fetchone()[0]

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
    threads = [writer(edge, tmp_path / f"{name}.db", name, dbname) for name in EDGES]
    threads.append(writer(central, dbname))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors

    edge_rows, slots = {}, {}
    for name in EDGES:
        lite = sqlite3.connect(tmp_path / f"{name}.db")
        sf = lite.execute("SELECT id, origin, payload FROM events_sf ORDER BY id").fetchall()
        xid = [(Xid.from_bytes(i), o, p) for i, o, p in lite.execute("SELECT id, origin, payload FROM events_xid ORDER BY id")]
        edge_rows[name] = (sf, xid)
        # Back online: report and release (the id-time after the last id is free again).
        with connect(dbname=dbname) as pg:
            for kind in ("snowflake", "xid12"):
                store = EdgeStore(lite, kind, device=name)
                slots[name, kind] = store.grant.slot
                assert store.sync(pg, renew=None) is None
        lite.close()
    with connect(dbname=dbname) as conn:
        pg_idgen.psycopg.register(conn)
        for name, (sf, xid) in edge_rows.items():
            with conn.transaction(), conn.cursor() as cur:
                with cur.copy("COPY staging_sf (id, origin, payload) FROM STDIN (FORMAT binary)") as copy:
                    copy.set_types(["int8", "text", "text"])
                    for row in sf:
                        copy.write_row(row)
                with cur.copy("COPY staging_xid (id, origin, payload) FROM STDIN (FORMAT binary)") as copy:
                    copy.set_types(["xid12", "text", "text"])
                    for row in xid:
                        copy.write_row(row)
        # Before the rows meet the unique indexes: every id is covered by its device's grant.
        for staging in ("staging_sf", "staging_xid"):
            assert conn.execute(f"SELECT * FROM idgen_verify('{staging}', 'id')").fetchall() == []
            writers = conn.execute(f"SELECT DISTINCT s.origin, w.writer FROM {staging} s, idgen_writer_of(s.id) w").fetchall()
            assert sorted(writers) == [(name, name) for name in EDGES]
        conn.execute("INSERT INTO events_sf SELECT * FROM staging_sf")
        conn.execute("INSERT INTO events_xid SELECT * FROM staging_xid")

        # No conflict: every row of every writer is there once.
        assert conn.execute("SELECT count(*), count(DISTINCT id) FROM events_sf").fetchone() == (3 * ROWS, 3 * ROWS)
        assert conn.execute("SELECT count(*), count(DISTINCT id) FROM events_xid").fetchone() == (3 * ROWS, 3 * ROWS)
        # Each id decodes (on the server) to its writer's worker and machine.
        workers = conn.execute("SELECT origin, array_agg(DISTINCT snowflake_worker(id)) FROM events_sf GROUP BY 1 ORDER BY 1").fetchall()
        assert workers == [("central", [3])] + [(name, [slots[name, "snowflake"]]) for name in EDGES]
        assert all(slots[name, "snowflake"] >= 768 for name in EDGES)  # the 'edge' pool's worker ids
        machines = dict(conn.execute("SELECT origin, array_agg(DISTINCT xid12_machine(id)) FROM events_xid GROUP BY 1").fetchall())
        assert machines == {"central": [central_machine],
                            **{name: [slots[name, "xid12"].to_bytes(3, "big")] for name in EDGES}}
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
