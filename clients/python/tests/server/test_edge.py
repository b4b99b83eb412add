"""Edge devices with the Python client's EdgeStore against the registry: a device enrols in
pool 'edge' for 28 days, makes ids offline into its own SQLite file for days, syncs
(idgen_report + idgen_renew); a copy of its file (a restored backup) syncing after the original
is found (23505, EdgeCloned, both devices named); the merged rows are all covered
(idgen_verify); the release frees the id-time after the last id.

The devices' clocks are fake (the real time plus the days they spend offline); the server's is
real. Each test has its own database."""
import datetime as dt
import sqlite3
import time

import pytest

import pg_idgen
from pg_idgen import EdgeCloned, EdgeStore, Xid
from servers import connect, fresh_database

DAY = 86_400.0
LEASE = dt.timedelta(days=28)


class Clock:
    def __init__(self):
        self.s = time.time()

    def __call__(self):
        return self.s


def device_file(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, device TEXT, n INTEGER)")
    return conn


def offline(db, store, clock, days, per_day, start=0):
    """Rows made over `days` days of the device clock, each id in its row's transaction."""
    ids = []
    for i in range(int(days * per_day)):
        with db:
            id = store.next_id()
            db.execute("INSERT INTO rows VALUES (?, ?, ?)", (str(id), store.device, start + i))
        ids.append(id)
        clock.s += DAY / per_day
    return ids


def grant_row(pg, grant_id):
    return pg.execute("SELECT pool, slot, lo, hi, released_at FROM idgen_grants WHERE grant_id = %s",
                      [grant_id]).fetchone()


def test_xid12_edge_offline_sync_clone_merge_release(tmp_path):
    db_name = fresh_database("client_edge", extension=True)
    with connect(dbname=db_name) as pg:
        clock_a = Clock()
        a = device_file(tmp_path / "phone-a.db")
        store_a = EdgeStore(a, "xid12", device="phone-a", clock=clock_a)
        g = store_a.enrol(pg, "edge-test@phone-a", lease=LEASE)
        assert 12_582_912 <= g.slot < 16_777_216 and g.syncs == 0 and g.last_id is None
        pool, slot, lo, hi, _ = grant_row(pg, g.grant_id)
        assert (pool, slot, lo, hi) == ("edge", g.slot, g.lo, g.hi)
        assert dt.timedelta(days=28) <= hi - lo <= dt.timedelta(days=28, seconds=10)
        with pytest.raises(pg_idgen.EdgeError, match="already holds grant"):
            store_a.enrol(pg, "edge-test@phone-a")

        # Three days offline, then back online: report 1, and the window runs 28 days from now.
        before = offline(a, store_a, clock_a, 3, 40)
        g = store_a.sync(pg, renew=LEASE)
        assert g.syncs == 1 and g.last_id == before[-1] and g.hi >= hi
        assert g.hi == grant_row(pg, g.grant_id)[3]
        assert pg.execute("SELECT device, syncs FROM idgen_registry_report WHERE grant_id = %s",
                          [g.grant_id]).fetchone() == ("phone-a", 1)

        # A backup of the file, restored on a second device later.
        b = device_file(tmp_path / "phone-b.db")
        a.backup(b)
        clock_b = Clock()
        clock_b.s = clock_a.s
        store_b = EdgeStore(b, "xid12", device="phone-b", clock=clock_b)
        assert store_b.grant == g

        # Both go on offline from the same state and the same time: the same ids.
        after_a = offline(a, store_a, clock_a, 2, 40, start=1000)
        after_b = offline(b, store_b, clock_b, 2, 40, start=1000)
        assert after_a == after_b  # why a copy must be found before the rows are merged
        assert store_a.sync(pg, renew=LEASE).syncs == 2
        with pytest.raises(EdgeCloned) as e:
            store_b.sync(pg, renew=LEASE)
        err = e.value
        assert err.sqlstate == "23505"
        assert f"grant {g.grant_id} is used by two devices" in str(err)
        assert "'phone-b'" in err.detail and "'phone-a'" in err.detail, err.detail
        with pytest.raises(EdgeCloned):  # the copy makes no more ids of the grant
            store_b.next_id()
        assert pg.execute("SELECT device, syncs FROM idgen_registry_report WHERE grant_id = %s",
                          [g.grant_id]).fetchone() == ("phone-a", 2)

        # The original's rows merged into PostgreSQL: every id covered by the grant.
        rows = a.execute("SELECT id, device, n FROM rows ORDER BY n").fetchall()
        assert [r[0] for r in rows] == [str(i) for i in before + after_a]
        pg.execute("CREATE TABLE staging (id xid12 PRIMARY KEY, device text, n int)")
        with pg.cursor() as cur:
            cur.executemany("INSERT INTO staging VALUES (%s::xid12, %s, %s)", rows)
        assert pg.execute("SELECT count(*) FROM staging").fetchone()[0] == len(before + after_a)
        assert pg.execute("SELECT * FROM idgen_verify('staging', 'id')").fetchall() == []
        writers = pg.execute("SELECT DISTINCT w.writer FROM staging, idgen_writer_of(staging.id) w").fetchall()
        assert writers == [("edge-test@phone-a",)]

        # Done with the device: the window ends just after its last id, the rest is free.
        last = store_a.grant.last_id
        assert store_a.sync(pg, renew=None) is None and store_a.grant is None
        _, _, _, hi, released_at = grant_row(pg, g.grant_id)
        assert released_at is not None
        assert hi == Xid(str(last)).time + dt.timedelta(seconds=1)
        assert a.execute("SELECT count(*) FROM pg_idgen_edge").fetchone()[0] == 0


def test_snowflake_edge_sync_and_release(tmp_path):
    db_name = fresh_database("client_edge_sf", extension=True)
    with connect(dbname=db_name) as pg:
        clock = Clock()
        d = device_file(tmp_path / "box.db")
        store = EdgeStore(d, "snowflake", device="box-1", clock=clock)
        g = store.enrol(pg, "edge-test@box-1", lease=dt.timedelta(days=7))
        assert 768 <= g.slot <= 1023 and g.epoch_ms is not None
        ids = offline(d, store, clock, 2, 50)
        assert all(pg_idgen.snowflake_worker(i) == g.slot for i in ids)
        assert store.sync(pg, renew=dt.timedelta(days=7)).syncs == 1
        ids += offline(d, store, clock, 1, 50, start=1000)
        pg.execute("CREATE TABLE staging (id bigint PRIMARY KEY)")
        with pg.cursor() as cur:
            cur.executemany("INSERT INTO staging VALUES (%s)", [(i,) for i in ids])
        assert pg.execute("SELECT * FROM idgen_verify('staging', 'id')").fetchall() == []
        # A wrong token is the server's 42501, not swallowed; the store keeps its grant.
        with d:
            d.execute("UPDATE pg_idgen_edge SET token = token + 1")
        with pytest.raises(pg_idgen.WrongToken):
            store.sync(pg)
        assert store.grant.syncs == 1
        with d:
            d.execute("UPDATE pg_idgen_edge SET token = token - 1")
        assert store.sync(pg, renew=None) is None
        hi = grant_row(pg, g.grant_id)[3]
        assert hi == pg_idgen.snowflake_time(ids[-1], g.epoch_ms) + dt.timedelta(milliseconds=1)


class ReplyLost(Exception):
    pass


def test_a_lost_sync_reply_is_not_taken_for_a_copy(tmp_path):
    """The server commits a sync's report and renewal, and the reply never arrives. The next sync
    sends the same report again (the attempt number kept in the file): the registry answers as
    before instead of raising 23505, and the device goes on; a copy of the file made before the
    lost reply, on another device, is still found."""
    db_name = fresh_database("client_edge_lost_reply", extension=True)
    with connect(dbname=db_name) as pg:
        clock = Clock()
        db = device_file(tmp_path / "tablet.db")
        store = EdgeStore(db, "xid12", device="tablet", clock=clock)
        g = store.enrol(pg, "edge-test@tablet", lease=LEASE)
        offline(db, store, clock, days=1, per_day=10)
        real_server = store._server

        def commit_then_lose_the_reply(pg_conn, run):
            real_server(pg_conn, run)
            raise ReplyLost()

        store._server = commit_then_lose_the_reply
        with pytest.raises(ReplyLost):
            store.sync(pg, renew=LEASE)
        del store._server
        assert pg.execute("SELECT syncs FROM idgen_registry_report WHERE grant_id = %s",
                          [g.grant_id]).fetchone()[0] == 1
        clone = sqlite3.connect(tmp_path / "tablet-copy.db")
        db.backup(clone)  # made while the reply was lost: the same count and attempt
        assert db.execute("SELECT syncs, attempt IS NOT NULL FROM pg_idgen_edge").fetchone() == (0, 1)

        offline(db, store, clock, days=1, per_day=10, start=10)
        assert store.sync(pg, renew=LEASE).syncs == 1  # the count it missed, not EdgeCloned
        assert db.execute("SELECT syncs, attempt FROM pg_idgen_edge").fetchone() == (1, None)
        assert pg.execute("SELECT device, syncs FROM idgen_registry_report WHERE grant_id = %s",
                          [g.grant_id]).fetchone() == ("tablet", 1)
        assert store.sync(pg, renew=LEASE).syncs == 2  # and on as usual

        copy = EdgeStore(clone, "xid12", device="tablet-2", clock=clock)
        with pytest.raises(EdgeCloned) as e:
            copy.sync(pg, renew=LEASE)
        assert "'tablet-2'" in e.value.detail and "'tablet'" in e.value.detail


@pytest.mark.parametrize("kind", ["xid12", "snowflake"])
def test_the_servers_window_is_kept_in_any_datestyle_and_timezone(tmp_path, kind):
    """enrol and sync read the window in id-time (lo_t, hi_t) and keep it in unix µs: the file
    holds exactly the server's window, also on a session whose DateStyle is not ISO (psycopg
    reads no timestamptz text there) and whose time zone is not UTC."""
    db_name = fresh_database("client_edge_style", extension=True)
    with connect(dbname=db_name) as admin, \
            connect(dbname=db_name, options="-c DateStyle=SQL,DMY -c TimeZone=America/St_Johns") as pg:
        assert pg.execute("SHOW DateStyle").fetchone()[0] == "SQL, DMY"
        unix = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        d = device_file(tmp_path / "style.db")
        store = EdgeStore(d, kind, device="style-1", clock=Clock())
        g = store.enrol(pg, "edge-test@style-1", lease=dt.timedelta(days=3))

        def kept():
            lo_us, hi_us = d.execute("SELECT lo_us, hi_us FROM pg_idgen_edge").fetchone()
            return unix + dt.timedelta(microseconds=lo_us), unix + dt.timedelta(microseconds=hi_us)

        assert kept() == (g.lo, g.hi) == grant_row(admin, g.grant_id)[2:4]
        with d:
            store.next_id()
        renewed = store.sync(pg, renew=dt.timedelta(days=5))
        assert kept() == (renewed.lo, renewed.hi) == grant_row(admin, g.grant_id)[2:4]
        assert renewed.hi - g.hi > dt.timedelta(days=1.9)
