"""Each refusal of the writer registry reaches a Python program as its own class (issue 34, "each
condition its own error"; tests/vectors/registry_errors.json): every condition a test database
can be brought to, through the client's Registry (and an EdgeStore for a report), against the
server's real SQLSTATE. Not here: EpochChanged (pg_idgen.snowflake_epoch is a reload setting of
the shared cluster) and DeviceConflict (test_edge.py, as EdgeCloned).

The roles are the README's: a writer role allowed in a pool by idgen_pool_allow, with a cap; the
DBA (postgres here) adds a pool of one slot and fakes a failover by writing the row that
idgen_registry_check_origin() writes when it finds a new timeline."""
import datetime
import sqlite3

import pytest

import pg_idgen
from servers import connect, dsn, fresh_database

ROLE = "errors_writer"      # allowed in the app pool with a cap of 1
OUTSIDER = "errors_outsider"  # allowed in the edge pool only


def role_dsn(db, role):
    return dsn(dbname=db).replace("user=postgres", f"user={role}")


@pytest.fixture(scope="module")
def db():
    name = fresh_database("registry_errors", extension=True)
    with connect() as admin:
        for role in (ROLE, OUTSIDER):
            admin.execute(f"DROP ROLE IF EXISTS {role}")
            admin.execute(f"CREATE ROLE {role} LOGIN")
    with connect(dbname=name) as conn:
        conn.execute("SELECT idgen_pool_allow('app', %s, 1)", (ROLE,))
        conn.execute("SELECT idgen_pool_allow('edge', %s, 1)", (OUTSIDER,))
    yield name
    fresh_database("registry_errors")  # dropped with the roles' privileges in it
    with connect() as admin:
        for role in (ROLE, OUTSIDER):
            admin.execute(f"DROP ROLE IF EXISTS {role}")


def live_grants(conn, writer):
    return conn.execute("SELECT count(*) FROM idgen_grants WHERE writer = %s AND released_at IS NULL "
                        "AND hi > now()", (writer,)).fetchone()[0]


def test_pool_not_allowed(db):
    # The role may take grants in 'edge' (so it may execute idgen_acquire) but not in 'app'.
    with pg_idgen.Registry(role_dsn(db, OUTSIDER), writer="outsider") as reg:
        with pytest.raises(pg_idgen.PoolNotAllowed, match="may not take grants in pool 'app'") as e:
            reg.snowflake()
        assert e.value.sqlstate == "IG002"
        with pytest.raises(pg_idgen.PoolNotAllowed):
            reg.xid12()
    # Where it is allowed, the same role gets its grant.
    with pg_idgen.Registry(role_dsn(db, OUTSIDER), writer="outsider", pool="edge") as reg:
        assert reg.xid12(lease="1 hour").slot is not None


def test_cap_reached(db):
    with pg_idgen.Registry(role_dsn(db, ROLE), writer="capped") as reg:
        first = reg.snowflake()
        first.next_id()
        with pytest.raises(pg_idgen.CapReached, match="holds 1 live grants in pool 'app', its cap") as e:
            reg.xid12()
        assert e.value.sqlstate == "IG003"
        assert not isinstance(e.value, pg_idgen.SlotsExhausted)
        with connect(dbname=db) as conn:
            assert live_grants(conn, "capped") == 1
        # The first generator goes on; once it releases, the role may acquire again.
        first.next_id()
        first.release()
        assert reg.xid12().slot is not None


@pytest.mark.parametrize("kind,lease", [("snowflake", "1 hour"), ("xid12", "2 hours")])
def test_lease_too_long(db, kind, lease):
    # The app pool's longest lease: Snowflake 3 minutes, xid12 1 hour.
    with pg_idgen.Registry(dsn(dbname=db), writer=f"greedy-{kind}") as reg:
        with pytest.raises(pg_idgen.LeaseTooLong) as e:
            getattr(reg, kind)(lease=lease)
        assert e.value.sqlstate == "IG004"
        with connect(dbname=db) as conn:
            assert live_grants(conn, f"greedy-{kind}") == 0


def test_lease_by_default_is_the_servers(db):
    # No lease given: the client sends none, and the app pool's Snowflake default fits its longest.
    with pg_idgen.Registry(dsn(dbname=db), writer="default-lease") as reg:
        gen = reg.snowflake()
        gen.next_id()
        assert 0 < gen.grant.lease_s <= 3 * 60, gen.grant


def test_wrong_token_and_grant_lost(db):
    with pg_idgen.Registry(dsn(dbname=db), writer="tokens") as reg:
        gen = reg.snowflake()
        gen.next_id()
        g = gen.grant
        forged = pg_idgen.Grant()
        for name in pg_idgen.Grant.__slots__:
            if hasattr(g, name):
                setattr(forged, name, getattr(g, name))
        forged.token = g.token ^ 1
        with pytest.raises(pg_idgen.WrongToken, match="wrong token") as e:
            reg._renew(gen, forged)
        assert e.value.sqlstate == "42501"
        with pytest.raises(pg_idgen.WrongToken):
            reg._release(forged, None)
        # Released: its renewal finds it lost (55000), and the generator acquires a new grant.
        gen.release()
        with pytest.raises(pg_idgen.GrantLost, match="grant lost") as e:
            reg._renew(gen, g)
        assert e.value.sqlstate == "55000"
        # A grant the registry does not have (restored from before it was made): lost too.
        forged.grant_id = 1 << 60
        with pytest.raises(pg_idgen.GrantLost) as e:
            reg._renew(gen, forged)
        assert e.value.sqlstate == "42704"
        assert gen.next_id() > 0 and gen.grant.grant_id != g.grant_id


def test_slots_exhausted(db):
    with connect(dbname=db) as conn:
        own = conn.execute("SELECT nullif(current_setting('pg_idgen.worker_id'), '-1')::int").fetchone()[0]
        slot = 701 if own == 700 else 700
        conn.execute("INSERT INTO idgen_registry_pool (pool, snowflake_slots, xid12_slots, max_lease) "
                     "VALUES ('tiny', int4range(%s, %s), int4range(100, 104), '1 hour')", (slot, slot + 1))
    with pg_idgen.Registry(dsn(dbname=db), writer="tiny", pool="tiny") as reg:
        first = reg.snowflake(lease="1 minute")
        assert first.slot == slot
        with pytest.raises(pg_idgen.SlotsExhausted, match=r"every snowflake slot of pool 'tiny' is held.*DETAIL") as e:
            reg.snowflake(lease="1 minute")
        assert e.value.sqlstate == "53400"
        assert not isinstance(e.value, pg_idgen.CapReached)


def test_fenced():
    # A database of its own: the fence closes every pool of it.
    db = fresh_database("registry_errors_fenced", extension=True)
    with connect(dbname=db) as conn:
        # A writer whose grant was made before the failover renews it through the fence.
        with pg_idgen.Registry(dsn(dbname=db), writer="before") as before:
            early = before.snowflake()
            early.next_id()
            # The failover, faked: the row idgen_registry_check_origin() adds when it finds a
            # new timeline (the same cluster and timeline here, so it finds none itself).
            seen_at = conn.execute("""
                INSERT INTO idgen_registry_origin (system_identifier, timeline, seen_at, fenced, reason)
                SELECT o.system_identifier, o.timeline, clock_timestamp(), true, 'a failover faked by the test'
                FROM idgen_registry_origin o ORDER BY o.seen_at DESC LIMIT 1
                RETURNING seen_at""").fetchone()[0]
            # How long the app pool's Snowflake slots stay closed: the longest lease of the pools
            # that share them, plus the margin for the servers' clocks.
            fence_ends = conn.execute(
                "SELECT %s + idgen_registry_seconds(idgen_registry_fence_lease('snowflake', int4range(0, 768))) "
                "+ idgen_registry_fence_margin()", (seen_at,)).fetchone()[0]
            with pg_idgen.Registry(dsn(dbname=db), writer="after") as after:
                with pytest.raises(pg_idgen.RegistryFenced, match="grants no snowflake slot in pool 'app' until") as e:
                    after.snowflake()
                err = e.value
                assert err.sqlstate == "IG001"
                assert not isinstance(err, pg_idgen.GrantLost)
                now = conn.execute("SELECT clock_timestamp()").fetchone()[0]
                assert err.until is not None and err.until.tzinfo is not None, str(err)
                assert err.until.utcoffset() == datetime.timedelta(0)
                assert err.until > now, (err.until, now)
                assert err.until == fence_ends, (str(err), seen_at, fence_ends)
                assert "DETAIL" in str(err) and "a failover faked by the test" in str(err)
            # The live grant is renewed meanwhile, and its writer goes on.
            before_grant = early.grant.grant_id
            with early._lock:
                early._renew_or_replace()
            assert early.grant.grant_id == before_grant
            early.next_id()


def test_report_outside_window(db, tmp_path):
    # An edge device whose file says its last id lies past its window (a file edited by hand):
    # its report is refused, and nothing is renewed.
    with connect(dbname=db) as pg:
        file = sqlite3.connect(tmp_path / "device.db")
        store = pg_idgen.EdgeStore(file, "xid12", device="edited")
        g = store.enrol(pg, "errors@edited", lease=datetime.timedelta(days=1))
        store.next_id()
        file.commit()
        with file:
            file.execute("UPDATE pg_idgen_edge SET last_id_us = hi_us + 86400000000 WHERE kind = 'xid12'")
        with pytest.raises(pg_idgen.ReportOutsideWindow, match="reports an id outside the window") as e:
            store.sync(pg)
        assert e.value.sqlstate == "IG006"
        hi = pg.execute("SELECT hi FROM idgen_grants WHERE grant_id = %s", (g.grant_id,)).fetchone()[0]
        assert hi == g.hi, (hi, g.hi)


@pytest.mark.parametrize("kind", ["snowflake", "xid12"])
def test_an_extension_before_0_7_0_is_named(kind, tmp_path):
    """The clients read the grant row's id-time columns (lo_t, hi_t), new in 0.7.0: on an older
    extension the statement fails before idgen_acquire runs (no grant is made), and the error
    says which version the registry needs, for a Registry and an EdgeStore alike."""
    name = "registry_old_extension"
    fresh_database(name)
    with connect(dbname=name) as conn:
        conn.execute("CREATE EXTENSION pg_idgen VERSION '0.6.0'")
        with pg_idgen.Registry(dsn(dbname=name), "old-extension") as reg:
            with pytest.raises(pg_idgen.RegistryError, match=r"needs the pg_idgen extension 0\.7\.0 or "
                               r"later \(ALTER EXTENSION pg_idgen UPDATE\): column \"lo_t\" does not exist") as e:
                reg.snowflake() if kind == "snowflake" else reg.xid12()
        assert type(e.value) is pg_idgen.RegistryError and e.value.sqlstate == "42703"
        store = pg_idgen.EdgeStore(sqlite3.connect(tmp_path / "old.db"), kind, device="old-1")
        with pytest.raises(pg_idgen.RegistryError, match=r"needs the pg_idgen extension 0\.7\.0"):
            store.enrol(conn, "old-1")
        assert store.grant is None
        assert conn.execute("SELECT count(*) FROM idgen_grants WHERE NOT reserved").fetchone()[0] == 0
