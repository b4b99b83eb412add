"""End to end, no duplicate under attack (issue 33): two honest writer roles take turns on the
one free Snowflake slot of the app pool with the Python client's Registry, while a hostile writer
role, given exactly what the README has a DBA give a writer, runs every statement it is allowed
to run and every attack of the 0.6.0 review against them: rewriting or ending the honest grants,
forging grants, origins, epochs and report counts, moving the fence's sequence, reserving slots,
using the honest tokens it can guess, leases with months, the edge pool. Every attack is refused
with its SQLSTATE, the honest writers' ids never meet, and each honest id lies in a window the
registry gave its own role.

With 0.6.0's GRANTs the same hostile statements made two honest writers repeat 7,261 ids."""
import threading
import time

import psycopg
import pytest

import pg_idgen
from servers import connect, dsn, fresh_database

SLOT = 700          # the app pool's only Snowflake slot here: the honest writers meet on it
RUN_S = 10.0        # at least this long the honest writers take turns (each turn about 0.5 s)
GIVE_UP_S = 300.0   # then on until the counts below are reached: what never is, is a bug
ROLES = ("attack_honest_1", "attack_honest_2", "attack_hostile")


def role_dsn(db, role):
    return dsn(dbname=db).replace("user=postgres", f"user={role}")


@pytest.fixture
def attacked():
    db = fresh_database("registry_attack", extension=True)
    with connect() as admin:
        for role in ROLES:
            admin.execute(f"DROP ROLE IF EXISTS {role}")
            admin.execute(f"CREATE ROLE {role} LOGIN")
    with connect(dbname=db) as conn:
        # The app pool has one Snowflake slot (and a few xid12 ones); the DBA's block of the README.
        conn.execute("INSERT INTO idgen_registry_pool VALUES ('app', int4range(%s, %s), int4range(100, 104), '1 hour')",
                     (SLOT, SLOT + 1))
        for role in ROLES:
            conn.execute("SELECT idgen_pool_allow('app', %s, 4)", (role,))
            conn.execute(f"GRANT SELECT ON idgen_grants TO {role}")
    yield db
    fresh_database("registry_attack")
    with connect() as admin:
        for role in ROLES:
            admin.execute(f"DROP ROLE IF EXISTS {role}")


# (statement, the SQLSTATE it must get). {g} is an honest writer's live grant, read from the
# view as the hostile role may.
ATTACKS = [
    ("UPDATE idgen_registry_grant SET hi = lo WHERE grant_id = {g}", "42501"),
    ("UPDATE idgen_registry_grant SET token_sha256 = sha256(int8send(7)) WHERE grant_id = {g}", "42501"),
    ("UPDATE idgen_registry_grant SET epoch_ms = 0", "42501"),
    ("DELETE FROM idgen_registry_grant WHERE grant_id = {g}", "42501"),
    ("INSERT INTO idgen_registry_grant (kind, slot, pool, writer, reserved, token_sha256, lo, hi, granted_at, db_role) "
     "VALUES ('snowflake', 700, 'app', 'honest', false, sha256(int8send(7)), 0, 1, now(), 'attack_honest_1')", "42501"),
    ("UPDATE idgen_registry_slot SET next_free = 0", "42501"),
    ("INSERT INTO idgen_registry_origin VALUES (1, 1, now(), true, 'forged')", "42501"),
    ("INSERT INTO idgen_registry_report VALUES ({g}, 5, 'forged', NULL, now(), NULL)", "42501"),
    ("SELECT setval('idgen_registry_noticed_ms', 1)", "42501"),
    ("INSERT INTO idgen_registry_pool VALUES ('mine', int4range(0, 768), int4range(0, 9), '366 days')", "42501"),
    ("INSERT INTO idgen_registry_pool_role VALUES ('edge', 'attack_hostile', 99)", "42501"),
    ("SELECT idgen_registry_reserve('snowflake', 700, 'mine', true)", "42501"),
    ("SELECT idgen_reserve('snowflake', 700, 'mine')", "42501"),
    ("SELECT idgen_registry_lift_fence()", "42501"),
    ("SELECT idgen_registry_check_origin()", "42501"),
    ("SELECT idgen_pool_allow('app', 'attack_hostile', 1000)", "42501"),
    ("SELECT idgen_pool_disallow('app', 'attack_honest_1')", "42501"),
    ("SELECT idgen_renew({g}, 12345, '1 hour')", "42501"),
    ("SELECT idgen_release({g}, 12345, '-infinity')", "42501"),
    ("SELECT idgen_report({g}, 12345, 'forged', 0)", "42501"),
    ("SELECT idgen_acquire('snowflake', 'mine', '1 mon')", "22023"),
    ("SELECT idgen_acquire('snowflake', 'mine', '648 mons -19440 days 1 hour')", "22023"),
    ("SELECT idgen_acquire('snowflake', 'mine', '2 hours')", "IG004"),
    ("SELECT idgen_acquire('snowflake', 'mine', '366 days', 'edge')", "IG002"),
    ("SELECT idgen_acquire('snowflake', 'mine', '1 hour', 'not-mine')", "IG002"),
    ("SET ROLE attack_honest_1", "42501"),
]


def sqlstate_of(conn, sql):
    try:
        conn.execute(sql)
        return "ok"
    except psycopg.Error as e:
        return e.sqlstate


def hostile(db, stop, tally, errors):
    """Runs every attack again and again, and what a writer may do: read the view and
    idgen_writer_of, acquire and release its own grants (of both kinds, within its cap)."""
    try:
        with psycopg.connect(role_dsn(db, "attack_hostile"), autocommit=True) as conn:
            while not stop.is_set():
                # The honest writers' newest grant (live, or just released).
                newest = conn.execute(
                    "SELECT grant_id FROM idgen_grants WHERE db_role LIKE 'attack_honest_%' "
                    "ORDER BY released_at IS NULL DESC, grant_id DESC LIMIT 1").fetchone()
                if newest is None:
                    time.sleep(0.01)
                    continue
                g = newest[0]
                for sql, want in ATTACKS:
                    got = sqlstate_of(conn, sql.format(g=g))
                    tally[(sql, got)] = tally.get((sql, got), 0) + 1
                # Allowed: its own grants, taken and given back at once (no id made).
                for kind in ("snowflake", "xid12"):
                    try:
                        row = conn.execute("SELECT grant_id, token FROM idgen_acquire(%s, 'hostile', '2 seconds')",
                                           (kind,)).fetchone()
                        conn.execute("SELECT idgen_release(%s, %s, '-infinity')", row)
                        tally[("own grant", kind)] = tally.get(("own grant", kind), 0) + 1
                    except psycopg.Error as e:
                        if e.sqlstate != "53400":  # the one slot is the honest writer's now
                            raise
                conn.execute("SELECT count(*) FROM idgen_writer_of(1::bigint)")
    except Exception as e:  # the test fails on it
        errors.append(e)


def honest(db, role, stop, ids, turns, errors):
    """Takes the slot in turns: a grant, 2,000 ids, then release; again until stopped."""
    try:
        while not stop.is_set():
            with pg_idgen.Registry(role_dsn(db, role), writer=role) as reg:
                try:
                    gen = reg.snowflake("2 seconds")
                except (pg_idgen.SlotsExhausted, pg_idgen.RegistryError):
                    time.sleep(0.02)  # the other writer (or the hostile one, briefly) has it
                    continue
                turns.append(gen.grant.grant_id)
                for _ in range(10):  # 2,000 ids in about 0.5 s
                    ids.extend(gen.next_id() for _ in range(200))
                    time.sleep(0.05)
            time.sleep(0.01)
    except Exception as e:
        errors.append(e)


def test_honest_writers_never_meet_under_attack(attacked):
    db = attacked
    stop = threading.Event()
    tally, errors = {}, []
    ids = {role: [] for role in ROLES[:2]}
    turns = {role: [] for role in ROLES[:2]}
    threads = [threading.Thread(target=hostile, args=(db, stop, tally, errors))]
    threads += [threading.Thread(target=honest, args=(db, role, stop, ids[role], turns[role], errors))
                for role in ROLES[:2]]
    for t in threads:
        t.start()
    # Until the work the assertions below count is done (an outcome, not a time: a loaded
    # machine takes longer), and at least RUN_S.

    def enough():
        rounds = min((n for (sql, _), n in list(tally.items()) if sql != "own grant"), default=0)
        return (len({sql for sql, _ in list(tally) if sql != "own grant"}) == len(ATTACKS)
                and rounds >= 20 and tally.get(("own grant", "xid12"), 0) >= 20
                and min(len(t) for t in turns.values()) >= 3 and min(len(i) for i in ids.values()) >= 1000)

    started = time.monotonic()
    while (time.monotonic() - started < RUN_S or not enough()) and time.monotonic() - started < GIVE_UP_S \
            and not errors:
        time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors

    # Every attack was refused with its SQLSTATE, every time; the hostile role's own grants worked.
    wrong = {k: n for k, n in tally.items() if isinstance(k[0], str) and k[0] != "own grant"
             and k[1] != dict(ATTACKS)[k[0]]}
    assert not wrong, wrong
    rounds = min(n for (sql, got), n in tally.items() if sql != "own grant")
    assert rounds >= 20, tally
    assert tally.get(("own grant", "xid12"), 0) >= 20, tally
    print(f"\n  {len(ATTACKS)} attacks x {rounds}+ rounds, all refused; hostile's own grants: "
          f"{tally.get(('own grant', 'snowflake'), 0)} snowflake, {tally.get(('own grant', 'xid12'), 0)} xid12")

    # The honest writers met on the slot many times and made many ids: none repeats.
    every = ids[ROLES[0]] + ids[ROLES[1]]
    print(f"  honest turns {len(turns[ROLES[0]])} + {len(turns[ROLES[1]])}, ids {len(ids[ROLES[0]])} + "
          f"{len(ids[ROLES[1]])}, distinct {len(set(every))}")
    assert min(len(t) for t in turns.values()) >= 3, turns
    assert min(len(i) for i in ids.values()) >= 1000, {r: len(i) for r, i in ids.items()}
    assert len(set(every)) == len(every), f"{len(every) - len(set(every))} duplicate ids"

    # Each honest id lies in a window of a grant its own role made; the registry names that role.
    with connect(dbname=db) as conn:
        for role, made in ids.items():
            # (The role's own windows first, each id's point once: the hostile role makes
            # thousands of grants on a slow machine, and the point function is not inlined.)
            outside = conn.execute("""
                WITH own AS MATERIALIZED (SELECT g.span FROM idgen_grants g WHERE g.db_role = %s AND g.writer = %s),
                     points AS MATERIALIZED (SELECT idgen_registry_point(i) AS p FROM unnest(%s::bigint[]) i)
                SELECT count(*) FROM points WHERE NOT EXISTS (SELECT FROM own WHERE own.span @> points.p)""",
                                   (role, role, made)).fetchone()[0]
            assert outside == 0, f"{outside} ids of {role} outside its own windows"
            # idgen_writer_of says the same of a sample.
            assert all(conn.execute("SELECT db_role FROM idgen_writer_of(%s::bigint)", (i,)).fetchone()[0] == role
                       for i in made[::max(1, len(made) // 50)])
        assert conn.execute("SELECT count(*) FROM idgen_grants WHERE db_role IS DISTINCT FROM "
                            "CASE WHEN writer = 'hostile' THEN 'attack_hostile' ELSE writer END "
                            "AND NOT reserved").fetchone()[0] == 0
